"""doctor on runtime lines saying GPU peer access is unsupported or a GPU is gone from the bus (issue 46, batch U),
on lines written here in each tool's format: a custom all-reduce's 'peer access is not supported between these
two devices' (the CUDA runtime's words for cudaErrorPeerAccessUnsupported) is P2P unavailable between the
modules (warn), never the application's error nor a file gpuvet cannot read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.captures.test_captures_fresh_c import run_json


def _doctor(tmp_path: Path, text: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "job.log"
    path.write_text(text)
    return run_json("doctor", "--from", str(path))


def test_peer_access_unsupported_is_p2p_unavailable_with_the_runtime_fix(tmp_path: Path) -> None:
    text = ("[10:00:00 TP0] Init nccl begin.\n"
            "Failed: Cuda error /src/csrc/custom_all_reduce.cuh:300 'peer access is not supported between these "
            "two devices'\n"
            "Failed: Cuda error /src/csrc/custom_all_reduce.cuh:300 'peer access is not supported between these "
            "two devices'\n")
    code, data = _doctor(tmp_path, text)
    found = [(f["cause"], f["severity"]) for f in data["findings"]]
    assert found == [("p2p_unavailable", "warn")], found
    fix = data["findings"][0]["fix"]
    assert "custom all-reduce" in fix and "NCCL_P2P_DISABLE" in fix and "topo -p2p r" in fix
    assert code != 2


def test_the_enum_name_alone_is_read_too(tmp_path: Path) -> None:
    _, data = _doctor(tmp_path, "RuntimeError: CUDA error: cudaErrorPeerAccessUnsupported\n")
    assert [f["cause"] for f in data["findings"]] == ["p2p_unavailable"]


LSPCI = ("01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)\n"
         "01:00.1 Audio device: NVIDIA Corporation GA102 High Definition Audio Controller (rev a1)\n"
         "02:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev ff)\n"
         "02:00.1 Audio device: NVIDIA Corporation GA102 High Definition Audio Controller (rev ff)\n")


def test_a_gpu_lspci_lists_with_revision_ff_fell_off_the_bus(tmp_path: Path) -> None:
    code, data = _doctor(tmp_path, LSPCI)
    found = [(f["cause"], f["severity"], f["module"]) for f in data["findings"]]
    assert found == [("module_fell_off_bus", "critical", "02:00.0")], found
    assert not any("02:00.0 has no LnkCap" in n for n in data.get("notes", []))


def test_revision_ff_in_the_numeric_listing_too(tmp_path: Path) -> None:
    text = ("03:00.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 PCIe 40GB] [10de:20f1] (rev a1)\n"
            "04:00.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 PCIe 40GB] [10de:20f1] (rev ff)\n")
    _, data = _doctor(tmp_path, text)
    assert [(f["cause"], f["module"]) for f in data["findings"]] == [("module_fell_off_bus", "04:00.0")]


def test_an_intel_gpu_whose_registers_read_all_ones_is_off_the_bus(tmp_path: Path) -> None:
    text = "".join(f"[ 10{i}.000001] i915 0000:03:00.0: [drm] *ERROR* gt: MMIO unreliable (forcewake register "
                   "returns 0xFFFFFFFF)!\n" for i in range(3))
    _, data = _doctor(tmp_path, text)
    found = [(f["cause"], f["severity"], f["module"]) for f in data["findings"]]
    assert found == [("module_fell_off_bus", "critical", "0000:03:00.0")], found
    unclaimed = "[ 5.000001] i915 0000:00:02.0: Unclaimed read from register 0x2030 returned 0xffffffff\n"
    assert [f["cause"] for f in _doctor(tmp_path, unclaimed)[1]["findings"]] == ["module_fell_off_bus"]
