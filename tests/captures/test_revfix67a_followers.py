"""REV67a's findings on R14A's folding, mended (issue 46): a framework's report is dropped as the echo of the job's
configuration only where it quotes that WARN right under itself (#3: an earlier run's /dev/shm WARN never hides a
later watchdog timeout); a process's trace folds only into a WARN of its own host (#4: node-b's failure is never
a note on node-a's /dev/shm). Lines in the shapes NCCL (misc/shmutils.cc, init.cc's error-return trace) and
PyTorch (ProcessGroupNCCL's watchdog, DistBackendError's 'Last error:') print."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.helpers import doctor_text

_SHM = "misc/shmutils.cc:113 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-Qx81Zp (size 9637888)"
_TIMEOUT = ("[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4021, "
            "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800472 milliseconds before "
            "timing out.\n")


def _found(data: dict[str, Any]) -> dict[tuple[str, str | None], str]:
    return {(f["cause"], f.get("module")): f["severity"] for f in data.get("findings", [])}


def test_a_later_timeout_is_not_hidden_by_an_earlier_runs_shm_warn(tmp_path: Path) -> None:
    rerun = "".join(f"gpu-a01:77:177 [0] NCCL INFO Channel {c:02d}/0 : 0[0] -> 1[1] via P2P/IPC\n" for c in range(20))
    text = (f"gpu-a01:55:155 [2] {_SHM}\ngpu-a01:55:155 [2] NCCL INFO init.cc:1222 -> 2\n# re-ran with --shm-size=16g\n"
            + rerun + "gpu-a01:77:177 [0] NCCL INFO comm 0x55d1 rank 0 nranks 2 cudaDev 0 busId 1a000 - Init COMPLETE\n"
            + _TIMEOUT)
    code, data = doctor_text(tmp_path, text)
    found = {c: s for (c, _), s in _found(data).items()}
    assert found == {"collective_runtime_error": "warn", "collective_job_config": "info"} and code == 1


def test_the_quoted_shm_warn_under_the_frameworks_line_is_still_said_once(tmp_path: Path) -> None:
    text = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:94, "
            "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
            "Last error:\nError while creating shared memory segment /dev/shm/nccl-cjY8K5 (size 10617216)\n")
    code, data = doctor_text(tmp_path, text)
    assert {c: s for (c, _), s in _found(data).items()} == {"collective_job_config": "info"} and code == 0


def test_another_hosts_trace_keeps_its_own_finding(tmp_path: Path) -> None:
    trace = ("node-b:90:190 [3] NCCL INFO transport/net_ib.cc:811 -> 2\nnode-b:90:190 [3] NCCL INFO "
             "transport/net.cc:812 -> 2\nnode-b:90:190 [3] NCCL INFO init.cc:1222 -> 2\n")
    text = trace + f"node-a:55:155 [2] {_SHM}\nnode-a:55:155 [2] NCCL INFO init.cc:1222 -> 2\n" + trace
    code, data = doctor_text(tmp_path, text)
    assert _found(data) == {("collective_init_failed", "node-b GPU 3"): "critical",
                            ("collective_job_config", "node-a GPU 2"): "info"} and code == 1
    shm = next(f for f in data["findings"] if f["cause"] == "collective_job_config")
    assert "followed_by" not in shm["evidence"]


def test_a_trace_of_the_same_host_still_follows_its_warn(tmp_path: Path) -> None:
    text = (f"node-a:55:155 [2] {_SHM}\nnode-a:55:155 [2] NCCL INFO init.cc:1222 -> 2\n"
            "node-a:53:153 [0] NCCL INFO group.cc:418 -> 2\nnode-a:53:153 [0] NCCL INFO init.cc:1876 -> 2\n")
    code, data = doctor_text(tmp_path, text)
    assert _found(data) == {("collective_job_config", "node-a GPU 2"): "info"} and code == 0
    assert [x.split(":")[0] for x in data["findings"][0]["evidence"]["followed_by"]] == ["node-a GPU 0"]
