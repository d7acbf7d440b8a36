"""Issue 46, dev set dev_h_nvidia: classes of NVIDIA-side input the readers missed, each written here in the
tool's own format (not copied from the dev set): `nvidia-smi topo -p2p` status matrices alone, DCGM's own log
line of a health incident, an `nvidia-smi -q` excerpt that starts inside Processes, Windows' desktop
processes, busGrind's host/device matrices and bandwidthTest run twice on one module."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import call, doctor_capture

P2P_LEGEND = ("\nLegend:\n\n  X    = Self\n  OK   = Status Ok\n  CNS  = Chipset not supported\n  GNS  = GPU not supported\n"
              "  TNS  = Topology not supported\n  NS   = Not supported\n  U    = Unknown\n")


def _causes(answer: dict[str, Any]) -> set[tuple[str, str | None, str]]:
    """(cause, module or 'a↔b', severity) of every finding doctor --json gave."""
    return {(f["cause"], f.get("module") or ("↔".join(f["between"]) if f.get("between") else None), f["severity"])
            for f in answer["findings"]}


def _warned(answer: dict[str, Any]) -> set[str]:
    return {f["cause"] for f in answer["findings"] if f["severity"] in ("warn", "critical")}


# --- nvidia-smi topo -p2p -------------------------------------------------------------------------------
def _p2p(statuses: list[list[str]], mode: str = "r") -> str:
    n = len(statuses)
    head = " \t" + "\t".join(f"GPU{i}" for i in range(n)) + "\t\n"
    rows = "".join(f" GPU{i}\t" + "\t".join(r) + "\t\n" for i, r in enumerate(statuses))
    return f"$ nvidia-smi topo -p2p {mode}\n" + head + rows + P2P_LEGEND


def test_a_topo_p2p_matrix_alone_is_read_and_its_denied_pairs_said(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    """A consumer board's matrix alone: read (not refused), each pair without peer access named with the
    legend's meaning; no model is named, so nothing is judged a fault."""
    text = _p2p([["X", "GNS", "CNS"], ["GNS", "X", "OK"], ["CNS", "OK", "X"]], mode="w")
    code, answer = doctor_capture(capsys, tmp_path, text)
    notes = " ".join(answer["notes"])
    assert code == 0 and not _warned(answer)
    assert "topo -p2p (w): 3 GPU(s), 2 pair(s) without peer access" in notes
    assert "GPU0-GPU1 GNS (GPU not supported)" in notes and "GPU0-GPU2 CNS (chipset not supported)" in notes


def test_topo_p2p_on_modules_an_nvlink_fabric_joins_is_a_fault(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    """The same statuses beside a listing that names SXM modules (their design joins every pair by NVLink):
    each pair without peer access is p2p_unavailable; on PCIe cards of the same listing it is not."""
    listing = "".join(f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i}aaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee)\n"
                      for i in range(3))
    text = listing + _p2p([["X", "OK", "NS"], ["OK", "X", "NS"], ["NS", "NS", "X"]])
    _, answer = doctor_capture(capsys, tmp_path, text)
    assert {("p2p_unavailable", "GPU 0↔GPU 2", "warn"), ("p2p_unavailable", "GPU 1↔GPU 2", "warn")} <= \
        _causes(answer)
    pcie = listing.replace("H100 80GB HBM3", "GeForce RTX 4090")
    _, answer = doctor_capture(capsys, tmp_path, pcie + _p2p([["X", "OK", "NS"], ["OK", "X", "NS"], ["NS", "NS", "X"]]),
                               name="pcie.txt")
    assert "p2p_unavailable" not in _warned(answer)


def test_topo_p2p_atomics_and_pcie_matrices_are_said_not_judged(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    """`topo -p2p p` (the PCIe 'prop' capability) and `-p2p a` (atomics) say NS on an NVLink board by design:
    said in a note, never p2p_unavailable; the read matrix beside them still judges the same pairs."""
    listing = "".join(f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i}aaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee)\n"
                      for i in range(3))
    ns = [["X", "NS", "NS"], ["NS", "X", "NS"], ["NS", "NS", "X"]]
    for mode in ("p", "a"):
        _, answer = doctor_capture(capsys, tmp_path, listing + _p2p(ns, mode=mode), name=f"{mode}.txt")
        assert "p2p_unavailable" not in _warned(answer)
        assert any("is said, not judged" in n for n in answer["notes"])
    read = _p2p([["X", "OK", "NS"], ["OK", "X", "NS"], ["NS", "NS", "X"]], mode="r")
    _, answer = doctor_capture(capsys, tmp_path, listing + _p2p(ns, mode="p") + read, name="both.txt")
    assert {c[1] for c in _causes(answer) if c[0] == "p2p_unavailable"} == {"GPU 0↔GPU 2", "GPU 1↔GPU 2"}


# --- DCGM's log --------------------------------------------------------------------------------------------
DCGM_LOG = ("2026-02-03 04:05:06.789 ERROR [4242:4243] [[Health]] Detected a WARNING in health system Thermal: "
            "'Detected clocks event due to thermal violation in GPU 5. Verify the cooling.' "
            "[/dcgm/modules/health/DcgmHealthWatch.cpp:1234] [DcgmHealthWatch::MonitorThermal]\n"
            "2026-02-03 04:05:07.001 ERROR [4242:4243] [[Health]] Detected a FAILURE in health system Memory: "
            "'A DBE has occurred on GPU 1.'\n")


def test_dcgms_log_lines_of_health_incidents_are_read_as_incidents(capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path) -> None:
    """nv-hostengine logs each incident its health watches raise: the GPU its message names carries it, a
    thermal warning a warn, a double-bit error an uncorrectable ECC error (as dcgmi health -c's row would)."""
    code, answer = doctor_capture(capsys, tmp_path, "`" + DCGM_LOG + "`\n")
    assert code == 1
    # issue 46 (PHRD): DCGM_FR_CLOCKS_EVENT_THERMAL's message is thermal_throttling (knowledge/dcgm_errors.yaml)
    assert {("thermal_throttling", "GPU 5", "warn"), ("ecc_uncorrectable_since_boot", "GPU 1", "critical")} <= \
        _causes(answer)
    assert any("DCGM log: 2 health incident line(s) read" in n for n in answer["notes"])


# --- nvidia-smi -q Processes ---------------------------------------------------------------------------
def _process(pid: int, kind: str, name: str, memory: str) -> str:
    return (f"        GPU instance ID                   : N/A\n        Compute instance ID               : N/A\n"
            f"        Process ID                        : {pid}\n            Type                          : {kind}\n"
            f"            Name                          : {name}\n            Used GPU Memory               : {memory}\n")


def test_an_excerpt_inside_processes_is_one_module_and_desktop_clients_hold_nothing(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """An excerpt that starts inside -q's Processes (its heading cut): each entry is a process of one module,
    not the next GPU's block; Windows' desktop windows (C+G, 'Not available in WDDM driver model') and an entry
    cut after its pid hold nothing, a compute process with its memory does."""
    wddm = "Not available in WDDM driver model"
    desktop = _process(2100, "C+G", r"C:\Windows\explorer.exe", wddm) + _process(2200, "C+G", r"C:\Apps\chat.exe", wddm)
    cut = "        GPU instance ID                   : N/A\n        Process ID                        : 2300\n"
    path = tmp_path / "procs.txt"
    path.write_text(desktop + cut)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    assert code == 0 and len(json.loads(out)["modules"]) == 1
    _, answer = doctor_capture(capsys, tmp_path, desktop + cut, name="desktop.txt")
    assert "other_processes" not in _warned(answer)
    job = desktop + _process(2400, "C", "python3", "70000 MiB")
    _, answer = doctor_capture(capsys, tmp_path, job, "results-fluctuate", name="job.txt")  # a symptom named
    held = [f for f in answer["findings"] if f["cause"] == "other_processes"]
    assert held and held[0]["evidence"]["pids"] == [2400]



def test_a_processes_excerpt_beside_a_module_list_adds_no_module(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    """A -q excerpt of Processes alone names no GPU: beside nvidia-smi -L's list the modules are the list's
    (not one unnamed module in their place), its processes said to be placed on none."""
    listing = "".join(f"GPU {i}: NVIDIA A100-SXM4-80GB (UUID: GPU-11111111-2222-3333-4444-55555555555{i})\n"
                      for i in range(2))
    for name, excerpt in (("indented.txt", _process(4242, "C", "python3", "70000 MiB")),
                          ("flush.txt", "Process ID                        : 4242\n    Type                          : C\n"
                                        "    Name                          : python3\n")):
        path = tmp_path / name
        path.write_text(listing + "\n" + excerpt)
        code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
        got = json.loads(out)
        assert code == 0 and [m["model"] for m in got["modules"]] == ["NVIDIA A100-SXM4-80GB"] * 2
        assert any("Processes alone (pid 4242)" in n for n in got["notes"])
    crash = "Crash report\nProcess ID                        : 4242\nProcess Name                      : python3\n"
    path = tmp_path / "crash.txt"
    path.write_text(crash)  # keys -q never prints beside a pid: no -q excerpt, no module
    assert call(capsys, "inventory", "--from", str(path), "--json")[0] == 2
    path.write_text(listing + "\n" + crash)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    assert [m["model"] for m in json.loads(out)["modules"]] == ["NVIDIA A100-SXM4-80GB"] * 2

# --- busGrind and bandwidthTest ------------------------------------------------------------------------
def _bus_grind(d2h: list[float], h2d: list[float], both: list[float]) -> str:
    cols = "".join(f"{i:>7}" for i in range(len(d2h)))
    row = lambda name, xs: f"   {name:<6}" + "".join(f"{x:7.2f}" for x in xs) + "\n"  # noqa: E731
    stars = "*" * 73 + "\n"
    return (stars * 2 + "Test Description: Bus bandwidth between the host and a single device\n" + stars +
            "Host/Device Bandwidth Matrix (GB/s), memory=Pinned\n" + f"   Dir\\D{cols}\n" + row("D2H", d2h) +
            row("H2D", h2d) + row("BiDir", both) + stars * 2)


def test_busgrind_host_copies_are_judged_against_the_other_devices(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    """busGrind's host/device matrix, one device at a time: a device whose two-way copies fall far below the
    others' while its one-way copies keep up is held back upstream of it (host_copy_slow on that device); a
    device whose one-way copies are far below is its own link (link_degraded host↔GPU n), said once."""
    d2h, h2d = [26.1, 26.3, 26.2, 26.2, 26.0, 26.1], [25.9, 26.0, 25.8, 26.0, 25.9, 12.4]
    both = [48.1, 48.3, 21.0, 48.2, 48.0, 24.0]
    code, answer = doctor_capture(capsys, tmp_path, _bus_grind(d2h, h2d, both))
    got = {c for c in _causes(answer) if c[0] in ("host_copy_slow", "link_degraded")}
    assert code == 1 and got == {("host_copy_slow", "GPU 2", "warn"), ("link_degraded", "host↔GPU 5", "warn")}
    even = _bus_grind(d2h, [25.9] * 6, [48.1] * 6)
    _, answer = doctor_capture(capsys, tmp_path, even, name="even.txt")
    assert not _warned(answer)


def _bandwidth_test(h2d_mbs: float, d2h_mbs: float) -> str:
    section = "\n {} Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(MB/s)\n" \
              "   33554432\t\t\t{}\n"
    return ("[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: Tesla V100-PCIE-32GB\n Quick Mode\n" +
            section.format("Host to Device", h2d_mbs) + section.format("Device to Host", d2h_mbs) + "Result = PASS\n")


def test_bandwidthtest_run_twice_on_one_module_is_judged_by_its_best_run(capsys: pytest.CaptureFixture[str],
                                                                          tmp_path: Path) -> None:
    """Two runs of bandwidthTest on the same module in one capture (numactl on each socket): the module reached
    its best run's figure, so a run far below it was held back on the host's side (numa_misplaced), and two
    runs alike are fine."""
    text = "$ numactl -N0 -m0 ./bandwidthTest\n" + _bandwidth_test(12100.0, 13050.0) + \
        "$ numactl -N1 -m1 ./bandwidthTest\n" + _bandwidth_test(6100.0, 4000.0)
    _, answer = doctor_capture(capsys, tmp_path, text)
    placed = [f for f in answer["findings"] if f["cause"] == "numa_misplaced"]
    assert [(f["module"], f["severity"]) for f in placed] == [("GPU 0", "warn")]
    assert [r.split(":")[0] for r in placed[0]["evidence"]["runs"]] == [
        "bandwidthTest host_to_device (pinned) run 2", "bandwidthTest device_to_host (pinned) run 2"]
    alike = _bandwidth_test(12100.0, 13050.0) + _bandwidth_test(11900.0, 12900.0)
    _, answer = doctor_capture(capsys, tmp_path, alike, name="alike.txt")
    assert "numa_misplaced" not in _warned(answer)



def _bandwidth_range(h2d: list[float], d2h: list[float], sizes: list[int]) -> str:
    """bandwidthTest --mode=range: one table per direction, a row per transfer size (GB/s, as cuda-samples 11+)."""
    def section(name: str, figures: list[float]) -> str:
        rows = "".join(f"   {n}\t\t\t{x}\n" for n, x in zip(sizes, figures, strict=True))
        return (f"\n {name} Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n"
                "   Transfer Size (Bytes)\tBandwidth(GB/s)\n" + rows)
    return ("[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: NVIDIA GeForce RTX 3090\n Range Mode\n" +
            section("Host to Device", h2d) + section("Device to Host", d2h) + "\nResult = PASS\n")


def test_bandwidthtest_range_rows_are_one_run_at_its_largest_transfer(capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path) -> None:
    """A range or shmoo table's rows are one run's transfer sizes: the run's figure is its largest transfer, a
    small transfer's latency-bound row is never a slow run of its own; a run that never reached a
    bandwidth-bound size is not compared with one that did, while two bandwidth-bound runs still are."""
    sizes = [1000, 10000, 100000, 1000000, 10000000, 68000000]
    healthy = _bandwidth_range([0.4, 3.2, 11.9, 21.8, 24.1, 24.6], [0.4, 3.3, 12.1, 22.2, 24.6, 25.1], sizes)
    _, answer = doctor_capture(capsys, tmp_path, healthy)
    assert "numa_misplaced" not in _warned(answer)
    small = _bandwidth_range([0.4, 0.8], [0.4, 0.8], [1000, 2000])
    _, answer = doctor_capture(capsys, tmp_path, healthy + small, name="small.txt")
    assert "numa_misplaced" not in _warned(answer)
    slow = _bandwidth_range([0.2, 1.6, 6.0, 10.9, 12.0, 12.3], [0.2, 1.6, 6.0, 11.1, 12.3, 12.5], sizes)
    _, answer = doctor_capture(capsys, tmp_path, healthy + slow, name="two.txt")
    placed = [f for f in answer["findings"] if f["cause"] == "numa_misplaced"]
    assert [r.split(":")[0] for r in placed[0]["evidence"]["runs"]] == [
        "bandwidthTest host_to_device (pinned) run 2", "bandwidthTest device_to_host (pinned) run 2"]

# --- nvidia-smi mig ---------------------------------------------------------------------------------------
LGI = """+-------------------------------------------------------+
| GPU instances:                                        |
| GPU   Name             Profile  Instance   Placement  |
|                          ID       ID       Start:Size |
|=======================================================|
|   0  MIG 3g.40gb          9        1          4:4     |
+-------------------------------------------------------+
|   0  MIG 1g.10gb         19        7          0:1     |
+-------------------------------------------------------+
|   1  MIG 7g.80gb          0        0          0:8     |
+-------------------------------------------------------+
"""
LCIP = """+--------------------------------------------------------------------------------------+
| Compute instance profiles:                                                           |
| GPU     GPU       Name             Profile  Instances   Exclusive       Shared       |
|       Instance                       ID     Free/Total     SM       DEC   ENC   OFA  |
|         ID                                                          CE    JPEG       |
|======================================================================================|
|   0      1       MIG 1c.3g.40gb       0      0/3           14        2     0     0   |
|                                                                      2     0         |
+--------------------------------------------------------------------------------------+
"""


def test_mig_listings_are_read_as_a_configuration(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`nvidia-smi mig -lgi` and `-lcip` boxes (and a node without MIG): read and said - the modules by index,
    the profiles and how many - never refused, never a fault."""
    code, answer = doctor_capture(capsys, tmp_path, "$ nvidia-smi mig -lgi\n" + LGI + "$ nvidia-smi mig -lcip\n" + LCIP)
    notes = " ".join(answer["notes"])
    assert code == 0 and not _warned(answer)
    assert "nvidia-smi mig -lgi: 3 instance(s) on GPU 0, 1: 3g.40gb, 1g.10gb, 7g.80gb" in notes
    assert "nvidia-smi mig -lcip: 1 profile(s) offered on GPU 0: 1c.3g.40gb" in notes
    code, answer = doctor_capture(capsys, tmp_path, "$ nvidia-smi mig -lgi\nNo MIG-enabled devices found.\n",
                                  name="none.txt")
    assert code == 0 and any("No MIG-enabled devices found." in n for n in answer["notes"])


# --- nvidia-smi --query-gpu with the fields of its other families ----------------------------------------
QUERY = ("$ nvidia-smi --query-gpu=index,name,clocks_throttle_reasons.hw_slowdown,clocks_event_reasons.sw_power_cap,"
         "ecc.errors.uncorrected.volatile.total,remapped_rows.pending,fabric.state --format=csv\n"
         "index, name, clocks_throttle_reasons.hw_slowdown, clocks_event_reasons.sw_power_cap, "
         "ecc.errors.uncorrected.volatile.total, remapped_rows.pending, fabric.state\n"
         "0, NVIDIA H100 80GB HBM3, Not Active, Not Active, 0, No, Completed\n"
         "1, NVIDIA H100 80GB HBM3, Active, Not Active, 2, Yes, Completed\n")


def test_a_query_of_fields_gpuvet_does_not_map_is_still_read_and_the_ones_it_maps_judged(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A --query-gpu header of nvidia-smi's own query families (throttle or event reasons, ECC counts, remapped
    rows, fabric) is its header though gpuvet maps few of its fields (it was refused): the reasons, the ECC
    count and the pending remap are read as -q's fields are, and judged alike, on module 1 only."""
    code, answer = doctor_capture(capsys, tmp_path, QUERY)
    warned = {(f["cause"], f["severity"]) for f in answer["findings"] if f["severity"] in ("warn", "critical")}
    assert code == 1 and {("hw_slowdown", "warn"), ("row_remap_pending", "warn")} <= warned
    assert any(f["cause"].startswith("ecc_uncorrectable") for f in answer["findings"])
    assert all("#2" in (f.get("module") or "") or f.get("module") == "GPU 1" for f in answer["findings"]
               if f["severity"] in ("warn", "critical"))


# --- a program's runtime warning -----------------------------------------------------------------------------
def test_a_python_warning_of_the_runtime_is_its_line_not_a_grep_hit(capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path) -> None:
    """Python's warnings module prints 'file.py:LINE: UserWarning: message': torch saying the driver is too old
    for its CUDA is the runtime's own line (it read as a grep hit in a source file and was refused); a grep hit
    that quotes the message in code stays unread."""
    warning = ("/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: "
               "The NVIDIA driver on your system is too old (found version 11020). Please update your GPU driver.\n")
    _, answer = doctor_capture(capsys, tmp_path, warning)
    assert [f["evidence"]["kind"] for f in answer["findings"]] == ["driver_too_old"]
    grep = tmp_path / "grep.txt"
    grep.write_text('src/check.py:12:    raise RuntimeError("The NVIDIA driver on your system is too old")\n')
    code, _, _ = call(capsys, "doctor", "--from", str(grep))
    assert code == 2


# --- the fabric manager's own log of NVSwitch errors --------------------------------------------------------
FM_LOG = ("[Mar 02 2026 08:00:01] [INFO] [tid 811] Fabric Manager version 570.124.06 is running with the following "
          "configuration options\n"
          "[Mar 02 2026 08:14:07] [ERROR] [tid 902] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci "
          "bus id 00000000:86:00.0 physical id 3 port 61\n"
          "[Mar 02 2026 08:14:09] [ERROR] [tid 902] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci "
          "bus id 00000000:86:00.0 physical id 3 port 62\n"
          "Mar 02 08:20:11 gpu-node7 nv-fabricmanager[5183]: detected NVSwitch fatal error 24007 on NodeId 0 on "
          "NVSwitch pci bus id 00000000:08:00.0 physical id 0 port 10\n")


def test_nvswitch_errors_the_fabric_manager_logs_are_judged_as_sxids(capsys: pytest.CaptureFixture[str],
                                                                       tmp_path: Path) -> None:
    """The fabric manager logs each NVSwitch SXid ('detected NVSwitch non-fatal error 12028 on … pci bus id …
    port 61'), in its own log or its journal: one finding per switch and SXid as the kernel's SXid lines are
    judged (fatal critical, non-fatal warn), its ports and count said; before, no start or stop line: can't tell."""
    _, answer = doctor_capture(capsys, tmp_path, FM_LOG)
    got = {(f["cause"], f["module"], f["severity"]) for f in answer["findings"]}
    assert got == {("nvswitch_sxid", "nvswitch 0000:86:00.0 SXid 12028", "warn"),
                   ("nvswitch_sxid_fatal", "nvswitch 0000:08:00.0 SXid 24007", "critical")}
    warned = next(f for f in answer["findings"] if f["cause"] == "nvswitch_sxid")
    assert warned["evidence"]["ports"] == ["61", "62"] and warned["evidence"]["times"] == 2


def test_an_sxid_in_the_kernel_log_and_the_fabric_managers_is_one_finding(capsys: pytest.CaptureFixture[str],
                                                                          tmp_path: Path) -> None:
    """nvidia-bug-report holds the kernel log and the fabric manager's: one SXid logged by both is one finding
    per switch and SXid (the kernel's), the fabric manager's line cited beside it; an SXid only the fabric
    manager logged is still its own finding."""
    kernel = ("[  812.441122] nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 12028, Non-fatal, Link 61 egress "
              "non-posted PRIV error (First)\n[  812.441130] nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 12028, "
              "Severity 0 Engine instance 61 Sub-engine instance 00\n")
    _, answer = doctor_capture(capsys, tmp_path, kernel + FM_LOG)
    got = sorted((f["cause"], f["module"]) for f in answer["findings"] if f["cause"].startswith("nvswitch_sxid"))
    assert got == [("nvswitch_sxid", "nvswitch3 0000:86:00.0 SXid 12028"),
                   ("nvswitch_sxid_fatal", "nvswitch 0000:08:00.0 SXid 24007")]
    fm = next(s for s in answer["steps"] if s["check"] == "fabric_manager")
    assert any("also in the kernel log" in e["field"] and "port 61" in e["value"] for e in fm["evidence"])
