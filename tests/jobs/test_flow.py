"""The max-min fair flow solver against hand-computed cases."""

import numpy as np
import pytest

from gpuvet.node.catalog import CATALOG
from gpuvet.node.flow import max_min_fair, solve_transfers
from gpuvet.node.model import Endpoint, EndpointKind, Host, Link, LinkKind, Module, Node
from tests.conftest import declared


def test_two_flows_on_one_link_share_it():
    rates = max_min_fair([[0], [0]], np.array([100.0])).rates
    assert rates.tolist() == [50.0, 50.0]


def test_textbook_max_min_example():
    # Links A (cap 10) and B (cap 4). Flow 0 uses A, flow 1 uses A and B, flow 2 uses B.
    # B saturates first at 2 each (flows 1, 2); flow 0 then takes the rest of A: 10 - 2 = 8.
    rates = max_min_fair([[0], [0, 1], [1]], np.array([10.0, 4.0])).rates
    assert rates.tolist() == pytest.approx([8.0, 2.0, 2.0])
    assert max_min_fair([[0], [0, 1], [1]], np.array([10.0, 4.0])).limiting_edge.tolist() == [0, 1, 1]


def test_empty_route_is_unbounded_and_no_flows_is_empty():
    assert max_min_fair([[]], np.array([1.0])).rates.tolist() == [np.inf]
    assert max_min_fair([], np.array([1.0])).rates.size == 0


def test_shared_uplink_halves_two_flows():
    # pcie-8: gpu0 and gpu1 sit behind pcisw0, whose one x16 gen4 uplink carries both to host.
    node = declared("pcie-8")
    alone = solve_transfers(node, [("gpu0", "cpu0")])[0].gbps
    both = solve_transfers(node, [("gpu0", "cpu0"), ("gpu1", "cpu0")])
    assert alone == pytest.approx(16 * 1.969)
    assert [r.gbps for r in both] == pytest.approx([alone / 2, alone / 2])
    assert both[0].bottleneck == ("pcisw0", "cpu0")


def _star(n_sources: int, port_gbps: float) -> Node:
    model = CATALOG["H100-SXM"]
    mods = tuple(Module(f"gpu{i}", model) for i in range(n_sources + 1))
    links = tuple(Link(m.id, "sw", LinkKind.NVLINK, 1, port_gbps) for m in mods)
    return Node("star", mods, (Endpoint("sw", EndpointKind.FABRIC_SWITCH),), links, Host())


def test_switch_port_limits_fan_in():
    node = _star(4, 100.0)
    rates = solve_transfers(node, [(f"gpu{i}", "gpu4") for i in range(4)])
    assert [r.gbps for r in rates] == pytest.approx([25.0] * 4)
    assert all(r.bottleneck == ("sw", "gpu4") for r in rates)


def test_both_directions_are_independent():
    node = _star(1, 100.0)
    rates = solve_transfers(node, [("gpu0", "gpu1"), ("gpu1", "gpu0")])
    assert [r.gbps for r in rates] == [100.0, 100.0]


def test_all_pairs_on_a_switched_node_get_a_fair_share_of_each_port():
    node = declared("hgx-h200-8")
    pairs = [(a, b) for a in node.module_ids for b in node.module_ids if a != b]
    rates = solve_transfers(node, pairs)
    assert [r.gbps for r in rates] == pytest.approx([450.0 / 7] * len(pairs))


def test_degraded_link_lowers_only_the_pairs_that_cross_it(tmp_path):
    from tests.conftest import sim_with_faults

    node = sim_with_faults(tmp_path, "mesh-4",
                           [{"kind": "link_degraded", "between": ["gpu1", "gpu2"], "factor": 0.5}]).node()
    pairs = [(a, b) for a in node.module_ids for b in node.module_ids if a != b]
    rates = {p: solve_transfers(node, [p])[0].gbps for p in pairs}
    low = {p for p, g in rates.items() if g < 150}
    assert low == {("gpu1", "gpu2"), ("gpu2", "gpu1")}
    assert rates[("gpu1", "gpu2")] == pytest.approx(75.0)


def test_unreachable_gets_zero():
    node = _star(2, 100.0)
    from dataclasses import replace

    cut = replace(node, links=tuple(replace(lk, up=False) if lk.a == "gpu0" else lk for lk in node.links))
    (rate,) = solve_transfers(cut, [("gpu0", "gpu2")])
    assert rate.gbps == 0.0 and rate.route == () and rate.bottleneck is None


def test_a_module_cut_off_its_fabric_is_relayed_over_pcie_by_a_ring_never_by_a_copy(tmp_path):
    """A collective's ring may pass through another module (NCCL's rings and PXN relay): with its
    NVLink down, gpu0 still reaches gpu9 at PCIe speed. A copy never passes through a module, and
    on nvl72 the trays share no host link: no route."""
    from gpuvet.node.routing import Router
    from tests.conftest import sim_with_faults

    node = sim_with_faults(tmp_path, "nvl72", [{"kind": "link_down", "between": ["gpu0", "nvswitch0"]}]).node()
    (copy,) = solve_transfers(node, [("gpu0", "gpu9")])
    assert copy.gbps == 0.0
    (rate,) = solve_transfers(node, [("gpu0", "gpu9")], Router(node, forwarding=True))
    assert rate.gbps == pytest.approx(16 * 3.938) and rate.bottleneck == ("gpu0", "cpu0")
