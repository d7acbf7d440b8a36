"""Batch N's miss (issue 46), fixed for its class: every amdgpu engine's self-test failing while the driver brings
the module up or resumes it (amdgpu_ib.c's IB test, amdgpu_device.c's 'ib ring test failed', the ring test of
amdgpu_ring.c, older drivers' wordings, the compute queues that would not map), with or without a bus id, is a
module that did not come up; the same test failing while a reset tears the engines down, then a reset that
succeeds, is the reset's own step. Lines written here in the driver's form."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures.kernel import AMD_NO_BUS
from tests.support.helpers import capture_findings

_STAMPS = ("[   12.440117]", "[Wed Dec 10 21:01:07 2025]", "Mar  3 04:12:55 node7 kernel: [   12.440117]")
_FAILED = ("[drm:amdgpu_ib_ring_tests [amdgpu]] *ERROR* IB test failed on vpe (-110).",
           "[drm:amdgpu_ib_ring_tests [amdgpu]] *ERROR* IB test failed on gfx_0.0.0 (-110).",
           "amdgpu: ib ring test failed (-110).",
           "[drm:amdgpu_ring_test_helper [amdgpu]] *ERROR* ring sdma0 test failed (-110)",
           "amdgpu: ring jpeg_dec_0 test failed (-110)",
           "amdgpu: ring vcn_unified_0 test failed (-110)",
           "amdgpu: ring mes_kiq_3.1.0 test failed (-110)",
           "[drm:amdgpu_ib_ring_tests [amdgpu]] *ERROR* amdgpu: failed testing IB on ring 9 (-110).",
           "[drm:gfx_v9_0_ring_test_ib [amdgpu]] *ERROR* amdgpu: IB test timed out.",
           "[drm:amdgpu_gfx_enable_kcq [amdgpu]] *ERROR* KCQ enable failed")


def _init(stamp: str, bus: str | None, failed: str) -> str:
    who = f"amdgpu {bus}: " if bus else ""
    return (f"{stamp} {who}amdgpu: ring gfx_0.0.0 uses VM inv eng 0 on hub 0\n"
            f"{stamp} {who}amdgpu: ring vpe uses VM inv eng 7 on hub 8\n"
            f"{stamp} {who}{failed}\n")


def test_any_engines_ring_or_ib_test_failure_is_a_module_that_did_not_come_up(tmp_path: Path) -> None:
    for stamp in _STAMPS:
        for failed in _FAILED:
            assert capture_findings(tmp_path, _init(stamp, "0000:c1:00.0", failed)) == {
                ("module_init_failed", "0000:C1:00.0"): "critical"}, (stamp, failed)


def test_a_failure_whose_line_names_no_bus_is_said_on_an_amd_module_not_in_the_log(tmp_path: Path) -> None:
    for failed in (_FAILED[0], _FAILED[3], _FAILED[9]):
        assert capture_findings(tmp_path, _init(_STAMPS[0], None, failed)) == {
            ("module_init_failed", AMD_NO_BUS): "critical"}, failed


def test_healthy_ring_lines_and_passed_tests_stay_clear(tmp_path: Path) -> None:
    healthy = _init(_STAMPS[0], "0000:03:00.0", "amdgpu: ring test on sdma0 succeeded") + \
        "[   12.440200] amdgpu 0000:03:00.0: amdgpu: ib test on ring 5 succeeded\n"
    assert capture_findings(tmp_path, healthy) == {}


def test_a_ring_test_failing_inside_a_reset_that_then_succeeds_is_the_resets_step(tmp_path: Path) -> None:
    log = ("[ 501.100000] amdgpu 0000:0b:00.0: amdgpu: GPU reset begin!\n"
           "[ 501.300000] amdgpu 0000:0b:00.0: amdgpu: ring gfx_0.0.0 test failed (-110)\n"
           "[ 501.400000] amdgpu 0000:0b:00.0: amdgpu: MODE1 reset\n"
           "[ 502.100000] amdgpu 0000:0b:00.0: amdgpu: GPU reset(2) succeeded!\n")
    assert ("module_init_failed", "0000:0B:00.0") not in capture_findings(tmp_path, log)
    cut = ("[ 501.100000] amdgpu 0000:0b:00.0: amdgpu: GPU reset begin!\n"
           "[ 501.300000] [drm:sdma_v6_0_ring_test_ib [amdgpu]] *ERROR* amdgpu: IB test timed out\n")
    assert capture_findings(tmp_path, cut) == {("module_hung_reset", "0000:0B:00.0"): "critical"}
