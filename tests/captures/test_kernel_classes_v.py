"""Issue 46 (VX2, batch V's kernel and nvidia-smi lines): the PCI core's and ACPI's notices printed under a GPU
driver's device prefix are not the driver's error lines; an init failure after an info-level finding on the same
module is still critical (amdgpu's IP-block step, a GCC '.cold' function tag, a line cut before 'failed');
nvidia-smi's lost device handle is read with the kernel lines beside it: a module the driver did not start is
that cause, bus loss only where the words say so. Lines written here in the tools' shapes; bus ids, times and
codes are made up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.helpers import capture_json

INIT, LOST = "module_init_failed", "module_fell_off_bus"


def _findings(tmp_path: Path, log: str) -> dict[tuple[str, str | None], dict[str, Any]]:
    data: dict[str, Any] = capture_json(tmp_path, log)  # type: ignore[assignment]
    return {(f["cause"], f.get("module")): f for f in data["findings"] if f["severity"] in ("warn", "critical")}


def _log(*lines: str) -> str:
    return "".join(f"[  {21 + i}.{300001 + i:06d}] {ln}\n" for i, ln in enumerate(lines))


def test_pci_core_and_acpi_notices_under_a_driver_prefix_are_no_driver_error(tmp_path: Path) -> None:
    boot = _log("nvidia 0000:2a:00.0: can't derive routing for PCI INT B",
                "nvidia 0000:2a:00.0: PCI INT B: no GSI",
                "amdgpu 0000:63:00.0: BAR 0: no space for [mem size 0x800000000 64bit pref]",
                "amdgpu 0000:63:00.0: BAR 0: failed to assign [mem size 0x800000000 64bit pref]",
                "amdgpu 0000:63:00.0: BAR 0: assigned [mem 0x38000000000-0x387ffffffff 64bit pref]",
                "nvidia 0000:2a:00.0: can't claim BAR 3 [mem 0xf0000000-0xf1ffffff]: no compatible bridge window")
    assert _findings(tmp_path, boot) == {}
    # the driver's own error line beside them is still a lead
    lead = boot + _log("nvidia 0000:2a:00.0: NVRM: foo_engine stalled: unexpected error 0x1f")
    assert set(_findings(tmp_path, lead)) == {("driver_error_unnamed", "0000:2A:00.0")}


def test_an_init_failure_after_an_info_finding_on_the_same_module_is_critical(tmp_path: Path) -> None:
    for step in ("hw_init of IP block <psp> failed -22", "sw_init of IP block <gfx_v9_0>"):  # the second cut short
        log = _log("[drm:amdgpu_device_resize_fb_bar [amdgpu]] *ERROR* Problem resizing BAR0 (-28).",
                   f"[drm:amdgpu_device_init.cold.12 [amdgpu]] *ERROR* {step}")
        found = _findings(tmp_path, log)
        assert set(found) == {(INIT, "an AMD module, bus id not in the log")}, (step, found)
        assert found[(INIT, "an AMD module, bus id not in the log")]["severity"] == "critical"


def test_a_lost_device_handle_is_the_module_the_driver_did_not_start(tmp_path: Path) -> None:
    not_found = "Unable to determine the device handle for GPU 0000:5E:00.0: Not Found\n"
    f = _findings(tmp_path, not_found)
    assert set(f) == {(INIT, "0000:5E:00.0")} and f[(INIT, "0000:5E:00.0")]["severity"] == "critical", f
    beside = _log("NVRM: GPU 0000:5e:00.0: RmInitAdapter failed! (0x62:0x55:2477)",
                  "NVRM: GPU 0000:5e:00.0: rm_init_adapter failed, device minor number 0") + \
        "Unable to determine the device handle for GPU 0000:5E:00.0: Unknown Error\n"
    assert set(_findings(tmp_path, beside)) == {(INIT, "0000:5E:00.0")}
    # bus loss where the words say so
    lost = "Unable to determine the device handle for GPU 0000:5E:00.0: GPU is lost.  Reboot the system to recover.\n"
    assert set(_findings(tmp_path, lost)) == {(LOST, "0000:5E:00.0")}
