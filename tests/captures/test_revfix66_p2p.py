"""Issue 46 (REVFIX66, review of R12B's doctor/p2p_pcie): a peer no line names is not known, never taken for the
same model, so the mixed-model guard can hold (p2pBandwidthLatencyTest's lines, as the CUDA sample prints them)."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import doctor_text


def _p2p(devices: list[str]) -> str:
    return (
        "\n".join(
            [
                "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]",
                *[
                    f"Device: {i}, {name}, pciBusID: {17 + i:x}, pciDeviceID: 0, pciDomainID:0"
                    for i, name in enumerate(devices)
                ],
                "Device=0 CANNOT Access Peer Device=1",
                "Device=1 CANNOT Access Peer Device=0",
            ]
        )
        + "\n"
    )


def _p2p_causes(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    code, got = doctor_text(tmp_path, text)
    assert code != 2
    return [(f["cause"], f["severity"]) for f in got["findings"] if f["cause"].startswith("p2p_unavailable")]


def test_an_unnamed_peer_is_not_taken_for_the_same_model(tmp_path: Path) -> None:
    assert _p2p_causes(tmp_path, _p2p(["NVIDIA RTX A6000", "NVIDIA RTX A6000"])) == [("p2p_unavailable", "warn")]
    assert _p2p_causes(tmp_path, _p2p(["NVIDIA RTX A6000"])) == []  # GPU 1 named by no line: not known
    assert _p2p_causes(tmp_path, _p2p(["NVIDIA RTX A6000", "NVIDIA A40"])) == []  # two models: their design
