"""Issue 46 (R12B): benchmarks and PCIe on any node, each written in its tool's own format: nccl-tests on PCIe
GeForce/Quadro cards judged against the PCIe path the model gives (the catalog's cards from NVIDIA's whitepapers
and datasheets); bandwidthTest's host copies against gen x width minus the stated efficiency, a degraded link only
below what a link one step down gives; P2P unavailable on PCIe cards (p2pBandwidthLatencyTest, topo -p2p r/p) said
once as an info; several machines' deviceQuery runs in one paste each read as its own; lspci LnkSta narrower than
LnkCap on any endpoint a warn on its bus id."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.node.catalog import find_model, pci_product
from tests.support.helpers import doctor_triples

CAPTURES = Path(__file__).parents[1] / "data" / "captures"


def _nccl(busbw: float, name: str = "NVIDIA GeForce RTX 2080 Ti") -> str:
    rows = [f"  {size:>10}  {size // 4:>12}     float     sum      -1   {size / busbw / 1e3:>7.0f}  {busbw:>6.2f}"
            f"  {busbw:>6.2f}      0   {size / busbw / 1e3:>7.0f}  {busbw:>6.2f}  {busbw:>6.2f}      0"
            for size in (134217728, 268435456, 536870912, 1073741824)]
    return "\n".join([
        "# nThread 1 nGpus 2 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
        "validation: 1 graph: 0",
        "#", "# Using devices",
        f"#  Rank  0 Group  0 Pid  4242 on node-a device  0 [0000:17:00] {name}",
        f"#  Rank  1 Group  0 Pid  4242 on node-a device  1 [0000:18:00] {name}",
        "#",
        "#                                                              out-of-place                       in-place",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
        *rows,
        "# Out of bounds values : 0 OK",
        f"# Avg bus bandwidth    : {busbw / 2:.5f}",
    ])


def test_catalog_holds_the_common_pcie_cards_with_sources() -> None:
    for name, gen in (("NVIDIA GeForce RTX 2080 Ti", 3), ("GeForce RTX 3080", 4), ("NVIDIA GeForce RTX 4080", 4)):
        model = find_model(name)
        assert model is not None and model.pcie_gen == gen and model.pcie_width == 16, name
        assert model.unsourced() == [], name
    product = pci_product("10de:1e04")
    assert product is not None and product.model == "RTX-2080-Ti"


def test_nccl_tests_on_bridged_geforce_judged_on_the_pcie_floor(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples(_nccl(4.0), tmp_path, capsys)
    assert code == 1 and any(c == "collective_below_model" and s == "warn" for c, s, _ in found)
    code, found = doctor_triples(_nccl(9.5), tmp_path, capsys)
    assert code == 0 and not [f for f in found if f[1] in ("warn", "critical")]


def _bandwidth_test(h2d: float, d2h: float) -> str:
    return "\n".join([
        "[CUDA Bandwidth Test] - Starting...", "Running on...", "", " Device 0: Tesla T4", " Quick Mode", "",
        " Host to Device Bandwidth, 1 Device(s)", " PINNED Memory Transfers",
        "   Transfer Size (Bytes)\tBandwidth(GB/s)", f"   32000000\t\t\t{h2d}", "",
        " Device to Host Bandwidth, 1 Device(s)", " PINNED Memory Transfers",
        "   Transfer Size (Bytes)\tBandwidth(GB/s)", f"   32000000\t\t\t{d2h}", "",
        "Result = PASS",
    ])


def test_bandwidth_test_host_copy_is_a_degraded_link_only_below_one_step_down(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Gen3 x16 x 0.985 GB/s a lane x 0.86 = ~13.6 GB/s: 9.7 is 72 % (the host side), 6.2 is 46 % (an x8 link's)
    code, found = doctor_triples(_bandwidth_test(9.7, 11.1), tmp_path, capsys)
    assert code == 0 and not [f for f in found if f[1] in ("warn", "critical")]
    code, found = doctor_triples(_bandwidth_test(6.2, 6.4), tmp_path, capsys)
    assert any(c in ("link_degraded", "host_copy_slow") and s == "warn" for c, s, _ in found)


def _p2p(name: str) -> str:
    return "\n".join([
        "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]",
        f"Device: 0, {name}, pciBusID: 17, pciDeviceID: 0, pciDomainID:0",
        f"Device: 1, {name}, pciBusID: 18, pciDeviceID: 0, pciDomainID:0",
        "Device=0 CANNOT Access Peer Device=1",
        "Device=1 CANNOT Access Peer Device=0",
    ])


@pytest.mark.parametrize(("name", "want"), [
    # a card that offers PCIe P2P: the platform refuses it (REV66: one verdict with CUDA's 'peer access not supported')
    ("NVIDIA RTX A6000", ("p2p_unavailable", "warn")),
    ("NVIDIA GeForce RTX 2080 Ti", None),  # GeForce: no PCIe P2P by design, said in the reader's note
    ("NVIDIA A100-SXM4-40GB", ("p2p_unavailable", "warn")),  # an NVLink board's pair: a fault
])
def test_p2p_unavailable_by_card(name: str, want: tuple[str, str] | None, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    _, found = doctor_triples(_p2p(name), tmp_path, capsys)
    p2p = [(c, s) for c, s, _ in found if c.startswith("p2p_unavailable")]
    assert p2p == ([want] if want else [])


def test_p2p_unavailable_between_two_models_is_their_design(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    text = _p2p("NVIDIA RTX A6000").replace("Device: 1, NVIDIA RTX A6000", "Device: 1, NVIDIA A40")
    _, found = doctor_triples(text, tmp_path, capsys)
    assert not [c for c, _, _ in found if c.startswith("p2p_unavailable")]


def _topo(rel: str, status: str, mode: str = "p") -> str:
    return "\n".join([
        "$ nvidia-smi topo -m",
        "        GPU0    GPU1    CPU Affinity    NUMA Affinity   GPU NUMA ID",
        f"GPU0     X      {rel}     0-31            0               N/A",
        f"GPU1    {rel}      X      0-31            0               N/A",
        "",
        f"$ nvidia-smi topo -p2p {mode}",
        "        GPU0    GPU1",
        f" GPU0   X       {status}",
        f" GPU1   {status}      X",
    ])


@pytest.mark.parametrize(("rel", "status", "mode"), [
    ("PIX", "NS", "p"), ("PHB", "CNS", "p"), ("NODE", "GNS", "r"), ("NV4", "NS", "p"), ("PIX", "OK", "p")])
def test_topo_p2p_on_unnamed_cards_is_never_loud(rel: str, status: str, mode: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples(_topo(rel, status, mode), tmp_path, capsys)
    assert code == 0 and not [f for f in found if f[1] in ("warn", "critical")]


def test_topo_prop_ns_on_a_pcie_pair_counts_as_denied_not_on_nvlink() -> None:
    from gpuvet.captures import read
    from gpuvet.doctor.p2p_pcie import prop_denied

    for rel, want in (("PIX", [(0, 1)]), ("NV4", [])):
        fc = read.parse_text(_topo(rel, "NS"), "topo.txt")
        assert [(i, j) for _, _, i, j, _ in prop_denied(fc, "t", {})] == want


def _device_query(name: str, bus: int) -> str:
    return "\n".join([
        "./deviceQuery Starting...", "", " CUDA Device Query (Runtime API) version (CUDART static linking)", "",
        "Detected 1 CUDA Capable device(s)", "", f'Device 0: "{name}"',
        "  CUDA Driver Version / Runtime Version          12.2 / 12.2",
        f"  Device PCI Domain ID / Bus ID / location ID:   0 / 0 / {bus}",
        "deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.2, CUDA Runtime Version = 12.2, NumDevs = 1",
        "Result = PASS",
    ])


def test_several_machines_device_query_runs_read_each_as_its_own(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    text = "\n\n".join([_device_query("Tesla T4", 7), "#### A100 output", _device_query("NVIDIA A100-SXM4-40GB", 4),
                        "### ECC (Error Correcting Code) Memory",
                        "- **Device has ECC support**: Enabled. This means the GPU can detect and correct certain "
                        "types of memory errors."])
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code == 0 and not [f for f in found if f[1] in ("warn", "critical")]


def _lspci(dev: str, cap: str, sta: str) -> str:
    return "\n".join([dev, "\tCapabilities: [70] Express (v2) Endpoint, MSI 00",
                      f"\t\tLnkCap:\tPort #0, Speed {cap}, ASPM L1, Exit Latency L1 <64us",
                      f"\t\tLnkSta:\tSpeed {sta}, TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-"])


NVME = "41:00.0 Non-Volatile memory controller: Samsung Electronics Co Ltd NVMe SSD Controller PM9A1/PM9A3/980PRO"
GPU = "c1:00.0 VGA compatible controller: NVIDIA Corporation AD102GL [RTX 6000 Ada Generation] (rev a1)"
BRIDGE = "40:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Starship/Matisse GPP Bridge"


@pytest.mark.parametrize(("dev", "cap", "sta", "want"), [
    (NVME, "16GT/s, Width x4", "16GT/s, Width x1 (downgraded)", ("pcie_link_downgraded", "warn", "41:00.0")),
    (NVME, "16GT/s, Width x4", "8GT/s (downgraded), Width x4", None),  # a speed downshift on full width: clear
    (BRIDGE, "16GT/s, Width x16", "16GT/s, Width x1 (downgraded)", None),  # a port: the device below sets width
    (GPU, "16GT/s, Width x16", "2.5GT/s (downgraded), Width x16", ("pcie_link_idle_speed", "info", "C1:00.0")),
])
def test_lspci_width_downgrade_on_any_endpoint(dev: str, cap: str, sta: str, want: tuple[str, str, str] | None,
                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, found = doctor_triples(_lspci(dev, cap, sta), tmp_path, capsys)
    if want is None:
        assert not [f for f in found if f[1] in ("warn", "critical")]
    else:
        assert want in found and not [f for f in found if f[1] in ("warn", "critical") and f != want]


@pytest.mark.parametrize(("batch", "name", "cause"), [
    ("fresh_ax", "ncclperf_autodl2080ti_allreduce_4gbs", "collective_below_model"),
    ("fresh_ay", "lspci_stelline_wrx90_lnksta_nvsmi", "pcie_link_downgraded"),
])
def test_batch_rows(batch: str, name: str, cause: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, found = doctor_triples((CAPTURES / batch / f"{name}.txt").read_text(), tmp_path, capsys)
    assert cause in {c for c, _, _ in found}
