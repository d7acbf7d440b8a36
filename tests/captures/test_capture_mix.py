"""Captures combined with repeated --from (the README's way to use it): what one file read wins
over what another only assumed, whichever order the files come in; and `spec export` writes the
design, never a degraded state found (tests/data/captures: an 8x H100 `nvidia-smi topo -m` and
`nvidia-smi -q -x` whose gpu5 trained at x8 of its x16)."""

import json
from pathlib import Path

import pytest
import yaml

from gpuvet.backends.capture.backend import CaptureBackend
from gpuvet.cli.app import main
from gpuvet.node.capacity import assumed_pcie_lanes
from gpuvet.node.matrix import link_matrix
from tests.support.helpers import call

DATA = Path(__file__).parent.parent / "data" / "captures"
TOPO = str(DATA / "topo_nvswitch_8gpu.txt")
XML = str(DATA / "smi_q_x_h100_8gpu.xml")
BOTH = [[TOPO, XML], [XML, TOPO]]



def froms(files: list[str]) -> list[str]:
    return [arg for f in files for arg in ("--from", f)]


@pytest.mark.parametrize("files", BOTH, ids=["topo-first", "xml-first"])
def test_a_narrow_module_link_read_from_the_xml_stays_visible_on_its_host_path(files):
    """The matrix gives the PCIe tree but no speeds; the XML reads each module's own link (gen5,
    x16; gpu5 x8). The switch uplinks nobody read were assumed at a typical Gen4 x16 (31.5 GB/s),
    so every host path showed ~32 and gpu5's x8 hid among them."""
    host = link_matrix(CaptureBackend(files).node()).host
    alone = link_matrix(CaptureBackend([XML]).node()).host
    assert alone["gpu5"].gbps == pytest.approx(31.5, abs=0.1) and alone["gpu0"].gbps == pytest.approx(63.0, abs=0.1)
    for m in host:
        assert host[m].gbps == pytest.approx(alone[m].gbps), m  # what was read, not the guess above it
        assert host[m].assumed  # the uplinks are still not read: the figure keeps its ~
    assert host["gpu5"].gbps < min(host[m].gbps for m in host if m != "gpu5")


@pytest.mark.parametrize("files", BOTH, ids=["topo-first", "xml-first"])
def test_topo_json_of_combined_captures_names_gpu5s_host_path_narrower(capsys, files):
    code, out, _ = call(capsys, "topo", *froms(files), "--json")
    paths = json.loads(out)["host_paths"]
    assert code == 0
    assert paths["gpu5"]["gbps"] == pytest.approx(31.5, abs=0.1)
    assert {round(p["gbps"]) for m, p in paths.items() if m != "gpu5"} == {63}


def test_both_matrix_paths_assume_the_same_uplink_speeds():
    from gpuvet.node.matrix_arrays import link_matrix_arrays
    from gpuvet.node.matrix_small import link_matrix_small

    node = CaptureBackend([TOPO, XML]).node()
    small, arrays = link_matrix_small(node), link_matrix_arrays(node)
    assert dict(small.host) == dict(arrays.host)
    assert dict(small.cells.items()) == dict(arrays.cells.items())


def test_a_matrix_alone_keeps_the_typical_assumed_speed():
    """Nothing read below an uplink: nothing to assume from (the Gen4 guess stays, marked ~)."""
    node = CaptureBackend([TOPO]).node()
    assert assumed_pcie_lanes(node) == {}
    host = link_matrix(node).host
    assert all(h.assumed and h.gbps == pytest.approx(16 * 1.969) for h in host.values())


@pytest.mark.parametrize("files", BOTH, ids=["topo-first", "xml-first"])
def test_expect_on_combined_captures_names_gpu5s_narrow_link(capsys, files):
    code, out, _ = call(capsys, "topo", *froms(files), "--expect", "hgx-h200-8", "--json")
    diffs = json.loads(out)["differences"]
    assert code == 1
    assert [(d["kind"], d["between"][0]) for d in diffs] == [("link_degraded", "gpu5")]
    assert "x8 < x16" in diffs[0]["detail"]


@pytest.mark.parametrize("files", BOTH, ids=["topo-first", "xml-first"])
def test_doctor_on_combined_captures_confirms_gpu5s_narrow_link(capsys, files):
    code, out, _ = call(capsys, "doctor", *froms(files), "--json")
    pcie = [f for f in json.loads(out)["findings"] if f["check"] == "link_state"]
    assert code == 1
    assert [(f["module"], f["evidence"]) for f in pcie] == [("0000:AB:00.0", {"width": 8, "max_width": 16})]


@pytest.mark.parametrize("files", [[XML], *BOTH], ids=["xml", "topo-first", "xml-first"])
def test_spec_export_writes_the_designed_width_and_names_what_differed(capsys, tmp_path, files):
    """Exporting gpu5 at x8 made it the expected width: --expect with that spec never flagged it."""
    code, out, err = call(capsys, "spec", "export", *froms(files))
    assert code == 0
    spec = yaml.safe_load(out)
    gpu5 = [lk for lk in spec["links"] if "gpu5" in lk["between"] and lk["kind"] == "pcie"]
    assert [lk["width"] for lk in gpu5] == [16]
    assert "gpu5-" in err and "x8" in err and "exported as designed" in err
    assert not any(f"gpu{i}-" in err for i in (0, 1, 2, 3, 4, 6, 7))
    assert "gpu5-" in spec["description"]
    path = tmp_path / "exported.yaml"
    path.write_text(out)
    code, out, _ = call(capsys, "topo", *froms(files), "--expect", str(path), "--json")
    assert code == 1
    assert [(d["kind"], d["between"][0]) for d in json.loads(out)["differences"]] == [("link_degraded", "gpu5")]


def test_spec_export_json_carries_the_note_too(capsys, tmp_path):
    code, out, err = call(capsys, "spec", "export", "--from", XML, "--json")
    assert code == 0 and "gpu5-" in json.loads(out)["description"] and "gpu5-" in err
    target = tmp_path / "node.yaml"
    code, out, _ = call(capsys, "spec", "export", "--from", XML, "--json", "-o", str(target))
    data = json.loads(out)
    assert data["wrote"] == str(target) and [n.split(":")[0] for n in data["not_as_found"]] == ["gpu5-cpu0"]
    assert "width: 8" not in target.read_text()


def test_spec_export_of_a_healthy_node_says_nothing(capsys):
    code, out, err = call(capsys, "spec", "export", "--node", "hgx-h200-8")
    assert code == 0 and err == "" and "description" not in yaml.safe_load(out)


def test_spec_export_refuses_a_node_that_lacks_a_module_of_its_design(capsys, tmp_path):
    """Exported as found, the gap became the expectation: validate --expect of that spec passed a
    node without gpu3. Refused unless --allow-missing, which still names the gap."""
    spec = tmp_path / "miss.yaml"
    spec.write_text("base: hgx-h200-8\nfaults: [{kind: missing_module, module: gpu3}]\n")
    out = tmp_path / "export.yaml"
    assert main(["spec", "export", "--sim", str(spec), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "lacks a module its design has" in err and "gpu3" in err and "--allow-missing" in err and not out.exists()
    assert main(["spec", "export", "--sim", str(spec), "-o", str(out), "--allow-missing"]) == 0
    text = out.read_text()
    assert "lacks gpu3" in text and max(len(line) for line in text.splitlines()) <= 80
