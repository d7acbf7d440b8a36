"""Batch L's AMD misses (issue 46), each fixed for its class of input and tested on lines written here in the
tool's own form: a kernel call trace shown only by its frames inside amdgpu's teardown of an IP block (a module
torn down after a failed init), and amdkfd's 'qcm fence wait loop timeout expire' after a VM fault (the module
hung while its queues were evicted)."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures.kernel import AMD_NO_BUS
from tests.support.helpers import capture_findings


def _teardown_trace(stamp: str, frame: str) -> str:
    return (f"{stamp} RSP: 0018:ffffb1c2c0a3fb80 EFLAGS: 00010246\n"
            f"{stamp} RAX: 0000000000000000 RBX: ffff8f3a41c200e0 RCX: 0000000000000027\n"
            f"{stamp} Call Trace:\n"
            f"{stamp}  amdgpu_vram_mgr_fini+0x2c/0xd0 [amdgpu]\n"
            f"{stamp}  ttm_bo_clean_mm+0x9e/0xb0 [ttm]\n"
            f"{stamp}  amdgpu_ttm_fini+0x6a/0xe0 [amdgpu]\n"
            f"{stamp}  {frame} [amdgpu]\n")


def test_a_trace_through_an_ip_blocks_teardown_is_a_driver_warning_on_an_amd_module(tmp_path: Path) -> None:
    for stamp in ("[    7.120334]", "Jan 12 08:01:02 vega-3 kernel: [    7.120334]"):
        for frame in ("gmc_v9_0_sw_fini+0x10c/0x170", "gmc_v10_0_sw_fini+0x3a/0x60",
                      "amdgpu_device_fini_sw+0x1f/0x3e0"):
            assert capture_findings(tmp_path, _teardown_trace(stamp, frame)) == {
                ("module_driver_warning", AMD_NO_BUS): "warn"}, (stamp, frame)


def test_frames_outside_amdgpus_teardown_or_a_poster_naming_one_stay_clear(tmp_path: Path) -> None:
    other = ("[  210.004411] Call Trace:\n"
             "[  210.004420]  amdgpu_cs_ioctl+0x1b3/0x2a0 [amdgpu]\n"
             "[  210.004433]  drm_ioctl_kernel+0xaa/0xf0 [drm]\n")
    assert capture_findings(tmp_path, other) == {}
    prose = "[    7.120334] amdgpu 0000:03:00.0: amdgpu: is gmc_v9_0_sw_fini+0x10c/0x170 [amdgpu] in your log too\n"
    assert ("module_driver_warning", "0000:03:00.0") not in capture_findings(tmp_path, prose)


def _evicted(stamp: str, bus_line: bool) -> str:
    fault = (f"{stamp} amdgpu 0000:0b:00.0: VM fault (0x02, vmid 8, pasid 32771) at page 0, read from 'TC2' "
             "(0x54433200) (72)\n") if bus_line else ""
    return fault + f"{stamp} Evicting PASID 32771 queues\n{stamp} qcm fence wait loop timeout expire\n"


def test_qcm_fence_timeout_after_an_eviction_names_the_hang_on_the_module_near_it(tmp_path: Path) -> None:
    for stamp in ("[  61.204410]", "Feb  2 21:14:09 rig kernel: [  61.204410]"):
        assert capture_findings(tmp_path, _evicted(stamp, True)) == {
            ("module_fence_timeout", "0000:0B:00.0"): "warn"}, stamp
        assert capture_findings(tmp_path, _evicted(stamp, False)) == {
            ("module_fence_timeout", AMD_NO_BUS): "warn"}, stamp


def test_qcm_fence_timeout_the_reset_then_recovers_is_the_resets_hang_alone(tmp_path: Path) -> None:
    log = _evicted("[  61.204410]", True) + ("[  61.391002] amdgpu 0000:0b:00.0: amdgpu: GPU reset begin!\n"
                                             "[  61.702113] amdgpu 0000:0b:00.0: amdgpu: GPU reset succeeded\n")
    assert capture_findings(tmp_path, log) == {("module_hang_recovered", "0000:0B:00.0"): "warn"}  # AGX1: recovered
