"""Issue 46 (R14E): what an inventory of a log names beyond the modules, on captures written here in each source's
form: the NVSwitches nvidia-nvswitch probes at boot and those a Fabric Manager log's lines name, the Fabric Manager
version its start line gives (NVIDIA fabric manager's fabricmanager.log), and npu-smi info's title version."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_json

_K = "kern  :info  : 2025-02-01T08:00:0{},100000+00:00 "
BOOT = "\n".join([
    _K.format(1) + "nvidia-nvswitch: Probing device 0000:05:00.0, Vendor Id = 0x10de, Device Id = 0x1af1, Class = 0x68000",
    _K.format(2) + "nvidia-nvswitch0: using MSI",
    _K.format(3) + "nvidia-nvswitch: Probing device 0000:06:00.0, Vendor Id = 0x10de, Device Id = 0x1af1, Class = 0x68000",
    _K.format(4) + "nvidia-nvswitch1: using MSI",
    _K.format(5) + "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023",
]) + "\n"
_FM = "[Mar 01 2025 09:0{}] [{}] [tid 1200] "
FM_LOG = "\n".join([
    "Fabric Manager Log initializing at: 3/1/2025 09:00:00.100",
    _FM.format("0:00", "INFO") + "Fabric Manager version 535.129.03 is running with the following configuration options",
    _FM.format("0:00", "INFO") + "Logging level = 4",
    _FM.format("5:10", "ERROR") + "detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id "
    "00000000:05:00.0 physical id 0 port 12",
    _FM.format("5:10", "ERROR") + "detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id "
    "00000000:06:00.0 physical id 1 port 3",
]) + "\n"
NPU = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 23.0.rc3                 Version: 23.0.rc3                                             |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B2               | OK            | 95.1        40                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          3339 / 65536         |
+===========================+===============+====================================================+
"""


def _notes(tmp_path: Path, text: str) -> str:
    data = capture_json(tmp_path, text, cmd="inventory")
    return " ".join(str(n) for n in data["notes"])  # type: ignore[union-attr]


def test_boot_log_names_its_nvswitches(tmp_path: Path) -> None:
    said = _notes(tmp_path, BOOT)
    assert "2 NVSwitch(es) named: 0000:05:00.0 (device 0x1af1), 0000:06:00.0 (device 0x1af1)" in said


def test_fabric_manager_log_names_its_switches_and_version(tmp_path: Path) -> None:
    said = _notes(tmp_path, FM_LOG)
    assert "0000:05:00.0 (physical id 0), 0000:06:00.0 (physical id 1)" in said
    assert "Fabric Manager 535.129.03" in said


def test_npu_smi_title_version_is_the_driver(tmp_path: Path) -> None:
    data = capture_json(tmp_path, NPU, cmd="inventory")
    assert data["software"]["driver_version"] == "23.0.rc3"  # type: ignore[index]
