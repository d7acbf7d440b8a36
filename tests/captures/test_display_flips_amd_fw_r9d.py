"""Issue 46 (R9D), on lines written in the drivers' and the compositor's own words: a display pipeline whose flips
time out (DRM's atomic helpers, drivers/gpu/drm/drm_atomic_helper.c: 'flip_done timed out', 'commit wait timed
out'; KWin's 'Pageflip timed out! This is a bug in the xe kernel driver') judged alike for i915, xe and amdgpu:
repeated, a warn on the module; once, a note; a virtual display's, a note. And amdgpu's PSP firmware loading
(drivers/gpu/drm/amd/amdgpu/amdgpu_psp.c) as Linux and FreeBSD's drm-kmod print it, and a poster's shorthand."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

ROOT = Path(__file__).resolve().parents[1] / "data" / "captures"
_HANG = "display_pipeline_hang"


def _times(line: str, n: int = 3) -> str:
    return "".join(f"[  {100 + 7 * i}.123456] {line}\n" for i in range(n))


def test_a_pipeline_whose_flips_time_out_again_and_again_is_a_warn_on_its_module_for_every_driver(
    tmp_path: Path,
) -> None:
    cases = {
        "amdgpu 0000:0c:00.0: [drm] *ERROR* [CRTC:82:crtc-0] flip_done timed out": "0000:0C:00.0",
        "i915 0000:00:02.0: [drm] *ERROR* [CRTC:80:pipe A] flip_done timed out": "0000:00:02.0",
        "xe 0000:03:00.0: [drm] *ERROR* [CRTC:151:pipe A] commit wait timed out": "0000:03:00.0",
        "[drm:intel_atomic_commit_tail [i915]] *ERROR* [CRTC:51:pipe A] flip_done timed out": "an Intel module, bus id "
        "not in the log",
    }
    for line, module in cases.items():
        assert capture_findings(tmp_path, _times(line)) == {(_HANG, module): "warn"}, line


def test_kwins_pageflip_timeouts_name_the_driver_and_one_alone_is_a_note(tmp_path: Path) -> None:
    kwin = "Dec 21 13:44:0{} host kwin_wayland[3014]: Pageflip timed out! This is a bug in the {} kernel driver\n"
    xe = "".join(kwin.format(i, "xe") for i in range(4))
    assert capture_findings(tmp_path, xe) == {(_HANG, "an Intel module, bus id not in the log"): "warn"}
    amd = "".join(kwin.format(i, "amdgpu") for i in range(3))
    assert capture_findings(tmp_path, amd) == {(_HANG, "an AMD module, bus id not in the log"): "warn"}
    code, data = doctor_text(tmp_path, kwin.format(0, "xe"))  # read (was refused), nothing judged
    assert code == 0 and not data["findings"]
    # nvidia-drm's own words for the same fact (kernel-open/nvidia-drm/nvidia-drm-crtc.c)
    nv = "[drm:nv_drm_atomic_commit [nvidia_drm]] *ERROR* [nvidia-drm] [GPU ID 0x00000100] Flip event timeout on head 0"
    assert capture_findings(tmp_path, _times(nv)) == {(_HANG, "bus id not in the log"): "warn"}
    assert capture_findings(tmp_path, _times(nv, 1)) == {}
    virtual = "".join(kwin.format(i, "virtio_gpu") for i in range(5))  # a VM's display: no GPU's fault
    code, data = doctor_text(tmp_path, virtual)
    assert code == 0 and not data["findings"]


def test_a_one_off_flip_or_plane_timeout_is_a_modesets_note_never_a_warn(tmp_path: Path) -> None:
    for line in (
        "[drm:drm_atomic_helper_wait_for_flip_done [drm_kms_helper]] *ERROR* [CRTC:82:crtc-0] flip_done timed out",
        "[drm:drm_atomic_helper_wait_for_dependencies [drm_kms_helper]] *ERROR* [PLANE:70:plane-3] commit wait timed out",
        "amdgpu 0000:0c:00.0: [drm] *ERROR* [CRTC:82:crtc-0] flip_done timed out",
    ):
        assert capture_findings(tmp_path, _times(line, 2)) == {}, line


def test_amdgpu_psp_firmware_loading_failures_are_a_module_that_did_not_come_up_on_linux_and_freebsd(
    tmp_path: Path,
) -> None:
    amd = "an AMD module, bus id not in the log"
    cases = {
        "amdgpu 0000:03:00.0: amdgpu: failed to load ucode SMC(0x2D) ": "0000:03:00.0",
        "amdgpu 0000:03:00.0: amdgpu: Failed to process memory training!": "0000:03:00.0",
        "[drm:psp_v11_0_prep_cmd_buf [amdgpu]] *ERROR* Unknown firmware type": amd,
        "drmn0: failed to load ucode SMC(0x2D) ": amd,
        "[drm:0xffffffff82a5c1e0] *ERROR* PSP firmware loading failed": amd,
        "amdgpu_device_fw_loading failed": amd,
    }
    for line, module in cases.items():
        assert capture_findings(tmp_path, f"[    6.087582] {line}\n") == {("module_init_failed", module): "critical"}


def test_the_rows_b580_pageflips_and_the_rx9060xt_psp_firmware(tmp_path: Path) -> None:
    b580 = (ROOT / "fresh_au" / "journal_bazzite3682_xe_pageflip_b580.txt").read_text()
    assert capture_findings(tmp_path, b580) == {(_HANG, "an Intel module, bus id not in the log"): "warn"}
    rx = (ROOT / "fresh_au" / "pkginfo_freebsddrm501_rx9060xt_psp_fw.txt").read_text()
    assert ("module_init_failed", "an AMD module, bus id not in the log") in capture_findings(tmp_path, rx)
