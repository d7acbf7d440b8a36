"""Issue 46 (R13D): the edge accelerators' kernel drivers are the module's own lines, each fault a finding on the
board's bus id with its own cause, never 'none from a GPU, NIC-to-GPU or driver module' nor a line no reader
claimed: Hailo's hailo_pci/hailo1x (interrupts, BARs, probe, firmware load: the board never came up; a missing
firmware file: the board added without one), Coral's apex (its MMU fault dump), Jetson's nvgpu LS falcon bootstrap;
xe's EU attention reset a debug test causes is no fault. Lines written here in each driver's form (the words from
hailort-drivers v5.3.0 and gasket-driver, benchmarks/data/r13d_phrasebook.json)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import kernel_edge_accel
from tests.support.helpers import capture_json

HAILO_MSI = """\
[    3.431097] hailo: Init module. driver version 4.17.0
[    3.437216] hailo 0000:05:00.0: Probing on: 1e60:2864...
[    3.438876] hailo 0000:05:00.0: Disabling ASPM L0s
[    3.446839] hailo 0000:05:00.0: Failed to enable MSI -28
[    3.446849] hailo 0000:05:00.0: Failed Enabling interrupts -28
"""
HAILO1X_PROBE = """\
[  172.770563] hailo1x 0000:02:00.0: Probing: mapped bar 0 - 000000008f62341c 16384
[  172.770575] hailo1x 0000:02:00.0: Probing: Failed init pcie resources
[  172.770617] hailo1x 0000:02:00.0: probe with driver hailo1x failed with error -22
"""
HAILO_FW_WRITE = """\
Jun 02 10:11:12 pi5 kernel: hailo 0000:01:00.0: Probing: mapped bar 4 - 000000005e618691 16384
Jun 02 10:11:12 pi5 kernel: hailo 0000:01:00.0: Failed writing firmware files over PCIe bars. err -110
Jun 02 10:11:12 pi5 kernel: hailo 0000:01:00.0: Firmware load failed
"""
HAILO_FW_MISSING = """\
[    2.256514] hailo 0000:01:00.0: Successfully disabled ASPM L0s
[2.25] hailo 0000:01:00.0: Firmware file not found (/lib/firmware/hailo/hailo8_fw.bin), please upload the firmware manually
[    2.268814] hailo 0000:01:00.0: Probing: Added board 1e60-2864, /dev/hailo0
"""
APEX_FAULT = """\
[ 1876.006541] apex 0000:01:00.0: Fault VA: 0xffffffff
[ 1876.012884] apex 0000:01:00.0: Failing in first (simple) read access. Extended_level0: 0x7ff, Simple: 0x1fff
[ 1876.024280] apex 0000:01:00.0: Computed Failing Bus Addr: 0x0
[ 1876.031596] apex 0000:01:00.0: Fault VA: 0x0
"""
APEX_INIT = """\
6,812,4003311,-;apex 0000:03:00.0: Page table init timed out
6,813,4003315,-;apex 0000:03:00.0: error enabling gasket device
6,814,4003320,-;apex: probe of 0000:03:00.0 failed with error -110
"""
NVGPU_LSF = """\
[   70.854715] nvgpu: 17000000.gpu gv100_pmu_lsfm_bootstrap_ls_falcon:100  [ERR]  Failed to execute RPC, status=0xffffffea
[   70.854716] nvgpu: 17000000.gpu nvgpu_pmu_lsfm_bootstrap_ls_falcon:128  [ERR]  LSF Load failed
[   70.854718] nvgpu: 17000000.gpu nvgpu_gr_falcon_load_secure_ctxsw_ucode:718  [ERR]  Unable to recover GR falcon
"""
HEALTHY = """\
[    2.256344] hailo: Init module. driver version 4.18.0
[    2.256442] hailo 0000:01:00.0: Probing on: 1e60:2864...
[    2.256484] hailo 0000:01:00.0: Probing: mapped bar 0 - 0000000009aa613a 16384
[    2.256510] hailo 0000:01:00.0: Disabling ASPM L0s
[    2.256514] hailo 0000:01:00.0: Successfully disabled ASPM L0s
[    2.350112] hailo 0000:01:00.0: Firmware was loaded successfully
[    2.268814] hailo 0000:01:00.0: Probing: Added board 1e60-2864, /dev/hailo0
[    4.100011] apex 0000:03:00.0: Apex performance not throttled due to temperature
"""
XE_EU_ATTENTION = """\
[  823.392517] [IGT] xe_eudebug_online: executing
[  823.410706] [IGT] xe_eudebug_online: starting subtest interrupt-reconnect
[  823.620232] xe 0000:00:02.0: [drm] gt:0 unable to handle eu attention ret=-107
[  823.620244] xe 0000:00:02.0: [drm] GT0: trying reset from attention_scan_fn [xe]
[  826.700112] [IGT] xe_eudebug_online: finished subtest interrupt-reconnect, SUCCESS
"""


def _severe(tmp_path: Path, text: str) -> dict[tuple[str, str | None], str]:
    found = capture_json(tmp_path, text)["findings"]
    assert isinstance(found, list)
    return {(f["cause"], f.get("module")): f["severity"] for f in found if f["severity"] in ("warn", "critical")}


@pytest.mark.parametrize(
    ("text", "cause", "module", "severity"),
    [
        (HAILO_MSI, "module_init_failed", "0000:05:00.0", "critical"),
        (HAILO1X_PROBE, "module_init_failed", "0000:02:00.0", "critical"),
        (HAILO_FW_WRITE, "module_init_failed", "0000:01:00.0", "critical"),
        (HAILO_FW_MISSING, "accel_firmware_missing", "0000:01:00.0", "warn"),
        (APEX_FAULT, "module_page_fault", "0000:01:00.0", "warn"),
        (APEX_INIT, "module_init_failed", "0000:03:00.0", "critical"),
        (NVGPU_LSF, "module_init_failed", "17000000.gpu", "critical"),
    ],
)
def test_an_edge_accelerators_driver_fault_is_a_finding_on_its_board(
    tmp_path: Path, text: str, cause: str, module: str, severity: str
) -> None:
    assert _severe(tmp_path, text) == {(cause, module): severity}


@pytest.mark.parametrize("text", [HEALTHY, XE_EU_ATTENTION])
def test_a_healthy_boot_or_a_debug_tests_reset_gives_no_warn(tmp_path: Path, text: str) -> None:
    data = capture_json(tmp_path, text)
    assert _severe(tmp_path, text) == {}
    assert "nothing in it is output gpuvet can read" not in str(data)


def test_the_kinds_are_read_from_the_drivers_words() -> None:
    assert kernel_edge_accel.kind_of("hailo 0000:01:00.0: Failed validating fw header") == "driver_init_failed"
    assert kernel_edge_accel.kind_of("hailo 0000:01:00.0: Firmware loaded in 216 ms") is None
    assert kernel_edge_accel.kind_of("apex 0000:01:00.0: Map Simple Pages: host_addr 0x7f89c74000") is None


VENDOR_RESET_TWO_METHODS = """\
May 13 04:19:06 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA20: performing reset
May 13 04:19:06 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA20: psp mode1 reset succeeded
May 13 04:19:06 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA20: reset result = 0
May 13 04:23:43 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA10: performing reset
May 13 04:23:43 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA10: failed to reset device
"""
VENDOR_RESET_FAILED = """\
May 13 04:23:43 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA10: performing reset
May 13 04:23:43 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA10: failed to reset device
May 13 04:23:44 pve kernel: vfio-pci 0000:76:00.0: AMD_VEGA20: psp mode1 reset succeeded
"""


VENDOR_RESET_SAME_METHOD_TWICE = """\
May 13 04:20:00 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA10: performing reset
May 13 04:20:01 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA10: psp mode1 reset succeeded
May 13 04:23:43 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA10: performing reset
May 13 04:23:43 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA10: failed to reset device
"""
VENDOR_RESET_RETRY_WORKED = """\
May 13 04:23:43 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA10: performing reset
May 13 04:23:43 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA10: failed to reset device
May 13 04:24:10 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA20: performing reset
May 13 04:24:10 pve kernel: vfio-pci 0000:75:00.0: AMD_VEGA20: psp mode1 reset succeeded
"""


@pytest.mark.parametrize("text", [VENDOR_RESET_TWO_METHODS, VENDOR_RESET_SAME_METHOD_TWICE, VENDOR_RESET_FAILED])
def test_a_vendor_reset_failure_after_a_success_leaves_the_module_unreset(tmp_path: Path, text: str) -> None:
    """REV66b: only a success AFTER the failure brings the module back (amd_asic_reset's rule); an earlier one,
    of the same method or another, says nothing of the state the failed reset left."""
    assert _severe(tmp_path, text)[("module_needs_reset", "0000:75:00.0")] == "critical"


def test_a_vendor_reset_failure_a_later_method_recovered_is_a_warn(tmp_path: Path) -> None:
    assert _severe(tmp_path, VENDOR_RESET_RETRY_WORKED) == {("driver_error_unnamed", "0000:75:00.0"): "warn"}


SOCTHERM_DMESG = """\
[  120.511002] soctherm: OC ALARM 0x00000001
[  121.600113] soctherm: OC ALARM 0x00000001
[  125.100001] usb 1-2: new high-speed USB device number 3 using tegra-xusb
"""
SOCTHERM_SAID = (  # a poster's words, as meta-tegra#538 puts them
    "I build a Yocto image for jetson-nano-2gb-devkit, the image boots successfully, but I could find some messages "
    '"soctherm: OC ALARM 0x00000001" from dmesg output, could anybody let me know what the meaning of this message?\n'
)


@pytest.mark.parametrize("text", [SOCTHERM_DMESG, SOCTHERM_SAID])
def test_a_jetson_over_current_alarm_is_a_throttle_of_the_soc(tmp_path: Path, text: str) -> None:
    assert _severe(tmp_path, text) == {("hw_slowdown", kernel_edge_accel.SOC): "warn"}
