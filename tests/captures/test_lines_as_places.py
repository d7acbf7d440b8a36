"""Issue 43: a long text's lines kept as places in it (lines.TextLines) read as the list of Lines does: every
capture parsed both ways (its corpus header taken off, so each is read the led way) gives the same parse."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuvet.captures import lines, read, text
from gpuvet.captures.lines import TextLines, line_ends
from gpuvet.captures.text import Line
from gpuvet.errors import CaptureError
from tests.support.corpus import unscored_batches
from tests.support.sweep import batches, check_each

CORPUS = Path(__file__).parent.parent / "data" / "captures"
_LEFT_OUT = {"fresh_h", "fresh_m"} | unscored_batches(CORPUS)  # read once: every MANIFEST.md parsed
FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name != "MANIFEST.md" and not _LEFT_OUT & set(p.parts))
BATCHES = batches(FILES, CORPUS)  # one test per batch folder, each of its files checked (tests/support/sweep.py)
_HEADER = re.compile(r"#\s*(?:source|shows|conclusion|expect|note|tuned)\b")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")  # an XML element's repr names where it is


def _parsed(body: str, places: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(text, "PLACES_FROM", -1 if places else 1 << 40)
    monkeypatch.setattr(lines, "PLACED_FROM", 0)  # the kernel reader's worded lines as places too (lines.pairs)
    monkeypatch.setattr(read, "_PARSED", {})  # no kept parse seen here (tests/support/parses.py keeps its own)
    try:
        return _ADDRESS.sub("", repr(read._parse(["\n" + body], "x", 1)))
    except CaptureError as exc:
        return f"refused: {exc}"


@pytest.mark.parametrize("batch", BATCHES)
def test_each_capture_reads_the_same_from_places_as_from_lines(batch, monkeypatch):
    check_each(BATCHES[batch], lambda path: _reads_the_same(path, monkeypatch), CORPUS)


def _reads_the_same(path, monkeypatch):
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8")
    lines = raw.split("\n")
    while lines and _HEADER.match(lines[0]):
        lines.pop(0)
    body = "\n".join(lines)
    made: list[int] = []
    real = TextLines.__init__
    monkeypatch.setattr(TextLines, "__init__", lambda self, *args, **kw: made.append(1) or real(self, *args, **kw))
    placed = _parsed(body, True, monkeypatch)
    monkeypatch.setattr(TextLines, "__init__", real)
    if made:  # else no line was a place (a text not ASCII, or one clean reads its general way): the lines' parse
        assert placed == _parsed(body, False, monkeypatch)  # would run the same code (PLACES_FROM and PLACED_FROM
    # are asked only where places are made or read), compared with itself


def test_text_lines_read_as_a_list_of_lines():
    body = "\nGPU 0: A\n  x  \n\nXid 79 here\nlast"
    starts, ends = line_ends(body, 1)
    places = TextLines(body, starts, ends, whole=True)
    listed = [Line(n, s) for n, s in enumerate(body[1:].split("\n"), 1)]
    assert list(places) == listed and len(places) == len(listed) and places[-1] == listed[-1]
    assert list(places[1:4]) == listed[1:4] and list(places[::-2]) == listed[::-2] and places == listed
    assert places.holding(["Xid", "GPU"]) == [0, 3] and places[1:].holding(["Xid", "GPU"]) == [2]
    rest = places.without({2, 5})
    assert list(rest) == [ln for ln in listed if ln.no not in {2, 5}] and rest.holding(["Xid"]) == [2]
    with pytest.raises(TypeError):
        places.append(listed[0])
