"""`--from` captures: realistic `nvidia-smi topo -m` and `nvidia-smi -q -x` outputs."""

from pathlib import Path

import pytest

from gpuvet.backends.capture import CaptureBackend, parse_smi_xml, parse_topo_matrix, topo_to_node
from gpuvet.errors import CaptureError
from gpuvet.node.diff import diff_nodes
from gpuvet.node.relations import pcie_relations
from tests.conftest import declared

DATA = Path(__file__).parent / "data" / "captures"


def _node(name: str):
    return CaptureBackend([str(DATA / name)]).node()


def _relations_reproduced(name: str) -> None:
    topo = parse_topo_matrix((DATA / name).read_text())
    node = topo_to_node(topo, "t")
    ids = {d: (d.lower() if d.startswith(("GPU", "NIC")) else d) for d in topo.devices}
    rel = pcie_relations(node, list(ids.values()))
    for pair, cell in topo.cells.items():
        a, b = sorted(pair)
        if cell in ("PIX", "PXB", "PHB", "NODE", "SYS"):
            assert rel[frozenset((ids[a], ids[b]))] == cell, (a, b)


@pytest.mark.parametrize("name", ["topo_nvswitch_8gpu.txt", "topo_v100_hybrid_cube_mesh.txt",
                                  "topo_pcie_8gpu.txt", "topo_2gpu_consumer.txt"])
def test_inferred_tree_reproduces_every_pcie_relation(name):
    _relations_reproduced(name)


def test_nvswitch_board_is_recognised_as_switched():
    node = _node("topo_nvswitch_8gpu.txt")
    assert len(node.modules) == 8
    assert {lk.b for lk in node.fabric_links()} == {"nvswitch0"}
    assert all(lk.width == 18 for lk in node.fabric_links())
    assert sum(1 for e in node.endpoints if e.kind == "nic") == 4
    assert {e.label for e in node.endpoints if e.kind == "nic"} == {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}
    assert diff_nodes(declared("hgx-h200-8"), node) == []


def test_hybrid_cube_mesh_keeps_nv1_and_nv2():
    node = _node("topo_v100_hybrid_cube_mesh.txt")
    widths = {tuple(sorted(lk.ends)): lk.width for lk in node.fabric_links()}
    assert widths[("gpu0", "gpu3")] == 2 and widths[("gpu0", "gpu1")] == 1
    assert len(widths) == 16  # 6 links per V100: 4 peers each, 8*4/2
    assert all(sum(w for e, w in widths.items() if g in e) == 6 for g in node.module_ids)
    assert len(node.sockets()) == 2


def test_pcie_server_matches_the_pcie_8_preset():
    node = _node("topo_pcie_8gpu.txt")
    assert node.fabric_links() == []
    assert diff_nodes(declared("pcie-8"), node) == []


def test_pcie_server_with_two_gpus_swapped_shows_a_wiring_mismatch():
    text = (DATA / "topo_pcie_8gpu.txt").read_text()
    node = topo_to_node(parse_topo_matrix(text), "t")
    from dataclasses import replace

    mapping = {"gpu2": "gpu5", "gpu5": "gpu2"}
    swapped = replace(node, links=tuple(lk.relabel(mapping) for lk in node.links))
    diffs = diff_nodes(declared("pcie-8"), swapped)
    assert [(d.kind, d.modules) for d in diffs] == [("wiring_mismatch", ("gpu2", "gpu5"))]


def test_consumer_box_direct_nvlink():
    node = _node("topo_2gpu_consumer.txt")
    (link,) = node.fabric_links()
    assert link.ends == {"gpu0", "gpu1"} and link.width == 4


def test_xml_modules_and_software():
    modules, software = parse_smi_xml((DATA / "smi_q_x_h100_8gpu.xml").read_text())
    assert len(modules) == 8
    m = modules[0]
    assert m.model == "NVIDIA H100 80GB HBM3" and m.in_catalog
    assert m.memory_bytes == 81559 * 2**20
    assert (m.pcie_gen_max, m.pcie_width_current) == (5, 16)
    assert m.power_limit_w == 700.0 and m.power_limit_default_w == 700.0
    assert modules[2].power_limit_w == 500.0
    assert software.driver_version == "570.86.15" and software.cuda_driver_version == "12.8"


def test_xml_and_topo_together_find_the_narrow_link():
    backend = CaptureBackend([str(DATA / "topo_nvswitch_8gpu.txt"), str(DATA / "smi_q_x_h100_8gpu.xml")])
    node = backend.node()
    assert node.module("gpu0").model.name == "H100-SXM"
    hgx_h100 = declared("hgx-h200-8")
    diffs = diff_nodes(hgx_h100, node)
    assert [(d.kind, d.between[0]) for d in diffs] == [("link_degraded", "gpu5")]


def test_unreadable_capture_names_the_file(tmp_path):
    with pytest.raises(CaptureError, match="missing.txt"):
        CaptureBackend([str(tmp_path / "missing.txt")])


def test_not_a_topo_matrix(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\nthis is not nvidia-smi\n")
    with pytest.raises(CaptureError, match="GPU0"):
        CaptureBackend([str(path)])


def test_broken_xml(tmp_path):
    path = tmp_path / "smi.xml"
    path.write_text("<nvidia_smi_log><gpu>")
    with pytest.raises(CaptureError, match="before any field could be read"):
        CaptureBackend([str(path)])


def test_truncated_row(tmp_path):
    text = (DATA / "topo_2gpu_consumer.txt").read_text().replace("GPU1\tNV4\t X \t", "GPU1\t", 1)
    path = tmp_path / "cut.txt"
    path.write_text(text)
    with pytest.raises(CaptureError, match="row GPU1"):
        CaptureBackend([str(path)])


def test_ansi_colour_codes_are_ignored():
    text = (DATA / "topo_2gpu_consumer.txt").read_text().replace("GPU0", "\x1b[4mGPU0\x1b[0m")
    topo = parse_topo_matrix(text)
    assert topo.devices == ["GPU0", "GPU1"]
