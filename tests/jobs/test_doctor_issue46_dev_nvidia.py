"""doctor on the classes the NVIDIA dev set (issue 46, dev_g_nvidia) found missed: an nccl-tests abort
whose cause the NCCL log beside it already names. The logs are written in NCCL's and nccl-tests'
formats; hosts, pids and addresses are made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_capture

FAILURE = ("nodeb: Test NCCL failure common.cu:1005 'unhandled cuda error'\n"
           " .. nodeb pid 4410: Test failure common.cu:891\n")
WARN = ("nodea:4401:4460 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.2.0.7<52210> "
        "with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
        "nodea:4401:4460 [1] NCCL INFO transport/net.cc:1311 -> 6\n")


def _benchmark(data: dict[str, object]) -> dict[str, object]:
    found = [f for f in data["findings"] if f["cause"] == "collective_test_failed"]  # type: ignore[attr-defined,index]
    assert len(found) == 1
    return found[0]  # type: ignore[no-any-return]


def test_an_abort_after_the_librarys_warn_cites_that_warn_and_its_advice(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, WARN + FAILURE)
    assert code == 1
    f = _benchmark(data)
    assert str(f["evidence"]["first_error"]).startswith("nodea [1], line 1: ")  # type: ignore[index]
    assert "status=12" in str(f["evidence"]["first_error"]) and "NET/IB" in str(f["fix"])  # type: ignore[index]


def test_an_abort_alone_keeps_the_benchmarks_own_advice(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, FAILURE)
    f = _benchmark(data)
    assert "first_error" not in f["evidence"] and "NCCL_DEBUG=INFO" in str(f["fix"])  # type: ignore[operator]
