"""Issue 46 (GENK): a GPU driver's error lines no message of the knowledge base names are a lead (warn, one per
driver and module, the lines quoted), never "clear"; a driver gpuvet has no messages for is read, not refused;
the error-worded lines a healthy boot prints give nothing. Lines written here in the drivers' log shapes; the
values and wordings are made up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuvet.captures import kernel
from gpuvet.captures.text import Line
from tests.support.helpers import capture_json

UNNAMED = "driver_error_unnamed"


def _doctor(tmp_path: Path, log: str) -> tuple[dict[tuple[str, str | None], dict[str, Any]], list[str]]:
    """doctor's findings by (cause, module), and its kernel_messages steps' statuses."""
    data: dict[str, Any] = capture_json(tmp_path, log)  # type: ignore[assignment]
    found = {(f["cause"], f.get("module")): f for f in data["findings"]}
    steps = [s["status"] for s in data["steps"] if s["check"].startswith("kernel_messages")]
    return found, steps


def test_an_amdgpu_error_no_message_names_is_a_warn_on_its_module_with_the_lines_quoted(tmp_path: Path) -> None:
    log = ("[  301.100001] amdgpu 0000:0a:00.0: amdgpu: SMU: response:0xFFFFFFFF for index:22 param:0x00000003 "
           "message:TransferTableSmu2Dram?\n"
           "[  301.100200] amdgpu 0000:0a:00.0: amdgpu: Failed to export SMU metrics table!\n"
           "[  301.100300] amdgpu 0000:0a:00.0: amdgpu: Failed to export SMU metrics table!\n")
    found, steps = _doctor(tmp_path, log)
    assert set(found) == {(UNNAMED, "0000:0A:00.0")}
    f = found[(UNNAMED, "0000:0A:00.0")]
    assert f["severity"] == "warn"
    assert f["title"] == "The amdgpu driver printed 3 error line(s) gpuvet's knowledge base does not name"
    assert f["evidence"]["lines"][1].endswith("amdgpu: Failed to export SMU metrics table!")
    assert "confirmed" in steps  # never "clear"


def test_an_nvrm_error_line_with_a_bus_id_and_a_bus_less_drm_error_each_name_their_module(tmp_path: Path) -> None:
    log = ("[   14.500001] NVRM: GPU 0000:41:00.0: kgrctxSetup: engine context allocation failed (status 0x51)\n"
           "[   14.500101] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Wed Jun 12 2024\n")
    found, _ = _doctor(tmp_path, log)
    assert set(found) == {(UNNAMED, "0000:41:00.0")}
    assert found[(UNNAMED, "0000:41:00.0")]["evidence"]["driver"] == "nvidia"
    amd = "[  812.000001] [drm:gfx_v11_0_cp_resume [amdgpu]] *ERROR* the compute queue would not start\n"
    found, _ = _doctor(tmp_path, amd)
    assert set(found) == {(UNNAMED, kernel.AMD_NO_BUS)}  # no line places it: never an invented bus id


def test_a_driver_gpuvet_has_no_messages_for_is_read_its_errors_a_warn_and_else_cant_tell(tmp_path: Path) -> None:
    faulty = ("[ 4410.000001] mtgpu 0000:05:00.0: [ERROR] core 1 job timeout, resetting the context\n"
              "[ 4410.000002] mtgpu 0000:05:00.0: [ERROR] page fault at 0x7f001000 from process 991\n")
    found, steps = _doctor(tmp_path, faulty)
    assert set(found) == {(UNNAMED, "0000:05:00.0")}
    assert found[(UNNAMED, "0000:05:00.0")]["evidence"]["times"] == 2
    quiet = ("[    3.100001] mtgpu 0000:05:00.0: enabling device (0000 -> 0003)\n"
             "[    3.200002] mtgpu 0000:05:00.0: firmware version 1.2.3 loaded\n")
    found, steps = _doctor(tmp_path, quiet)
    assert found == {} and set(steps) == {"inconclusive"}  # can't tell: never "clear", never refused
    modules = capture_json(tmp_path, quiet, "inventory")["modules"]
    assert [m["bus_id"] for m in modules] == ["0000:05:00.0"]  # type: ignore[index]


def test_a_healthy_boots_error_worded_lines_give_no_finding(tmp_path: Path) -> None:
    log = ("[    2.000001] nvidia: loading out-of-tree module taints kernel.\n"
           "[    2.000002] nvidia: module verification failed: signature and/or required key missing - tainting kernel\n"
           "[    2.400001] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Wed Jun 12 2024\n"
           "[    2.500001] nvidia-modeset: WARNING: GPU:0: Unable to read EDID for display device DP-2\n"
           "[    3.000001] amdgpu 0000:0c:00.0: Direct firmware load for amdgpu/xyz_ta.bin failed with error -2\n"
           "[    3.000002] amdgpu 0000:0c:00.0: amdgpu: Secure display: Generic Failure.\n"
           "[    3.000003] amdgpu 0000:0c:00.0: amdgpu: failed to create debugfs entry for ring sdma1\n"
           "[    3.000004] [drm:create_links [amdgpu]] *ERROR* DC: failed to create link!\n"
           "[    3.000005] amdgpu 0000:0c:00.0: amdgpu: ACPI: failed to evaluate ATCS method\n")
    found, steps = _doctor(tmp_path, log)
    assert found == {}
    assert set(steps) == {"clear"}
    found, _ = _doctor(tmp_path, log + "[   61.000001] amdgpu 0000:0c:00.0: amdgpu: VCN decode ring init failed\n")
    assert found[(UNNAMED, "0000:0C:00.0")]["evidence"]["times"] == 1  # that line alone, the benign ones not counted


def test_a_message_wrapped_onto_a_second_line_is_read_and_quoted_whole() -> None:
    log = ["[  950.000001] amdgpu 0000:0a:00.0: amdgpu: smu_v13_0: write of register 0x3b10 did not",
           "  complete within 100 ms, timed out",
           "[  950.000002] amdgpu 0000:0a:00.0: amdgpu: SMU is initialized successfully!"]
    events = kernel.parse([Line(i + 1, t) for i, t in enumerate(log)]).events
    assert [(e.kind, e.module, e.count) for e in events] == [(UNNAMED, "0000:0A:00.0", 1)]
    assert events[0].shown[0].endswith("did not complete within 100 ms, timed out")


def test_nouveau_and_radeon_error_lines_are_read_as_a_warn_not_refused(tmp_path: Path) -> None:
    others = ("[  100.000000] usb 1-4: new high-speed USB device number 3 using xhci_hcd\n"
              "[  100.000004] EXT4-fs (md127p3): re-mounted. Quota mode: none.\n")
    # nouveau's bus unit (a channel's fault, fifo's or gr's, is kernel_nouveau's named kind)
    for driver, line in (("nouveau", "[   12.300001] nouveau 0000:01:00.0: bus: MMIO read of 00000000 FAULT at 022554 "
                                     "[ IBUS ]\n"),
                         ("radeon", "[  100.000002] radeon 0000:01:00.0: ring 0 stalled, GPU lockup suspected\n")):
        found, _ = _doctor(tmp_path, others + line)
        assert set(found) == {(UNNAMED, "0000:01:00.0")}, driver
        assert found[(UNNAMED, "0000:01:00.0")]["evidence"]["driver"] == driver
