"""Issue 46: the GPU drivers' error strings read as classes from their sources (captures/kernel_phrases.py;
benchmarks/kernel_phrasebook.py counts every error-level string of amdgpu, amd/pm, i915 and NVIDIA's open modules).
Each class is pinned on lines written in its driver's real prefix form, its printf arguments filled as the driver
fills them; the lines a healthy boot prints beside them stay clear."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures.kernel import AMD_NO_BUS
from tests.support.helpers import capture_findings

_AMD = "[  431.207713] amdgpu 0000:c3:00.0: amdgpu: "
_AMD_UP = "[    4.918211] amdgpu 0000:c3:00.0: amdgpu: SE 4, SH per SE 2, CU per SH 15, active_cu_number 120\n"
_I915 = "[ 2211.501934] i915 0000:00:02.0: [drm] *ERROR* GT0: "
_NV_UP = "[    5.201000] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build\n"


def _amd(*messages: str) -> str:
    return _AMD_UP + "".join(f"{_AMD}{m}\n" for m in messages)


def test_amdgpu_reading_all_ones_before_a_reset_is_a_module_lost_from_the_bus(tmp_path: Path) -> None:
    # amdgpu_device.c's amdgpu_device_health_check: the PCI config space read as all ones
    assert capture_findings(tmp_path, _amd("device lost from bus!")) == {
        ("module_fell_off_bus", "0000:C3:00.0"): "critical"}
    bare = "[  431.207713] amdgpu: device lost from bus!\n"
    assert capture_findings(tmp_path, bare) == {("module_fell_off_bus", AMD_NO_BUS): "critical"}


def test_an_smu_the_driver_stopped_talking_to_needs_a_reset(tmp_path: Path) -> None:
    text = _amd("SMU: I'm not done with your previous command: SMN_C2PMSG_66:0x00000012 SMN_C2PMSG_82:0x00000000",
                "SMU is in hanged state, failed to send smu message!")
    assert capture_findings(tmp_path, text) == {("module_needs_reset", "0000:C3:00.0"): "critical"}


def test_an_apus_mode2_reset_that_failed_is_a_failed_reset(tmp_path: Path) -> None:
    for line in ("Failed to mode reset!", "Failed to mode2 reset!"):
        assert capture_findings(tmp_path, _amd(line)) == {("module_needs_reset", "0000:C3:00.0"): "critical"}, line


def test_a_tlb_flush_not_acknowledged_is_a_fence_timeout_unless_a_hang_explains_it(tmp_path: Path) -> None:
    for line in ("Timeout waiting for VM flush ACK!", "Timeout waiting for sem acquire in VM flush!",
                 "timeout waiting for kiq fence"):
        assert capture_findings(tmp_path, _amd(line)) == {("module_fence_timeout", "0000:C3:00.0"): "warn"}, line
    hang = _amd("ring sdma0 timeout, signaled seq=309, emitted seq=313", "timeout waiting for kiq fence")
    assert capture_findings(tmp_path, hang) == {("module_hung_reset", "0000:C3:00.0"): "critical"}


def test_the_command_processors_ecc_interrupt_is_a_hardware_error(tmp_path: Path) -> None:
    for line in ("[  98.1] [drm:amdgpu_gfx_cp_ecc_error_irq [amdgpu]] *ERROR* CP ECC ERROR IRQ\n",
                 "[  98.1] [drm:gfx_v8_0_cp_ecc_error_irq [amdgpu]] *ERROR* CP EDC/ECC error detected.\n"):
        assert capture_findings(tmp_path, _AMD_UP + line) == {("module_hardware_error", "0000:C3:00.0"): "critical"}


def test_a_retry_fault_the_driver_could_not_resolve_is_a_page_fault(tmp_path: Path) -> None:
    line = "[  98.1] [drm:amdgpu_vm_handle_fault [amdgpu]] *ERROR* Can't handle page fault (-12)\n"
    assert capture_findings(tmp_path, _AMD_UP + line) == {("module_page_fault", "0000:C3:00.0"): "warn"}


def test_an_i915_reset_that_outran_its_watchdog_wedges_the_module(tmp_path: Path) -> None:
    text = f"{_I915}i915_reset_device timed out, cancelling all in-flight rendering.\n"
    assert capture_findings(tmp_path, text) == {("module_needs_reset", "0000:00:02.0"): "critical"}


def test_the_nvidia_drivers_bus_and_start_failures_are_read(tmp_path: Path) -> None:
    at = "[  812.104233] NVRM: GPU at PCI:0000:41:00: GPU-6c1d1a2e-8f0b-4d7e-9a51-2b3c4d5e6f70\n"
    cases = {
        "NVRM: kbifWaitForConfigAccessAfterReset_GH100: Timeout GPU not back on the bus after FLR,":
            ("module_fell_off_bus", "critical"),
        "NVRM: kbifDoFunctionLevelReset_TU102: VBIOS boot failed!!": ("module_firmware_boot_failed", "critical"),
        "NVRM: GPU 0000:41:00.0: rm_init_private_state() failed!": ("module_init_failed", "critical"),
        "NVRM: pci_enable_device failed, aborting": ("module_init_failed", "critical"),
        "NVRM: Device start failed for 0000:41:00.0 (ret=-22)": ("module_init_failed", "critical"),
        "NVRM: FATAL: Failed to re-allocate BAR1.": ("module_cannot_attach", "critical"),
    }
    for line, (cause, severity) in cases.items():
        text = _NV_UP + at + f"[  812.104240] {line}\n"
        assert capture_findings(tmp_path, text) == {(cause, "0000:41:00.0"): severity}, line


def test_a_healthy_boots_lines_of_the_same_drivers_stay_clear(tmp_path: Path) -> None:
    healthy = _amd("SMU is initialized successfully!", "ring gfx_0.0.0 uses VM inv eng 0 on hub 0",
                   "RAS INFO: ras initialized successfully, hardware ability[0x0] ras_mask[0x0]") + \
        "[    3.1] i915 0000:00:02.0: [drm] GT0: GuC firmware i915/tgl_guc_70.bin version 70.20.0\n" + _NV_UP + \
        "[    5.4] NVRM: GPU 0000:41:00.0: RmInitAdapter succeeded\n"
    assert capture_findings(tmp_path, healthy) == {}
