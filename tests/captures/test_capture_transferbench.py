"""TransferBench output for doctor --from (issue 35): the public captures under
tests/data/captures/real/amd_tb_* read and diagnosed as their sources concluded (TB_EXPECT, also
the corpus table's entries via test_captures_amd.AMD_EXPECT), and the reader's rules on small
written texts (named "written")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuvet.captures.read import FileCapture, parse_text, read
from gpuvet.cli.app import main

REAL = Path(__file__).parent.parent / "data" / "captures" / "real"
FILES = sorted(p.name for p in REAL.iterdir() if p.name.startswith("amd_tb_"))
UNI = "TransferBench p2p unidirectional (local read / remote write, GFX)"
BI = "TransferBench p2p bidirectional (local read / remote write, GFX)"


def _doctor(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in err
    return json.loads(out)


def _step(data: dict[str, Any], check: str) -> dict[str, Any]:
    return next(s for s in data["steps"] if s["check"] == check)


# --- what each source concluded (fc: the file read; data: doctor --json) ------------------------
def _p2p(fc: FileCapture, data: dict[str, Any]) -> None:
    # the write-up shows it without comment; by eye two bidirectional pairs run at ~70 % of their peers
    assert fc.kinds == ["TransferBench"]
    uni = fc.nvb.matrices[f"{UNI} GPU->GPU"]
    assert uni[7][1] == pytest.approx(46.66) and uni[0][0] == pytest.approx(2132.28)  # row = source
    assert fc.nvb.matrices[f"{BI} GPU->GPU"][3][6] == pytest.approx(38.96)
    assert fc.nvb.matrices[f"{BI} GPU->GPU reverse copies"][1][7] == pytest.approx(37.99)  # row 'GPU 07 <-'
    assert fc.nvb.matrices[f"{UNI} CPU->GPU"][1][4] == pytest.approx(44.78)  # host copies kept
    slow = {tuple(f["between"]) for f in data["findings"] if f["cause"] == "link_degraded"}
    assert slow == {("GPU 3", "GPU 6"), ("GPU 1", "GPU 7")}
    assert all(f["severity"] != "critical" for f in data["findings"])
    assert ("GPU 7", "GPU 1") not in slow  # the uni 46.66 is 81 % of its peers: within the bound


def _a2a(fc: FileCapture, data: dict[str, Any]) -> None:
    assert fc.kinds == ["TransferBench"]
    m = fc.nvb.matrices["TransferBench a2a GPU->GPU"]
    assert len(m) == 8 and m[2][1] == pytest.approx(53.446) and m[0][0] is None
    step = _step(data, "pair_bandwidth")
    assert step["status"] == "clear" and not data["findings"]
    assert any("amd_tb_mhilgema_mi350x_a2a.txt" in e["source"] for e in step["evidence"])


def _cfg_error(fc: FileCapture, data: dict[str, Any]) -> None:
    # a build without a gfx950 code object: the run stopped, a software failure, nothing measured
    assert fc.kinds == ["TransferBench"] and not fc.nvb.matrices
    (f,) = data["findings"]
    assert f["cause"] == "copy_test_failed" and f["evidence"]["error"] == "[ERROR] HIP Error: invalid resource handle"
    assert f["evidence"]["line"] == 8  # the line in the file, header included


def _cfg_tests(fc: FileCapture, data: dict[str, Any]) -> None:
    tb = _transfers(fc)
    assert len(tb) == 7 and tb[0] == (1, 0, 56.309, "G0 -> G000:004 -> G1")
    assert not data["findings"] and _step(data, "pair_bandwidth")["status"] == "inconclusive"
    assert any("not judged" in n for n in fc.notes)


def _pr50(fc: FileCapture, data: dict[str, Any]) -> None:
    assert fc.kinds == ["TransferBench"] and _transfers(fc) == [(1, 0, 33.52, "G0 -> GPU00:004 -> G1")]
    assert fc.nvb.matrices[f"{UNI} CPU->GPU"][0] == pytest.approx([9.88, 8.77, 9.65, 6.87])
    assert any("line(s) 25 cut" in n for n in fc.notes)  # the sd row the excerpt ends in
    step = _step(data, "pair_bandwidth")
    assert step["status"] == "inconclusive" and not data["findings"]  # no GPU->GPU pair in the excerpt


def _transfers(fc: FileCapture) -> list[tuple[int | None, int, float | None, str]]:
    from gpuvet.captures import transferbench
    from gpuvet.captures.text import clean

    parsed = transferbench.parse(clean((REAL / Path(fc.path).name).read_text()).lines)
    return [(t.test, t.index, t.gbps, t.route) for t in parsed.transfers]


TB_EXPECT: dict[str, Callable[[FileCapture, dict[str, Any]], None]] = {
    "amd_tb_mhilgema_mi350x_p2p.txt": _p2p,
    "amd_tb_mhilgema_mi350x_a2a.txt": _a2a,
    "amd_tb_mhilgema_mi350x_cfg_error.txt": _cfg_error,
    "amd_tb_mhilgema_mi350x_cfg_tests.txt": _cfg_tests,
    "amd_tb_pr50_show_iterations_cut.txt": _pr50,
}


def test_every_transferbench_capture_has_its_expectation() -> None:
    assert sorted(TB_EXPECT) == FILES and len(FILES) >= 4


@pytest.mark.parametrize("name", FILES)
def test_doctor_says_what_the_source_concluded(capsys: pytest.CaptureFixture[str], name: str) -> None:
    TB_EXPECT[name](read(str(REAL / name)), _doctor(capsys, REAL / name))


# --- written texts: the rules, each on a small constructed input --------------------------------
def _a2a_text(cells: dict[tuple[int, int], str] | None = None, n: int = 4) -> str:
    head = "SRC\\DST " + "".join(f" GPU {j:02d}    " for j in range(n)) + "   STotal     Actual\n"
    rows = ""
    for i in range(n):
        vals = ["N/A" if i == j else (cells or {}).get((i, j), "50.000") for j in range(n)]
        rows += f"GPU {i:02d} " + "".join(f" {v:>8}  " for v in vals) + "    150.000    50.000\n"
    return "TransferBench v1.66.00\nSummary:\n" + head + rows + "\nAverage   bandwidth (GPU Timed):   50.000 GB/s\n"


def test_written_a2a_with_a_planted_low_pair_names_that_pair(capsys, tmp_path) -> None:
    f = tmp_path / "written_tb_a2a_low_pair.txt"
    f.write_text(_a2a_text({(2, 1): "30.000"}))
    data = _doctor(capsys, f)
    (low,) = [x for x in data["findings"] if x["cause"] == "link_degraded"]
    assert low["between"] == ["GPU 2", "GPU 1"] and low["evidence"]["measured_gbps"] == 30.0
    assert low["evidence"]["pct_of_peers"] == 60.0 and low["evidence"]["test"] == "TransferBench a2a GPU->GPU"


def test_written_a2a_without_a_low_pair_is_clear(capsys, tmp_path) -> None:
    f = tmp_path / "written_tb_a2a_even.txt"
    f.write_text(_a2a_text({(2, 1): "40.000"}))  # 80 % of its peers: within the bound
    data = _doctor(capsys, f)
    assert not data["findings"] and _step(data, "pair_bandwidth")["status"] == "clear"


def test_written_table_of_several_classes_cannot_judge_one_pair(capsys, tmp_path) -> None:
    """Pairs that disagree among themselves (PCIe switches, sockets, small sizes) are no peers."""
    spread = {(i, j): f"{20 + 13 * ((i * 4 + j) % 5):.3f}" for i in range(4) for j in range(4)}
    f = tmp_path / "written_tb_a2a_classes.txt"
    f.write_text(_a2a_text(spread))
    step = _step(_doctor(capsys, f), "pair_bandwidth")
    assert step["status"] == "inconclusive" and "disagree among themselves" in step["summary"]


def test_written_mismatch_is_wrong_data_and_peer_error_is_p2p_unavailable(capsys, tmp_path) -> None:
    f = tmp_path / "written_tb_errors.txt"
    f.write_text("TransferBench v1.52\nTest 1:\n\n[ERROR] Unexpected mismatch at index 1024 of destination array 0:\n"
                 "[ERROR] SRC 00   value:    1.00000 [3F800000]\n")
    fc = read(str(f))
    assert [x.test for x in fc.nvb.failures] == ["TransferBench Test 1"] and not fc.nvb.waived
    assert "copy_verification_failed" in {x["cause"] for x in _doctor(capsys, f)["findings"]}
    g = tmp_path / "written_tb_peer.txt"
    g.write_text("TransferBench v1.52\n[ERROR] Unable to enable peer access from GPU devices 1 to 0\n")
    assert {x["cause"] for x in _doctor(capsys, g)["findings"]} == {"p2p_unavailable"}


def test_written_peer_error_advice_is_amd_not_nvidia(capsys, tmp_path) -> None:
    g = tmp_path / "written_tb_peer.txt"
    g.write_text("TransferBench v1.52\n[ERROR] Unable to enable peer access from GPU devices 1 to 0\n")
    (f,) = _doctor(capsys, g)["findings"]
    assert f["cause"] == "p2p_unavailable" and "nvidia-smi" not in f["fix"]
    assert "rocm-smi --showtopo" in f["fix"] and "amd-smi topology" in f["fix"] and "IOMMU" in f["fix"]


def test_written_a2a_pair_at_zero_is_named_link_down(capsys, tmp_path) -> None:
    """A dead pair at 0.00 GB/s among 50 GB/s peers (4 GPUs, GPU01->GPU03): named, the cell as evidence."""
    f = tmp_path / "written_tb_a2a_zero.txt"
    f.write_text(_a2a_text({(1, 3): "0.00"}))
    data = _doctor(capsys, f)
    (dead,) = data["findings"]
    assert dead["cause"] == "link_down" and dead["between"] == ["GPU 1", "GPU 3"]
    ev = dead["evidence"]
    assert ev["cell"] == "row GPU 1, column GPU 3" and ev["measured_gbps"] == 0.0 and ev["peers_median_gbps"] == 50.0
    assert ev["test"] == "TransferBench a2a GPU->GPU" and ev["pct_of_peers"] == 0.0
    step = _step(data, "pair_bandwidth")
    assert step["status"] == "confirmed" and "1 pair(s) measured 0 GB/s" in step["summary"]


def test_written_a2a_na_pairs_are_listed_not_skipped(capsys, tmp_path) -> None:
    f = tmp_path / "written_tb_a2a_na.txt"
    f.write_text(_a2a_text({(0, 2): "N/A", (3, 1): "N/A"}))
    step = _step(_doctor(capsys, f), "pair_bandwidth")
    assert step["status"] == "clear"
    assert "can't read 2 pair(s) (N/A, cut or unreadable): GPU 0->GPU 2, GPU 3->GPU 1" in step["summary"]
    assert any(e["where"] == "2 pairs" and "GPU 0->GPU 2" in e["value"] for e in step["evidence"])
    g = tmp_path / "written_tb_a2a_all_na.txt"
    g.write_text(_a2a_text({(i, j): "N/A" for i in range(4) for j in range(4)}))
    step = _step(_doctor(capsys, g), "pair_bandwidth")
    assert step["status"] == "inconclusive" and "can't read 12 pair(s)" in step["summary"]


HEADER_PAST_BOUND = ("TransferBench a2a header at line 2: device index 99999999 is past the bound of 4,096 devices "
                     "(docs/limits.md): table skipped")
ROW_PAST_BOUND = ("TransferBench p2p unidirectional (local read / remote write): row(s) at line(s) 4 name a device index "
                  "past the bound of 4,096 devices (docs/limits.md): skipped")


@pytest.mark.parametrize(("text", "note", "pairs"), [
    ("Unidirectional copy peak bandwidth GB/s [Local read / Remote write] (GPU-Executor: GFX)\n"
     "  GPU 00  ->  zz  1e999  -5 \n", "TransferBench p2p title at line 1 without its column header: skipped",
     "no pair measurements"),
    ("Unidirectional copy peak bandwidth GB/s [Local read / Remote write] (GPU-Executor: GFX)\n"
     " SRC+EXE\\DST    GPU 00    GPU 01\n  GPU 00  ->   nan   inf\n  GPU 01  ->   -3.0   x\n",
     "TransferBench p2p unidirectional (local read / remote write, GFX): row(s) at line(s) 3–4 cut or unreadable",
     "can't read 2 pair(s)"),
    ("TransferBench v1\n Transfer 00 | abc GB/s | nan ms | 12 bytes | G0 -> G000:004 -> G1\n",
     "TransferBench: 1 Transfer result(s) of a config-file run read", "no pair measurements"),
    # a device index past the bound: a matrix as large as the index exhausted memory (146 and 160 bytes)
    ("Unidirectional copy peak bandwidth GB/s [Local read / Remote write]\n SRC+EXE\\DST    GPU 00    GPU 01\n"
     "  GPU 00  ->   1 2\n  GPU 300000000  ->   1 2\n", ROW_PAST_BOUND, "1 pair(s), too few"),
    ("TransferBench v1.62\nSRC\\DST  GPU 00     GPU 99999999        STotal      Actual\nGPU 00      N/A     50.7  1 1\n"
     "GPU 99999999   51.0        N/A  1 1\n", HEADER_PAST_BOUND, "no pair measurements"),
])
def test_written_garbage_is_refused_or_noted_without_a_traceback(capsys, tmp_path, text: str, note: str,
                                                                 pairs: str) -> None:
    f = tmp_path / "written_tb_garbage.txt"
    f.write_text(text)
    data = _doctor(capsys, f)  # exit 0 or 1: read with a note, not main's out-of-memory exit 2
    assert any(note in n for n in data["notes"]), data["notes"]
    assert pairs in _step(data, "pair_bandwidth")["summary"]
    assert not [x for x in data["findings"] if x["cause"] in ("link_degraded", "link_down")]  # no figure invented


def test_written_device_index_past_the_bound_builds_no_large_matrix() -> None:
    import tracemalloc

    rows = "".join(f"  GPU {idx}  ->   1 2\n" for idx in ("00", "4096", "300000000", "9" * 900))
    text = "Unidirectional copy peak bandwidth GB/s [Local read / Remote write]\n SRC+EXE\\DST    GPU 00    GPU 01\n" + rows
    tracemalloc.start()
    try:
        fc = parse_text(text, "written_tb_hugerow.txt")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20  # bytes: the old reader built a list per index up to 300,000,000
    (m,) = fc.nvb.matrices.values()
    assert m == [[1.0, 2.0], [None, None]]
    assert any("row(s) at line(s) 4–6 name a device index past the bound of 4,096" in n for n in fc.notes)


def test_written_header_wider_than_the_bound_is_not_a_table() -> None:
    from gpuvet.captures.transferbench import MAX_DEVICES

    head = " SRC+EXE\\DST" + "".join(f"  GPU {j:02d}" for j in range(MAX_DEVICES + 1))
    text = "Unidirectional copy peak bandwidth GB/s [Local read / Remote write]\n" + head + "\n  GPU 00  ->  1.0\n"
    fc = parse_text(text, "written_tb_wide.txt")
    assert not fc.nvb.matrices and any("without its column header" in n for n in fc.notes)


# --- written p2p tables against the design --expect names (TransferBench names no module) -------------
def _p2p_text(cells: dict[tuple[int, int], str] | None = None, n: int = 8) -> str:
    """TransferBench p2p's unidirectional table: two CPU rows, n GPU rows (row = source), the averages."""
    cols = "    CPU 00    CPU 01    " + "".join(f"   GPU {j:02d}" for j in range(n))
    head = f"Unidirectional copy peak bandwidth GB/s [Local read / Remote write] (GPU-Executor: GFX)\n SRC+EXE\\DST{cols}\n"
    cpu = "".join(f"  CPU {c:02d}  ->     92.20    102.50    " + "".join(f"{48.1:>9.2f}" for _ in range(n)) + "\n"
                  for c in range(2))
    gpu = "".join(f"  GPU {i:02d}  ->     55.40     55.50    " + "".join(
        f"{2140.0 if i == j else float((cells or {}).get((i, j), 49.60)):>9.2f}" for j in range(n)) + "\n"
        for i in range(n))
    avg = ("                           CPU->CPU  CPU->GPU  GPU->CPU  GPU->GPU\n"
           "Averages (During UniDir):    97.35     48.10     55.45     49.60\n")
    return f"TransferBench p2p\nBytes Per Direction 268435456\n{head}{cpu}\n{gpu}{avg}"


def _doctor_expect(capsys: pytest.CaptureFixture[str], path: Path, *more: str) -> tuple[int, dict[str, Any]]:
    code = main(["doctor", "--from", str(path), "--json", "--all", *more])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


def test_written_p2p_at_its_design_is_clear_against_the_xgmi_mesh(capsys, tmp_path) -> None:
    f = tmp_path / "written_tb_p2p_even.txt"
    f.write_text(_p2p_text())
    code, data = _doctor_expect(capsys, f, "--expect", "mi300x-8")
    step = _step(data, "pair_bandwidth")
    assert code == 0 and step["status"] == "clear" and "within 75 % of its design" in step["summary"], step
    basis = next(e["value"] for e in step["evidence"] if e["field"].endswith("against the design"))
    assert "of the ~54 GB/s the design gives one way (1 xGMI link × 64 GB/s × 0.85" in basis, basis


def test_written_p2p_pair_far_below_its_design_names_the_pair_and_its_share(capsys, tmp_path) -> None:
    f = tmp_path / "written_tb_p2p_slow.txt"
    f.write_text(_p2p_text({(2, 5): "20.40"}))
    code, data = _doctor_expect(capsys, f, "--expect", "mi300x-8")
    (low,) = [x for x in data["findings"] if x["cause"] == "link_degraded"]
    assert code == 1 and low["between"] == ["GPU 2", "GPU 5"] and low["evidence"]["pct_of_design"] == 37.5, low
    assert low["evidence"]["basis"].startswith("GPU 2→GPU 5 at 20.4 GB/s is 38 % of the ~54 GB/s")


def test_written_p2p_without_its_hardware_named_cannot_be_told_against_a_design(capsys, tmp_path) -> None:
    f = tmp_path / "written_tb_p2p_unnamed.txt"
    f.write_text(_p2p_text())
    code, data = _doctor_expect(capsys, f)
    step = _step(data, "pair_bandwidth")
    assert code == 0 and "can't tell against the design: 'unknown GPU (TransferBench prints no model)' is not in the " \
        "catalog" in step["summary"], step  # its GPUs are listed by index, no model
    assert not any("pct_of_design" in x["evidence"] for x in data["findings"])


def _scaling_text() -> str:
    """A GPU-GFX scaling preset's sweep, written for the test in TransferBench's format."""
    rows = "\n".join(f"  {n:>2}     {11.0 + n * 0.1:5.2f}       {min(17.5 * n, 48.0):5.2f}       {18.0 * n:6.2f}"
                     for n in range(1, 9))
    return ("GPU-GFX Scaling benchmark:\n==========================\n- Copying 268435456 bytes from GPU 1 to other "
            f"devices\n- All numbers reported as GB/sec\n\nNumCUs   CPU00        GPU00        GPU01\n{rows}\n")


def test_a_scaling_sweep_is_read_its_gpus_listed_and_not_judged(capsys, tmp_path) -> None:
    f = tmp_path / "written_tb_gfx_scaling.txt"
    f.write_text(_scaling_text())
    fc = read(str(f))
    assert fc.kinds == ["TransferBench"] and not fc.nvb.matrices
    assert any("scaling from GPU 1" in n and "GPU 0 48" in n and "not judged" in n for n in fc.notes)
    code = main(["inventory", "--from", str(f), "--json"])
    modules = json.loads(capsys.readouterr().out)["modules"]
    assert code == 0 and [(m["id"], m["bus_id"]) for m in modules] == [("gpu0", None), ("gpu1", None)]
    assert _doctor(capsys, f)["findings"] == []
