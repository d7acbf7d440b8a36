"""Each fault kind, injected, is reported as the right difference on the right module or link,
and nothing else is reported."""

import pytest

from gpuvet.node.diff import diff_nodes
from gpuvet.node.spec import preset_names
from tests.conftest import declared, sim_with_faults


@pytest.mark.parametrize("name", preset_names())
def test_preset_against_itself_has_no_differences(name):
    node = declared(name)
    assert diff_nodes(node, node) == []


CASES = [
    ("hgx-h200-8", {"kind": "missing_module", "module": "gpu3"}, ("missing_module", "gpu3")),
    ("pcie-8", {"kind": "missing_module", "module": "gpu0"}, ("missing_module", "gpu0")),
    ("nvl72", {"kind": "missing_module", "module": "gpu71"}, ("missing_module", "gpu71")),
    ("hgx-h200-8", {"kind": "link_down", "between": ["gpu1", "nvswitch0"]}, ("link_down", ("gpu1", "nvswitch0"))),
    ("mesh-4", {"kind": "link_down", "between": ["gpu1", "gpu2"]}, ("link_down", ("gpu1", "gpu2"))),
    ("grouped-16", {"kind": "link_down", "between": ["gpu1", "gpu9"]}, ("link_down", ("gpu1", "gpu9"))),
    ("pcie-8", {"kind": "link_down", "between": ["gpu3", "pcisw1"]}, ("link_down", ("gpu3", "pcisw1"))),
    ("hgx-h200-8", {"kind": "link_degraded", "between": ["gpu1", "nvswitch0"], "factor": 0.33},
     ("link_degraded", ("gpu1", "nvswitch0"))),
    ("mesh-4", {"kind": "link_degraded", "between": ["gpu2", "gpu1"], "factor": 0.5},
     ("link_degraded", ("gpu1", "gpu2"))),
    ("grouped-16", {"kind": "link_degraded", "between": ["gpu4", "gpu12"], "factor": 0.5},
     ("link_degraded", ("gpu12", "gpu4"))),
    ("pcie-8", {"kind": "link_degraded", "between": ["gpu6", "pcisw3"], "factor": 0.5},
     ("link_degraded", ("gpu6", "pcisw3"))),
    ("pcie-8", {"kind": "wiring_swap", "modules": ["gpu2", "gpu5"]}, ("wiring_mismatch", ("gpu2", "gpu5"))),
    ("grouped-16", {"kind": "wiring_swap", "modules": ["gpu2", "gpu9"]}, ("wiring_mismatch", ("gpu2", "gpu9"))),
    ("grouped-16", {"kind": "wiring_swap", "modules": ["gpu2", "gpu3"]}, ("wiring_mismatch", ("gpu2", "gpu3"))),
]


@pytest.mark.parametrize("base,fault,expected", CASES, ids=[f"{c[0]}-{c[1]['kind']}" for c in CASES])
def test_fault_is_reported_exactly(tmp_path, base, fault, expected):
    backend = sim_with_faults(tmp_path, base, [fault])
    diffs = diff_nodes(backend.declared, backend.node())
    got = [(d.kind, d.module if d.module else tuple(sorted(d.between))) for d in diffs]
    kind, where = expected
    assert got == [(kind, where if isinstance(where, str) else tuple(sorted(where)))]


@pytest.mark.parametrize("base,pair", [("hgx-h200-8", ["gpu2", "gpu5"]), ("nvl72", ["gpu0", "gpu40"]),
                                       ("mesh-4", ["gpu0", "gpu3"]), ("pcie-8", ["gpu0", "gpu1"])])
def test_swap_is_invisible_where_positions_are_equivalent(tmp_path, base, pair):
    """A fully switched fabric (or a uniform mesh, or two slots on one switch) gives the two
    modules identical positions: there is nothing to observe, and nothing must be reported."""
    backend = sim_with_faults(tmp_path, base, [{"kind": "wiring_swap", "modules": pair}])
    assert diff_nodes(backend.declared, backend.node()) == []


def test_symmetric_swap_lists_the_equivalent_explanation(tmp_path):
    backend = sim_with_faults(tmp_path, "grouped-16", [{"kind": "wiring_swap", "modules": ["gpu2", "gpu3"]}])
    (diff,) = diff_nodes(backend.declared, backend.node())
    assert diff.modules == ("gpu2", "gpu3") and "gpu10/gpu11" in diff.detail


def test_several_faults_at_once(tmp_path):
    faults = [{"kind": "missing_module", "module": "gpu7"},
              {"kind": "link_down", "between": ["gpu0", "gpu1"]},
              {"kind": "link_degraded", "between": ["gpu12", "gpu13"], "factor": 0.5},
              {"kind": "wiring_swap", "modules": ["gpu3", "gpu11"]}]
    backend = sim_with_faults(tmp_path, "grouped-16", faults)
    got = sorted((d.kind, d.module or tuple(sorted(d.between))) for d in diff_nodes(backend.declared, backend.node()))
    assert got == sorted([("missing_module", "gpu7"), ("link_down", ("gpu0", "gpu1")),
                          ("link_degraded", ("gpu12", "gpu13")), ("wiring_mismatch", ("gpu11", "gpu3"))])


def test_extra_module():
    small, big = declared("mesh-4"), declared("hgx-h200-8")
    kinds = {d.kind for d in diff_nodes(small, big)}
    assert "extra_module" in kinds
    extras = [d.module for d in diff_nodes(small, big) if d.kind == "extra_module"]
    assert extras == ["gpu4", "gpu5", "gpu6", "gpu7"]


def test_unexpected_fabric_link_is_a_wiring_mismatch():
    hgx = declared("hgx-h200-8")
    from dataclasses import replace

    from gpuvet.node.model import Link, LinkKind

    found = replace(hgx, links=hgx.links + (Link("gpu0", "gpu1", LinkKind.NVLINK, 2, 25.0),))
    diffs = diff_nodes(hgx, found)
    assert [(d.kind, d.between) for d in diffs] == [("wiring_mismatch", ("gpu0", "gpu1"))]
