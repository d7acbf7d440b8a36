import pytest

from gpuvet.backends.sim.backend import SimBackend
from gpuvet.errors import CatalogError, SpecError
from gpuvet.node.spec import load_spec, preset_names
from tests.conftest import declared

REQUIRED = {"hgx-h200-8", "mesh-4", "pcie-8", "grouped-16"}


def test_required_presets_exist_and_one_is_a_large_switched_domain():
    names = set(preset_names())
    assert REQUIRED <= names
    large = [n for n in names if len(declared(n).modules) >= 72]
    assert large
    assert declared(large[0]).endpoints and any(e.kind == "fabric_switch" for e in declared(large[0]).endpoints)


@pytest.mark.parametrize("name", preset_names())
def test_presets_load_and_name_modules_gpu0_to_n(name):
    node = declared(name)
    assert node.module_ids == [f"gpu{i}" for i in range(len(node.modules))]
    assert all(node.pcie_link(m) is not None for m in node.module_ids)


def test_shapes_of_presets():
    hgx = declared("hgx-h200-8")
    assert len(hgx.modules) == 8 and {m.model.name for m in hgx.modules} == {"H200-SXM"}
    mesh = declared("mesh-4")
    assert len(mesh.fabric_links()) == 6  # every pair of 4
    pcie = declared("pcie-8")
    assert pcie.fabric_links() == [] and len(pcie.sockets()) == 2
    assert sum(1 for e in pcie.endpoints if e.kind == "pcie_switch") == 4
    grouped = declared("grouped-16")
    assert len(grouped.fabric_links()) == 2 * 28 + 8  # two meshes of 8, eight uplinks


def test_base_then_faults(write_spec):
    path = write_spec("""
        base: hgx-h200-8
        name: rack3-node7
        faults:
          - {kind: missing_module, module: gpu3}
    """)
    backend = SimBackend.from_ref(path)
    assert backend.spec.name == "rack3-node7"
    assert len(backend.declared.modules) == 8 and len(backend.node().modules) == 7


def test_child_without_name_keeps_the_base_name(write_spec):
    path = write_spec("base: mesh-4\nfaults: [{kind: missing_module, module: gpu1}]\n")
    assert SimBackend.from_ref(path).spec.name == "mesh-4"


def test_custom_module(write_spec):
    path = write_spec("""
        name: lab
        modules:
          - id: gpu0
            custom: {name: SeedModule, memory_bytes: 34359738368, memory_bw_gbps: 1200, tflops: {bf16: 200}}
          - {id: gpu1, model: H100-SXM}
        fabric: {kind: full_mesh, link: {kind: serdes, width: 2, lane_gbps: 64}}
    """)
    node = SimBackend.from_ref(path).node()
    assert node.module("gpu0").model.tflops["bf16"] == 200
    assert node.fabric_links()[0].bandwidth_gbps == 128


def _error(ref: str) -> str:
    with pytest.raises((SpecError, CatalogError)) as err:
        SimBackend.from_ref(ref)
    return str(err.value)


def test_malformed_yaml_names_file_and_line(write_spec):
    path = write_spec("name: x\nmodules: [\n  - id: gpu0\n")
    msg = _error(path)
    assert path in msg and "line" in msg


def test_unknown_field_names_the_field_path(write_spec):
    spec = "modules: {count: 2, model: H100-SXM}\nfabric: {kind: switched, link: {kind: nvlink, widht: 4}}\n"
    msg = _error(write_spec(spec))
    assert "fabric.switched.link" in msg and "widht" in msg


def test_bad_fabric_kind_lists_allowed(write_spec):
    msg = _error(write_spec("modules: {count: 2, model: H100-SXM}\nfabric: {kind: torus, link: {kind: nvlink, width: 4}}\n"))
    assert "switched" in msg and "full_mesh" in msg and "grouped" in msg


def test_unknown_preset_lists_presets():
    msg = _error("hgx-h900-8")
    assert "hgx-h900-8" in msg and "hgx-h200-8" in msg


def test_unknown_model_names_module(write_spec):
    msg = _error(write_spec("modules: {count: 2, model: H900}\n"))
    assert "H900" in msg and "modules[0]" in msg


def test_fault_naming_absent_module(write_spec):
    msg = _error(write_spec("base: mesh-4\nfaults: [{kind: missing_module, module: gpu9}]\n"))
    assert "faults[0]" in msg and "gpu9" in msg and "gpu0" in msg


def test_fault_naming_absent_link(write_spec):
    msg = _error(write_spec("base: hgx-h200-8\nfaults: [{kind: link_down, between: [gpu1, gpu2]}]\n"))
    assert "no link between gpu1 and gpu2" in msg and "nvswitch0" in msg


def test_unknown_fault_kind(write_spec):
    msg = _error(write_spec("base: mesh-4\nfaults: [{kind: gremlins, module: gpu0}]\n"))
    assert "gremlins" in msg and "link_down" in msg


def test_base_loop(write_spec, tmp_path):
    write_spec(f"base: {tmp_path / 'b.yaml'}\nmodules: {{count: 1, model: L40S}}\n", "a.yaml")
    write_spec(f"base: {tmp_path / 'a.yaml'}\n", "b.yaml")
    assert "loops" in _error(str(tmp_path / "a.yaml"))


def test_load_spec_returns_where():
    spec, where = load_spec("mesh-4")
    assert where == "preset mesh-4" and spec.name == "mesh-4"


@pytest.mark.parametrize("preset", ["hgx-h200-8", "mesh-4", "pcie-8", "grouped-16", "nvl72", "nvl144", "nvl288",
                                    "nvl576", "mi300x-8"])
def test_spec_show_fits_80_columns_and_reads_back_as_the_same_spec(preset, tmp_path):
    """A preset's description was one quoted line of 100+ columns; it is folded, and folding
    changes nothing the spec says."""
    from gpuvet.node.spec import dump_spec, load_spec

    spec, _ = load_spec(preset)
    text = dump_spec(spec)
    assert max(len(line) for line in text.splitlines()) <= 80, text
    again = tmp_path / f"{preset}.yaml"
    again.write_text(text)
    assert load_spec(str(again))[0] == spec
