"""CANN's HCCL/HCCP error codes as torch_npu prints them (issue 46, batch E): read as HCCL's own log
lines, each failure on the device torch_npu's '[ERROR] … (PID:…, Device:N, RankID:N)' line names
(the host is never printed); a set-up code is a communicator that did not come up, any other an error
while the job ran; another component's code is not the collective's. Written for the test in the
format torch_npu and CANN print."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.captures import ascend_errors
from gpuvet.captures.text import clean
from gpuvet.cli.app import main


def _doctor(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, dict[tuple[str, str | None], str]]:
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    data: dict[str, Any] = json.loads(out)
    return code, {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}


TRANSPORT_INIT = """\
[rank2]: Traceback (most recent call last):
[rank2]:   File "/opt/job/train.py", line 88, in <module>
[rank2]:     torch.distributed.barrier()
[rank2]: RuntimeError: create:torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:412 HCCL function error: \
HcclGetRootInfo, error code is 7
[rank2]: [ERROR] 2025-02-11-09:41:07 (PID:30112, Device:2, RankID:2) ERR02200 DIST call hccl api failed.
[rank2]: EI0009: [PID: 30112] 2025-02-11-09:41:07.118.204 Failed to create the transport between rank 2 and rank 6.
[rank2]:         TraceBack (most recent call last):
[rank2]:         Transport init error.[FUNC:InitTransport][FILE:transport_manager.cc][LINE:611]
"""

OP_TIMEOUT = """\
RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: HcclAllGather, error code is 9
[ERROR] 2025-03-02-22:10:55 (PID:4410, Device:6, RankID:14) ERR01100 OPS call acl api failed.
EI0002: [PID: 4410] 2025-03-02-22:10:55.002.917 The wait execution of the Notify register times out. \
Reason: The Notify register has not received the Notify record from remote rank [15].
        Solution: 1. Check the remote rank's process for an earlier error.
"""


def test_a_set_up_code_is_a_communicator_that_did_not_come_up_on_the_device_named(capsys, tmp_path) -> None:
    f = tmp_path / "torch_npu_ei0009.txt"
    f.write_text(TRANSPORT_INIT)
    code, found = _doctor(capsys, f)
    assert code == 1 and found == {("collective_init_failed", "GPU 2 (host not in the log)"): "critical"}


def test_another_code_is_an_error_while_the_job_ran_with_its_rank(capsys, tmp_path) -> None:
    parsed = ascend_errors.parse(clean(OP_TIMEOUT).lines)
    [failure] = parsed.failures
    assert (failure.kind, failure.at.dev, failure.rank, failure.at.source) == ("stalled", 6, 14, "EI0002")
    f = tmp_path / "torch_npu_ei0002.txt"
    f.write_text(OP_TIMEOUT)
    code, found = _doctor(capsys, f)
    assert code == 1 and found == {("collective_stalled", "GPU 6 (host not in the log)"): "critical"}


def test_a_code_said_twice_is_one_failure_and_another_components_code_is_not_hccls() -> None:
    parsed = ascend_errors.parse(clean(
        "[ERROR] 2025-03-02-22:10:55 (PID:4410, Device:1, RankID:1) ERR00100 PTA call acl api failed.\n"
        "EI9999: Inner Error!\n"
        "EI9999  The error from device(chipId:1, dieId:0), hccl task timeout occurred during task execution.\n"
        "EE1001: [PID: 4410] The argument is invalid.\n").lines)
    assert [(f.at.source, f.at.dev) for f in parsed.failures] == [("EI9999", 1)]
    assert "hccl task timeout" in parsed.failures[0].at.message  # the line that says what it was, kept


# CANN's error manager leading the named code with the process and time, then the calls it came through
LED = """\
[PID: 4411] 2026-03-02-14:20:51.602.117 Get_Socket_Timeout(EI0006): Getting socket times out. Reason: the peer \
rank did not start its connect in time.
        Solution: Check the peer ranks' logs first; raise HCCL_CONNECT_TIMEOUT for a slow start.
        TraceBack (most recent call last):
        Op fails to invoke the HcclCreateComResource function of the hccl module. ret = 4, comm = 0xfff0001.
        Op fails to invoke the HcclCreateComResource function of the hccl module. ret = 4, comm = 0xfff0001.
"""


def test_a_code_led_by_pid_and_time_is_read_and_the_calls_on_its_trace_are_the_same_failure() -> None:
    got = ascend_errors.parse(clean(LED).lines)
    (f,) = got.failures
    assert f.at.source == "EI0006" and f.at.line == 1 and f.kind == "init"  # set up: the call on its trace says so
    assert {1, 3, 4, 5} <= got.claimed
