"""Issue 46 (batch T, TX1): kernel log classes. A bus-less amdgpu message in a log whose amdgpu lines name one
module only is that module's; a reset the driver called a success whose engines then fail their ring tests did not
bring the module back; the SMU not answering at resume leaves each module it names unusable; Hopper's GSP boot that
timed out is a GSP that did not start. Lines written here in the drivers' log shapes; bus ids, times and values are
made up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.helpers import capture_json


def _findings(tmp_path: Path, log: str) -> dict[tuple[str, str | None], dict[str, Any]]:
    data: dict[str, Any] = capture_json(tmp_path, log)  # type: ignore[assignment]
    return {(f["cause"], f.get("module")): f for f in data["findings"]}


def _dmesg(*lines: str) -> str:
    return "".join(f"[ 5120.{100 + i:06d}] {ln}\n" for i, ln in enumerate(lines))


_RING_FAILS = tuple(f"[drm:gfx_v9_0_ring_test_ring [amdgpu]] *ERROR* amdgpu: ring {n} test failed "
                    "(scratch(0xC040)=0xCAFEDEAD)" for n in (1, 2, 3))


def test_a_reset_whose_rings_then_fail_did_not_recover_its_only_module(tmp_path: Path) -> None:
    log = _dmesg("amdgpu 0000:0c:00.0: GPU reset", "[drm] psp mode1 reset succeed",
                 "amdgpu 0000:0c:00.0: GPU reset succeeded, trying to resume",
                 "[drm:amdgpu_device_gpu_recover [amdgpu]] *ERROR* VRAM is lost!", "[drm] PSP is resuming...",
                 *_RING_FAILS)
    found = _findings(tmp_path, log)
    assert set(found) == {("module_needs_reset", "0000:0C:00.0")}, found
    f = found[("module_needs_reset", "0000:0C:00.0")]
    assert f["severity"] == "critical" and f["evidence"]["message"] == "amd_reset_failed"
    assert "ring 1 test failed" in str(f["evidence"])


def test_a_reset_that_came_back_clean_stays_a_reset(tmp_path: Path) -> None:
    log = _dmesg("amdgpu 0000:0c:00.0: GPU reset succeeded, trying to resume", "[drm] PSP is resuming...",
                 "[drm] ring test on 1 succeeded")
    found = _findings(tmp_path, log)
    # the reset that succeeded is the hang it recovered from (AGX1b: warn module_hang_recovered), not a failed reset
    assert set(found) == {("module_hang_recovered", "0000:0C:00.0")}, found
    assert found[("module_hang_recovered", "0000:0C:00.0")]["evidence"]["message"] == "amd_hang_recovered"


def test_a_busless_amdgpu_message_is_placed_only_where_the_log_names_one_module(tmp_path: Path) -> None:
    one = _findings(tmp_path, _dmesg("amdgpu 0000:0c:00.0: amdgpu: SMU is initialized successfully!",
                                     "[drm] Display Core initialized", "[drm] a", "[drm] b", "[drm] c", "[drm] d",
                                     "[drm] e", "[drm] f", "[drm] g", "[drm] h", _RING_FAILS[0]))
    assert ("module_init_failed", "0000:0C:00.0") in one, one
    two = _findings(tmp_path, _dmesg("amdgpu 0000:0c:00.0: amdgpu: SMU is initialized successfully!",
                                     "amdgpu 0000:8c:00.0: amdgpu: SMU is initialized successfully!",
                                     "[drm] a", "[drm] b", "[drm] c", "[drm] d", "[drm] e", "[drm] f", "[drm] g",
                                     "[drm] h", _RING_FAILS[0]))
    assert not any(m in ("0000:0C:00.0", "0000:8C:00.0") for _, m in two), two


def test_an_smu_that_does_not_answer_at_resume_leaves_each_module_unusable(tmp_path: Path) -> None:
    log = _dmesg("amdgpu 0000:21:00.0: amdgpu: SMU is resuming...", "amdgpu 0000:21:00.0: amdgpu: SMC is not ready",
                 "amdgpu 0000:21:00.0: amdgpu: resume of IP block <smu> failed -5",
                 "amdgpu 0000:21:00.0: amdgpu: amdgpu_device_ip_resume failed (-5).",
                 "amdgpu 0000:a1:00.0: amdgpu: SMU is resuming...", "amdgpu 0000:a1:00.0: amdgpu: SMC is not ready")
    found = _findings(tmp_path, log)
    for bus in ("0000:21:00.0", "0000:A1:00.0"):
        f = found[("module_needs_reset", bus)]
        assert f["severity"] == "critical" and f["evidence"]["message"] == "amd_recovery_failed", found


def test_a_hopper_gsp_boot_that_timed_out_is_a_gsp_that_did_not_start(tmp_path: Path) -> None:
    log = _dmesg("NVRM kgspBootstrapRiscvOSEarly_GH100: Timeout waiting for GSP target mask release. Bootrom may "
                 "have failed.", "NVRM kfspDumpDebugState_GH100: FSP microcode v1.2")
    found = _findings(tmp_path, log)
    hits = [f for (cause, _), f in found.items() if cause == "module_needs_reset"]
    assert hits and hits[0]["severity"] == "critical" and hits[0]["evidence"]["message"] == "gsp_failed", found
