"""Issue 46 (KDRV): a GPU driver's failure to initialise, resume or come back from a reset is critical on the module
the line names, for every driver, where no message of kernel.py names the line (nouveau, radeon, mtgpu, vendor-reset
through vfio-pci, lines of amdgpu or the open nvidia modules no message covers); any other error line stays a lead;
a healthy boot's 'failed' lines stay quiet. Lines written here in the drivers' log shapes; bus ids, times and codes
are made up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.helpers import capture_json

UNNAMED = "driver_error_unnamed"
INIT, RESET = "module_init_failed", "module_needs_reset"


def _findings(tmp_path: Path, log: str) -> dict[tuple[str, str | None], dict[str, Any]]:
    data: dict[str, Any] = capture_json(tmp_path, log)  # type: ignore[assignment]
    return {(f["cause"], f.get("module")): f for f in data["findings"]}


def _log(*lines: str) -> str:
    return "".join(f"[  {14 + i}.{100001 + i:06d}] {ln}\n" for i, ln in enumerate(lines))


def _only(tmp_path: Path, log: str, cause: str, module: str, message: str) -> dict[str, Any]:
    found = _findings(tmp_path, log)
    assert set(found) == {(cause, module)}, found
    f = found[(cause, module)]
    assert f["severity"] == "critical" and f["evidence"]["message"] == message, f
    return f


def test_a_module_any_driver_could_not_initialise_is_critical_on_its_bus_id(tmp_path: Path) -> None:
    nouveau = _log("nouveau 0000:0a:00.0: NVIDIA GP104 (134000a1)", "nouveau 0000:0a:00.0: pmu: init failed, -110",
                   "nouveau: probe of 0000:0a:00.0 failed with error -110")
    f = _only(tmp_path, nouveau, INIT, "0000:0A:00.0", "driver_init_failed")
    assert f["evidence"]["log"].endswith("pmu: init failed, -110")  # the failing line quoted, as printed
    radeon = _log("[drm] radeon kernel modesetting enabled.", "radeon 0000:05:00.0: Fatal error during GPU init")
    _only(tmp_path, radeon, INIT, "0000:05:00.0", "driver_init_failed")
    mtgpu = _log("mtgpu 0000:61:00.0: MTGPU firmware load timeout")
    _only(tmp_path, mtgpu, INIT, "0000:61:00.0", "driver_init_failed")
    # the open nvidia modules' GSP bring-up, where the excerpt stops before RmInitAdapter's line: no bus id in it
    gsp = _log("NVRM: kgspInitRm_IMPL: cannot bootstrap riscv/gsp: 0x65")
    _only(tmp_path, gsp, INIT, "a module of nvidia, bus id not in the log", "driver_init_failed")
    irq = _log("NVRM: GPU 0000:3b:00.0: No interrupts of any type are available. Cannot use this GPU.")
    _only(tmp_path, irq, INIT, "0000:3B:00.0", "driver_init_failed")


def test_a_resume_or_a_reset_that_failed_is_critical_and_a_retried_reset_that_worked_is_not(tmp_path: Path) -> None:
    resume = _log("amdgpu 0000:43:00.0: amdgpu: Failed to export SMU metrics table!",
                  "amdgpu 0000:43:00.0: PM: failed to resume async: error -62")
    _only(tmp_path, resume, RESET, "0000:43:00.0", "driver_resume_failed")
    nvidia = _log("PM: dpm_run_callback(): pci_pm_resume+0x0/0xe0 returns -5",
                  "nvidia 0000:01:00.0: PM: failed to resume async: error -5")
    _only(tmp_path, nvidia, RESET, "0000:01:00.0", "driver_resume_failed")
    xe = _log("xe 0000:03:00.0: [drm] GT0: trying reset from gt_reset_worker [xe]",
              "xe 0000:03:00.0: [drm] *ERROR* GT0: reset failed (-ETIMEDOUT)")
    _only(tmp_path, xe, RESET, "0000:03:00.0", "driver_reset_failed")
    reset = _log("vfio-pci 0000:2d:00.0: AMD_NAVI10: performing reset", "vfio-pci 0000:2d:00.0: SMU error 0xfe",
                 "vfio-pci 0000:2d:00.0: AMD_NAVI10: mode1 reset failed")
    _only(tmp_path, reset, RESET, "0000:2D:00.0", "driver_reset_failed")
    retried = reset + _log("vfio-pci 0000:2d:00.0: AMD_NAVI10: mode1 reset succeeded")
    assert set(_findings(tmp_path, retried)) == {(UNNAMED, "0000:2D:00.0")}
    # a reset followed by the engines' self-tests failing did not bring the module back
    radeon = _log("radeon 0000:01:00.0: GPU softreset: 0x00000008", "radeon 0000:01:00.0: GPU reset succeeded",
                  "[drm:r600_ring_test [radeon]] *ERROR* radeon: ring 0 test failed (scratch(0x8504)=0xCAFEDEAD)")
    _only(tmp_path, radeon, INIT, "0000:01:00.0", "driver_init_failed")


def test_each_module_the_log_names_gets_its_own_finding(tmp_path: Path) -> None:
    log = _log("nouveau 0000:41:00.0: gr: init failed, -22", "nouveau 0000:c1:00.0: gr: init failed, -22")
    found = _findings(tmp_path, log)
    assert set(found) == {(INIT, "0000:41:00.0"), (INIT, "0000:C1:00.0")}
    # beside another module's named failure, a module's own failure is its own, not that message's context
    beside = _log("amdgpu 0000:03:00.0: amdgpu: Fatal error during GPU init",
                  "amdgpu 0000:83:00.0: PM: failed to resume async: error -5")
    assert set(_findings(tmp_path, beside)) == {(INIT, "0000:03:00.0"), (RESET, "0000:83:00.0")}
    # a module a named message judged at warn (a page fault) that later fails to resume is gone all the same
    fault = _log("amdgpu 0000:03:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:8 pasid:32770, "
                 "for process python3 pid 4242)", *["amdgpu 0000:03:00.0: amdgpu: evicting queues"] * 9,
                 "amdgpu 0000:03:00.0: PM: failed to resume async: error -5")
    found = _findings(tmp_path, fault)
    assert set(found) == {("module_page_fault", "0000:03:00.0"), (RESET, "0000:03:00.0")}
    assert found[(RESET, "0000:03:00.0")]["severity"] == "critical"


def test_a_healthy_boots_failure_worded_lines_stay_quiet_or_a_lead(tmp_path: Path) -> None:
    # i915 runs without its display firmware (runtime PM off); a firmware file the loader did not find
    dmc = _log("i915 0000:00:02.0: [drm] Failed to load DMC firmware i915/adlp_dmc.bin. Disabling runtime power "
               "management.", "amdgpu 0000:03:00.0: Direct firmware load for amdgpu/ta.bin failed with error -2")
    assert all(f["severity"] != "critical" for f in _findings(tmp_path, dmc).values())
    # a ring's own reset that failed is the step before the full reset: a lead, not a module gone
    ring = _log("nouveau 0000:01:00.0: fifo: ring gr reset failed")
    assert set(_findings(tmp_path, ring)) == {(UNNAMED, "0000:01:00.0")}
    # a failure of something else than the module (an engine's optional resume) stays a lead
    vce = _log("[drm:radeon_vce_resume [radeon]] *ERROR* radeon 0000:01:00.0: failed VCE resume (-22).")
    assert all(f["severity"] != "critical" for f in _findings(tmp_path, vce).values())
