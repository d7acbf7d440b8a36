"""NCCL's INFO lines that announce a path lost at set-up are judged (issue 46, batch W): P2P disabled between GPUs
the topology connects (p2p_disabled), P2P the driver would not enable (p2p_unavailable), kernels that need more
shared memory than the GPU gives (the communicator cannot come up: a library fault, warn), and a 'Cuda failure' of
the SHM transport (its cuMem host path, not P2P). Each names the host and GPUs the lines give, quotes the first
line and gives the family's fix (knowledge/nccl_warns.yaml); P2P the job turned off itself is said, not a fault.
Lines written here in NCCL's own shapes."""

from __future__ import annotations

import json
from pathlib import Path

from gpuvet.knowledge import nccl_warn_family
from tests.support.helpers import capture_json, run

_DISABLED = "gpu-a7:9120:9180 [{d}] NCCL INFO P2P is disabled between connected GPUs {a} and {b}. You can repress " \
            "this message with NCCL_IGNORE_DISABLED_P2P=1.\n"
_NOT_ENABLED = "ws-12:700:760 [{d}] NCCL INFO Could not enable P2P between dev {a}(={x}) and dev {b}(={y})\n"


def _findings(tmp_path: Path, text: str) -> list[dict[str, object]]:
    data = capture_json(tmp_path, text)
    return [f for f in data["findings"] if f["severity"] != "info"]  # type: ignore[union-attr,index]


def _one(tmp_path: Path, text: str, cause: str, family: str) -> dict[str, object]:
    found = _findings(tmp_path, text)
    assert [f["cause"] for f in found] == [cause], found
    f, entry = found[0], nccl_warn_family(family)
    ev = f["evidence"]
    assert isinstance(ev, dict) and ev["kind"] == family
    assert f["title"] == entry.title and f["fix"] == entry.action and f["severity"] == "warn"
    return f


def _listed(tmp_path: Path, text: str, product: str) -> list[dict[str, object]]:
    """doctor on the NCCL log beside an `nvidia-smi nvlink -s` naming GPUs 0-3 as ``product``: the modules' design."""
    (tmp_path / "nccl.txt").write_text(text)
    (tmp_path / "nvlink.txt").write_text("".join(
        f"GPU {i}: NVIDIA {product} (UUID: GPU-1111111{i}-2222-3333-4444-555555555555)\n\t Link 0: <inactive>\n"
        for i in range(4)))
    _, out, _ = run(["doctor", "interconnect-slow", "--all", "--json", "--from", str(tmp_path / "nccl.txt"),
                     "--from", str(tmp_path / "nvlink.txt")])
    return [f for f in json.loads(out)["findings"] if f["cause"] == "p2p_disabled"]


def test_p2p_disabled_between_connected_gpus_is_a_finding_on_the_host_naming_every_pair(tmp_path: Path) -> None:
    text = "".join(_DISABLED.format(d=d, a=a, b=b) for d, a, b in ((0, 0, 1), (1, 1, 0), (2, 3, 2), (0, 0, 1)))
    found = _listed(tmp_path, text, "H100 80GB HBM3")  # an NVLink design: peer access is part of it
    assert len(found) == 1 and found[0]["severity"] == "warn"
    f = found[0]
    ev = f["evidence"]
    assert f["module"] == "gpu-a7" and isinstance(ev, dict)
    assert ev["pairs"] == ["GPU 0 <-> GPU 1", "GPU 2 <-> GPU 3"] and ev["times"] == 4
    assert "P2P is disabled between connected GPUs 0 and 1" in str(ev["log"]) and "ACS" in str(f["fix"])


def test_p2p_disabled_on_a_pcie_pair_of_cards_without_peer_access_is_info(tmp_path: Path) -> None:
    """NCCL's INFO form is a PCIe pair NVML reports without P2P (AWS's A10G and L4, GeForce): their design, said as
    info, as p2pBandwidthLatencyTest's 'no P2P' is (one rule); a finding only on an NVLink design."""
    text = "".join(_DISABLED.format(d=d, a=a, b=b) for d, a, b in ((0, 0, 1), (1, 1, 0)))
    assert _listed(tmp_path, text, "A10G") == []
    assert _findings(tmp_path, text) == []  # the captures name no model: nothing says the design has P2P
    assert "P2P disabled between PCIe-connected GPUs GPU 0 <-> GPU 1 on gpu-a7" in str(capture_json(tmp_path, text))


def test_p2p_the_driver_would_not_enable_names_the_gpus_by_their_bus_ids(tmp_path: Path) -> None:
    text = "".join(_NOT_ENABLED.format(d=d, a=a, x=x, b=b, y=y) for d, a, x, b, y in
                   ((0, 0, "1a000", 1, "3d000"), (1, 1, "3d000", 0, "1a000")))
    f = _one(tmp_path, text, "p2p_unavailable", "nccl_p2p_not_enabled")
    ev = f["evidence"]
    assert f["module"] == "ws-12" and isinstance(ev, dict)
    assert ev["pairs"] == ["GPU 0 (0000:1A:00.0) <-> GPU 1 (0000:3D:00.0)"] and ev["times"] == 2


def test_p2p_turned_off_by_the_jobs_own_setting_is_said_not_a_fault(tmp_path: Path) -> None:
    text = "gpu-a7:9120:9120 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n" + \
           _DISABLED.format(d=0, a=0, b=1)
    assert _findings(tmp_path, text) == []
    assert "P2P turned off by the job's own setting: NCCL_P2P_DISABLE set by environment to 1" in str(
        capture_json(tmp_path, text))


def test_kernels_needing_more_shared_memory_than_the_gpu_has_are_a_library_fault(tmp_path: Path) -> None:
    text = ("box3:51:51 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\n"
            "box3:51:51 [0] NCCL INFO ncclMaxSharedMem 70000 exceeds device/fn maxSharedMem 65536\n"
            "box3:51:51 [0] NCCL INFO Using network Socket\n")
    f = _one(tmp_path, text, "nccl_build_unsupported", "nccl_kernel_shared_memory")
    ev = f["evidence"]
    assert f["module"] == "box3 GPU 0" and isinstance(ev, dict)
    assert ev["shared_memory"] == "70000 bytes needed, 65536 the device allows" and ev["version"] == "2.19.3+cuda12.3"


def test_a_cuda_failure_of_the_shm_transport_is_its_cumem_host_path_not_p2p(tmp_path: Path) -> None:
    text = "c1n4:88:130 [2] transport/shm.cc:412 NCCL WARN Cuda failure 217 'peer access is not supported between " \
           "these two devices'\n"
    f = _one(tmp_path, text, "nccl_build_unsupported", "nccl_shm_cuda")
    assert f["module"] == "c1n4 GPU 2" and "NCCL_CUMEM_HOST_ENABLE=0" in str(f["fix"])


def test_peer_access_refused_by_the_p2p_transport_stays_p2p(tmp_path: Path) -> None:
    text = "c1n4:88:130 [2] transport/p2p.cc:275 NCCL WARN Cuda failure 217 'peer access is not supported between " \
           "these two devices'\n"
    assert [f["cause"] for f in _findings(tmp_path, text)] == ["p2p_unavailable"]
