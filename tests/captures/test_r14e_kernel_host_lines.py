"""Issue 46 (R14E): kernel and library lines of the host around the GPUs, on captures written here from the
sources' own strings: mlx5_core's events.c (mlx5_pcie_event's slot power report; port_module_event's 'Cable
unplugged' on a port never up, and after its link was up), mm/oom_kill.c's OOM killer lines, libfabric's GDRCopy
probe (src/hmem_cuda_gdrcopy.c) in an NCCL job's log, and nvidia-smi's ERR! on one card's fan (table and -q)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import doctor_text

STAMP = "kern  :warn  : 2025-03-02T10:00:{:02d},000000+00:00 "
INFO = "kern  :info  : 2025-03-02T10:00:{:02d},000000+00:00 "
SLOT_POWER = "\n".join([
    INFO.format(1) + "mlx5_core 0000:3b:00.0: firmware version: 28.39.1002",
    STAMP.format(2) + "mlx5_core 0000:3b:00.0: mlx5_pcie_event:299:(pid 9): Detected insufficient power on the PCIe "
    "slot (27W).",
    INFO.format(3) + "mlx5_core 0000:3b:00.0 ibp59s0: Link up",
    STAMP.format(4) + "mlx5_core 0000:5e:00.0: mlx5_pcie_event:299:(pid 9): Detected insufficient power on the PCIe "
    "slot (25W).",
]) + "\n"
UNUSED_PORT = "\n".join([
    INFO.format(1) + "mlx5_core 0000:1b:00.1: firmware version: 22.38.1002",
    INFO.format(2) + "mlx5_core 0000:1b:00.1: Port module event: module 1, Cable unplugged",
    INFO.format(3) + "mlx5_core 0000:1b:00.0 eth0: Link up",
]) + "\n"
UNPLUGGED_AFTER_UP = "\n".join([
    INFO.format(1) + "mlx5_core 0000:1b:00.0: firmware version: 22.38.1002",
    INFO.format(2) + "mlx5_core 0000:1b:00.0 ens1f0np0: Link up",
    INFO.format(9) + "mlx5_core 0000:1b:00.0: Port module event: module 0, Cable unplugged",
    INFO.format(9) + "mlx5_core 0000:1b:00.0 ens1f0np0: Link down",
]) + "\n"
OOM = "\n".join([
    STAMP.format(1) + "python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, "
    "oom_score_adj=0",
    STAMP.format(2) + "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,"
    "task_memcg=/user.slice,task=python3,pid=48211,uid=1000",
    "kern  :err   : 2025-03-02T10:00:03,000000+00:00 Out of memory: Killed process 48211 (python3) "
    "total-vm:412345678kB, anon-rss:250123456kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:500000kB "
    "oom_score_adj:0",
    STAMP.format(4) + "oom_reaper: reaped process 48211 (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
]) + "\n"
OOM_MEMCG_OLD = "\n".join([
    "[12345.678901] Memory cgroup out of memory: Kill process 9012 (dataloader) score 998 or sacrifice child",
    "[12345.679001] Killed process 9012 (dataloader) total-vm:8123456kB, anon-rss:7900000kB, file-rss:1024kB",
]) + "\n"
XID_AND_OOM = "\n".join([
    STAMP.format(1) + "NVRM: Xid (PCI:0000:41:00): 13, pid=1234, name=python3, Graphics SM Warp Exception on (GPC "
    "0, TPC 1, SM 0): Out Of Range Address",
    STAMP.format(2) + "NVRM: Xid (PCI:0000:41:00): 43, pid=1234, name=python3, Ch 00000010",
]) + "\n" + OOM
NCCL_EFA = """\
0: libfabric:77184:1690073380::core:core:cuda_gdrcopy_hmem_init():191<warn> gdrcopy_dl_hmem_init failed!
1: libfabric:77185:1690073380::core:core:cuda_gdrcopy_dl_hmem_init():151<info> Failed to dlopen libgdrapi.so
0: node-1:77184:77589 [0] NCCL INFO NET/OFI Using aws-ofi-nccl 1.7.1aws
0: node-1:77184:77589 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)
0: node-1:77184:77589 [0] NCCL INFO comm 0x55d0 rank 0 nranks 16 cudaDev 0 busId 101c0 - Init COMPLETE
"""
NCCL_GDR_PIN = NCCL_EFA.replace("Failed to dlopen libgdrapi.so", "gdr_pin_buffer failed! error: Invalid argument "
                                "ptr: 0x7f0000000000 len: 2097152")
TABLE_FAN_ERR = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA GeForce RTX 3090 On   | 00000000:0A:00.0 Off |                  N/A |
|ERR!   41C    P8    22W / 350W |      5MiB / 24576MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""
TABLE_HEALTHY = TABLE_FAN_ERR.replace("|ERR!   41C", "| 30%   41C")


def _grave(data: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    return sorted((f["cause"], f.get("module"), f["severity"]) for f in data["findings"]
                  if f["severity"] in ("warn", "critical"))


def _all(data: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    return sorted((f["cause"], f.get("module"), f["severity"]) for f in data["findings"])


def test_slot_power_report_is_a_warn_per_card(tmp_path: Path) -> None:
    """Session 67: the card says its slot advertises less power than it needs; the log cannot tell an under-powered
    card from a platform that under-reports, so it is a degraded state to verify (warn), as gpud flags it (its
    issue 348) and as batch AM's row asked, not a note (R14E had made it info on batch BC's boot log, whose row did
    not consider the lines)."""
    code, data = doctor_text(tmp_path, SLOT_POWER)
    assert code == 1
    assert _all(data) == [("nic_slot_power_reported", "0000:3b:00.0", "warn"),
                          ("nic_slot_power_reported", "0000:5e:00.0", "warn")]


def test_cable_unplugged_on_a_port_never_up_is_an_unused_port(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, UNUSED_PORT)
    assert code == 0 and _all(data) == [("nic_port_unused", "0000:1b:00.1", "info")]


def test_cable_unplugged_after_its_link_was_up_stays_an_alarm(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, UNPLUGGED_AFTER_UP)
    assert ("nic_hardware_alarm", "0000:1b:00.0", "warn") in _grave(data)


@pytest.mark.parametrize("text", [OOM, OOM_MEMCG_OLD], ids=["global", "memcg_old"])
def test_the_oom_killer_is_a_host_fact(tmp_path: Path, text: str) -> None:
    code, data = doctor_text(tmp_path, text)
    assert code == 1 and _grave(data) == [("host_out_of_memory", "node", "warn")]


def test_oom_beside_an_xid_is_said_too(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, XID_AND_OOM)
    causes = {(c, s) for c, _, s in _grave(data)}
    assert ("host_out_of_memory", "warn") in causes and ("xid", "warn") in causes


def test_libfabric_gdrcopy_probe_is_no_lead(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, NCCL_EFA)
    assert code == 0 and _grave(data) == []


def test_libfabric_gdrcopy_registration_failure_stays_a_lead(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, NCCL_GDR_PIN)
    assert [c for c, _, _ in _grave(data)] == ["unread_failure_line"]


def test_a_lone_cards_fan_err_is_its_sensor_unread(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, TABLE_FAN_ERR)
    assert code == 1 and _grave(data) == [("module_sensors_unreadable", "0000:0A:00.0", "warn")]


def test_the_same_table_with_its_fan_read_is_clear(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, TABLE_HEALTHY)
    assert code == 0 and _grave(data) == []


SMI_Q_FAN = """\
==============NVSMI LOG==============

Driver Version                            : 535.104.05
CUDA Version                              : 12.2

Attached GPUs                             : 1
GPU 00000000:0A:00.0
    Product Name                          : NVIDIA GeForce RTX 3090
    Fan Speed                             : {fan}
    Performance State                     : P8
    Temperature
        GPU Current Temp                  : 41 C
    Power Readings
        Power Draw                        : 22.10 W
        Power Limit                       : 350.00 W
"""


@pytest.mark.parametrize("fan", ["[Unknown Error]", "Unknown Error"])
def test_smi_q_fan_unknown_error_on_a_lone_card(tmp_path: Path, fan: str) -> None:
    _, data = doctor_text(tmp_path, SMI_Q_FAN.format(fan=fan))
    assert _grave(data) == [("module_sensors_unreadable", "0000:0A:00.0", "warn")]


def test_smi_q_fan_read_is_clear(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, SMI_Q_FAN.format(fan="30 %"))
    assert code == 0 and _grave(data) == []
