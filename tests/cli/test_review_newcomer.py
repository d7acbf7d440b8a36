"""A newcomer's run of gpuvet (the Ascend preset, replay, captures, docs): each finding, with what
gpuvet must make of it."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from gpuvet.cli.app import main

_ASCEND_TOPO = "tests/data/captures/real/ascend_arthurchiao_910b_topo.txt"


def _call(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    assert "Traceback" not in err.getvalue()
    return code, out.getvalue(), err.getvalue()


def _json(*args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = _call(*args, "--json")
    assert code != 2, err
    return code, json.loads(out)


def test_atlas_hccs_pairs_are_all_28_and_the_unknown_pcie_path_is_assumed() -> None:
    """No pair takes the host's PCIe tree, which the preset says is not known: every HCCS pair
    shows its 28 GB/s link, and the host path is marked assumed."""
    _, data = _json("topo", "--node", "atlas-800t-a2")
    cells = [cell for row in data["matrix"].values() for cell in row.values()]
    assert {(c["label"], c["gbps"], c["assumed"]) for c in cells} == {("SD1", 28.0, False)}
    assert all(hp["assumed"] for hp in data["host_paths"].values())


def test_atlas_capture_says_its_assumed_hccs_rate_is_not_compared() -> None:
    """A topology capture names HCCS links, not their rate: "no differences" must not pass the
    assumed ~64 off as agreeing with the design's 28."""
    code, out, _ = _call("topo", "--from", _ASCEND_TOPO, "--expect", "atlas-800t-a2")
    assert code == 0
    assert "can't tell the rate of 28 fabric link(s)" in " ".join(out.split())
    assert "No differences in what was read" in out
    _, data = _json("topo", "--from", _ASCEND_TOPO, "--expect", "atlas-800t-a2")
    assert len(data["compared"]["fabric_rate_unread"]) == 28


_LOG = ("timestamp, index, name, pci.bus_id, uuid, temperature.gpu, power.draw [W]\n"
        + "".join(f"2026/11/01 00:0{t}:00.000, {i}, NVIDIA H100 80GB HBM3, 00000000:{0x18 + i:02X}:00.0, "
                  f"GPU-0000000{i}-aaaa-bbbb-cccc-000000000000, 6{i}, 500.00 W\n" for t in range(3) for i in range(4)))


def _replayed(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "cut.csv"
    path.write_text(text)
    _, data = _json("watch", "--replay", str(path), "--no-log")
    return data


def test_replay_leaves_out_a_last_line_cut_in_its_uuid(tmp_path: Path) -> None:
    """A log cut mid-way through a UUID is no new board: the cut line is named and left out."""
    data = _replayed(tmp_path, _LOG + "2026/11/01 00:03:00.000, 2, NVIDIA H100 80GB HBM3, 00000000:1A:00.0, GPU-000000")
    assert len(data["modules"]) == 4, data["modules"]
    cut = [n for n in data["notes"] if "last line is cut" in n]
    assert cut and "cut.csv:14" in cut[0] and "5 of its 7 cells" in cut[0]


def test_replay_leaves_out_a_last_line_cut_in_its_temperature(tmp_path: Path) -> None:
    """"…, 4" at the end of a cut file is not a reading of 4 C."""
    data = _replayed(tmp_path, _LOG + "2026/11/01 00:03:00.000, 0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, "
                                      "GPU-00000000-aaaa-bbbb-cccc-000000000000, 4")
    assert any("last line is cut" in n for n in data["notes"])
    assert len(data["modules"]) == 4


def test_replay_leaves_out_a_last_cell_cut_short_and_keeps_a_whole_last_line(tmp_path: Path) -> None:
    """With every cell present only a last cell shorter than its column's can be cut; a whole last
    line without its line end is a sample like the rest."""
    row = ("2026/11/01 00:03:00.000, 0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, "
           "GPU-00000000-aaaa-bbbb-cccc-000000000000, 61, ")
    assert any("'50'" in n and "last line is cut" in n for n in _replayed(tmp_path, _LOG + row + "50")["notes"])
    assert not any("last line is cut" in n for n in _replayed(tmp_path, _LOG + row + "501.00 W")["notes"])


_CLI_DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _doc_example(command: str) -> tuple[list[str], int]:
    """The output lines and exit code docs/cli.md shows under ``$ command``."""
    text = _CLI_DOC.read_text()
    start = text.index(f"$ {command}\n") + len(command) + 3
    body, _, after = text[start:].partition("\n```\n")
    return body.split("\n"), int(after.split("\n", 1)[0].removeprefix("exit "))


def test_cli_doc_shows_what_the_modelled_commands_print_now(monkeypatch: Any) -> None:
    """docs/cli.md's plan and catalog examples are the output (and exit code) of today's gpuvet:
    plan step --compare pcie-8 exits 1 with DOES NOT FIT."""
    monkeypatch.setenv("COLUMNS", "80")
    for command in ("gpuvet plan step --node hgx-h200-8 --compare pcie-8", "gpuvet plan power --budget 2000 "
                    "--loads 1,1,0.3,0", "gpuvet plan memory --params 7B --model H100-SXM", "gpuvet catalog"):
        want, code = _doc_example(command)
        got_code, out, _ = _call(*command.split()[1:])
        assert (got_code, [line.rstrip() for line in out.rstrip("\n").split("\n")]) == (code, want), command


def test_plan_collective_says_the_hccs_mesh_is_priced_with_assumed_constants() -> None:
    """No published hccl_test figure checks the HCCS mesh: the model must not claim a fit."""
    _, data = _json("plan", "collective", "--node", "atlas-800t-a2", "--bytes", "1GiB")
    assert "fitted to published runs" not in data["model"] and data["constants_checked"] is False
    assert "NVLink mesh" in data["model"] and "not checked against published hccl_test" in data["model"]
    _, out, _ = _call("plan", "collective", "--node", "atlas-800t-a2", "--bytes", "1GiB")
    assert "not checked against published hccl_test figures" in " ".join(out.split())
    _, fitted = _json("plan", "collective", "--node", "hgx-h200-8")
    assert fitted["constants_checked"] is True and "fitted to published" in fitted["model"]


def test_plan_collective_ranks_fix_names_the_counts_it_takes() -> None:
    code, _, err = _call("plan", "collective", "--node", "atlas-800t-a2", "--ranks", "16")
    assert code == 2 and "use 2 to 8" in err


def test_plan_step_names_the_missing_figure_and_how_to_give_it() -> None:
    """Ascend910B is a catalog module: the fix is to give its bf16 TFLOPS, not to use one."""
    code, _, err = _call("plan", "step", "--node", "atlas-800t-a2")
    err = " ".join(err.split())
    assert code == 2 and "use a catalog module" not in err
    assert "no dense bf16 TFLOPS figure" in err and "tflops: {bf16: TFLOPS}" in err and "base: atlas-800t-a2" in err


def test_doctor_says_a_cut_nvbandwidth_matrix_is_cut(tmp_path: Path) -> None:
    """Two of four rows are no whole matrix: the note and the finding's evidence say it is cut."""
    whole = Path("tests/data/captures/nvbandwidth_d2d_p2p_off.txt").read_bytes()
    cut = tmp_path / "nvb_cut.txt"
    cut.write_bytes(whole[:560])
    _, data = _json("doctor", "--from", str(cut))
    assert any("the matrix is cut: 2 of its 4 rows" in n for n in data["notes"]), data["notes"]
    p2p = [f for f in data["findings"] if f["check"] == "p2p_path"]
    assert p2p and p2p[0]["evidence"]["rows_read"].startswith("2 of 4: the matrix is cut")
    _, full = _json("doctor", "--from", "tests/data/captures/nvbandwidth_d2d_p2p_off.txt")
    assert not any("matrix is cut" in n for n in full["notes"])
    assert all("rows_read" not in f["evidence"] for f in full["findings"])


def test_bench_collective_honours_ranks_on_a_simulated_node() -> None:
    """--ranks 2 on a 4-module node runs on 2 ranks (the first two modules); more than the node
    holds is refused, never dropped."""
    _, data = _json("bench", "collective", "--node", "mesh-4", "--quick", "--ranks", "2", "--max-bytes", "4096",
                    "--ops", "all_reduce")
    assert {r["detail"]["ranks"] for r in data["results"] if "ranks" in r.get("detail", {})} == {2}
    code, _, err = _call("bench", "collective", "--node", "mesh-4", "--quick", "--ranks", "6")
    assert code == 2 and "--ranks" in err and "use 2 to 4" in err


def test_validate_host_only_without_torch_gives_one_fix(monkeypatch: Any) -> None:
    """Without PyTorch, --host-only measured nothing for want of it: one Fix, PyTorch's, not the
    'no module to measure on' one that --host-only does not need."""
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    code, _, err = _call("validate", "--host-only", "--level", "quick", "--no-log")
    assert code == 2 and err.count("Fix:") == 1, err
    assert "PyTorch is not installed" in err and "no module to measure on" not in err


def test_replay_leaves_out_a_cut_last_dmon_row(tmp_path: Path) -> None:
    """dmon's rows follow the same rule: '    1   30' at the end of a cut file is no 30 W sample."""
    head = ("# gpu   pwr gtemp mtemp    sm   mem   enc   dec  mclk  pclk\n"
            "# Idx     W     C     C     %     %     %     %   MHz   MHz\n")
    row = "    {}   300    65     -    90    40     0     0  2619  1980\n"
    data = _replayed(tmp_path, head + row.format(0) + row.format(1) + row.format(0) + "    1   30")
    assert any("cut.csv:6: the last line is cut (no line end, 2 of its 10 cells)" in n for n in data["notes"])
