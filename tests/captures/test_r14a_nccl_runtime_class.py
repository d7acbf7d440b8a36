"""Issue 46 (R14A): the NCCL/RCCL runtime-log class judged by one rule per family (knowledge/nccl_warns.yaml's
header): a node-health verdict is critical where the node must leave service, so the job's own configuration (the
socket interface or address family, the container's /dev/shm) is collective_job_config (info), a queue pair that
will not connect is the path between nodes (collective_link_failed, warn), a collective benchmark's failed run is
a warn unless the CUDA runtime names the module's fault; the processes whose lines only trace the first WARN's
error back through init follow it (one finding); RCCL's init advice (iommu, HSA_FORCE_FINE_GRAIN_PCIE, NUMA
balancing) is no failure; a missing libibverbs is a note unless the log shows the job needed IB; 'NET/IB : Using
[RO]' after 'No device found' names no IB device. Lines written here in the shapes NCCL's and RCCL's sources print
(misc/socket.cc, bootstrap.cc, misc/shmutils.cc, misc/ibvwrap.cc, misc/ibvwrap.cc's NO_VERBS, net_ib.cc's 'Using'
line, RCCL's init.cc ncclInit(), nccl-tests' common.h failure macros)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import capture_json, doctor_text

H = "trn-a07"


def _nccl(pid: int, dev: int, level: str, msg: str, src: str = "", host: str = H) -> str:
    at = f" {src}" if src else ""
    return f"{host}:{pid}:{pid + 100} [{dev}]{at} NCCL {level} {msg}\n"


def _found(data: dict[str, Any]) -> dict[tuple[str, str | None], str]:
    return {(f["cause"], f.get("module")): f["severity"] for f in data.get("findings", [])}


@pytest.mark.parametrize(("src", "msg"), [
    ("misc/socket.cc:417", "Net : Socket creation failed : Address family not supported by protocol"),
    ("bootstrap.cc:92", "Bootstrap : no socket interface found"),
    ("transport/net_socket.cc:120", "NET/Socket : no interface found"),
    ("misc/socket.cc:540", "No usable listening interface found"),
])
def test_the_socket_interface_is_the_jobs_setting_not_the_nodes_fault(tmp_path: Path, src: str, msg: str) -> None:
    text = (_nccl(4105, 0, "INFO", "Bootstrap : Using eth0:10.4.0.7<0>") + _nccl(4105, 0, "WARN", msg, src) +
            _nccl(4105, 0, "INFO", "init.cc:1400 -> 2"))
    code, data = doctor_text(tmp_path, text)
    assert _found(data) == {("collective_job_config", f"{H} GPU 0"): "info"} and code == 0
    (f,) = data["findings"]
    assert f["evidence"]["kind"] == "nccl_socket_interface" and "NCCL_SOCKET_IFNAME" in f["fix"]


def test_dev_shm_too_small_is_said_once_and_the_processes_that_followed_it_are_cited(tmp_path: Path) -> None:
    text = (_nccl(55, 2, "WARN", "Error while creating shared memory segment /dev/shm/nccl-Qx81Zp (size 9637888)",
                  "misc/shmutils.cc:113") +
            _nccl(53, 0, "INFO", "transport.cc:33 -> 2") + _nccl(55, 2, "INFO", "transport/shm.cc:114 -> 2") +
            _nccl(55, 2, "INFO", "init.cc:1222 -> 2") + _nccl(53, 0, "INFO", "init.cc:1222 -> 2") +
            _nccl(54, 1, "INFO", "group.cc:418 -> 2") + _nccl(54, 1, "INFO", "init.cc:1876 -> 2"))
    code, data = doctor_text(tmp_path, text)
    assert _found(data) == {("collective_job_config", f"{H} GPU 2"): "info"} and code == 0
    followed = data["findings"][0]["evidence"]["followed_by"]
    assert [x.split(":")[0] for x in followed] == [f"{H} GPU 0", f"{H} GPU 1"]


def test_a_bare_trace_with_no_warn_in_the_file_keeps_the_communicators_cause(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, _nccl(53, 0, "INFO", "transport/net_ib.cc:282 -> 2") +
                             _nccl(53, 0, "INFO", "init.cc:1222 -> 2"))
    assert _found(data) == {("collective_init_failed", f"{H} GPU 0"): "critical"} and code == 1


@pytest.mark.parametrize("msg", [
    "Call to ibv_modify_qp failed with error Connection timed out",
    "Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR",
])
def test_a_queue_pair_that_will_not_connect_is_the_path_between_nodes(tmp_path: Path, msg: str) -> None:
    text = _nccl(1112, 3, "WARN", msg, "misc/ibvwrap.cc:160") + _nccl(1112, 3, "INFO", "transport/net_ib.cc:811 -> 2")
    code, data = doctor_text(tmp_path, text)
    assert _found(data) == {("collective_link_failed", f"{H} GPU 3"): "warn"} and code == 1
    assert data["findings"][0]["evidence"]["kind"] == "nccl_ib_qp"


_HEAD = ("# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
         "validation: 1 graph: 0\n#\n# Using devices\n"
         "#  Rank  0 Group  0 Pid  41234 on   wks-3090 device  0 [0x01] NVIDIA GeForce RTX 3090\n"
         "#  Rank  1 Group  0 Pid  41234 on   wks-3090 device  1 [0x09] NVIDIA GeForce RTX 3090\n")


@pytest.mark.parametrize("error", ["unhandled cuda error (run with NCCL_DEBUG=INFO for details) / ",
                                   "unhandled system error / ", "internal error / ", "invalid usage / "])
def test_a_collective_benchmark_that_failed_its_run_warns(tmp_path: Path, error: str) -> None:
    text = _HEAD + f"wks-3090: Test NCCL failure common.cu:958 '{error}'\n .. wks-3090 pid 41234: Test failure " \
                   "common.cu:842\n"
    code, data = doctor_text(tmp_path, text)
    assert _found(data) == {("collective_test_failed", None): "warn"} and code == 1


def test_a_benchmark_whose_cuda_error_names_the_modules_fault_stays_critical(tmp_path: Path) -> None:
    text = _HEAD + "wks-3090: Test CUDA failure common.cu:892 'uncorrectable ECC error encountered'\n"
    code, data = doctor_text(tmp_path, text)
    assert {s for (c, _), s in _found(data).items() if c == "ecc_uncorrectable_since_boot"} == {"critical"}


_RCCL = "/opt/rocm/share/rccl/src/init.cc"


@pytest.mark.parametrize("advice", [
    'Missing "amd_iommu=on" from kernel command line which can lead to system instablity or hang!',
    'Missing "iommu=pt" from kernel command line which can lead to system instablity or hang!',
    'Missing "HSA_FORCE_FINE_GRAIN_PCIE=1" from environment which can lead to low RCCL performance, system '
    'instablity or hang!',
    'NUMA auto balancing enabled which can lead to variability in the RCCL performance! Disable by "sudo sysctl '
    'kernel.numa_balancing=0"',
    "LL cutoff points not detected for a supported arch gfx942",
])
def test_rccls_init_advice_is_no_failure(tmp_path: Path, advice: str) -> None:
    text = (_nccl(77, 0, "INFO", "Bootstrap : Using bond0:10.64.4.23<0>", host="mi-n12") + "\n" +
            _nccl(77, 0, "WARN", advice, f"{_RCCL}:120", host="mi-n12") + "\n" +
            _nccl(77, 0, "INFO", "comm 0x55d1 rank 0 nranks 8 cudaDev 0 busId 29000 - Init COMPLETE", host="mi-n12"))
    code, data = doctor_text(tmp_path, text)
    assert code == 0 and data and not _found(data)
    said = " ".join(s["summary"] for s in data["steps"] if s["check"] == "nccl_log")
    assert f"RCCL's advice at init (settings to check, no failure): {advice[:60]}" in said  # a note, as printed


_NO_VERBS = "Failed to open libibverbs.so[.1]"


def test_no_libibverbs_on_one_host_is_a_note(tmp_path: Path) -> None:
    text = "".join(_nccl(9 + d, d, "WARN", _NO_VERBS, "misc/ibvwrap.cc:63") for d in range(4))
    code, data = doctor_text(tmp_path, text)
    assert _found(data) == {("nccl_ib_library_absent", H): "info"} and code == 0


@pytest.mark.parametrize("needs", [
    _nccl(30, 0, "WARN", _NO_VERBS, "misc/ibvwrap.cc:63", host="trn-a08"),  # a second host
    _nccl(9, 0, "INFO", "NCCL_IB_HCA set by environment to mlx5_0,mlx5_1"),  # the job asked for IB
    _nccl(9, 0, "INFO", "comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0"),
])
def test_no_libibverbs_where_the_job_needs_ib_warns(tmp_path: Path, needs: str) -> None:
    text = needs + _nccl(9, 0, "WARN", _NO_VERBS, "misc/ibvwrap.cc:63")
    code, data = doctor_text(tmp_path, text)
    assert {c: s for (c, _), s in _found(data).items()} == {"nccl_ib_unavailable": "warn"} and code == 1


def test_net_ib_using_only_relaxed_ordering_names_no_ib_device(tmp_path: Path) -> None:
    text = (_nccl(5, 1, "INFO", "NCCL version 2.27.5+cuda12.9") + _nccl(5, 1, "INFO", "NET/IB : No device found.") +
            _nccl(5, 1, "INFO", "NET/IB : Using [RO]; OOB eth0:192.168.69.159<0>") +
            _nccl(5, 1, "INFO", "NET/Socket : Using [0]eth0:192.168.69.159<0>"))
    code, data = doctor_text(tmp_path, text)
    said = " ".join(s["summary"] for s in data["steps"] if s["check"] == "nccl_log")
    assert code == 0 and not _found(data) and "IB ([RO])" not in said and " on IB" not in said


def _inventory(tmp_path: Path, text: str) -> dict[str, Any]:
    return capture_json(tmp_path, text, "inventory")


@pytest.mark.parametrize("lines", [
    [_nccl(40, 0, "INFO", "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; OOB "
                          "ib0:10.8.0.7<0>")],
    # 2.0-2.2: one line per device, each process its own (a process may print them in any order)
    [_nccl(40 + p, p, "INFO", f"NET/IB: [{d}] mlx5_{d}:1/IB") for p in (0, 1) for d in (2, 0, 3, 1)],
])
def test_inventory_lists_the_hcas_nccl_named_and_the_communicators_size(tmp_path: Path, lines: list[str]) -> None:
    text = "".join(lines) + _nccl(40, 0, "INFO", "comm 0x7fd0 rank 0 nranks 8 cudaDev 0 busId 1a000 - Init COMPLETE") \
        + _nccl(41, 1, "INFO", "comm 0x7fd1 rank 1 nranks 8 cudaDev 1 busId 1b000 - Init COMPLETE")
    data = _inventory(tmp_path, text)
    assert sorted(n["device"] for n in data["nics"]) == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    assert all(n["ports"] == [] and n["bus_id"] is None for n in data["nics"])  # no state invented
    assert any("a communicator of 8 ranks" in n and "rank(s) 0, 1" in n for n in data["notes"])


def test_inventory_lists_no_hca_where_nccl_found_none(tmp_path: Path) -> None:
    text = (_nccl(5, 1, "INFO", "NET/IB : No device found.") +
            _nccl(5, 1, "INFO", "NET/IB : Using [RO]; OOB eth0:192.168.69.159<0>") +
            _nccl(5, 1, "INFO", "NET/Socket : Using [0]eth0:192.168.69.159<0>"))
    assert not _inventory(tmp_path, text).get("nics")


_TORCH = ("Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    dist.barrier()\n"
          "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:94, "
          "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
          "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
          "Last error:\n")


@pytest.mark.parametrize("last", [
    "Error while creating shared memory segment /dev/shm/nccl-cjY8K5 (size 10617216), error: No space left on "
    "device (28)",
    "Net : Socket creation failed : Address family not supported by protocol",
])
def test_a_frameworks_report_of_the_jobs_setting_is_that_setting_once(tmp_path: Path, last: str) -> None:
    code, data = doctor_text(tmp_path, _TORCH + last + "\n")
    assert {c: s for (c, _), s in _found(data).items()} == {"collective_job_config": "info"} and code == 0


def test_a_frameworks_report_of_a_socket_connect_keeps_its_severity(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, _TORCH + "socketStartConnect: Connect to 10.0.0.5<51234> failed : Software "
                                                "caused connection abort\n")
    assert "critical" in set(_found(data).values()) and code == 1
