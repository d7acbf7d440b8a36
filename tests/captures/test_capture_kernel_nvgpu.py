"""Issue 46 (WX3): the kernel lines of integrated GPUs' drivers are read as a kernel log, each fault a finding on the
module the line names, never refused nor called clear: NVIDIA's nvgpu (Jetson, DRIVE: a platform device such as
17000000.gpu, no PCI bus id, no Xid line; its error notifier codes are the desktop driver's channel errors) and the
Arm boards' GPU drivers (panfrost, msm). A healthy Jetson boot's nvgpu lines give no warn. Lines written here, in
each driver's form."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import kernel_nvgpu
from tests.support.helpers import capture_json, run

MMU_FAULT = """\
[ 5321.004118] nvgpu: 17000000.gv11b gv11b_fb_mmu_fault_info_dump:286 [ERR] [MMU FAULT] ch id: 502, fault type: pte,
[ 5321.004190] nvgpu: 17000000.gv11b     nvgpu_tsg_set_ctx_mmu_error:1102 [ERR]  TSG 4 generated a mmu fault
[ 5321.004233] nvgpu: 17000000.gv11b nvgpu_set_err_notifier_locked:143 [ERR] error notifier set to 31 for ch 502 owned by trt
"""
CHANNEL_TIMEOUT = """\
[  912.220511] nvgpu: 57000000.gpu gk20a_fifo_handle_pbdma_intr:2611 [ERR]  semaphore acquire timeout!
[  912.220580] nvgpu: 57000000.gpu gk20a_channel_timeout_handler:1561 [ERR]  Job on channel 500 timed out
[  912.220633] nvgpu: 57000000.gpu nvgpu_set_error_notifier_locked:137 [ERR]  error notifier set to 8 for ch 500
"""
QUIESCE = """\
[ 7002.100101] nvgpu: 17000000.gpu nvgpu_sw_quiesce_thread:96 [ERR]  SW quiesce thread running
"""
UNNAMED = """\
[  130.551200] nvgpu: 17000000.gpu nvgpu_pmu_wait_ready:402 [ERR]  PMU did not reach the ready state
"""
HEALTHY = """\
[    6.310025] nvgpu: 17000000.gpu nvgpu_probe_init:210 [INFO]  probing the integrated GPU
[    6.402218] nvgpu: 17000000.gpu gk20a_finalize_poweron:633 [INFO]  GPU powered on, railgating enabled
[   19.771203] nvgpu: 17000000.gpu nvgpu_railgate:118 [INFO]  railgated after 500 ms idle
"""
PANFROST = """\
[ 2210.318007] panfrost fde60000.gpu: gpu sched timeout, js=0, config=0x7300, status=0x8, head=0x1b2c000, tail=0x1b2c000
[ 2210.318400] panfrost fde60000.gpu: Unhandled Page fault in AS1 at VA 0x000000007ff21000
"""
MSM = """\
[  480.901172] msm_dpu ae01000.display-controller: [drm:hangcheck_handler [msm]] *ERROR* hangcheck detected gpu lockup rb 1!
"""


def _severe(tmp_path: Path, text: str) -> dict[tuple[str, str | None], str]:
    found = capture_json(tmp_path, text)["findings"]
    assert isinstance(found, list)
    return {(f["cause"], f.get("module")): f["severity"] for f in found if f["severity"] in ("warn", "critical")}


@pytest.mark.parametrize(("text", "cause", "module", "severity"), [
    (MMU_FAULT, "module_page_fault", "17000000.gv11b", "warn"),
    (CHANNEL_TIMEOUT, "module_ring_reset_recovered", "57000000.gpu", "warn"),
    (QUIESCE, "module_needs_reset", "17000000.gpu", "critical"),
    (UNNAMED, "driver_error_unnamed", "17000000.gpu", "warn"),
])
def test_an_nvgpu_fault_is_a_finding_on_its_platform_device(tmp_path: Path, text: str, cause: str, module: str,
                                                              severity: str) -> None:
    assert _severe(tmp_path, text) == {(cause, module): severity}


def test_the_notifier_line_is_quoted_first_naming_the_channel_and_process(tmp_path: Path) -> None:
    found = capture_json(tmp_path, MMU_FAULT)["findings"]
    assert isinstance(found, list)
    ev = next(f for f in found if f["cause"] == "module_page_fault")["evidence"]
    assert "error notifier set to 31 for ch 502 owned by trt" in str(ev["log"])


@pytest.mark.parametrize(("line", "kind"), [
    ("error notifier set to 31 for ch 7", kernel_nvgpu.MMU_FAULT),  # the desktop driver's Xid 31
    ("error notifier set to 32 for ch 7", kernel_nvgpu.CHANNEL_ERROR),  # Xid 32: a PBDMA error
    ("error notifier set to 13 for ch 7", kernel_nvgpu.CHANNEL_ERROR),  # Xid 13: a graphics exception
    ("gk20a_finalize_poweron: GPU powered on", None),
])
def test_the_error_notifier_codes_are_the_desktop_channel_errors(line: str, kind: str | None) -> None:
    assert kernel_nvgpu.kind_of(line) == kind


def test_a_healthy_jetson_boot_is_read_and_gives_no_warn(tmp_path: Path) -> None:
    path = tmp_path / "boot.txt"
    path.write_text(HEALTHY)
    code, _, err = run(["doctor", "--from", str(path), "--json"])
    assert code == 0 and "Traceback" not in err
    assert _severe(tmp_path, HEALTHY) == {}


@pytest.mark.parametrize(("text", "module"), [(PANFROST, "fde60000.gpu"), (MSM, "ae01000.display-controller")])
def test_an_arm_boards_gpu_fault_is_a_lead_on_its_platform_device(tmp_path: Path, text: str, module: str) -> None:
    assert _severe(tmp_path, text) == {("driver_error_unnamed", module): "warn"}


@pytest.mark.parametrize(("text", "chip"), [
    (MMU_FAULT, "gv11b"),  # older L4T names the device by its chip
    (UNNAMED + "__ga10b__ Channel Status - chip ga10b\n", "ga10b"),  # the driver's channel dump names it
])
def test_inventory_lists_the_integrated_gpu_by_its_chip_and_platform_device(tmp_path: Path, text: str,
                                                                           chip: str) -> None:
    data = capture_json(tmp_path, text, "inventory")
    modules = data["modules"]
    assert isinstance(modules, list) and len(modules) == 1 and chip in str(modules[0]["model"])
    assert "17000000." in str(data)
