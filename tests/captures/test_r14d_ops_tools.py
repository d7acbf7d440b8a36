"""Issue 46 (R14D): operators' and schedulers' own tools around the GPU, on captures written here in each tool's
documented form: ps/top listings with a GPU task in uninterruptible sleep (procps' STAT/S column, WCHAN), LBNL
NHC's hardware checks (mej/nhc scripts/lbnl_hw.nhc's die messages, nhc's 'Health check failed:' and 'Check …
returned' lines, node-mark-offline's), a health check's 'Found XID errors: N', and NVML's unknown error in a
container (NVIDIA/nvidia-docker#1730: the container's cgroup device rules lost)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import capture_json


def _findings(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    data = capture_json(tmp_path, text)
    found = data["findings"]
    assert isinstance(found, list)
    return found


def _grave(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in found if f["severity"] in ("warn", "critical")]


PS_AUX_GREP = """\
$ ps aux | grep nvidia
root       2211  0.0  0.0  14560  3120 ?        D    Mar11   0:00 nvidia-smi -q
nvidia-+   1720  0.0  0.0  17100  1740 ?        Ds   Mar11   0:00 /usr/bin/nvidia-persistenced --user nvidia-persistenced
"""
PS_EO = """\
$ ps -eo pid,stat,wchan:32,cmd
    PID STAT WCHAN                            CMD
      1 Ss   ep_poll                          /sbin/init
  40112 Dl   os_acquire_mutex                 python3 train.py --gpus 8
  40230 S+   pipe_read                        grep --color=auto python
"""
TOP = """\
top - 10:12:01 up 3 days,  2:01,  1 user,  load average: 8.00, 8.00, 8.00
    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND
   3111 root      20   0   23108   4012   3400 D   0.0   0.0   0:00.01 nvidia-smi
      1 root      20   0  167520  11672   8400 S   0.0   0.0   0:03.10 systemd
"""
PS_EL = """\
F S   UID     PID    PPID  C PRI  NI ADDR SZ WCHAN  TTY          TIME CMD
4 S     0       1       0  0  80   0 - 42085 ep_pol ?        00:00:03 systemd
4 D     0    5120       1  0  80   0 -  3640 uvm_va ?        00:00:00 nv-hostengine
"""


@pytest.mark.parametrize("text", [PS_AUX_GREP, PS_EO, TOP, PS_EL], ids=["aux", "eo_wchan", "top", "el"])
def test_a_gpu_task_in_d_state_is_the_driver_wedged(tmp_path: Path, text: str) -> None:
    found = _grave(_findings(tmp_path, text + text))  # review 67b F8: listed twice, the same pid still in D
    assert [(f["cause"], f["severity"]) for f in found] == [("module_needs_reset", "critical")]
    assert "uninterruptible" in str(found[0]["evidence"])


@pytest.mark.parametrize("text", [PS_AUX_GREP, PS_EO, TOP, PS_EL], ids=["aux", "eo_wchan", "top", "el"])
def test_one_snapshot_of_a_gpu_task_in_d_state_is_a_warn_not_a_wedge(tmp_path: Path, text: str) -> None:
    """Review 67b F8: nvidia-smi also waits in D for seconds while a driver starts, so one snapshot shows a task
    blocked in the driver (warn: list it again), not the wedge a lasting D proves (module_needs_reset, critical)."""
    data = capture_json(tmp_path, text)
    found = [(f["cause"], f["severity"]) for f in data["findings"]]  # type: ignore[union-attr]
    assert found == [("driver_task_blocked", "warn")]
    assert "in one snapshot" in str(data["notes"])


PS_HEALTHY = """\
USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND
root         812  0.0  0.0  17100  1740 ?        Ss   Mar11   0:00 /usr/bin/nvidia-persistenced --verbose
root        4410 98.0  2.1 9123456 880000 pts/0  Rl+  10:02  12:01 python3 train.py
"""


def test_a_listing_without_a_stuck_gpu_task_is_read_and_clear(tmp_path: Path) -> None:
    data = capture_json(tmp_path, PS_HEALTHY)
    assert _grave(data["findings"]) == []  # type: ignore[arg-type]
    assert "none in uninterruptible sleep" in str(data["notes"])


NHC_IB = """\
[root@gpu017 ~]# nhc
ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port mlx5_0:1 is ACTIVE (LinkUp 200 Gb/sec).
20240102 08:00:01 /usr/libexec/nhc/node-mark-offline gpu017 check_hw_ib:  No IB port mlx5_0:1 is ACTIVE (LinkUp 200 Gb/sec).
"""
NHC_ETH = """\
ERROR:  nhc:  Health check failed:  check_hw_eth:  Ethernet device ib0 not detected.
20240102 08:00:01 /usr/libexec/nhc/node-mark-offline gpu018 check_hw_eth:  Ethernet device ib0 not detected.
"""


def test_nhc_ib_port_not_active_is_a_nic_port_down_on_its_node(tmp_path: Path) -> None:
    found = _grave(_findings(tmp_path, NHC_IB))
    assert [(f["cause"], f["severity"], f.get("host")) for f in found] == [("nic_port_down", "critical", "gpu017")]


def test_nhc_ethernet_device_not_detected_is_a_nic_missing(tmp_path: Path) -> None:
    found = _grave(_findings(tmp_path, NHC_ETH))
    assert [(f["cause"], f.get("host")) for f in found] == [("nic_missing", "gpu018")]


NHC_XID = """\
/var/log/nhc.log:
Found XID errors: 79
Node Health Check failed.  Check check_gpu_xid returned 1
ERROR:  nhc:  Health check failed:  Check check_gpu_xid returned 1
"""
NHC_XID_INFO = NHC_XID.replace(": 79", ": 63")


def test_nhc_found_xid_errors_reads_as_that_xid(tmp_path: Path) -> None:
    found = _findings(tmp_path, NHC_XID)
    assert [(f["cause"], f["severity"]) for f in _grave(found)] == [("module_fell_off_bus", "critical")] or \
        any(f["cause"] == "xid" and f["severity"] == "critical" for f in found)
    assert "unread_failure_line" not in str(found)


def test_nhc_xid_63_reads_at_its_catalogue_severity(tmp_path: Path) -> None:
    found = _findings(tmp_path, NHC_XID_INFO)
    assert [f["cause"] for f in found] == ["xid"]
    assert found[0]["evidence"]["xid"] == 63 and "unread_failure_line" not in str(found)


NHC_COUNT_EDITED = """\
root@dgx07:~# diff /etc/nhc/nhc.conf.orig /etc/nhc/nhc.conf
12c12
<  dgx07 || check_nv_gpu_count 8
---
>  dgx07 || check_nv_gpu_count 9
root@dgx07:~# nhc -v
ERROR:  nhc:  Health check failed:  Check check_nv_gpu_count 9 returned 1
"""


def test_nhc_count_check_failing_on_an_edited_config_is_a_note(tmp_path: Path) -> None:
    data = capture_json(tmp_path, NHC_COUNT_EDITED)
    assert _grave(data["findings"]) == []  # type: ignore[arg-type]
    assert "edited to expect 9 where it expected 8" in str(data["notes"])


def test_nhc_count_check_failing_unedited_is_the_gpus_short(tmp_path: Path) -> None:
    text = "ERROR:  nhc:  Health check failed:  Check check_nv_gpu_count 8 returned 1\n"
    assert [f["cause"] for f in _grave(_findings(tmp_path, text))] == ["scheduler_gpus_short"]


POD_LOG = """\
$ kubectl logs pod/cuda-smoke
Failed to initialize NVML: Unknown Error
"""
DOCKER_EXEC = """\
root@3f2a9c1b7d4e:/workspace# nvidia-smi
Failed to initialize NVML: Unknown Error
"""
CUT_IN_POD = """\
$ kubectl logs -f pod/gpu-test
Failed to initialize NVML
"""


@pytest.mark.parametrize("text", [POD_LOG, DOCKER_EXEC], ids=["pod", "docker_exec"])
def test_nvml_unknown_error_in_a_container_is_its_device_access(tmp_path: Path, text: str) -> None:
    found = _grave(_findings(tmp_path, text))
    assert [(f["cause"], f["severity"]) for f in found] == [("container_gpu_access", "warn")]
    assert "restart the container" in found[0]["fix"]


def test_an_nvml_line_cut_before_its_status_is_not_unknown_error(tmp_path: Path) -> None:
    """Review 67b F10: the cut line names no status, so not the cgroup rules' 'Unknown Error'."""
    data = capture_json(tmp_path, CUT_IN_POD)
    assert "cgroup" not in str(data["findings"])
    assert "container_nvml_unknown" not in str(data["findings"])


HAMI_REGISTER = """\
I0312 09:00:01.100000    4211 register.go:149] MemoryScaling= 1 registeredmem= 24576
I0312 09:00:01.200000    4211 register.go:178] nvml registered device id=0, memory=24576, type=NVIDIA A10, numa=0
I0312 09:00:01.300000    4211 register.go:149] MemoryScaling= 1 registeredmem= 24576
I0312 09:00:01.400000    4211 register.go:178] nvml registered device id=1, memory=24576, type=NVIDIA A10, numa=1
I0312 09:00:01.500000    4211 register.go:178] nvml registered device id=2, memory=24576, type=NVIDIA A10, numa=1
"""
HAMI_WORKING = (
    'I0312 09:00:02.000000    4211 register.go:185] "start working on the devices" devices=['
    '{"id":"GPU-0a1b2c3d-0000-0000-0000-000000000001","count":10,"devmem":16384,"devcore":100,'
    '"type":"NVIDIA-Tesla T4","numa":0,"mode":"hami-core","health":true},'
    '{"id":"GPU-0a1b2c3d-0000-0000-0000-000000000002","index":1,"count":10,"devmem":16384,"devcore":100,'
    '"type":"NVIDIA-Tesla T4","numa":0,"mode":"hami-core","health":true}]\n')


@pytest.mark.parametrize(("text", "count", "model", "mib"), [
    (HAMI_REGISTER, 3, "NVIDIA A10", "24.0 GiB"), (HAMI_WORKING, 2, "Tesla T4", "16.0 GiB")],
    ids=["register_lines", "working_list"])
def test_hamis_registered_devices_are_the_inventory(tmp_path: Path, text: str, count: int, model: str,
                                                     mib: str) -> None:
    inv = capture_json(tmp_path, text, cmd="inventory")
    modules = inv["modules"]
    assert isinstance(modules, list) and len(modules) == count
    assert {m["model"] for m in modules} == {model}
    assert _grave(capture_json(tmp_path, text)["findings"]) == []  # type: ignore[arg-type]


RAY_OLD = """\
======== Cluster status: 2021-06-01 10:00:00.000000 ========
Node status
------------------------------------------------------------
 1 node(s) with resources: {'CPU': 2.0, 'node:10.0.0.5': 1.0, 'memory': 4000000000.0}
 2 node(s) with resources: {'GPU': 8.0, 'node:10.0.0.6': 1.0, 'CPU': 96.0, 'accelerator_type:V100': 1.0}
"""
RAY_NEW = """\
======== Autoscaler status: 2024-05-01 10:00:00.000000 ========
Node status
---------------------------------------------------------------
Active:
 1 node_3f1c2e
Pending:
 (no pending nodes)
Recent failures:
 (no failures)

Resources
---------------------------------------------------------------
Usage:
 0.0/32.0 CPU
 1.0/4.0 GPU
 0.0/1.0 accelerator_type:A100
 0B/200.00GiB memory

Demands:
 (no resource demands)
"""


def test_ray_status_gpus_are_the_inventory_and_nothing_is_judged(tmp_path: Path) -> None:
    inv = capture_json(tmp_path, RAY_NEW, cmd="inventory")  # one Active node: its GPUs are its modules
    modules = inv["modules"]
    assert isinstance(modules, list) and len(modules) == 4
    assert {m["model"] for m in modules} == {"A100"}
    assert _grave(capture_json(tmp_path, RAY_NEW)["findings"]) == []  # type: ignore[arg-type]


def test_a_ray_clusters_gpus_are_said_per_node_not_one_hosts_modules(tmp_path: Path) -> None:
    """Review 67b F9: RAY_OLD is 3 nodes (2 with 8 GPUs each); its 16 GPUs were listed as one host's 16 modules."""
    inv = capture_json(tmp_path, RAY_OLD, cmd="inventory")
    assert inv["modules"] == []
    assert "a cluster of 2 node(s) with GPUs: 2 node(s) x 8 V100" in str(inv["notes"])
    assert _grave(capture_json(tmp_path, RAY_OLD)["findings"]) == []  # type: ignore[arg-type]


NHC_RUN_OK = """\
[root@gpu017 ~]# nhc -v
Node Health Check starting.
Running check:  "check_fs_mount_rw /"
Running check:  "check_hw_ib 200"
Running check:  "check_nv_healthmon"
Node Health Check completed successfully (2s).
"""


def test_nhcs_passing_run_is_read_and_clear(tmp_path: Path) -> None:
    data = capture_json(tmp_path, NHC_RUN_OK)
    assert _grave(data["findings"]) == []  # type: ignore[arg-type]
    assert "completed successfully" in str(data["notes"])


PS_EF = """\
UID          PID    PPID  C STIME TTY          TIME CMD
root         812       1  0 Mar11 ?        00:00:00 /usr/bin/nvidia-persistenced --verbose
root        4410    4000 99 10:02 pts/0    00:12:01 nvidia-smi dmon
"""


def test_ps_ef_prints_no_state_and_is_read_saying_so(tmp_path: Path) -> None:
    data = capture_json(tmp_path, PS_EF)
    assert _grave(data["findings"]) == []  # type: ignore[arg-type]
    assert "prints no process state" in str(data["notes"])
