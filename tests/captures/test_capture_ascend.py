"""Ascend captures (issue 35): `npu-smi info -t topo` becomes the node's HCCS fabric, and HCCL Test
output the records nccl-tests fills; each public capture is diagnosed as its source concluded, a
planted missing HCCS link is named against the peers' design, garbage is refused without a traceback.

The two HCCL Test files are written from Huawei's documentation (their headers say so): no real
hccl_test output was found in public threads. The planted matrices below are simulated edits of a
real capture, and say so."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuvet.backends.capture.backend import CaptureBackend
from gpuvet.captures import hccl, npu_smi
from gpuvet.captures.read import FileCapture, read
from gpuvet.captures.text import clean
from gpuvet.cli.app import main
from gpuvet.errors import CaptureError
from gpuvet.node.model import LinkKind

REAL = Path(__file__).parent.parent / "data" / "captures" / "real"
TOPO = ("ascend_msswift_910b3_topo.txt", "ascend_arthurchiao_910b_topo.txt")


def _doctor(capsys: pytest.CaptureFixture[str], path: Path | str) -> dict[str, Any]:
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in err
    return json.loads(out)


def _causes(data: dict[str, Any]) -> set[str]:
    return {f["cause"] for f in data["findings"]}


# --- what each source concluded (also run by test_captures_real over the whole corpus) ----------
def _hccl_success(fc: FileCapture, data: dict[str, Any]) -> None:
    # the docs' successful 8-NPU all_reduce: every check_result success, 8 KiB to 64 MiB
    (r,) = fc.nccl.results
    assert fc.kinds == ["hccl_test"] and r.op == "all_reduce" and r.ranks == 8 and len(r.rows) == 14
    assert all(row.wrong == 0 for row in r.rows) and r.rows[-1].algbw == pytest.approx(23.76245)
    assert r.rows[-1].busbw == pytest.approx(23.76245 * 2 * 7 / 8)  # nccl-tests' all_reduce factor 2(n-1)/n
    steps = {s["check"]: s["status"] for s in data["steps"]}
    # correct data, but a log naming no module is not priced: "can't tell" whether it reaches its node's figure
    assert steps["collective_results"] == "inconclusive" and steps["benchmark_failures"] == "clear"
    assert not data["findings"]


def _hccl_retcode7(fc: FileCapture, data: dict[str, Any]) -> None:
    # the FAQ's cause: leftover hccl_test processes; the test did not run: a failure, nothing measured
    assert fc.kinds == ["hccl_test"] and not fc.nccl.results[0].rows
    (f,) = [f for f in data["findings"] if f["cause"] == "collective_test_failed"]
    assert f["evidence"]["error"] == "retcode 7" and f["evidence"]["line"] == 5
    assert "hccl_test_common.cc:538" in f["evidence"]["output"]


ASCEND_EXPECT: dict[str, Callable[[FileCapture, dict[str, Any]], None]] = {
    "written_ascend_hccl_allreduce_8npu.txt": _hccl_success,
    "written_ascend_hccl_retcode7.txt": _hccl_retcode7,
}


@pytest.mark.parametrize("name", sorted(ASCEND_EXPECT))
def test_hccl_files_say_what_their_source_says(capsys: pytest.CaptureFixture[str], name: str) -> None:
    assert (REAL / name).read_text(encoding="utf-8").startswith("# source: https://")
    ASCEND_EXPECT[name](read(str(REAL / name)), _doctor(capsys, REAL / name))


@pytest.mark.parametrize("name", TOPO)
def test_real_topo_is_a_full_hccs_mesh_of_eight_and_doctor_names_no_fault(
        capsys: pytest.CaptureFixture[str], name: str) -> None:
    # both sources: a healthy 8x 910B node, every NPU joined to the other seven over HCCS
    fc = read(str(REAL / name))
    assert "npu-smi info -t topo" in fc.kinds and not any("skipped" in n for n in fc.notes)
    node = CaptureBackend([str(REAL / name)]).node()
    fabric = [ln for ln in node.links if ln.kind is LinkKind.SERDES]
    assert len(fabric) == 28 and all(ln.up for ln in fabric) and node.fabric_known
    data = _doctor(capsys, REAL / name)
    assert "link_down" not in _causes(data) and not [f for f in data["findings"] if f["severity"] == "critical"]


def test_topo_and_npu_smi_info_in_one_file_name_the_modules_and_their_links(capsys) -> None:
    code = main(["topo", "--from", str(REAL / TOPO[0]), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and [m["model"] for m in out["modules"]] == ["Ascend910B"] * 8  # 910B3: the catalog's Ascend910B
    assert [m["bus_id"] for m in out["modules"]][:2] == ["0000:C1:00.0", "0000:C2:00.0"]


# --- a planted missing HCCS link (simulated: one real matrix with a pair edited) ---------------------
def _planted(tmp_path: Path, pairs: list[tuple[int, int]], cell: str = "SYS") -> Path:
    """The ms-swift matrix with each pair's two cells replaced by ``cell`` (simulated)."""
    lines = (REAL / TOPO[0]).read_text(encoding="utf-8").splitlines()
    out = []
    for ln in lines:
        m = re.match(r"NPU(\d)\s", ln)
        if m:
            row = int(m.group(1))
            tokens = re.split(r"(\s+)", ln)
            words = [i for i, t in enumerate(tokens) if t and not t.isspace()]
            for a, b in pairs:
                for me, other in ((a, b), (b, a)):
                    if row == me:
                        tokens[words[other + 1]] = cell.ljust(4)
            ln = "".join(tokens)
        out.append(ln)
    f = tmp_path / "planted_simulated.txt"
    f.write_text("\n".join(out) + "\n")
    return f


def test_a_planted_missing_hccs_link_is_named_against_the_peers(capsys, tmp_path) -> None:
    f = _planted(tmp_path, [(2, 5)])
    backend = CaptureBackend([str(f)])
    down = [ln.ends for ln in backend.node().links if not ln.up]
    assert down == [frozenset(("gpu2", "gpu5"))]
    assert any("NPU2-NPU5 shows SYS" in n and "6 of its 8 NPUs" in n for n in backend.notes())
    data = _doctor(capsys, f)
    (link,) = [x for x in data["findings"] if x["cause"] == "link_down"]
    assert sorted(link["between"]) == ["gpu2", "gpu5"] and link["severity"] == "critical"


def test_no_mesh_among_the_peers_means_no_link_is_called_down(tmp_path) -> None:
    # two groups of four (like the 910 boards with 4-chip HCCS meshes): no NPU reaches all seven,
    # so the peers show no full-mesh design and a PCIe cell between the groups is not a fault
    f = _planted(tmp_path, [(a, b) for a in range(4) for b in range(4, 8)], "PIX")
    node = CaptureBackend([str(f)]).node()
    assert all(ln.up for ln in node.links) and len([ln for ln in node.links if ln.kind is LinkKind.SERDES]) == 12


def test_hccs_switch_and_sio_cells_build_a_switch_and_die_links() -> None:
    text = ("          Phy-ID0    Phy-ID1    Phy-ID2    Phy-ID3\n"
            "Phy-ID0    X          SIO        HCCS_SW    HCCS_SW\n"
            "Phy-ID1    SIO        X          HCCS_SW    HCCS_SW\n"
            "Phy-ID2    HCCS_SW    HCCS_SW    X          SIO\n"
            "Phy-ID3    HCCS_SW    HCCS_SW    SIO        X\n")
    parsed = npu_smi.parse(clean(text).lines)
    assert parsed.kinds == ["npu-smi info -t topo"] and parsed.fabric is not None
    assert parsed.fabric.link_type[frozenset(("Phy-ID0", "Phy-ID1"))] == "SIO"


# --- HCCL Test rows and failures, constructed --------------------------------------------------------
_HCCL = ("mpirun -n 4 ./bin/all_gather_test -b 8K -e 16K -f 2 -p 4\n"
         "the minbytes is 8192, maxbytes is 16384, iters is 20, warmup_iters is 5\n"
         "data_size(Bytes): |   aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n"
         "8192              |     100.00    |       0.08192        | success\n"
         "16384             |     110.00    |       0.14895        | failed\n")


def test_a_failed_check_result_is_a_finding_with_its_line(capsys, tmp_path) -> None:
    f = tmp_path / "hccl_failed_simulated.txt"
    f.write_text(_HCCL)
    r = read(str(f)).nccl.results[0]
    assert (r.op, r.ranks, [row.wrong for row in r.rows]) == ("all_gather", 4, [0, 1])
    assert r.rows[0].busbw == pytest.approx(0.08192 * 3 / 4)
    data = _doctor(capsys, f)
    failed = [x for x in data["findings"] if x["cause"] == "collective_test_failed"]
    assert failed and failed[0]["evidence"]["line"] == 5 and "failed" in failed[0]["evidence"]["output"]
    assert not [s for s in data["steps"] if s["check"] == "collective_results" and s["status"] == "clear"]


def test_a_cut_run_or_unknown_ranks_gives_no_average() -> None:
    cut = hccl.parse(clean(_HCCL.replace("maxbytes is 16384", "maxbytes is 65536")).lines, "x.txt")
    assert cut.results[0].avg_busbw is None and any("cut, killed or hung" in n for n in cut.notes)
    bare = hccl.parse(clean(_HCCL.split("\n", 1)[1]).lines, "x.txt")
    assert bare.results[0].rows[0].busbw is None and any("not derived" in n for n in bare.notes)


def test_rows_without_the_tools_header_are_not_taken_for_hccl() -> None:
    assert not hccl.parse(clean("8192 | 1.0 | 2.0 | success\n").lines, "x.txt").claimed


# --- garbage: each case refused or noted, as said ---------------------------------------------------
@pytest.mark.parametrize(("text", "code", "said"), [
    ("NPU0       NPU1\nNPU0       X          ZZZZ\nNPU1       ZZZZ       X\n", 0,
     "2 cell(s) no npu-smi prints (first: 'ZZZZ'): left out"),
    ("data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n8192 | nan | -1 | success\n", 0,
     "1 row(s) with unreadable figures"),
    ("NPU0 NPU1\n" + "NPU0 X " + "HCCS " * 5000 + "\n", 0, "1 NPU(s) named in the header have no row (NPU1)"),
    ("\x00binary", 2, "a binary file, not captured text"),
    ("\tNPU0 NPU1 NPU1 CPU Affinity\nNPU0 X HCCS HCCS 0-1\nNPU1 HCCS X HCCS 0-1\n", 2,
     "the matrix header names NPU1 more than once"),
    ("\t" + " ".join(f"NPU{i}" for i in range(1500)) + "\n", 2, "1500 NPUs in the matrix header (at most 256"),
])
def test_garbage_is_refused_or_noted_without_a_traceback(capsys, tmp_path, text: str, code: int, said: str) -> None:
    f = tmp_path / "garbage.txt"
    f.write_text(text)
    got = main(["doctor", "--from", str(f), "--json"])
    out, err = capsys.readouterr()
    assert got == code and "Traceback" not in err
    if code == 2:  # refused: what, where and a fix
        assert said in err and "Fix:" in err
    else:
        assert any(said in n for n in json.loads(out)["notes"])


# --- what the matrix does not say is not a fault (review: NA, cut rows, unreadable cells) -------------
def test_an_na_pair_in_a_full_mesh_is_cant_tell_not_a_link_down(capsys, tmp_path) -> None:
    # npu-smi's legend: NA = "Unknown relationship": nothing is said about the pair (simulated edit)
    f = _planted(tmp_path, [(6, 7)], "NA")
    backend = CaptureBackend([str(f)])
    assert all(ln.up for ln in backend.node().links)
    assert any("can't tell gpu6-gpu7" in n and "NA" in n and "6 of its 8 NPUs" in n for n in backend.notes())
    assert "link_down" not in _causes(_doctor(capsys, f))


def test_rows_cut_from_the_matrix_are_said_and_their_pairs_not_called_down(capsys, tmp_path) -> None:
    # the real matrix with the NPU6 and NPU7 rows cut: NPU6-NPU7 is in no cell left (simulated cut)
    lines = (REAL / TOPO[0]).read_text(encoding="utf-8").splitlines()
    f = tmp_path / "cut_simulated.txt"
    f.write_text("\n".join(ln for ln in lines if not re.match(r"NPU[67]\s", ln)) + "\n")
    backend = CaptureBackend([str(f)])
    assert all(ln.up for ln in backend.node().links)
    notes = backend.notes()
    assert any("the matrix is cut" in n and "(NPU6, NPU7)" in n for n in notes)
    assert any("can't tell gpu6-gpu7" in n and "no readable cell" in n for n in notes)
    assert "link_down" not in _causes(_doctor(capsys, f))


def test_an_unreadable_pair_is_cant_tell_but_one_printed_half_still_counts(tmp_path) -> None:
    f = _planted(tmp_path, [(1, 3)], "ZZZZ")  # both halves unreadable (simulated)
    backend = CaptureBackend([str(f)])
    assert all(ln.up for ln in backend.node().links)
    assert any("can't tell gpu1-gpu3" in n for n in backend.notes())
    lines = f.read_text().splitlines()
    row = next(i for i, ln in enumerate(lines) if ln.startswith("NPU1"))
    lines[row] = lines[row].replace("ZZZZ", "SYS ", 1)  # the NPU1 row prints SYS; NPU3's row stays unreadable
    f.write_text("\n".join(lines) + "\n")
    down = [ln.ends for ln in CaptureBackend([str(f)]).node().links if not ln.up]
    assert down == [frozenset(("gpu1", "gpu3"))]


def test_a_matrix_at_the_bound_is_judged_one_pass_and_one_above_is_refused(tmp_path) -> None:
    def matrix(n: int, cells: dict[tuple[int, int], str]) -> str:
        def cell(i: int, j: int) -> str:
            return "X" if i == j else cells.get((min(i, j), max(i, j)), "HCCS")
        return ("\t" + " ".join(f"NPU{i}" for i in range(n)) + " CPU Affinity\n"
                + "".join(f"NPU{i} " + " ".join(cell(i, j) for j in range(n)) + " 0-23\n" for i in range(n)))
    f = tmp_path / "n256_simulated.txt"
    f.write_text(matrix(256, {(10, 200): "SYS", (3, 4): "NA"}))
    backend = CaptureBackend([str(f)])
    assert [ln.ends for ln in backend.node().links if not ln.up] == [frozenset(("gpu10", "gpu200"))]
    assert any("can't tell gpu3-gpu4" in n for n in backend.notes())
    f.write_text(matrix(257, {}))
    with pytest.raises(CaptureError, match="257 NPUs in the matrix header"):
        CaptureBackend([str(f)])


# --- HCCL Test: ranks, runs, factors (review) --------------------------------------------------------
_ROWS = ("the minbytes is 8192, maxbytes is 16384, iters is 20, warmup_iters is 5\n"
         "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n"
         "8192 | 10 | 5.0 | success\n16384 | 10 | 10.0 | success\n")


@pytest.mark.parametrize(("command", "ranks", "said"), [
    # CANN's HCCL Test docs: mpirun's -n is all NPUs (nodes x NPUs per node); the test's -n is iterations,
    # its -p NPUs per node
    ("./bin/all_reduce_test -b 8K -e 16K -f 2 -n 20 -p 8", None, "no mpirun part"),
    ("mpirun -f hostfile -n 16 ./bin/all_reduce_test -b 8K -e 16K -f 2 -n 20 -p 8", 16, "from mpirun -n"),
    ("mpirun --allow-run-as-root -np 4 ./bin/all_reduce_test -n 20 -p 4", 4, "from mpirun -n"),
    ("mpirun ./bin/all_reduce_test -b 8K -e 16K -p 8", 8, "the test's -p (NPUs per node"),
    ("mpirun -hostfile hosts ./bin/all_reduce_test -b 8K -e 16K -p 8", None, "hosts or a hostfile"),
])
def test_ranks_come_from_mpirun_not_the_tests_iteration_count(command: str, ranks: int | None, said: str) -> None:
    parsed = hccl.parse(clean(command + "\n" + _ROWS).lines, "x.txt")
    (r,) = parsed.results
    assert r.ranks == ranks and any(said in n for n in parsed.notes)
    assert r.rows[1].busbw == (pytest.approx(10.0 * 2 * (ranks - 1) / ranks) if ranks else None)


def test_two_runs_in_one_file_are_two_results() -> None:
    text = ("mpirun -n 8 ./bin/all_reduce_test -b 8K -e 16K -f 2 -p 8\n" + _ROWS
            + "mpirun -n 8 ./bin/all_gather_test -b 8K -e 16K -f 2 -p 8\n" + _ROWS.replace("5.0", "50.0"))
    parsed = hccl.parse(clean(text).lines, "x.txt")
    assert [(r.op, r.ranks, len(r.rows)) for r in parsed.results] == [("all_reduce", 8, 2), ("all_gather", 8, 2)]
    ar, ag = parsed.results
    assert ar.rows[0].busbw == pytest.approx(5.0 * 2 * 7 / 8) and ag.rows[0].busbw == pytest.approx(50.0 * 7 / 8)
    assert ar.avg_busbw is not None and ag.avg_busbw is not None
    # a second table header after rows also starts a run (no command line between)
    again = hccl.parse(clean(_ROWS + _ROWS.split("\n", 1)[1]).lines, "x.txt")
    assert len(again.results) == 2


@pytest.mark.parametrize(("command", "said"), [
    ("mpirun -n 8 ./bin/scatter_test -p 8", "scatter: no bus-bandwidth factor checked"),
    ("mpirun -n 1 ./bin/all_reduce_test -p 1", "all_reduce on 1 rank: no data crosses a link"),
])
def test_notes_say_why_no_bus_bandwidth(command: str, said: str) -> None:
    parsed = hccl.parse(clean(command + "\n" + _ROWS).lines, "x.txt")
    assert any(said in n for n in parsed.notes) and parsed.results[0].rows[0].busbw is None
    assert not any("× 0" in n or "collective is not in the capture" in n for n in parsed.notes)


def test_a_refused_topo_matrix_names_its_file(tmp_path, capsys):
    """With several --from files the refusal must say which one."""
    from gpuvet.cli.app import main

    bad = tmp_path / "node7_topo.txt"
    bad.write_text("\tNPU0\tNPU1\tNPU1\tCPU Affinity\nNPU0\tX\tHCCS\tHCCS\t\nNPU1\tHCCS\tX\tHCCS\t\n"
                   "NPU1\tHCCS\tHCCS\tX\t\n")
    assert main(["doctor", "--from", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "node7_topo.txt" in err and "more than once" in err, err
