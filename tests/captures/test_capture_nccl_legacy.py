"""Issue 46 (AX2): NCCL 1.x's test binaries and the oldest nccl-tests headers, read as their source printed them
(NVIDIA/nccl v1.2.3 test/single/*_test.cu, test/mpi/mpi_test.cu; nccl-tests' Pid-less rank lines), and runs a
poster pasted one after another under their command lines compared with each other where the model cannot price
them. Logs written here in those layouts; batch AA's NCCL 1 thread is checked as pasted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures.read import parse_text
from gpuvet.cli.app import main

AA = Path(__file__).resolve().parents[1] / "data" / "captures" / "fresh_aa"
DEVICES = [
    "# Using devices",
    "#   Rank  0 uses device  0 [0x04] Tesla V100-SXM2-16GB",
    "#   Rank  1 uses device  1 [0x05] Tesla V100-SXM2-16GB",
]


def _findings(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, object]]]:
    path = tmp_path / "nccl1.txt"
    path.write_text(text + "\n", encoding="utf-8")
    code = main(["doctor", "--from", str(path), "--json"])
    out = capsys.readouterr().out
    found = json.loads(out)["findings"] if out.strip() else []
    return code, [f for f in found if f["severity"] in ("warn", "critical")]


def test_all_reduce_test_rows_and_its_device_lines():
    fc = parse_text(
        "\n".join(
            [
                "$ ./build/test/single/all_reduce_test 100000000 2",
                *DEVICES,
                "",
                "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res",
                "   100000000     100000000    char     sum    8.628  11.59  11.59    0e+00    8.634  11.58  11.58    0e+00",
            ]
        ),
        "nccl1.txt",
    )
    (r,) = fc.nccl.results
    assert r.op == "all_reduce" and r.models == ("Tesla V100-SXM2-16GB",) * 2
    assert [(row.size_bytes, row.busbw, row.wrong) for row in r.rows] == [(100000000, 11.59, 0)]


def test_broadcast_root_column_is_no_time_and_no_wrong_data(tmp_path, capsys):
    text = "\n".join(
        [
            *DEVICES,
            "",
            "#      bytes             N    type  root    time  algbw  busbw      res",
            "    10000000      10000000    char     0   1.628   6.14   6.14    0e+00",
            "    10000000      10000000    char     1   1.629   6.14   6.14    0e+00",
        ]
    )
    fc = parse_text(text, "bc.txt")
    assert [(row.busbw, row.wrong) for row in fc.nccl.results[0].rows] == [(6.14, 0), (6.14, 0)]
    _, found = _findings(text, tmp_path, capsys)
    assert not found


def test_the_short_layout_without_bytes_and_oldest_rank_lines():
    fc = parse_text(
        "\n".join(["       N    type      op     time  algbw  busbw", "  2500000     int     sum    0.886  11.28  11.28"]),
        "short.txt",
    )
    assert [(row.size_bytes, row.busbw) for row in fc.nccl.results[0].rows] == [(10000000, 11.28)]
    old = parse_text(
        "\n".join(
            [
                "# nThread 1 nGpus 2 minBytes 1 maxBytes 1048576 step: 2(factor)",
                "# Using devices",
                "#   Rank  0 on       ncrh device  0 [0x05] GeForce RTX 2080 Ti",
                "#   Rank  1 on       ncrh device  1 [0x06] GeForce RTX 2080 Ti",
                "",
                "     1048576        262144   float     sum    102.2   10.26   10.26  0e+00",
            ]
        ),
        "o.txt",
    )
    assert old.nccl.results[0].models == ("GeForce RTX 2080 Ti",) * 2


def test_the_same_command_run_twice_compared_and_a_repeat_quiet(tmp_path, capsys):
    def run(busbw: str) -> list[str]:
        return [
            "./build/test/single/all_reduce_test 10000000 2 0 1",
            "       N    type      op     time  algbw  busbw",
            f"10000000    char     sum    0.900  {busbw}  {busbw}",
            "",
        ]

    _, found = _findings("\n".join(run("11.10") + run("1.80")), tmp_path, capsys)
    assert [(f["cause"], f["severity"]) for f in found] == [("collective_below_model", "warn")]
    assert "all_reduce_test 10000000 2 0 1" in str(found[0]["evidence"])
    _, found = _findings("\n".join(run("11.10") + run("10.90")), tmp_path, capsys)
    assert not found


def test_mpi_test_verdicts(tmp_path, capsys):
    _, found = _findings("$ mpirun -np 4 ./build/test/mpi/mpi_test 0 1 2 3\n3 errors. Test FAILED.", tmp_path, capsys)
    assert [f["cause"] for f in found] == ["data_corruption_in_transfer"]


def test_batch_aa_nccl1_pascal_runs(capsys):
    code = main(["doctor", "--from", str(AA / "nccl_nccl44_pascal_titanx_plx_slowdown.txt"), "--json"])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert code == 1 and [(f["cause"], f["severity"]) for f in found] == [("collective_below_model", "warn")]
    assert "11.3" in json.dumps(found[0]["evidence"]) or "11.28" in json.dumps(found[0]["evidence"])
