"""doctor on the NVIDIA classes batch I (issue 46) found missed on first contact: NCCL's socket WARN that
names the peer closing the connection (old 2.x 'include/socket.h' prefix and the current one), and NCCL's IB
completion error quoted in a sentence without its 'NCCL WARN' prefix. Logs are written in NCCL's and
nccl-tests' formats; hosts, pids and addresses are made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import nccl_log
from gpuvet.captures.text import Line
from tests.support.helpers import doctor_capture, found_causes

ABORT = "NCCL failure common.cu:921 'unhandled system error'\n"


@pytest.mark.parametrize("warn", [
    "gpu-a:6601:6625 [0] include/socket.h:385 NCCL WARN Net : Connection closed by remote peer\n",
    "gpu-a:6601:6625 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
    "gpu-b<52344>\n",
])
def test_a_connection_the_peer_closed_is_the_failure_the_abort_echoes(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path, warn: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, warn + ABORT)
    assert code == 1
    causes = {c for c, _ in found_causes(data)}
    assert "collective_init_failed" in causes or "collective_runtime_error" in causes
    bench = [f for f in data["findings"] if f["cause"] == "collective_test_failed"]  # type: ignore[attr-defined]
    assert "Connection closed by remote peer" in str(bench[0]["evidence"]["first_error"])


@pytest.mark.parametrize("said", [
    "Both nodes run the test and it stops with NET/IB : Got completion from peer 10.0.3.7<41233> with status=12 "
    "opcode=0 len=0 vendor err 129 (Send) after a minute.\n",
    "the job printed NET/IB : Got completion from peer 10.0.3.7<41233> with error 12, opcode 0, len 0, "
    "vendor err 129 and hung\n",
])
def test_an_ib_completion_error_quoted_in_a_sentence_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                             said: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, said)
    assert code == 1
    found = [f for f in data["findings"] if f["cause"] == "collective_runtime_error"]  # type: ignore[attr-defined]
    assert found and "NET/IB" in str(found[0]["fix"])


def test_a_sentence_naming_a_completion_without_nccls_words_is_no_log_line() -> None:
    lines = [Line(1, "We got completion from peer review with status pending."),
             Line(2, "NET/IB : Got completion from peer 10.0.3.7<41233> with status=0 opcode=0 len=8 (Recv)")]
    got = nccl_log.parse(lines)
    assert got.failures == [] and got.lines == 1  # a status of 0 is a success NCCL never warns of
