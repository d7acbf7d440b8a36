"""The CUDA samples (issue 46): deviceQuery's device list and its errors, p2pBandwidthLatencyTest's
bandwidth matrices priced against the design of the modules its device lines name (as nvbandwidth's
pairs are), and bandwidthTest's host<->device figures. Written in the samples' output format
(NVIDIA/cuda-samples); the figures are made up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import cuda_samples
from gpuvet.captures.text import clean
from tests.support.helpers import call, doctor_capture, found_causes

DQ_FAIL = ("./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
           "cudaGetDeviceCount returned {}\n-> {}\nResult = FAIL\n")
DQ_OK = ("./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
         "Detected 1 CUDA Capable device(s)\n\nDevice 0: \"NVIDIA A100 80GB PCIe\"\n"
         "  CUDA Driver Version / Runtime Version          12.2 / 12.1\n"
         "  CUDA Capability Major/Minor version number:    8.0\n"
         "  Total amount of global memory:                 81051 MBytes (84987740160 bytes)\n"
         "  GPU Max Clock rate:                            1410 MHz (1.41 GHz)\n"
         "  PCI Domain ID / Bus ID / location ID:          0 / 202 / 0\n"
         "  Compute Mode:\n     < Default (multiple host threads can use ::cudaSetDevice() with device "
         "simultaneously) >\n\n"
         "deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.2, CUDA Runtime Version = 12.1, NumDevs = 1\n"
         "Result = PASS\n")


@pytest.mark.parametrize(("code", "error", "cause"), [
    (35, "CUDA driver version is insufficient for CUDA runtime version", "driver_runtime_mismatch"),
    (100, "no CUDA-capable device is detected", "no_modules_visible"),
    (3, "initialization error", "no_modules_visible"),  # deviceQuery only counts: no module is there to use
    (999, "unknown error", "no_modules_visible"),
])
def test_device_query_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path, code: int, error: str,
                             cause: str) -> None:
    _, data = doctor_capture(capsys, tmp_path, DQ_FAIL.format(code, error))
    assert found_causes(data) == {(cause, None)}


def test_device_query_lists_its_devices(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    got = cuda_samples.parse(clean(DQ_OK).lines)
    assert [(m.bus_id, m.product) for m in got.modules.modules] == [("0000:CA:00.0", "NVIDIA A100 80GB PCIe")]
    assert got.passed is True and got.modules.cuda == "12.2"
    path = tmp_path / "dq.txt"
    path.write_text(DQ_OK)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    assert code == 0 and [(m["bus_id"], m["model"]) for m in json.loads(out)["modules"]] == [
        ("0000:CA:00.0", "NVIDIA A100 80GB PCIe")]
    code, data = doctor_capture(capsys, tmp_path, DQ_OK)
    assert code == 0 and data["findings"] == []


def p2p(cells: dict[tuple[int, int], float], n: int = 4, cannot: tuple[tuple[int, int], ...] = ()) -> str:
    head = "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"
    head += "".join(f"Device: {i}, NVIDIA H100 80GB HBM3, pciBusID: {0x18 + 0x20 * i:x}, pciDeviceID: 0, "
                    "pciDomainID:0\n" for i in range(n))
    head += "".join(f"Device={i} {'CANNOT' if (i, j) in cannot else 'CAN'} Access Peer Device={j}\n"
                    for i in range(n) for j in range(n) if i != j)
    cols = "   D\\D" + "".join(f"{j:>7}" for j in range(n)) + "\n"  # the sample prints '%6d ' and '%6.02f '

    def matrix(title: str, off: float) -> str:  # ``cells`` are the P2P=Enabled figures
        mine = cells if "Enabled" in title else {}
        rows = "".join(f"{i:>6} " + "".join(f"{(1500.0 if i == j else mine.get((i, j), off)):6.2f} "
                                         for j in range(n)) + "\n" for i in range(n))
        return title + "\n" + cols + rows

    return (head + matrix("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)", 40.0)
            + matrix("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)", 375.0)
            + "P2P=Disabled Latency Matrix (us)\n   GPU" + "".join(f"{j:>7}" for j in range(n)) + "\n"
            + "".join(f"{i:>6} " + "".join(f"{2.5:6.2f} " for _ in range(n)) + "\n" for i in range(n)))


def test_p2p_matrices_are_read_by_name() -> None:
    got = cuda_samples.parse(clean(p2p({})).lines)
    assert sorted(got.matrices) == ["p2pBandwidthLatencyTest unidirectional P2P=Disabled",
                                    "p2pBandwidthLatencyTest unidirectional P2P=Enabled (writes)"]
    assert [d.bus_id for d in got.devices] == ["0000:18:00.0", "0000:38:00.0", "0000:58:00.0", "0000:78:00.0"]
    cut = cuda_samples.parse(clean(p2p({}, cannot=((0, 1),))).lines)
    assert cut.matrices["p2pBandwidthLatencyTest unidirectional P2P=Enabled (writes)"][0][1] is None


def test_a_slow_pair_is_judged_against_the_design_the_device_lines_name(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, p2p({}))
    step = next(s for s in data["steps"] if s["check"] == "pair_bandwidth")
    assert code == 0 and data["findings"] == [] and step["status"] == "clear", step
    code, data = doctor_capture(capsys, tmp_path, p2p({(0, 2): 120.0}))
    assert ("link_degraded", None) in found_causes(data)
    slow = [f for f in data["findings"] if f["cause"] == "link_degraded"]
    assert [f["between"] for f in slow] == [["GPU 0", "GPU 2"]] and "design" in slow[0]["evidence"]["basis"]


BT = ("[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: NVIDIA H100 80GB HBM3\n Quick Mode\n\n"
      " Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(GB/s)\n"
      "   32000000\t\t\t{}\n\n Device to Host Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n"
      "   Transfer Size (Bytes)\tBandwidth(GB/s)\n   32000000\t\t\t{}\n\n"
      " Device to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(GB/s)\n"
      "   32000000\t\t\t1880.5\n\nResult = PASS\n\nNOTE: The CUDA Samples are not meant for performance measurements. "
      "Results may vary when GPU Boost is enabled.\n")


def test_bandwidth_test_host_copies_against_the_modules_pcie_link(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    got = cuda_samples.parse(clean(BT.format(52.1, 53.4)).lines)
    assert got.matrices["bandwidthTest host_to_device (pinned)"] == [[52.1]]
    assert got.matrices["bandwidthTest device_to_host (pinned)"] == [[53.4]]
    code, data = doctor_capture(capsys, tmp_path, BT.format(52.1, 53.4))
    assert code == 0 and data["findings"] == []
    code, data = doctor_capture(capsys, tmp_path, BT.format(12.3, 53.4))
    assert ("link_degraded", None) in found_causes(data)


def test_a_module_the_catalog_lacks_gets_no_host_copy_design_to_fail(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    """A module whose PCIe rate no source gives (not in the catalog, no link read) is not judged at
    the router's typical lane speed: that figure is assumed, not a design (a P100, a Gen3 card, was
    called 14 % of an assumed ~27 GB/s)."""
    topo = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tSYS\t0-5\nGPU1\tSYS\t X \t6-11\n\n"
    text = topo + BT.replace("NVIDIA H100 80GB HBM3", "Tesla P100-PCIE-16GB").format(3.8, 2.5)
    code, data = doctor_capture(capsys, tmp_path, text)
    step = next(s for s in data["steps"] if s["check"] == "pair_bandwidth")
    assert code == 0 and data["findings"] == [] and step["status"] != "confirmed", step


def test_pairs_without_peer_access_are_a_fault_only_where_the_design_joins_them(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, data = doctor_capture(capsys, tmp_path, p2p({}, cannot=((0, 1), (1, 0))))
    assert ("p2p_unavailable", None) in found_causes(data)
    assert [f["between"] for f in data["findings"] if f["cause"] == "p2p_unavailable"] == [["GPU 0", "GPU 1"]]
    consumer = p2p({}, cannot=((0, 1), (1, 0))).replace("NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4090")
    _, data = doctor_capture(capsys, tmp_path, consumer)
    assert "p2p_unavailable" not in {c for c, _ in found_causes(data)}


def test_peer_copies_slower_than_host_staged_ones_are_a_broken_p2p_path(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    slow = p2p({(i, j): 9.9 for i in range(4) for j in range(4) if i != j})  # P2P=Disabled reads 40 GB/s
    _, data = doctor_capture(capsys, tmp_path, slow)
    found = [f for f in data["findings"] if f["cause"] == "p2p_slower_than_host"]  # P2P is on: its path is slow
    assert len(found) == 1 and found[0]["evidence"]["p2p_median_gbps"] == 9.9
    assert found[0]["evidence"]["staged_median_gbps"] == 40.0
    _, data = doctor_capture(capsys, tmp_path, p2p({}))
    assert "p2p_slower_than_host" not in {c for c, _ in found_causes(data)}


def test_the_older_samples_no_device_sentence(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    old = ("./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
           "There are no available device(s) that support CUDA\n")
    _, data = doctor_capture(capsys, tmp_path, old)
    assert found_causes(data) == {("no_modules_visible", None)}


def _inventory(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> list[tuple[object, object]]:
    path = tmp_path / "samples.txt"
    path.write_text(text)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    assert code == 0
    return [(m["bus_id"], m["model"]) for m in json.loads(out)["modules"]]


def test_the_samples_device_lines_are_the_module_list(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """p2pBandwidthLatencyTest's and bandwidthTest's own device lines list the modules they ran on (issue 46)."""
    assert _inventory(capsys, tmp_path, p2p({}, n=2)) == [("0000:18:00.0", "NVIDIA H100 80GB HBM3"),
                                                         ("0000:38:00.0", "NVIDIA H100 80GB HBM3")]
    assert _inventory(capsys, tmp_path, BT.format(52.1, 53.4)) == [(None, "NVIDIA H100 80GB HBM3")]


def test_a_matrix_without_device_lines_lists_one_unnamed_module_per_row(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    bare = p2p({}, n=3).split("Unidirectional", 1)[1]
    listed = _inventory(capsys, tmp_path, "Unidirectional" + bare)
    assert [bus for bus, _ in listed] == [None, None, None]
    assert all(str(model).startswith("unknown") for _, model in listed)


def test_an_excerpt_of_p2p_writes_tables_alone_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Issue 46 review: a paste holding only the '(P2P Writes) Matrix (GB/s)' table was refused (the reader
    looked for 'Bandwidth Matrix (GB/s)'); any title the module reads now opens it."""
    devices = "".join(f"Device: {i}, NVIDIA H100 80GB HBM3, pciBusID: {i + 1}8, pciDeviceID: 0, pciDomainID:0\n"
                      for i in range(4))
    rows = "".join(f"     {i}" + "".join(f"  {900.0 if i == j else (250.0 if {i, j} == {1, 2} else 390.0):6.2f}"
                                        for j in range(4)) + "\n" for i in range(4))
    text = (devices + "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D" +
            "".join(f"      {j}" for j in range(4)) + "\n" + rows)
    got = cuda_samples.parse(clean(text).lines)
    assert len(got.matrices) == 1 and len(next(iter(got.matrices.values()))) == 4
    code, data = doctor_capture(capsys, tmp_path, text)
    assert code == 1 and "link_degraded" in {c for c, _ in found_causes(data)}


# the samples' own spelling (CUDA 8 to 12: 'Device PCI Domain ID / …', ECC support, '> Peer access' lines),
# as public deviceQuery outputs show it (a CUDA 10.1 Quadro P1000 setup guide, a CUDA 12 RTX 50 note); figures made up
DQ_REAL = ("./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
           "Detected 2 CUDA Capable device(s)\n\n" + "".join(
               f"Device {i}: \"NVIDIA H100 80GB HBM3\"\n"
               "  CUDA Driver Version / Runtime Version          12.4 / 12.4\n"
               "  Total amount of global memory:                 81079 MBytes (85017755648 bytes)\n"
               f"  Device has ECC support:                        {ecc}\n"
               f"  Device PCI Domain ID / Bus ID / location ID:   0 / {bus} / 0\n"
               "  Compute Mode:\n     < Default (multiple host threads can use ::cudaSetDevice() with device "
               "simultaneously) >\n" for i, ecc, bus in ((0, "Enabled", 24), (1, "Disabled", 42)))
           + "> Peer access from NVIDIA H100 80GB HBM3 (GPU0) -> NVIDIA H100 80GB HBM3 (GPU1) : {}\n"
           "> Peer access from NVIDIA H100 80GB HBM3 (GPU1) -> NVIDIA H100 80GB HBM3 (GPU0) : {}\n\n"
           "deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.4, CUDA Runtime Version = 12.4, NumDevs = 2\n"
           "Result = PASS\n")


def test_device_query_real_spelling_bus_ids_ecc_and_peer_access(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    text = DQ_REAL.format("No", "No")
    path = tmp_path / "dq.txt"
    path.write_text(text)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    assert [(m["bus_id"], m["ecc_enabled"]) for m in json.loads(out)["modules"]] == [
        ("0000:18:00.0", True), ("0000:2A:00.0", False)]
    _, data = doctor_capture(capsys, tmp_path, text, "--all")
    assert [f["between"] for f in data["findings"] if f["cause"] == "p2p_unavailable"] == [["GPU 0", "GPU 1"]]
    assert not any("quote" in n or "skipped" in n for n in data.get("notes", []))
    _, data = doctor_capture(capsys, tmp_path, DQ_REAL.format("Yes", "Yes"), "--all")
    assert "p2p_unavailable" not in {c for c, _ in found_causes(data)}


def test_device_query_says_devices_the_paste_cut_and_keeps_a_blob_named_device() -> None:
    """newcomer 55: 'Detected 8' with 2 listed says 6 are not in the paste; a 100k-character name keeps Device 0."""
    text = DQ_REAL.format("Yes", "Yes").replace("Detected 2 CUDA", "Detected 8 CUDA")
    got = cuda_samples.parse(clean(text).lines)
    assert len(got.modules.modules) == 2 and any("detected 8 device(s), 2 listed" in n for n in got.notes)
    blob = text.replace('Device 0: "NVIDIA H100 80GB HBM3"', 'Device 0: "' + "H" * 100_000 + '"')
    got = cuda_samples.parse(clean(blob).lines)
    assert [m.bus_id for m in got.modules.modules] == ["0000:18:00.0", "0000:2A:00.0"]
    assert len(got.modules.modules[0].product) == 96 and any("100,000 characters" in n for n in got.notes)
