"""Issue 46: Ascend in the design. The catalog's Ascend 910B and the atlas-800t-a2 preset (8 NPUs, one
full HCCS mesh), and HCCL Test logs judged against them: on the NPUs an npu-smi listing beside the log
names, or on the node --expect declares; "can't tell" when nothing names the hardware."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.captures.read import read
from gpuvet.cli.app import main
from gpuvet.doctor.collective_expect import judge
from gpuvet.node.build import build_node
from gpuvet.node.catalog import find_model
from gpuvet.node.collective_model import CollectiveModel
from gpuvet.node.model import LinkKind
from gpuvet.node.spec import load_spec

REAL = Path(__file__).parent.parent / "data" / "captures" / "real"
LISTING = REAL / "ascend_msswift_910b3_topo.txt"  # npu-smi info -t topo and npu-smi info of 8x 910B3
GIB = 2**30


def _hccl(alg_gbps: float, ranks: int = 8, command: bool = True) -> str:
    """hccl_test all_reduce output in the tool's layout (mpirun line, bounds line, header, rows): 256 MiB
    to 1 GiB at ``alg_gbps`` (its algorithm bandwidth; the log prints no bus bandwidth)."""
    lines = [f"mpirun -n {ranks} ./bin/all_reduce_test -b 256M -e 1G -f 2 -d fp32 -o sum -p {ranks}"] if command else []
    lines += ["the minbytes is 268435456, maxbytes is 1073741824, iters is 20, warmup_iters is 5",
              "data_size(Bytes): |   aveg_time(us): | alg_bandwidth(GB/s): | check_result:"]
    for size in (GIB // 4, GIB // 2, GIB):
        lines.append(f"{size:<18d}|  {size / alg_gbps / 1e3:10.2f}    |  {alg_gbps:12.5f}        | success")
    return "\n".join(lines) + "\n"


def _listing_only(tmp_path: Path) -> str:
    """npu-smi info alone (the module listing without the topology matrix above it in the capture)."""
    lines = LISTING.read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("+"))
    path = tmp_path / "npu_smi_info.txt"
    path.write_text("\n".join(lines[start:]) + "\n", encoding="utf-8")
    return str(path)


def _doctor(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, *more: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "hccl_all_reduce.txt"
    path.write_text(text, encoding="utf-8")
    code = main(["doctor", "--from", str(path), *more, "--json", "--all"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


def _step(data: dict[str, Any]) -> dict[str, Any]:
    (step,) = [s for s in data["steps"] if s["check"] == "collective_results"]
    return step


def _slow(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in data["findings"] if f["cause"] == "collective_below_model"]


# --- the design ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("printed", ["910B1", "910B2", "910B3", "910B4-1", "Ascend 910B3", "Ascend910B2"])
def test_the_names_npu_smi_prints_are_the_catalogs_ascend_910b(printed: str) -> None:
    model = find_model(printed)
    assert model is not None and model.name == "Ascend910B" and model.vendor == "huawei"


def test_a_name_no_source_covers_is_not_taken_for_the_910b() -> None:
    # the plain 910B4 (a 32 GB part) and the A3's "Ascend910" chips are other hardware
    assert find_model("910B4") is None and find_model("Ascend910") is None


def test_every_ascend_figure_names_its_source_and_the_unsourced_ones_stay_unknown() -> None:
    model = find_model("910B3")
    assert model is not None and model.memory_mib == 65_536 and model.tdp_w == 400
    assert (model.fabric, model.fabric_links, model.fabric_lane_gbps) == ("serdes", 7, 28)
    assert all(model.sources.get(f) for f in model.figure_names())
    assert model.memory_bw_gbps is None and not model.tflops and model.pcie_gen is None  # no source found


def test_the_preset_is_one_full_hccs_mesh_of_eight() -> None:
    spec, _ = load_spec("atlas-800t-a2")
    node = build_node(spec)
    fabric = [lk for lk in node.links if lk.kind is LinkKind.SERDES]
    assert len(node.module_ids) == 8 and len(fabric) == 28  # every pair once: 8 x 7 / 2
    assert all(lk.width == 1 and lk.lane_gbps == 28 and lk.up for lk in fabric)
    assert all(sum(1 for lk in fabric if m in lk.ends) == 7 for m in node.module_ids)


def test_the_model_prices_an_all_reduce_on_the_mesh_below_what_its_links_carry() -> None:
    node = build_node(load_spec("atlas-800t-a2")[0])
    cm = CollectiveModel(node)
    pred = cm.predict("all_reduce", GIB, cm.members(8))
    assert 0.5 * 7 * 28 < pred.busbw < 7 * 28  # a ring over every link, at less than their sum


def test_an_npu_smi_capture_of_8_910b3_matches_the_preset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["topo", "--from", str(LISTING), "--expect", "atlas-800t-a2"]) == 0
    assert "No differences" in capsys.readouterr().out


# --- HCCL Test logs judged against it ------------------------------------------------------------------------
def test_an_hccl_log_alone_cannot_tell_what_it_should_reach(capsys, tmp_path) -> None:
    _, data = _doctor(capsys, tmp_path, _hccl(40.0))
    assert not _slow(data)
    assert "names no module" in json.dumps(_step(data)["evidence"]), _step(data)


def test_a_healthy_hccl_all_reduce_beside_its_npu_listing_is_clear_with_the_basis(capsys, tmp_path) -> None:
    _, data = _doctor(capsys, tmp_path, _hccl(88.0), "--from", str(LISTING))
    step = _step(data)
    assert not _slow(data) and step["status"] == "clear", step
    assert "96% of the ~" in step["summary"] and "8 Ascend910B reach on the nominal design of the node the " \
        "captures list" in step["summary"] and "HCCS" in step["summary"], step["summary"]


def test_a_slow_hccl_all_reduce_beside_its_npu_listing_is_a_finding_with_its_share(capsys, tmp_path) -> None:
    code, data = _doctor(capsys, tmp_path, _hccl(40.0), "--from", _listing_only(tmp_path))
    (f,) = _slow(data)
    assert code == 1 and f["evidence"]["busbw_gbps"] == 70.0  # 40 GB/s algbw x 2(8-1)/8
    assert 140 < f["evidence"]["expected_gbps"] < 196
    assert "8 Ascend910B reach on the atlas-800t-a2 shape with the listed modules'" in f["evidence"]["basis"]
    assert _step(data)["summary"].startswith("all_reduce 70 GB/s busbw at 1 GiB is 4"), _step(data)


def test_expect_supplies_the_npus_when_the_log_names_none(capsys, tmp_path) -> None:
    code, data = _doctor(capsys, tmp_path, _hccl(40.0), "--expect", "atlas-800t-a2")
    (f,) = _slow(data)
    assert code == 1 and "the declared node (--expect)" in f["evidence"]["basis"]


def test_without_the_ranks_an_hccl_log_has_no_bus_bandwidth_to_judge(tmp_path) -> None:
    # no mpirun line: the ranks, so the bus bandwidth, are not known; nothing is priced, and a note says why
    path = tmp_path / "all_reduce_test.txt"
    path.write_text(_hccl(40.0, command=False), encoding="utf-8")
    fc = read(str(path))
    (result,) = fc.nccl.results
    assert judge(result, build_node(load_spec("atlas-800t-a2")[0])) is None
    assert any("bus bandwidth not derived" in n for n in fc.nccl.notes)


def test_more_ranks_than_the_design_has_modules_cannot_be_told(tmp_path) -> None:
    path = tmp_path / "hccl.txt"
    path.write_text(_hccl(40.0, ranks=16), encoding="utf-8")
    (result,) = read(str(path)).nccl.results
    judged = judge(result, build_node(load_spec("atlas-800t-a2")[0]))
    assert judged is not None and judged.expected is None and "16 rank(s) do not fit" in judged.basis
