"""Review 56's findings on the scheduler, UCX and sysfs counter readers (RF2): each class of input in the tool's
own format, written here small (the reviewer's reproducers' shape), fixed for its class, never for the one string.
A healthy capture gains no warn; the fault the reader read before is still read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuvet.cli.app import main
from gpuvet.knowledge import fault
from tests.captures.test_captures_fresh_c import run_json


def _data(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, data = run_json("doctor", "--from", str(path))
    return data


def _found(tmp_path: Path, text: str) -> list[tuple[str, str | None, str | None, str]]:
    return [(f["cause"], f.get("host"), f.get("module"), f["severity"]) for f in _data(tmp_path, text)["findings"]]


# --- HIGH 3: Kubernetes' MIG slices (the mixed strategy) are GPUs offered -------------------------------------
def _mig_node(gpus: int, slices: int, allocatable: int, labelled: int = 24) -> str:
    return ("Name:               gpu-node-7\n"
            "Labels:             nvidia.com/gpu.count=8\n"
            "                    nvidia.com/mig.strategy=mixed\n"
            f"                    nvidia.com/mig-2g.20gb.count={labelled}\n"
            "Capacity:\n  cpu:                     192\n"
            f"  nvidia.com/gpu:          {gpus}\n  nvidia.com/mig-2g.20gb:  {slices}\n"
            "Allocatable:\n  cpu:                     190\n"
            f"  nvidia.com/gpu:          {gpus}\n  nvidia.com/mig-2g.20gb:  {allocatable}\n")


def test_h3_a_mig_nodes_slices_are_gpus_offered_and_their_own_shortfall_still_warns(tmp_path: Path) -> None:
    data = _data(tmp_path, _mig_node(0, 24, 24))  # 8 GPUs, each cut into 3 slices: all offered
    assert data["findings"] == []
    assert any("MIG slices offered (nvidia.com/mig-2g.20gb)" in n for n in data["notes"])
    assert _found(tmp_path, _mig_node(2, 18, 18, 18)) == []  # two GPUs whole, six in slices
    short = _data(tmp_path, _mig_node(0, 24, 21))  # the device plugin marked 3 slices unhealthy
    assert [(f["cause"], f["severity"]) for f in short["findings"]] == [("scheduler_gpus_short", "warn")]
    assert "nvidia.com/mig-2g.20gb: allocatable 21 of capacity 24" in str(short["findings"][0]["evidence"])
    fewer = _data(tmp_path, _mig_node(0, 21, 21))  # fewer slices than feature discovery labelled
    assert "capacity 21 of the 24 GPU feature discovery labelled" in str(fewer["findings"][0]["evidence"])
    # no slice offered: a capacity of no GPU below the 8 labelled is the GPUs lost, as before
    assert _found(tmp_path, _mig_node(0, 0, 0, 0)) == [("scheduler_gpus_short", None, None, "warn")]


# --- HIGH 4: a drain reason naming a GPU is a fault only with a fault word ----------------------------------
def _scontrol(reason: str) -> str:
    return ("NodeName=gpu01 Arch=x86_64 CoresPerSocket=32\n   Gres=gpu:a100:8(S:0-1)\n"
            f"   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1\n   Reason={reason} [root@2026-12-01T09:00:00]\n")


def _sinfo(reason: str) -> str:
    return ("$ sinfo -R\nREASON               USER      TIMESTAMP           NODELIST\n"
            f"{reason:<20} root      2026-12-01T09:00:00 gpu[01-04]\n"
            "rack move            root      2026-12-01T09:05:00 cpu[10-12]\n")


def test_h4_an_admins_gpu_maintenance_drain_is_said_and_a_gpu_fault_drain_warns(tmp_path: Path) -> None:
    for maintenance in ("scheduled nvidia driver upgrade to 550", "GPU firmware update", "swap gpu tray, planned"):
        for text in (_scontrol(maintenance), _sinfo(maintenance)):
            data = _data(tmp_path, text)
            assert data["findings"] == [], maintenance
            assert any("an admin's drain" in n and maintenance in n for n in data["notes"])
    for said in ("GPU 3 Xid 79", "nvidia-smi hangs", "gpu ECC errors", "GPU missing", "nvlink down"):
        for text in (_scontrol(said), _sinfo(said)):
            assert [(f["cause"], f["severity"]) for f in _data(tmp_path, text)["findings"]] == \
                [("scheduler_gpus_short", "warn")], said


# --- MEDIUM 10: a node condition's Status column, by its type's polarity, and its Reason column alone --------
_HEAD = ("Conditions:\n  Type                     Status  LastHeartbeatTime                 LastTransitionTime"
         "                Reason                          Message\n")


def _condition(kind: str, status: str, reason: str, message: str) -> str:
    return (f"  {kind:<24} {status:<7} Mon, 01 Dec 2026 10:00:00 +0000   Mon, 01 Dec 2026 09:00:00 +0000   "
            f"{reason:<31} {message}\n")


def test_m10_a_condition_is_a_gpu_fault_only_where_its_status_means_a_problem(tmp_path: Path) -> None:
    healthy = _HEAD + _condition("AcceleratedHardwareReady", "True", "NvidiaAcceleratedHardwareReady",
                                 "NVIDIA GPUs healthy; last NvidiaXID79Error cleared") + \
        _condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")
    assert main(["doctor", "--from", _write(tmp_path, healthy)]) != 1  # no fault: read as a GPU agent's, or refused
    cleared = _HEAD + _condition("AcceleratedHardwareReady", "True", "NvidiaXID79Error", "recovered")
    data = _data(tmp_path, cleared)  # the fault's name under a status that means none: said, not judged
    assert data["findings"] == [] and any("AcceleratedHardwareReady True" in n for n in data["notes"])
    down = _HEAD + _condition("AcceleratedHardwareReady", "False", "NvidiaXID79Error", "XID 79 detected on GPU 2")
    assert [(f["cause"], f["severity"]) for f in _data(tmp_path, down)["findings"]] == [("scheduler_gpus_short", "warn")]
    problem = _HEAD + _condition("GpuProblem", "True", "NvidiaDeviceCountMismatch", "7 of 8 GPUs")  # a problem type
    assert [(f["cause"], f["severity"]) for f in _data(tmp_path, problem)["findings"]] == \
        [("scheduler_gpus_short", "warn")]
    assert _data(tmp_path, _HEAD + _condition("GpuProblem", "False", "NvidiaDeviceCountMismatch", "ok"))["findings"] == []


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    return str(path)


# --- MEDIUM 8: UCX's INFO lines are no completion error; MEDIUM 9: two hosts' errors on one port are two -----
def _ucx(host: str, level: str, message: str) -> str:
    return f"[1737742661.094513] [{host}:260472:0]     ib_iface.c:912  UCX  {level:<5}  {message}\n"


def test_m8_ucx_lines_below_warn_are_read_without_an_error(tmp_path: Path) -> None:
    info = _ucx("cn0244", "INFO", "Using active port on mlx5_0:1/IB") + \
        _ucx("cn0244", "DIAG", "Using active port on mlx5_1:1/IB")
    data = _data(tmp_path, info)
    assert data["findings"] == []
    assert any("read as UCX log" in n for n in data["notes"])
    error = _ucx("cn0244", "ERROR", "Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)")
    assert _found(tmp_path, info + error) == [("rdma_completion_error", None, "mlx5_0 port 1", "warn")]


def test_m9_one_port_on_two_hosts_is_two_findings_each_with_its_host(tmp_path: Path) -> None:
    retry = "Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)"
    two = _ucx("nodeA", "ERROR", retry) + _ucx("nodeA", "ERROR", retry) + _ucx("nodeB", "ERROR", retry)
    data = _data(tmp_path, two)
    assert [(f["host"], f["module"], f["evidence"]["times"]) for f in data["findings"]] == [
        ("nodeA", "mlx5_0 port 1", 2), ("nodeB", "mlx5_0 port 1", 1)]
    one = _ucx("nodeA", "ERROR", retry) * 2  # one host: named by its port alone, as before
    assert _found(tmp_path, one) == [("rdma_completion_error", None, "mlx5_0 port 1", "warn")]


# --- LOW 13: sysfs counters behind a pdsh/clush host prefix --------------------------------------------------
def _counters(prefix: str, dev: str, values: dict[str, int]) -> str:
    return "".join(f"{prefix}/sys/class/infiniband/{dev}/ports/1/counters/{k}:{v}\n" for k, v in values.items())


def test_l13_host_prefixed_sysfs_counters_are_read_and_two_hosts_stay_two(tmp_path: Path) -> None:
    at_limit = {"link_downed": 255, "symbol_error": 0}
    assert _found(tmp_path, _counters("nodeA: ", "mlx5_0", at_limit)) == \
        [("nic_counters_at_limit", None, "mlx5_0 port 1", "warn")]
    assert _found(tmp_path, _counters("nodeA: ", "mlx5_0", {"link_downed": 1, "symbol_error": 0})) == []
    two = _counters("nodeA: ", "mlx5_0", at_limit) + _counters("nodeB: ", "mlx5_0", {"link_downed": 3,
                                                                                      "symbol_error": 65535})
    found = _data(tmp_path, two)["findings"]
    assert [f["module"] for f in found] == ["nodeA mlx5_0 port 1", "nodeB mlx5_0 port 1"]
    assert "link_downed 255" in found[0]["evidence"]["reading"]
    assert "symbol_error 65535" in found[1]["evidence"]["reading"]
    # hosts whose prefix is peeled before the reader (node01:): one port's counters read twice keep the worst
    peeled = _counters("node01: ", "mlx5_0", at_limit) + _counters("node02: ", "mlx5_0", {"link_downed": 3,
                                                                                          "symbol_error": 0})
    assert "link_downed 255" in _data(tmp_path, peeled)["findings"][0]["evidence"]["reading"]


# --- LOW 12: DCGM's NvSwitch module's ERROR lines judged by the knowledge base, not by the reader ----------------
def test_l12_the_nvswitch_modules_errors_take_their_severity_from_faults_yaml(tmp_path: Path) -> None:
    line = ("2026-02-11 03:10:07.511 ERROR [1880:1921] [[NvSwitch]] ReadNvSwitchStatusAllSwitches() returned Object is "
            "in an undefined state [/builds/dcgm/modules/nvswitch/DcgmModuleNvSwitch.cpp:388] "
            "[DcgmNs::DcgmModuleNvSwitch::RunOnce]\n")
    data = _data(tmp_path, line * 2)
    assert [(f["cause"], f["severity"]) for f in data["findings"]] == [
        ("dcgm_nvswitch_unread", fault("dcgm_nvswitch_unread").severity)]
    assert data["findings"][0]["evidence"]["health"] == "ERROR"  # as DCGM logged it, no health word of the reader's
    assert "(2 line(s))" in data["findings"][0]["evidence"]["message"]
    incident = ("2026-02-11 03:11:00.000 WARNING [1880:1921] [[Health]] Detected a WARNING in health system Thermal: "
                "'Detected clocks event due to thermal violation in GPU 2.'\n")
    assert {f["cause"] for f in _data(tmp_path, line + incident)["findings"]} == {"dcgm_nvswitch_unread",
                                                                                 "thermal_throttling"}  # PHRD
