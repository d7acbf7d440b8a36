"""Issue 46 (YX3): kernel drivers' faults of a channel or a process' work, and a GPU driver's firmware that could not
be read, in each driver's own words. nouveau's fifo/gr channel errors ('DMA_PUSHER … (err: INVALID_CMD)', PBDMA,
gr TRAP) and MMU faults are warn findings on the module the line names, never silence; xe's and i915's page faults
('Fault response: Unsuccessful', 'Engine memory CAT error') are a page fault (warn), the engine reset after one its
consequence, not a hang of its own; the NVIDIA driver's GSP image the firmware loader could not read is a module
that did not initialise (critical), its directory the driver's version. Lines written here in each driver's log
shape (drivers/gpu/drm/nouveau/nvkm/engine/fifo, gr; drm/xe/xe_gt_pagefault.c, xe_guc_submit.c;
drivers/base/firmware_loader/main.c); bus ids, times, processes and codes are made up. The batch's captures too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuvet.captures.kernel import parse
from gpuvet.captures.text import Line
from tests.support.helpers import capture_json

BATCH = Path(__file__).resolve().parents[1] / "data" / "captures" / "fresh_y"


def _log(*lines: str) -> str:
    return "".join(f"[  {210 + i}.{400001 + i:06d}] {ln}\n" for i, ln in enumerate(lines))


def _found(tmp_path: Path, log: str) -> dict[tuple[str, str | None], dict[str, Any]]:
    data: dict[str, Any] = capture_json(tmp_path, log)  # type: ignore[assignment]
    return {(f["cause"], f.get("module")): f for f in data["findings"]}


NOUVEAU_PUSHER = _log(
    "nouveau 0000:02:00.0: fifo: DMA_PUSHER - ch 3 [kwin_x11[1187]] get 0000a1c000 put 0000a1c0e8 ib_get 00000012 "
    "ib_put 00000013 state 8000001c (err: INVALID_CMD) push 00406040",
    "nouveau 0000:02:00.0: fifo: DMA_PUSHER - ch 3 [kwin_x11[1187]] get 0000a1c0e8 put 0000a1d200 ib_get 00000013 "
    "ib_put 00000014 state 8000001c (err: INVALID_CMD) push 00406040")
NOUVEAU_PBDMA = _log(
    "nouveau 0000:65:00.0: fifo: PBDMA0: 00800000 [PBENTRY] ch 5 [00ff91d000 glmark2[2231]] subc 0 mthd 0000 "
    "data 00000000")
NOUVEAU_GR_TRAP = _log(
    "nouveau 0000:65:00.0: gr: TRAP ch 7 [00ff7b4000 blender[3310]]",
    "nouveau 0000:65:00.0: gr: GPC0/TPC1/MP trap: global 00000004 [MULTIPLE_WARP_ERRORS] warp 0017 [OOR_ADDR]")
NOUVEAU_FAULT = _log(
    "nouveau 0000:01:00.0: fifo: fault 01 [VIRT_WRITE] at 0000000000a3b000 engine 00 [GR] client 0f [GPC0/PE_0] "
    "reason 02 [PTE] on channel 4 [00ff8a2000 firefox[4410]]")
NOUVEAU_HEALTHY = _log(
    "nouveau 0000:01:00.0: NVIDIA GP107 (137000a1)", "nouveau 0000:01:00.0: bios: version 86.07.59.00.24",
    "nouveau 0000:01:00.0: fb: 4096 MiB GDDR5", "nouveau 0000:01:00.0: DRM: VRAM: 4096 MiB",
    "[drm] Initialized nouveau 1.3.1 20120801 for 0000:01:00.0 on minor 0")


@pytest.mark.parametrize(("log", "cause", "module", "message"), [
    (NOUVEAU_PUSHER, "module_channel_error", "0000:02:00.0", "nouveau_channel_error"),
    (NOUVEAU_PBDMA, "module_channel_error", "0000:65:00.0", "nouveau_channel_error"),
    (NOUVEAU_GR_TRAP, "module_channel_error", "0000:65:00.0", "nouveau_channel_error"),
    (NOUVEAU_FAULT, "module_page_fault", "0000:01:00.0", "nouveau_mmu_fault"),
])
def test_a_nouveau_channel_fault_is_a_warn_on_the_module_it_names(tmp_path: Path, log: str, cause: str, module: str,
                                                                  message: str) -> None:
    found = _found(tmp_path, log)
    assert set(found) == {(cause, module)}, found
    f = found[(cause, module)]
    assert f["severity"] == "warn" and f["evidence"]["message"] == message
    assert f["evidence"]["times"] == log.count("\n")  # every line of the kind counted


def test_a_healthy_nouveau_boot_gives_no_warn(tmp_path: Path) -> None:
    assert not [f for f in _found(tmp_path, NOUVEAU_HEALTHY).values() if f["severity"] != "info"]


XE_FAULT_THEN_RESET = (
    "xe 0000:03:00.0: [drm] Tile0: GT0: Fault response: Unsuccessful -EINVAL\n"
    "xe 0000:03:00.0: [drm] Tile0: GT0: Engine reset: engine_class=ccs, logical_mask: 0x1, guc_id=12\n"
    "xe 0000:03:00.0: [drm] Tile0: GT0: Fault response: Unsuccessful -ENOENT\n")
XE_CAT_ERROR = (
    "xe 0000:43:00.0: [drm] Tile0: GT0: Engine memory CAT error [18]: class=bcs, logical_mask: 0x1, guc_id=18\n"
    "xe 0000:43:00.0: [drm] Tile0: GT0: Engine reset: engine_class=bcs, logical_mask: 0x1, guc_id=18\n")
XE_RESET_ALONE = "xe 0000:03:00.0: [drm] Tile0: GT0: Engine reset: engine_class=rcs, logical_mask: 0x1, guc_id=2\n"


def test_an_xe_page_fault_is_the_cause_and_the_engine_reset_after_it_its_consequence(tmp_path: Path) -> None:
    found = _found(tmp_path, XE_FAULT_THEN_RESET)
    assert set(found) == {("module_page_fault", "0000:03:00.0")}, found
    f = found[("module_page_fault", "0000:03:00.0")]
    assert f["severity"] == "warn" and f["evidence"]["message"] == "intel_page_fault" and f["evidence"]["times"] == 2
    assert set(_found(tmp_path, XE_CAT_ERROR)) == {("module_page_fault", "0000:43:00.0")}


def test_an_engine_reset_with_no_fault_before_it_stays_a_hang(tmp_path: Path) -> None:
    assert set(_found(tmp_path, XE_RESET_ALONE)) == {("module_ring_reset_recovered", "0000:03:00.0")}


GSP_READ_FAILED = _log(
    "nvidia 0000:41:00.0: loading /lib/firmware/nvidia/565.57.01/gsp_tu10x.bin failed with error -12",
    "nvidia 0000:41:00.0: Direct firmware load for nvidia/565.57.01/gsp_tu10x.bin failed with error -12")
GSP_NOT_THERE = _log("nvidia 0000:41:00.0: Direct firmware load for nvidia/565.57.01/gsp_tu10x.bin failed with error -2")


def test_the_gsp_image_the_loader_could_not_read_is_a_module_that_did_not_initialise(tmp_path: Path) -> None:
    found = _found(tmp_path, GSP_READ_FAILED)
    assert set(found) == {("module_init_failed", "0000:41:00.0")}, found
    assert found[("module_init_failed", "0000:41:00.0")]["severity"] == "critical"
    lines = [Line(i + 1, t) for i, t in enumerate(GSP_READ_FAILED.splitlines())]
    assert parse(lines).driver == "565.57.01"  # the image's directory is the driver's own version
    # a missing file (-2): the firmware loader's lookup; the driver says itself whether it could go on
    assert ("module_init_failed", "0000:41:00.0") not in _found(tmp_path, GSP_NOT_THERE)


@pytest.mark.parametrize(("name", "cause", "module", "severity"), [
    ("dmesg_sddm1936_nouveau_dma_pusher.txt", "module_channel_error", "0000:01:00.0", "warn"),
    ("dmesg_computert948_xe_b580_fault_engine_reset.txt", "module_page_fault", "0000:83:00.0", "warn"),
    ("dmesg_aiinfra_gsp_firmware_load_failed.txt", "module_init_failed", "0000:06:00.0", "critical"),
])
def test_batch_y_captures(tmp_path: Path, name: str, cause: str, module: str, severity: str) -> None:
    found = _found(tmp_path, (BATCH / name).read_text(encoding="utf-8"))
    assert {k: f["severity"] for k, f in found.items()} == {(cause, module): severity}


def test_a_freebsd_firmware_lookup_names_a_gcn_card(tmp_path: Path) -> None:
    """FreeBSD's firmware(9) prints each name drm-kmod's linuxkpi tries; amdgpu's image names the chip (Polaris,
    Fiji, the GCN cards gfx_v8_0.c loads for) where no line names the card."""
    text = ("amdgpu/polaris10_mc.bin: could not load firmware image, error 2\n"
            "drmn0: fence driver on ring 0 use gpu addr 0x0000000100000008, cpu addr 0x0xfffff8003b318008\n")
    data: dict[str, Any] = capture_json(tmp_path, text, "inventory")  # type: ignore[assignment]
    assert [m["model"] for m in data["modules"]] == ["AMD Polaris 10 (polaris10)"]
