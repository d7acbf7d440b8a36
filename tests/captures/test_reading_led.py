"""Issue 43 (memory of doctor --from): read.read hands clean its text after a newline of its own, and clean
gives that text to the whole-text searches (read._settled's Marks) before it makes the lines, so a bug
report's text and its million lines are never held together. Whatever the text, the file's parse is the
one parse_text (clean's general way, which joins the lines again) makes of the same text."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuvet.captures import read as read_mod
from gpuvet.captures.read import parse_text, read
from gpuvet.captures.text import clean
from gpuvet.errors import CaptureError

DATA = Path(__file__).resolve().parents[1] / "data" / "captures"
_KERNEL = [s for s in (DATA / "dmesg_xid.txt").read_text().split("\n") if not s.startswith("#")]
_SMI = [s for s in (DATA / "smi_q_h100_2gpu.txt").read_text().split("\n") if not s.startswith("# ")]
_LOG = "\n".join(_KERNEL)

CASES = {
    "plain": _LOG,
    "right-stripped": "\n".join(s + " \t" for s in _KERNEL),
    "no-break space at the ends": "\n".join(s + "\u00a0" for s in _KERNEL),
    "quoted from the first line": "> " + "\n> ".join(_KERNEL),
    "quoted after an empty first line": "\n>" + _LOG,
    "tabs then spaces": "\t    " + "\n\t    ".join(_SMI),
    "an HTML entity": _LOG + "\nfoo &gt; bar",
    "fenced": "```\n" + _LOG + "\n```",
    "a cut": "\n".join(_KERNEL[:3]) + "\n...\n" + "\n".join(_KERNEL[3:]),
    "a byte-order mark": "\ufeff" + _LOG,
    "a corpus header": "# source: a test\n# shows: nothing\n" + _LOG,
    "CR line ends": "\r\n".join(_KERNEL),
    "a launcher prefix": "\n".join(f"node01: {s}" for s in _KERNEL),
    "indented -q": "\n".join("    " + s for s in _SMI),
    "a poster's quote": 'What does "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus." mean?\n' + _LOG,
    "a long number": "\n".join(_KERNEL[:2]) + "\n" + "1" * 1200 + "\n",
    "blank lines": "\n\n\n",
    "nothing readable": "x",
    "longer than unwrap reads": "\n".join(_KERNEL * (2**18 // len(_LOG) + 2)),
}
# issue 43: a text longer than marks._SMALL has its byte triples counted before its lines are made, and clean
# searches only the cut marks they do not rule out: each kind of mark, in any case, is found all the same
_LONG = _KERNEL * (2**16 // len(_LOG) + 2)
for _mark in ("...", "…", "[snip]", "<SNIP>", "--- Snip ---", "[Cut: the rest]", "(output truncated)",
              "[OUTPUT TRUNCATED]", ". . .", "-- 8< --", "\u2702", "```", "\\# gpu pwr"):
    CASES[f"{_mark!r} in a long text"] = "\n".join(_LONG[:40] + [_mark] + _LONG[40:])


def _parsed(run: object) -> object:
    try:
        got = run()  # type: ignore[operator]
    except CaptureError as exc:
        return ("refused", str(exc))
    return {f.name: getattr(got, f.name) for f in dataclasses.fields(got) if f.name != "xml"}  # XML: its tree


@pytest.mark.parametrize("name", list(CASES))
def test_read_is_parse_text(name: str, tmp_path: Path) -> None:
    text = CASES[name]
    path = tmp_path / "capture.txt"
    path.write_text(text, encoding="utf-8", newline="")
    read_mod._PARSED.clear()
    read_mod._STATED.clear()
    assert _parsed(lambda: read(str(path))) == _parsed(lambda: parse_text(text, str(path)))


def test_the_text_is_given_before_the_lines_and_said_exact() -> None:
    given: list[str] = []
    got = clean(["\n" + _LOG], given.append)
    assert given == ["\n" + _LOG] and got.exact
    assert [ln.text for ln in got.lines] == [s.rstrip() for s in _KERNEL]


def test_right_stripped_lines_give_their_own_text() -> None:
    given: list[str] = []
    got = clean(["\n" + "\n".join(s + "  " for s in _KERNEL)], given.append)
    assert given == ["\n" + "\n".join(s.rstrip() for s in _KERNEL)] and got.exact


def test_lines_peel_changed_are_not_exact() -> None:
    given: list[str] = []
    assert not clean(["\n```\n" + _LOG + "\n```"], given.append).exact  # the fences dropped
    assert not clean(["\n" + "\n".join("> " + s for s in _KERNEL)], given.append).exact  # quote marks taken off


def test_what_only_the_general_way_does_is_left_to_it() -> None:
    given: list[str] = []
    for text in ("\r\n".join(_KERNEL), "# source: x\n" + _LOG, "\ufeff" + _LOG, _LOG.replace("\n", "\x00\n", 1)):
        held = ["\n" + text]
        clean(held, given.append)
        assert given == []
