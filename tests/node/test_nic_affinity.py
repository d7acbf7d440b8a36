"""Each module's nearest NIC, and nic_far: a module whose nearest NIC is farther than the design's
(issue 47). The design is --expect's, the simulated spec's own, or for a captured topo -m its peers'."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

from gpuvet.backends.capture.backend import parse_topo_matrix, topo_to_node
from gpuvet.checks import nic_affinity
from gpuvet.checks.nic_affinity import Judged, NearestNic
from gpuvet.node.build import build_node
from gpuvet.node.relations import PcieRelation
from gpuvet.node.spec import load_spec
from tests.support.helpers import call

SOCKET0 = "tests/data/specs/hgx-h200-8-nics-socket0.yaml"
CAPTURES = sorted(glob.glob("tests/data/captures/fresh/topo_*.txt") + glob.glob("tests/data/captures/real/topo_*.txt"))


def _node(ref: str):
    spec, where = load_spec(ref)
    return build_node(spec, where)


def _topo(gpu3: list[str], gpu3_numa: int) -> str:
    """A topo -m text: GPU0-GPU2 each PIX to its own NIC (NIC0-NIC2), every NIC in a slot of socket
    0 (NIC3 too, GPU3's); ``gpu3`` gives GPU3's cells to the four NICs, on NUMA node ``gpu3_numa``."""
    heads = ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1", "NIC2", "NIC3"]
    rows = {f"GPU{i}": ["PIX" if i == j else "NODE" for j in range(4)] for i in range(3)} | {"GPU3": gpu3}
    numa = {"GPU0": 0, "GPU1": 0, "GPU2": 0, "GPU3": gpu3_numa}
    lines = ["\t" + "\t".join(heads) + "\tCPU Affinity\tNUMA Affinity"]
    for g in heads[:4]:
        cells = ["X" if g == h else ("NODE" if numa[g] == numa[h] else "SYS") for h in heads[:4]]
        lines.append("\t".join([g, *cells, *rows[g], "0-15", str(numa[g])]))
    for i, n in enumerate(heads[4:]):
        lines.append("\t".join([n, *(rows[g][i] for g in heads[:4]), *("X" if j == i else "NODE" for j in range(4))]))
    lines += ["", "NIC Legend:", *(f"  NIC{i}: mlx5_{i}" for i in range(4))]
    return "\n".join(lines) + "\n"


# GPU0-GPU2 each PIX to their own NIC on socket 0; GPU3 alone on socket 1, its NIC3 in a slot of socket 0
STRAY = _topo(["SYS"] * 4, 1)


def test_the_preset_pairs_every_module_with_a_nic_on_its_switch():
    design = _node("hgx-h200-8")
    near = nic_affinity.nearest(design)
    assert [(n.module, n.nic, n.relation) for n in near[:3]] == [
        ("gpu0", "nic0", PcieRelation.PIX), ("gpu1", "nic0", PcieRelation.PIX), ("gpu2", "nic2", PcieRelation.PIX)]
    assert all(n.relation is PcieRelation.PIX for n in near)
    assert nic_affinity.far(design, design) == []


def test_nics_on_one_socket_against_the_preset_are_far_for_every_module():
    found, design = _node(SOCKET0), _node("hgx-h200-8")
    verdicts = nic_affinity.far(found, design)
    assert [v.kind for v in verdicts] == ["nic_far"] * 8
    by_module = {v.module: v.reason for v in verdicts}
    assert "is NODE, design PIX (declared)" in by_module["gpu0"]
    assert "is SYS, design PIX (declared)" in by_module["gpu7"] and "socket link" in by_module["gpu7"]
    # the spec is its own design: nothing is far against itself, and its peers infer no design
    assert nic_affinity.far(found, found) == [] and nic_affinity.far(found, None) == []


def test_pxb_where_the_design_draws_pix_is_no_crossing():
    """A real HGX reads PXB (two switch tiers) where the spec draws one switch: not far."""
    assert not Judged(NearestNic("gpu0", "nic0", PcieRelation.PXB), PcieRelation.PIX, "declared").far
    assert Judged(NearestNic("gpu0", "nic0", PcieRelation.PHB), PcieRelation.PXB, "declared").far
    assert not Judged(NearestNic("gpu0", None, None, 4), PcieRelation.PIX, "declared").far


def test_a_captured_module_that_reads_only_sys_strays_from_its_peers():
    node = topo_to_node(parse_topo_matrix(STRAY), "stray")
    verdicts = nic_affinity.far(node, None)
    assert [(v.kind, v.module) for v in verdicts] == [("nic_far", "gpu3")]
    assert "is SYS, design PIX (its peers)" in verdicts[0].reason


def test_a_captured_module_at_node_distance_is_not_judged_from_peers_alone():
    """Peers alone judge only SYS: an odd NODE is no socket crossing."""
    text = _topo(["NODE"] * 4, 0)
    near = nic_affinity.nearest(topo_to_node(parse_topo_matrix(text), "n"))
    assert near[3].relation is PcieRelation.NODE
    assert nic_affinity.far(topo_to_node(parse_topo_matrix(text), "n"), None) == []


def test_a_row_cut_short_is_not_judged_on_the_cells_it_lost():
    """deepep60's GPU4 row ends after a few NIC cells (SYS): a nearer NIC may be in the lost part."""
    node = topo_to_node(parse_topo_matrix(Path("tests/data/captures/fresh/topo_deepep60_topo_mp_14nic.txt")
                                          .read_text()), "cut")
    gpu4 = next(n for n in nic_affinity.nearest(node) if n.module == "gpu4")
    assert gpu4.relation is None and gpu4.unread > 0


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: Path(p).name)
def test_no_captured_topo_reads_a_nic_far(path):
    node = topo_to_node(parse_topo_matrix(Path(path).read_text()), "x")
    assert nic_affinity.far(node, None) == []


def test_real_eight_gpu_board_reads_a_nic_on_its_switch_for_every_gpu():
    node = topo_to_node(parse_topo_matrix(Path("tests/data/captures/real/topo_nccl1453_h100_nv18.txt").read_text()),
                        "x")
    near = nic_affinity.nearest(node)
    assert len(near) == 8 and all(n.relation in nic_affinity.ON_SWITCH for n in near)


def test_topo_expect_names_nic_far_as_a_difference(capsys):
    code, out, _ = call(capsys, "topo", "--node", SOCKET0, "--expect", "hgx-h200-8", "--json")
    data = json.loads(out)
    assert code == 1
    assert [d["kind"] for d in data["nic_differences"]] == ["nic_far"] * 8
    gpu7 = next(n for n in data["nearest_nic"] if n["module"] == "gpu7")
    assert gpu7 == {"module": "gpu7", "nic": "nic0", "relation": "SYS", "unread_nics": 0, "design_relation": "PIX",
                    "design_basis": "declared", "far": True}


def test_topo_text_shows_the_nearest_nic_table_at_80_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = call(capsys, "topo", "--node", SOCKET0, "--expect", "hgx-h200-8")
    assert code == 1
    assert "Nearest NIC per module" in out
    assert any(line.startswith("gpu4") and "SYS" in line and "nic_far" in line for line in out.splitlines())
    assert "8 NIC difference(s) from the declared node:" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_topo_of_the_preset_against_itself_has_no_nic_difference(capsys):
    code, out, _ = call(capsys, "topo", "--node", "hgx-h200-8", "--expect", "hgx-h200-8", "--json")
    data = json.loads(out)
    assert code == 0 and data["nic_differences"] == []
    assert {n["relation"] for n in data["nearest_nic"]} == {"PIX"}


def test_doctor_reports_nic_far_in_nic_ports(capsys):
    code, out, _ = call(capsys, "doctor", "interconnect-slow", "--node", SOCKET0, "--expect", "hgx-h200-8", "--json")
    data = json.loads(out)
    far = [f for f in data["findings"] if f["cause"] == "nic_far"]
    assert len(far) == 8 and {f["severity"] for f in far} == {"warn"}
    assert {f["module"] for f in far} == {f"gpu{i}" for i in range(8)}


def test_doctor_from_a_captured_topo_names_the_stray_module(capsys, tmp_path):
    path = tmp_path / "topo.txt"
    path.write_text(STRAY)
    code, out, _ = call(capsys, "doctor", "interconnect-slow", "--from", str(path), "--json")
    data = json.loads(out)
    far = [f for f in data["findings"] if f["cause"] == "nic_far"]
    assert [f["module"] for f in far] == ["gpu3"]
