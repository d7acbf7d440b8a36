"""A GPU monitor's Xid 79 on a bus id beside NVML's GPU_IS_LOST on a GPU named by UUID (issue 46, batch I's
gpud604 as a class): both say the module left the bus, so where each names exactly one GPU the module carries
the UUID; two UUIDs lost, or no Xid 79, pair nothing (never a guess)."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_json

_XID = "XID 79(GPU has fallen off the bus) detected on PCI:0000:3d:00\n"
_U1, _U2 = "GPU-1b2c3d4e-0f1a-2b3c-4d5e-6f7a8b9c0d1e", "GPU-9e8d7c6b-5a4f-3e2d-1c0b-a9f8e7d6c5b4"


def _lost(uuid: str) -> str:
    return f"failed to get clock events for {uuid}: failed to get device clock events: ERROR_GPU_IS_LOST\n"


def _modules(tmp_path: Path, text: str) -> list[tuple[object, object]]:
    data = capture_json(tmp_path, text, "inventory")
    return [(m["bus_id"], m["uuid"]) for m in data["modules"]]  # type: ignore[index,union-attr]


def test_one_gpu_lost_by_uuid_beside_one_xid_79_is_that_module(tmp_path: Path) -> None:
    assert _modules(tmp_path, _XID + "\n" + _lost(_U1)) == [("0000:3D:00.0", _U1)]
    assert _modules(tmp_path, _lost(_U1).replace("ERROR_GPU", "NVML_ERROR_GPU") + _XID) == [("0000:3D:00.0", _U1)]


def test_two_uuids_lost_or_no_xid_79_pair_nothing(tmp_path: Path) -> None:
    assert _modules(tmp_path, _XID + _lost(_U1) + _lost(_U2)) == [("0000:3D:00.0", None)]
    other = _XID.replace("XID 79(GPU has fallen off the bus)", "XID 48(Double Bit ECC Error)")
    assert _modules(tmp_path, other + _lost(_U1)) == [("0000:3D:00.0", None)]
