"""Issue 46: a captured node is judged as a live one is. Each case is a capture written in the
tool's own format (the driver's, nvidia-smi's, nccl-tests', rccl-tests') and what doctor says of it."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from gpuvet.cli.app import main
from tests.support.helpers import doctor_capture, found_causes

_doctor = partial(doctor_capture, name="capture.txt")
_found = found_causes


# --- kernel: the open kernel modules' NV_DEV_PRINTF lines, probe failures, amdgpu without bus ids ---------
def test_nv_dev_printf_fallen_off_the_bus_without_an_xid_is_a_module_lost(capsys, tmp_path):
    log = ("[ 8812.403912] NVRM: GPU 0000:c1:00.0: GPU has fallen off the bus.\n"
           "[ 8812.403931] NVRM: GPU 0000:c1:00.0: GPU has fallen off the bus.\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and ("module_fell_off_bus", "0000:C1:00.0") in _found(data), _found(data)
    assert sum(f["cause"] == "module_fell_off_bus" for f in data["findings"]) == 1  # one event, said twice


def test_the_open_modules_refusing_a_module_without_gsp_is_a_module_not_initialised(capsys, tmp_path):
    log = ("[  301.220871] NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:1db4)\n"
           "               NVRM: installed in this system is not supported by open\n"
           "               NVRM: nvidia.ko because it does not include the required GPU\n"
           "               NVRM: System Processor (GSP).\n"
           "[  301.221502] nvidia: probe of 0000:3b:00.0 failed with error -1\n"
           "[  301.221544] NVRM: The NVIDIA probe routine failed for 1 device(s).\n"
           "[  301.221546] NVRM: None of the NVIDIA devices were initialized.\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and ("module_init_failed", "0000:3B:00.0") in _found(data), _found(data)
    (step,) = {json.dumps(s) for s in data["steps"] if s["check"] == "kernel_messages"
               and s["playbook"] == "module-missing"}
    assert "refused the module" in step


def test_a_gfw_boot_wait_cut_mid_word_is_still_a_firmware_boot_failure(capsys, tmp_path):
    log = "[ 1225.021550] NVRM kgspWaitForGfwBootOk_TU102: failed to wait for GFW_\n"
    _, data = _doctor(capsys, tmp_path, log)
    assert ("module_firmware_boot_failed", "bus id not in the log") in _found(data)


def test_amdgpu_ring_timeout_and_mode1_reset_with_the_bus_ids_stripped(capsys, tmp_path):
    log = ("[ 8122.137463] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled "
           "seq=2191380, emitted seq=2191382\n"
           "[ 8122.137760] amdgpu: GPU reset begin!\n"
           "[ 8122.402113] amdgpu: MODE1 reset\n"
           "[ 8122.921433] amdgpu: GPU reset succeeded, trying to resume\n")
    code, data = _doctor(capsys, tmp_path, log)
    # one hang whose reset succeeded: the job lost, the module back (AGX1: warn, module_hang_recovered)
    assert code == 1 and _found(data) == {("module_hang_recovered", "an AMD module, bus id not in the log")}
    assert any("an AMD module, bus id not in the log" in n for n in data["notes"])


def test_freebsd_drm_kmod_amdgpu_lines_are_read(capsys, tmp_path):
    log = ("[drm ERROR :amdgpu_job_timedout] ring gfx_0.0.0 timeout, signaled seq=12174921, emitted seq=12174923\n"
           "drmn0: GPU reset begin!\n"
           "[drm ERROR :mes_v11_0_submit_pkt_and_poll_completion] MES failed to response msg=3\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("module_hung_reset", "an AMD module, bus id not in the log")}


# --- topo -m: one degraded module on an NVSwitch board; host sides from NUMA Affinity ---------------------
def _topo_m(nv: dict[int, int], numa: tuple[int, ...] = (0, 0, 0, 0, 1, 1, 1, 1)) -> str:
    """nvidia-smi topo -m of 8 modules on NVSwitch and 4 NICs, as the tool prints it (tabs); ``nv``:
    a module's links up (the rest 18); a pair reads the fewer of its two."""
    gpus, nics = [f"GPU{i}" for i in range(8)], [f"NIC{i}" for i in range(4)]

    def cell(a: str, b: str) -> str:
        if a == b:
            return "X"
        ia, ib = int(a[3:]), int(b[3:])
        if a[:3] == b[:3] == "GPU":
            return f"NV{min(nv.get(ia, 18), nv.get(ib, 18))}"
        if a[:3] == b[:3] == "NIC":
            return "NODE" if ia // 2 == ib // 2 else "SYS"
        g, n = (ia, ib) if a.startswith("GPU") else (ib, ia)
        return "PXB" if g // 2 == n else "NODE" if g // 4 == n // 2 else "SYS"

    rows = ["\t" + "\t".join(gpus + nics) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]
    for d in gpus + nics:
        aff = f"\t{'0-47' if numa[int(d[3:])] == 0 else '48-95'}\t{numa[int(d[3:])]}\t\tN/A" if d[:3] == "GPU" else ""
        rows.append(d + "\t" + "\t".join(cell(d, e) for e in gpus + nics) + aff)
    rows += ["", "Legend:", "", "  X    = Self", "  NV#  = Connection traversing a bonded set of # NVLinks", "",
             "NIC Legend:", ""] + [f"  NIC{i}: mlx5_{i}" for i in range(4)]
    return "\n".join(rows) + "\n"


def test_one_module_with_fewer_links_to_the_switches_is_named_without_expect(capsys, tmp_path):
    code, data = _doctor(capsys, tmp_path, _topo_m({3: 16}), "--all", name="topo.txt")
    (f,) = [f for f in data["findings"] if f["cause"] == "nvlink_down"]
    assert code == 1 and f["module"] == "gpu3" and f["evidence"]["detail"] == "gpu3: 16 of 18 NVLinks to the switches"


def test_with_expect_the_degraded_module_is_one_link_not_wiring(capsys, tmp_path):
    path = tmp_path / "topo.txt"
    path.write_text(_topo_m({3: 16}), encoding="utf-8")
    assert main(["topo", "--from", str(path), "--expect", "hgx-h200-8", "--json"]) == 1
    diffs = json.loads(capsys.readouterr().out)["differences"]
    assert [(d["kind"], d["between"]) for d in diffs] == [("link_degraded", ["gpu3", "nvswitch0"])], diffs
    _, data = _doctor(capsys, tmp_path, _topo_m({3: 16}), "--expect", "hgx-h200-8", name="topo.txt")
    assert {(f["cause"], tuple(f.get("between") or ())) for f in data["findings"]} == {
        ("link_degraded", ("gpu3", "nvswitch0"))}


def test_a_healthy_switched_board_matches_and_names_nothing(capsys, tmp_path):
    path = tmp_path / "topo.txt"
    path.write_text(_topo_m({}), encoding="utf-8")
    assert main(["topo", "--from", str(path), "--expect", "hgx-h200-8", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["differences"] == []
    _, data = _doctor(capsys, tmp_path, _topo_m({}), "--all", name="topo.txt")
    assert not [f for f in data["findings"] if f["cause"] in ("nvlink_down", "link_degraded")]


def test_host_sides_come_from_the_numa_affinity_column(capsys, tmp_path):
    path = tmp_path / "topo.txt"
    path.write_text(_topo_m({}), encoding="utf-8")
    main(["topo", "--from", str(path), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert [data["host_paths"][f"gpu{i}"]["socket"] for i in range(8)] == ["cpu0"] * 4 + ["cpu1"] * 4
    assert any("cpu0 = NUMA node 0, cpu1 = NUMA node 1" in n for n in data["notes"]), data["notes"]


def test_a_matrix_cut_inside_its_last_cell_is_read_up_to_the_cut(capsys, tmp_path):
    path = tmp_path / "topo.txt"
    cut = _topo_m({}).split("\nGPU5\t")[0] + "\nGPU5\t" + "NV18\t" * 5 + "X\tNV18\tNV18\tSY\n"  # the paste ends mid-cell
    path.write_text(cut, encoding="utf-8")
    assert main(["topo", "--from", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any("ends inside row GPU5's cell 'SY'" in n for n in data["notes"]), data["notes"]


# --- a benchmark log judged against the performance model for the modules it names ------------------------
def _all_reduce(busbw: float, model: str = "NVIDIA H100 80GB HBM3", ranks: int = 8) -> str:
    head = ["# nThread 1 nGpus 1 minBytes 4294967296 maxBytes 8589934592 step: 2(factor) warmup iters: 5 "
            "iters: 20 agg iters: 1 validation: 1 graph: 0", "#", "# Using devices"]
    head += [f"#  Rank {i:2d} Group  0 Pid {4000 + i:6d} on     node01 device {i:2d} [0x{16 + i:02x}] {model}"
             for i in range(ranks)]
    head += ["#", "#       size         count      type   redop    root     time   algbw   busbw #wrong     time"
             "   algbw   busbw #wrong"]
    rows = []
    for size in (4 * 2**30, 8 * 2**30):
        alg = busbw * ranks / (2 * (ranks - 1))
        t = size / alg / 1e3
        rows.append(f"{size:12d}  {size // 4:12d}     float     sum      -1  {t:7.1f}  {alg:6.2f}  {busbw:6.2f}"
                    f"      0  {t:7.1f}  {alg:6.2f}  {busbw:6.2f}      0")
    return "\n".join(head + rows + ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {busbw:.2f}", "#"])


def test_a_slow_all_reduce_is_judged_against_what_its_modules_reach(capsys, tmp_path):
    code, data = _doctor(capsys, tmp_path, _all_reduce(190.0), name="nccl.txt")
    (f,) = [f for f in data["findings"] if f["cause"] == "collective_below_model"]
    assert code == 1 and 400 < f["evidence"]["expected_gbps"] < 520 and f["evidence"]["busbw_gbps"] == 190.0
    (step,) = [s for s in data["steps"] if s["check"] == "collective_results"]
    # 190 of the model's 481.7 (479.0 before NVLink SHARP took NCCL's chunk rule, issue 49)
    assert step["summary"].startswith("all_reduce 190 GB/s busbw at 8 GiB is 39% of the ~"), step["summary"]
    assert "8 H100-SXM reach on NVSwitch" in step["summary"]


def test_a_run_at_its_modules_rate_is_clear_with_the_basis_stated(capsys, tmp_path):
    code, data = _doctor(capsys, tmp_path, _all_reduce(465.0), "--all", name="nccl.txt")
    assert not [f for f in data["findings"] if f["cause"] == "collective_below_model"]
    (step,) = [s for s in data["steps"] if s["check"] == "collective_results"]
    assert step["status"] == "clear" and "8 H100-SXM reach on NVSwitch" in step["summary"], step


def test_a_log_that_names_no_module_cannot_tell_what_it_should_reach(capsys, tmp_path):
    text = "\n".join(ln for ln in _all_reduce(190.0).splitlines() if "Rank" not in ln)
    _, data = _doctor(capsys, tmp_path, text, "--all", name="nccl.txt")
    assert not [f for f in data["findings"] if f["cause"] == "collective_below_model"]
    (step,) = [s for s in data["steps"] if s["check"] == "collective_results"]
    assert "names no module" in json.dumps(step["evidence"]), step


# --- copy benchmarks judged against the design of the modules they name -----------------------------------
H100 = "NVIDIA H100 80GB HBM3"


def _nvb(test: str, title: str, rows: list[list[str]], devices: int = 8, model: str = H100) -> str:
    """nvbandwidth v0.8's output: its version block, one line per device, the test's matrix and SUM line."""
    head = ("nvbandwidth Version: v0.8\nBuilt from Git version: v0.8\n\nCUDA Runtime Version: 12080\n"
            "CUDA Driver Version: 12080\nDriver Version: 570.124.06\n\n")
    buses = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
    devs = "".join(f"Device {i}: {model} (00000000:{buses[i % 8]}:00)\n" for i in range(devices)) + "\n"
    cols = "        " + "".join(f"{j:>10}" for j in range(len(rows[0]))) + "\n"
    body = "".join(f"{i:>2}    " + "".join(f"{c:>10}" for c in row) + "\n" for i, row in enumerate(rows))
    total = sum(float(c) for row in rows for c in row if c != "N/A")
    return (f"{head}{devs}Running {test}.\n{title}\n{cols}{body}\nSUM {test} {total:.2f}\n\n"
            "NOTE: The reported results may not reflect the full capabilities of the platform.\n"
            "Performance can vary with software drivers, hardware clocks, and system topology.\n")


def _d2d(slow: dict[tuple[int, int], str] | None = None) -> list[list[str]]:
    return [["N/A" if i == j else (slow or {}).get((i, j), f"{389.4 + 0.1 * ((i + j) % 3):.2f}") for j in range(8)]
            for i in range(8)]


def _pairs_step(data: dict[str, Any]) -> dict[str, Any]:
    (step,) = [s for s in data["steps"] if s["check"] == "pair_bandwidth"]
    return step


def test_nvbandwidth_pairs_at_their_design_are_clear_with_the_basis_stated(capsys, tmp_path):
    text = _nvb("device_to_device_memcpy_write_ce", "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", _d2d())
    code, data = _doctor(capsys, tmp_path, text, "--all", name="nvb.txt")
    step = _pairs_step(data)
    assert code == 0 and step["status"] == "clear" and "within 75 % of its design" in step["summary"], step
    basis = next(e["value"] for e in step["evidence"] if e["field"].endswith("against the design"))
    assert "% of the ~382 GB/s the design gives one way (18 NVLink links × 25 GB/s × 0.85" in basis, basis
    assert "hgx-h200-8 shape with the device lines' H100-SXM" in basis


def test_an_nvbandwidth_pair_far_below_its_design_is_named_with_its_share(capsys, tmp_path):
    slow = {(0, 3): "120.00", (3, 0): "121.50"}
    text = _nvb("device_to_device_memcpy_write_ce", "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", _d2d(slow))
    code, data = _doctor(capsys, tmp_path, text, name="nvb.txt")
    (low,) = [f for f in data["findings"] if f["cause"] == "link_degraded"]  # one pair, both directions slow
    assert code == 1 and low["between"] == ["GPU 0", "GPU 3"], low
    assert low["evidence"]["pct_of_design"] == 31.4 and low["evidence"]["expected_gbps"] == 382.5
    assert low["evidence"]["basis"].startswith("GPU 0→GPU 3 at 120 GB/s is 31 % of the ~382 GB/s")


def test_host_copies_are_judged_against_the_modules_pcie_link(capsys, tmp_path):
    title = "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"
    healthy = [["55.31", "55.28", "55.30", "55.27", "55.29", "55.31", "55.30", "55.28"]]
    code, data = _doctor(capsys, tmp_path, _nvb("host_to_device_memcpy_ce", title, healthy), name="h2d.txt")
    assert code == 0 and _pairs_step(data)["status"] == "clear"
    slow = [healthy[0][:5] + ["13.20"] + healthy[0][6:]]
    code, data = _doctor(capsys, tmp_path, _nvb("host_to_device_memcpy_ce", title, slow), name="h2d.txt")
    (low,) = [f for f in data["findings"] if f["cause"] == "link_degraded"]
    assert code == 1 and low["between"] == ["host", "GPU 5"] and low["evidence"]["pct_of_design"] == 24.4, low
    assert "PCIe Gen5 x16" in low["evidence"]["basis"]


def test_sm_bidirectional_cells_are_both_directions_together(capsys, tmp_path):
    """nvbandwidth's SM bidirectional figure sums the two streams (its README): priced as both ways."""
    rows = [["N/A" if i == j else "748.20" for j in range(8)] for i in range(8)]
    text = _nvb("device_to_device_bidirectional_memcpy_read_sm",
                "memcpy SM GPU(row) <-> GPU(column) bandwidth (GB/s)", rows)
    code, data = _doctor(capsys, tmp_path, text, "--all", name="nvb.txt")
    step = _pairs_step(data)
    assert code == 0 and step["status"] == "clear", step
    assert "the design gives both ways together" in json.dumps(step["evidence"])


def test_every_pair_far_below_its_design_is_one_finding_for_the_table(capsys, tmp_path):
    rows = [["N/A" if i == j else "24.10" for j in range(8)] for i in range(8)]  # PCIe speed on an NVSwitch board
    text = _nvb("device_to_device_memcpy_read_ce", "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)", rows)
    code, data = _doctor(capsys, tmp_path, text, "--all", name="nvb.txt")
    (whole,) = [f for f in data["findings"] if f["cause"] == "topology_misidentified"]  # beside p2p_path's finding
    assert code == 1 and whole["evidence"]["cells"] == 56, whole
    assert whole["evidence"]["pct_of_design"] == 6.3


def test_copies_of_a_model_the_catalog_lacks_cannot_be_told_and_expect_supplies_it(capsys, tmp_path):
    text = _nvb("device_to_device_memcpy_write_ce", "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)",
                _d2d({(0, 3): "120.00"}), model="Tesla P100-SXM2-16GB")
    _, data = _doctor(capsys, tmp_path, text, "--all", name="nvb.txt")
    assert "'Tesla P100-SXM2-16GB' is not in the catalog" in _pairs_step(data)["summary"]
    assert not [f for f in data["findings"] if "pct_of_design" in f["evidence"]]
    _, data = _doctor(capsys, tmp_path, text, "--expect", "hgx-h200-8", name="nvb.txt")
    low = [f for f in data["findings"] if f["cause"] == "link_degraded"]
    assert [f["between"] for f in low] == [["GPU 0", "GPU 3"]] and "--expect" in low[0]["evidence"]["basis"]


def test_the_design_bound_is_validates_for_a_slowed_link() -> None:
    """No bound of doctor's own: validate's default rules fail a pair or host copy below the same share."""
    from gpuvet.doctor.capture_pairs import DESIGN_LOW
    from gpuvet.validate.rules import default_rules

    fails = {r.check: r.threshold for r in default_rules().rules if r.verdict == "fail" and r.field == "pct_of_expected"}
    assert fails["p2p_*"] == fails["h2d*"] == fails["d2h*"] == 100 * DESIGN_LOW


def test_a_module_listing_beside_the_copies_names_their_hardware(capsys, tmp_path):
    """No device lines in the log; the node's nvidia-smi -q beside it names two H100 SXM (no fabric in a
    -q: the board their model comes on gives the design, not a PCIe-only node)."""
    rows = [["N/A", "120.00"], ["389.50", "N/A"]]
    text = _nvb("device_to_device_memcpy_write_ce", "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", rows, 2)
    path = tmp_path / "nvb.txt"
    path.write_text("\n".join(ln for ln in text.splitlines() if not ln.startswith("Device ")) + "\n")
    listing = Path(__file__).parent.parent / "data" / "captures" / "smi_q_h100_2gpu.txt"
    assert main(["doctor", "--from", str(path), "--from", str(listing), "--all", "--json"]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    (low,) = [f for f in json.loads(out)["findings"] if f["cause"] == "link_degraded"]
    assert low["between"] == ["GPU 0", "GPU 1"] and low["evidence"]["pct_of_design"] == 31.4
    assert "the hgx-h200-8 shape with the listed modules' H100-SXM" in low["evidence"]["basis"]
