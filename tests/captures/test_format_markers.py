"""Issue 43: a format whose markers a text lacks is not run (captures/read.py). That is sound only
while each marker is in every line its parser can claim: here every format with markers, run anyway
on every capture of the corpus that lacks them, must find nothing. A parser taught a new syntax
whose lines hold none of its format's markers fails here once a capture of that syntax is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import app_errors, read
from gpuvet.captures.formats import FORMATS, FileCapture
from gpuvet.captures.text import Line, clean

CORPUS = Path(__file__).resolve().parents[1] / "data" / "captures"
FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file())
MARKED = [f for f in FORMATS if f.markers]


def test_the_costly_formats_have_markers() -> None:
    assert {"nccl-tests", "kernel AER", "hccl_test", "TransferBench", "ibstat, ibstatus, ibv_devinfo, ibdev2netdev"} <= {
        f.name for f in MARKED}


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


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_the_application_error_lines_are_among_the_candidates(path: Path) -> None:
    """app_errors reads only the lines its one search of the whole text found (issue 43): every line
    its per-line reading would take is one of them."""
    lines = clean(read.read_text(str(path))).lines
    every = {i for i, ln in enumerate(lines) if app_errors._kind(ln.text) or app_errors._torch_false(lines, i)}
    assert every <= set(app_errors._candidates(lines))


@pytest.mark.parametrize("block", [1, 2, 3, 8192])
def test_the_candidates_hold_every_key_and_the_line_after_is_available(block: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_errors, "_BLOCK", block)  # a block's edge between a line and the next
    lines = [Line(1, "plain"), Line(2, ">>> torch.cuda.is_available()"), Line(3, "False"), Line(4, "ECC Mode"),
             Line(5, "RuntimeError: CUDA error: an illegal memory access was encountered"), Line(6, "İ nvml")]
    assert app_errors._candidates(lines) == [1, 2, 4, 5]
    assert all(any(a in k for a in app_errors._ANCHORS) for k in app_errors._KEY_WORDS)
    assert [e.kind for e in app_errors.parse(lines).errors] == ["torch_no_cuda", "illegal_address"]
