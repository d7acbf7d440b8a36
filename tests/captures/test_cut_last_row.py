"""Issue 46, batch Q: a table whose last row the paste cut mid-line. Posters cut anywhere: a row that
ends before its columns do is said in a note and never judged (a missing cell is never zero, never
'wrong', never 'failed'). Each table reader that read such a row as data, on lines written here in the
tool's own layout, cut at every column."""

from __future__ import annotations

import re
from pathlib import Path
from unittest import mock

import pytest

from gpuvet.captures import bench, gpu_burn
from gpuvet.captures.text import clean
from gpuvet.cli.doctor import _diagnose
from tests.captures.test_decoration_invariance import _quiet

_NCCL = """#  nThread 1 nGpus 8 minBytes 1024 maxBytes 65536 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        1024           256     float     sum      -1    41.20    0.02    0.04      0    40.90    0.03    0.04      0
        2048           512     float     sum      -1    42.10    0.05    0.09      0    41.70    0.05    0.09      0
       65536         16384     float     sum      -1    48.35    1.36    2.37      0    47.99    1.37    2.39      0"""
_ROCM_SMI = """========================= ROCm System Management Interface =========================
Device  Node  IDs              Temp      Power     Partitions          SCLK     MCLK     Fan  Perf    PwrCap   VRAM%  GPU%
              (DID,     GUID)  (Junction)  (Socket)  (Mem, Compute, ID)
==========================================================================================
0       2     0x74a1,   11111  41.0°C    150.0W    NPS1, SPX, 0        131Mhz   900Mhz   0%   auto    750.0W   0%     0%
1       3     0x74a1,   22222  N/A       N/A       N/A, N/A, 1         N/A      N/A      0%   n/a     N/A      0%     N/A"""
_BURN = ("Initialized device 0 with 81008 MB of memory\nInitialized device 1 with 81008 MB of memory\n"
         "50.0%  proc'd: 812 (21034 Gflop/s) - 809 (20987 Gflop/s)   errors: 0 - 123456789  (DIED!)   "
         "temps: 61 C - 60 C ")


def _cuts(text: str) -> list[str]:
    """The text with its last line cut after each of its cells but the last, and inside each cell."""
    head, _, last = text.rpartition("\n")
    ends = [i for i in range(1, len(last)) if last[i] == " " and last[i - 1] != " "]
    ends += [i - 1 for i in ends if last[i - 2] != " "]  # mid-cell: the cell's last character lost
    return [f"{head}\n{last[:i]}" for i in sorted(set(ends))]


def _severe(text: str, tmp_path: Path) -> list[tuple[str, str | None, str]]:
    where = tmp_path / "capture.txt"
    where.write_text(text + "\n", encoding="utf-8")
    with mock.patch("gpuvet.cli.doctor.heartbeat", _quiet):
        result, _ = _diagnose(None, None, None, [str(where)], None, False)
    return [(f.cause, f.module, f.severity) for f in result.findings if f.severity in ("warn", "critical")]


@pytest.mark.parametrize("text", [_NCCL, _ROCM_SMI], ids=["nccl-tests", "rocm-smi"])
def test_a_healthy_table_cut_anywhere_in_its_last_row_gains_no_finding(text: str, tmp_path: Path) -> None:
    assert _severe(text, tmp_path) == []
    for cut in _cuts(text):
        for tail in ("", "\n# [cut: the rest of the run]", "\nand then the job hung, any idea?"):
            assert _severe(cut + tail, tmp_path) == [], (cut[-60:], tail)


def test_an_nccl_tests_row_cut_after_its_algbw_is_noted_not_read() -> None:
    """The batch Q row: '32768 8192 float sum -1 60.86 0.54' matched the old layout (no root), its busbw the
    error column; a row of one table is measured against the table's widest row."""
    cut = _NCCL + "\n       131072         32768     float     sum      -1    60.86    0.54"
    got = bench.parse_nccl(list(clean(cut).lines), "x")
    (result,) = got.results
    assert [r.size_bytes for r in result.rows] == [1024, 2048, 65536] and not got.failures
    assert any("the last row is cut (line 9: 7 of 13 columns)" in n for n in got.notes)


def test_a_lone_nccl_tests_row_is_measured_against_its_header() -> None:
    lone = "\n".join(_NCCL.split("\n")[:5]) + "\n        1024           256     float     sum      -1    41.20    0.02"
    got = bench.parse_nccl(list(clean(lone).lines), "x")
    assert got.results[0].rows == [] and any("7 of 13 columns" in n for n in got.notes)


def test_a_gpu_burn_progress_line_cut_before_its_temps_keeps_no_error_count() -> None:
    """gpu-burn ends each progress line with its temps: a line without them was cut, its last error cell
    maybe mid-number ('1234' of '123456789  (DIED!)'), so no count of it is read."""
    for cut in (_BURN[:_BURN.index("(DIED!)")], _BURN[:_BURN.index("3456789")], _BURN[:_BURN.index(" - 1234")]):
        got = gpu_burn.parse(list(clean(cut).lines))
        assert got.errors == [] and got.died == set() and got.work == [812, 809]
        assert any("is cut (no 'temps:' column)" in n for n in got.notes)
    whole = gpu_burn.parse(list(clean(_BURN).lines))
    assert whole.errors == [0, 123456789] and whole.died == {1}


def test_a_gpu_burn_line_cut_mid_error_cell_gains_no_finding(tmp_path: Path) -> None:
    """A died worker's count cut to its first digits ('1234', its (DIED!) mark lost) is no count of wrong
    results: no finding the whole line did not give."""
    whole = {(c, sev) for c, _, sev in _severe(_BURN, tmp_path)}
    for cut in _cuts(_BURN):
        if "errors:" in cut:
            assert {(c, sev) for c, _, sev in _severe(cut, tmp_path)} <= whole, cut[-60:]


@pytest.mark.parametrize("kept", [7, 8])
def test_a_row_cut_short_of_its_layout_is_no_row_of_an_older_one(kept: int, tmp_path: Path) -> None:
    """Rows without a header (a tail): a row cut at 7 or 8 cells fits the older layouts' shapes ('sum' or the
    root -1 in their time column, the busbw or algbw in their error column); it is none of them."""
    rows = _NCCL.split("\n")[5:]
    cut = " ".join(rows[-1].split()[:kept])
    assert bench._row(cut) is None
    assert _severe("\n".join([*rows[:-1], cut]), tmp_path) == []
    alone = _severe_or_refused(cut, tmp_path)  # the row alone: refused, or read with no finding
    assert alone == [] or isinstance(alone, str)


def _severe_or_refused(text: str, tmp_path: Path) -> object:
    from gpuvet.errors import GpuvetError

    try:
        return _severe(text, tmp_path)
    except GpuvetError as exc:
        return exc.message


def test_a_rocm_smi_table_of_one_row_cut_is_measured_against_its_header(tmp_path: Path) -> None:
    """The file stops inside the table's only row: its header's columns ('SCLK OD' one column) say it is cut;
    a whole row missing a blank cell still reaches the last column and is read."""
    head = ("====================    ROCm System Management Interface    ====================\n"
            " GPU  Temp    AvgPwr   SCLK     MCLK     Fan      Perf    SCLK OD    MCLK OD\n")
    row = "  0   N/A     N/A      N/A      N/A      0%       N/A       N/A        N/A"
    for cells in range(2, 9):
        cut = row[:list(re.finditer(r"\S+", row))[cells - 1].end()]
        assert _severe(head + cut, tmp_path) == [], cut
    unread = row.replace("0%      ", "N/A     ")
    assert ("module_reported_warning", "GPU[0]", "warn") in _severe(head + unread, tmp_path)
