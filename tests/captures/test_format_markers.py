"""Issue 43: a format whose markers a text lacks is not run (captures/read.py). That is sound only
while each marker is in every line its parser can claim: here every format with markers, run anyway
on every capture of the corpus that lacks them, must find nothing. A parser taught a new syntax
whose lines hold none of its format's markers fails here once a capture of that syntax is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import read
from gpuvet.captures.formats import FORMATS, FileCapture
from gpuvet.captures.text import Line, clean

CORPUS = Path(__file__).resolve().parents[1] / "data" / "captures"
FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file())
MARKED = [f for f in FORMATS if f.markers]


def test_the_costly_formats_have_markers() -> None:
    assert {"nccl-tests", "kernel AER", "hccl_test", "TransferBench"} <= {f.name for f in MARKED}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_a_format_without_its_markers_finds_nothing(path: Path) -> None:
    lines = clean(read.read_text(str(path))).lines
    present = read._Markers(lines)
    for fmt in MARKED:
        if present.any(fmt.markers):
            continue
        got = fmt.parse(lines, str(path))
        assert not got.claimed and not got.found and not got.kinds, (fmt.name, sorted(got.claimed)[:5])
        default = getattr(FileCapture(str(path)), fmt.field) if fmt.field else None
        assert got.value is None or got.value == default or fmt.field is None, fmt.name


def test_the_text_is_searched_once_per_marker() -> None:
    present = read._Markers([Line(1, "# nThread 1 nGpus 8"), Line(2, "plain")])
    assert present.any(("nothing here", "nThread")) and not present.any(("CA '",))
    assert set(present.found) == {"nothing here", "nThread", "CA '"}
