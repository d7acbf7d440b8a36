"""Issue 46 (REV68a on FX68A): DCGM's smaller tools' readers claim only their own lines. dcgmproftester's typed
command is claimed, the tool's own error line (ld.so's 'dcgmproftester12: error while loading shared libraries:
…', its 'failed: cuInit returned …') never is; a run that printed nothing of the tool's own claims nothing. dcgmi
modules -l's 'Status: Failure' box row is the listing's failure: said, never claimed as a header."""

from __future__ import annotations

from gpuvet.captures import dcgm_tools
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.text import Line


def _lines(*texts: str) -> list[Line]:
    return [Line(n + 1, t) for n, t in enumerate(texts)]


def test_proftester_claims_its_command_never_its_error_line() -> None:
    lines = _lines("$ docker run --gpus=all --entrypoint /usr/bin/dcgmproftester11 dcgm:4 -t 1004 -d 10",
                   "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 108",
                   "dcgmproftester11: error while loading shared libraries: libdcgm.so.3: cannot open shared object file",
                   "dcgmproftester11 failed: cuInit returned CUDA_ERROR_UNKNOWN (999)")
    out = AppErrorsParse()
    dcgm_tools.proftester(lines, out)
    assert out.claimed == {1, 2}, out.claimed


def test_proftester_that_printed_nothing_of_its_own_claims_nothing() -> None:
    out = AppErrorsParse()
    dcgm_tools.proftester(_lines("$ dcgmproftester12 -t 1004 -d 30",
                                 "dcgmproftester12: error while loading shared libraries: libdcgm.so.4: x"), out)
    assert out.claimed == set() and not out.notes


def test_modules_listing_that_failed_is_said_not_claimed() -> None:
    lines = _lines("+-----------+", "| List Modules |", "| Status: Failure |", "+-----------+",
                   "| Module ID | Name | State |", "| 0 | Core | Loaded |")
    out = AppErrorsParse()
    dcgm_tools.modules(lines, out)
    assert 3 not in out.claimed and 6 in out.claimed, out.claimed
    assert any("the listing failed" in n for n in out.notes), out.notes
