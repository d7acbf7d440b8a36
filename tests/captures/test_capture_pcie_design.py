"""Benchmark figures of PCIe-only cards priced from their design (issue 46): the catalog's PCIe generation and
width give a peer copy its expected figure, a GeForce pair the driver keeps from peer-to-peer is not a fault,
a card the catalog lacks is "can't tell" said once, and a PCI id alone names its model. Written in
p2pBandwidthLatencyTest's and lspci's output formats; the figures are made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.node.catalog import CATALOG, find_model, pci_product
from tests.support.helpers import call, doctor_capture

_HEAD = "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"


def _p2p(card: str, enabled: float, disabled: float, access: str = "CAN") -> str:
    """Two cards' unidirectional tables, P2P off (staged through host memory) and on."""
    devices = "".join(f"Device: {i}, {card}, pciBusID: {bus}, pciDeviceID: 0, pciDomainID:0\n"
                      for i, bus in ((0, "41"), (1, "c1")))
    access_lines = f"Device=0 {access} Access Peer Device=1\nDevice=1 {access} Access Peer Device=0\n"
    table = "   D\\D     0      1 \n     0 900.10 {v:6.2f} \n     1 {v:6.2f} 905.20 \n"
    return (_HEAD + devices + access_lines + "\nUnidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n"
            + table.format(v=disabled) + "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
            + table.format(v=enabled))


def _pair_step(data: dict[str, object]) -> dict[str, str]:
    steps = data["steps"]
    assert isinstance(steps, list)
    return next(s for s in steps if s["check"] == "pair_bandwidth")


def test_a_gen4_x16_pair_at_a_quarter_of_its_design_is_a_warn_naming_the_basis(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, data = doctor_capture(capsys, tmp_path, _p2p("NVIDIA GeForce RTX 4090", 6.5, 6.2))
    slow = [f for f in data["findings"] if f["cause"] == "topology_misidentified"]  # both ways: the pair's path
    assert slow and slow[0]["severity"] == "warn" and slow[0]["between"] == ["GPU 0", "GPU 1"]
    assert slow[0]["module"].lower() == "0000:41:00.0 <-> 0000:c1:00.0"  # the sample's own bus ids (hex)
    basis = slow[0]["evidence"]["basis"]
    assert "PCIe Gen4 x16" in basis and "RTX-4090" in basis and slow[0]["evidence"]["pct_of_design"] < 30
    assert "ACS" in slow[0]["fix"] and "LnkSta" in slow[0]["fix"]  # the likely causes, cheapest look first


def test_the_same_pair_at_its_design_is_no_finding(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, data = doctor_capture(capsys, tmp_path, _p2p("NVIDIA GeForce RTX 4090", 25.1, 19.8))
    assert not [f for f in data["findings"] if f["severity"] in ("warn", "critical")]
    assert "within 75 % of its design" in _pair_step(data)["summary"]


def test_a_geforce_pair_the_driver_keeps_from_p2p_is_not_priced_as_a_peer_copy(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The stock driver: CANNOT Access Peer, and the P2P=Enabled cells equal the host-staged ones."""
    _, data = doctor_capture(capsys, tmp_path, _p2p("NVIDIA GeForce RTX 4090", 12.4, 12.3, access="CANNOT"))
    assert not [f for f in data["findings"] if f["severity"] in ("warn", "critical")]
    said = _pair_step(data)["summary"]
    assert "staged through host memory" in said and "turns peer-to-peer off" in said


def test_a_card_the_catalog_lacks_is_cant_tell_said_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, data = doctor_capture(capsys, tmp_path, _p2p("NVIDIA GeForce GTX 1080 Ti", 3.1, 6.0))
    step = _pair_step(data)
    assert step["summary"].count("is not in the catalog") == 1 and "GTX 1080 Ti" in step["summary"]
    assert not [f for f in data["findings"] if f["cause"] in ("link_degraded", "topology_misidentified")]


def test_a_pci_id_alone_names_the_model_in_inventory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """lspci -nn from a pci.ids older than the card prints only the id: the table names it."""
    path = tmp_path / "lspci.txt"
    path.write_text("41:00.0 3D controller [0302]: NVIDIA Corporation Device [10de:2331] (rev a1)\n")
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    assert code == 0 and '"in_catalog": true' in out and "H100 PCIe" in out


def test_the_added_models_resolve_by_the_names_drivers_print() -> None:
    for name, model in (("NVIDIA GeForce RTX 4090", "RTX-4090"), ("NVIDIA H100 NVL", "H100-NVL"),
                        ("Tesla V100-SXM2-32GB", "V100-SXM2"), ("NVIDIA A100-PCIE-40GB", "A100-PCIe-40GB"),
                        ("NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada"), ("AMD Instinct MI100", "MI100")):
        found = find_model(name)
        assert found is not None and found.name == model, name
    assert CATALOG["RTX-4090"].pcie_gen == 4 and CATALOG["RTX-4090"].pcie_width == 16
    assert CATALOG["RTX-4090"].driver_p2p_off and not CATALOG["RTX-3090"].driver_p2p_off
    hit = pci_product("10de:2684")
    assert hit is not None and hit.model == "RTX-4090"


_BT = ("[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: NVIDIA H100 PCIe\n Quick Mode\n\n"
       " Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(GB/s)\n"
       "   32000000\t\t\t{}\n\nResult = PASS\n")


def test_a_bridged_cards_host_copy_is_priced_on_its_pcie_link(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    """H100 PCIe takes an NVLink bridge (whether one is fitted, the log does not say): its host copies cross its
    own Gen5 x16 link all the same."""
    _, data = doctor_capture(capsys, tmp_path, _BT.format(13.2))
    slow = [f for f in data["findings"] if f["cause"] == "link_degraded"]
    assert slow and slow[0]["between"] == ["host", "GPU 0"] and "PCIe Gen5 x16" in slow[0]["evidence"]["basis"]
    assert "host copies only" in slow[0]["evidence"]["basis"]
    _, data = doctor_capture(capsys, tmp_path, _BT.format(53.0))
    assert not [f for f in data["findings"] if f["severity"] in ("warn", "critical")]
