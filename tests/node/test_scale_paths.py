"""The fast paths for large nodes and fleets give what the slow ones give: the same routes as
scipy's Dijkstra, the same rates as the plain-Python solver, the same link matrix as the
pair-by-pair labelling, the same outliers as the one-series-at-a-time peer analysis."""

import copy as copy_module
import dataclasses
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from gpuvet.backends.sim.backend import SimBackend
from gpuvet.bench.copy import SAMPLE_ABOVE, p2p_pairs
from gpuvet.fleet.peers import analyse
from gpuvet.fleet.peers_reference import analyse_reference
from gpuvet.node.build import build_node
from gpuvet.node.flow import _solve_few, max_min_fair, max_min_fair_csr, solve_flows, solve_transfers
from gpuvet.node.flow_reference import max_min_fair_reference
from gpuvet.node.matrix import _ABBREV, _socket_of, cell_counts, cell_items, link_matrix
from gpuvet.node.matrix_arrays import link_matrix_arrays
from gpuvet.node.matrix_small import link_matrix_small
from gpuvet.node.model import EndpointKind
from gpuvet.node.relations import _path, _tree_adjacency, classify, pcie_relations
from gpuvet.node.routing import Router
from gpuvet.node.spec import load_spec
from tests.support.fleet_envelopes import envelope, module_checks

FAULTY = {
    "nvl72": [{"kind": "link_down", "between": ["gpu0", "nvswitch0"]},
              {"kind": "link_degraded", "between": ["gpu5", "nvswitch0"], "factor": 0.5}],
    "grouped-16": [{"kind": "link_down", "between": ["gpu0", "gpu8"]}, {"kind": "missing_module", "module": "gpu3"}],
    "pcie-8": [{"kind": "link_degraded", "between": ["pcisw0", "cpu0"], "factor": 0.5}],
    "hgx-h200-8": [{"kind": "wiring_swap", "modules": ["gpu1", "gpu6"]},
                   {"kind": "link_down", "between": ["gpu2", "nvswitch0"]}],
    "mesh-4": [{"kind": "link_degraded", "between": ["gpu1", "gpu2"], "factor": 0.5}],
}
SMALL = ["mesh-4", "pcie-8", "hgx-h200-8", "grouped-16", "nvl72"]


def _nodes(tmp_path, preset):
    from tests.conftest import sim_with_faults

    return [SimBackend.from_ref(preset).declared, sim_with_faults(tmp_path, preset, FAULTY[preset]).node()]


def _scipy_routes(router, endpoints_only):
    """scipy's Dijkstra on the same graph; with ``endpoints_only`` each module is split in a
    sending and a receiving vertex with no edge between them, so no route passes through one."""
    from scipy.sparse import csr_matrix  # the reference alone needs scipy: not imported at every worker's collection
    from scipy.sparse.csgraph import dijkstra

    g = router._g
    n = len(g.ids)
    modules = [i for i, e in enumerate(g.ids) if e in set(router.node.module_ids)] if endpoints_only else []
    arrive = {m: n + k for k, m in enumerate(modules)}
    cols = np.array([arrive.get(int(d), int(d)) for d in g.dst], dtype=np.int64)
    size = n + len(modules)
    graph = csr_matrix((1.0 / g.capacity, (g.src, cols)), shape=(size, size))
    _, pred = dijkstra(graph, directed=True, indices=list(range(n)), return_predecessors=True)
    edge = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(g.src, cols, strict=True))}
    out = {}
    for s in range(n):
        for d in range(n):
            if s == d:
                out[(g.ids[s], g.ids[d])] = []
                continue
            path, cur = [], arrive.get(d, d)
            while cur != s and pred[s, cur] >= 0:
                path.append(edge[(int(pred[s, cur]), cur)])
                cur = int(pred[s, cur])
            out[(g.ids[s], g.ids[d])] = path[::-1] if cur == s else None
    return out


@pytest.mark.parametrize("preset", SMALL)
def test_routes_are_scipy_dijkstra_routes(tmp_path, preset):
    """Copies (modules are endpoints) and collectives' rings (through modules) alike."""
    for node in _nodes(tmp_path, preset):
        for forwarding in (False, True):
            router = Router(node, forwarding=forwarding)
            want = _scipy_routes(router, endpoints_only=not forwarding)
            pairs = list(want)
            got = dict(zip(pairs, router.routes(pairs), strict=True))
            assert got == want
            # asked a few at a time on a fresh node (each walked in Python, not as arrays): the same routes
            fresh = Router(copy_module.copy(node), forwarding=forwarding)  # a copy starts with no memo
            few = {p: fresh.routes([p])[0] for p in pairs[:: max(1, len(pairs) // 200)]}
            assert few == {p: want[p] for p in few}


def _random_paths(rng, n_flows, n_edges):
    return [sorted(set(rng.integers(0, n_edges, rng.integers(0, 4)).tolist())) for _ in range(n_flows)]


@pytest.mark.parametrize("seed", range(6))
def test_array_solver_matches_the_plain_python_reference_to_the_bit(seed):
    rng = np.random.default_rng(seed)
    capacity = rng.choice([25.0, 50.0, 100.0, 63.0, 7.5], size=12)
    paths = _random_paths(rng, 200, len(capacity))
    rates, limits = max_min_fair_reference(paths, capacity.tolist())
    share = max_min_fair(paths, capacity)
    assert share.rates.tolist() == rates
    assert share.limiting_edge.tolist() == limits


def test_csr_solver_on_no_flows_and_empty_paths():
    empty = max_min_fair_csr(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.array([1.0]))
    assert empty.rates.size == 0
    assert max_min_fair_reference([[]], [1.0]) == ([float("inf")], [-1])


@pytest.mark.parametrize("preset", SMALL)
def test_few_transfers_and_many_transfers_solve_alike(tmp_path, preset):
    for node in _nodes(tmp_path, preset):
        router = Router(node)
        ids = node.module_ids + node.sockets()
        pairs = [(a, b) for a in ids for b in ids][:: max(1, len(ids) // 3)]
        many = solve_transfers(node, pairs, router)  # more than 16: the array path
        for start in range(0, len(pairs), 7):
            chunk = pairs[start:start + 7]
            few = _solve_few(router, chunk)
            assert few == solve_transfers(node, chunk, router)
            full = solve_flows(router, np.array([router.index[a] for a, _ in chunk]),
                               np.array([router.index[b] for _, b in chunk]))
            assert [r.gbps for r in few] == full.gbps.tolist()
        assert len(many) == len(pairs)


def _slow_matrix(node):
    """The link matrix as first written: every pair scans every link."""
    router = Router(node)
    ids = node.module_ids
    adj = _tree_adjacency(node)
    rel = {}
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            path = _path(adj, a, b)
            rel[frozenset((a, b))] = classify(node, path) if path else None
    cells = {}
    for a in ids:
        for b in ids:
            if a == b:
                continue
            route = router.route_edges(a, b)
            r = rel.get(frozenset((a, b))) if node.pcie_known else None
            label = None
            for link in node.links:
                if link.kind.is_fabric and link.ends == frozenset((a, b)) and link.up:
                    label = f"{_ABBREV[link.kind]}{link.width}"
                    break
            if label is None:
                sw_a = {lk.other(a): lk for lk in node.links_of(a) if lk.kind.is_fabric and lk.up}
                for lk in node.links_of(b):
                    o = lk.other(b)
                    if lk.kind.is_fabric and lk.up and o in sw_a and node.kind_of(o) is EndpointKind.FABRIC_SWITCH:
                        label = f"{_switch_prefix(node, o)}{min(lk.width, sw_a[o].width)}"
                        break
            label = label or (str(r) if r else "-")
            gbps = router.bottleneck_gbps(route) if route else None
            guess = bool(route) and any(router.edges[e].link.lane_gbps is None for e in route)
            cells[(a, b)] = (label if route is not None else "-", gbps, guess)
    host = {}
    for m in ids:
        socket = _socket_of(node, m)
        route = router.route_edges(m, socket) if socket else None
        host[m] = (socket, router.bottleneck_gbps(route) if route else None,
                   bool(route) and any(router.edges[e].link.lane_gbps is None for e in route))
    return cells, host, rel


WIRING = """
name: odd-wiring
modules: [{id: g0, model: H100-SXM}, {id: g1, model: H100-SXM}, {id: g2, model: H100-SXM}, {id: g3, model: H100-SXM}]
endpoints: [{id: swA, kind: fabric_switch}, {id: swB, kind: fabric_switch}, {id: cpu0, kind: socket}]
links:
  - {between: [g0, swA], kind: nvlink, width: 4, lane_gbps: 25}
  - {between: [g0, swB], kind: nvlink, width: 8, lane_gbps: 25}
  - {between: [g1, swB], kind: nvlink, width: 6, lane_gbps: 25}
  - {between: [g1, swA], kind: nvlink, width: 2, lane_gbps: 25}
  - {between: [g2, swA], kind: xgmi, width: 3}
  - {between: [g2, g3], kind: nvlink, width: 1, lane_gbps: 25}
  - {between: [g0, g3], kind: nvlink, width: 5, up: false}
  - {between: [g0, cpu0], kind: pcie, width: 16, gen: 5}
  - {between: [g3, cpu0], kind: pcie, width: 16}
"""


def _switch_prefix(node, switch):
    """The label of pairs through a switch, as nvidia-smi prints it (NV18): its first module link's kind."""
    for m in node.module_ids:
        for lk in node.links_of(m):
            if lk.kind.is_fabric and lk.up and lk.other(m) == switch:
                return _ABBREV[lk.kind]
    raise AssertionError(switch)


def _check_matrix(node):
    """Both paths (plain Python for small nodes, arrays for big ones) against the oracle."""
    cells, host, rel = _slow_matrix(node)
    for mat in (link_matrix(node), link_matrix_small(node), link_matrix_arrays(node)):
        assert {k: (c.label, c.gbps, c.assumed) for k, c in mat.cells.items()} == cells
        assert list(mat.cells) == list(cells)  # the same order of pairs (topo --json's rows)
        assert {k: (h.socket, h.gbps, h.assumed) for k, h in mat.host.items()} == host
    assert pcie_relations(node) == rel


@pytest.mark.parametrize("preset", SMALL[:-1])
def test_link_matrix_matches_pair_by_pair_labelling(tmp_path, preset):
    for node in _nodes(tmp_path, preset):
        _check_matrix(node)


def test_link_matrix_of_a_switched_domain_with_faults_matches(tmp_path):
    """nvl72 cut to 24 modules (the pair-by-pair oracle is cubic)."""
    path = tmp_path / "sw24.yaml"
    path.write_text("base: nvl72\nmodules: {count: 24}\nhost: {sockets: 12}\nfaults:\n"
                    "  - {kind: link_down, between: [gpu0, nvswitch0]}\n"
                    "  - {kind: link_degraded, between: [gpu5, nvswitch0], factor: 0.5}\n")
    backend = SimBackend.from_ref(str(path))
    _check_matrix(backend.declared)
    _check_matrix(backend.node())


def test_link_matrix_with_two_switches_assumed_speeds_and_a_down_link(tmp_path):
    path = tmp_path / "wiring.yaml"
    path.write_text(WIRING)
    node = SimBackend.from_ref(str(path)).declared
    _check_matrix(node)
    labels = {k: c.label for k, c in link_matrix(node).cells.items()}
    assert labels[("g0", "g1")] == "NV6" and labels[("g1", "g0")] == "NV2"  # the first switch on b's list
    assert labels[("g2", "g3")] == "NV1" and link_matrix(node).cells[("g2", "g0")].assumed


def test_derived_data_is_computed_once_per_node_and_not_pickled():
    node = SimBackend.from_ref("hgx-h200-8").declared
    assert link_matrix(node) is link_matrix(node)
    assert Router(node)._g is Router(node)._g
    copy = copy_module.copy(node)  # copy and pickle take the state without the memo
    assert copy == node and "memo" not in copy.__dict__
    assert link_matrix(copy) is not link_matrix(node)


@pytest.mark.parametrize("size", [144, 288, 576])
def test_bigger_switched_presets_load_and_build(size):
    spec, where = load_spec(f"nvl{size}")
    node = build_node(spec, where)
    assert len(node.modules) == size and len(node.sockets()) == size // 2
    assert {m.model.name for m in node.modules} == {"B200"}
    assert "Hypothetical" in (spec.description or "")
    if size == 144:
        cells = link_matrix(node).cells
        assert len(cells) == size * (size - 1) and {(c.label, c.gbps) for c in cells.values()} == {("NV18", 900.0)}


def test_p2p_pairs_are_all_pairs_on_small_nodes_and_cover_every_module_on_big_ones():
    small = [f"gpu{i}" for i in range(SAMPLE_ABOVE)]
    one, two = p2p_pairs(small, "sampled")
    assert len(one) == SAMPLE_ABOVE * (SAMPLE_ABOVE - 1) and len(two) == SAMPLE_ABOVE * (SAMPLE_ABOVE - 1) // 2
    big = [f"gpu{i}" for i in range(72)]
    one, two = p2p_pairs(big, "sampled")
    assert len(one) == 2 * 72 and len(two) == 72 and len(set(one)) == len(one)
    assert {a for a, _ in one} == set(big) == {b for _, b in one}
    assert p2p_pairs(big, "all")[0] == [(a, b) for a in big for b in big if a != b]


def _envelopes(nodes, rng, ragged):
    values = rng.normal(100.0, 1.0, (nodes, 4, 6))
    values[2, 1, 3] *= 0.85
    values[5, :, 4] *= 0.9
    out = []
    for n in range(nodes):
        checks = module_checks(values[n])
        checks.append({"layer": "module_link", "name": "p2p_one_way", "value": 50.0 - (n == 1) * 9,
                       "between": ["gpu0", "gpu1"], "unit": "GB/s"})
        checks.append({"layer": "compute", "name": "p2p_latency", "value": 1.0 + (n == 3) * 0.5, "unit": "us"})
        if ragged:
            checks += [{"layer": "compute", "name": "m0", "verdict": "skip", "value": 1.0},
                       {"layer": "x", "name": "flag", "value": True}, {"layer": "x", "name": "int", "value": 7 + n % 2}]
            if n % 3 == 0:
                checks.append({"layer": "x", "name": "sparse", "value": 10.0 + (n == 9) * 5})
        kind = "other" if ragged and n == 0 else "H200"
        out.append(envelope(n, checks, kind))
    return out


@pytest.mark.parametrize("ragged", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_peer_analysis_names_the_same_outliers_as_the_reference(ragged, seed):
    envs = _envelopes(24, np.random.default_rng(seed), ragged)
    fast, slow = analyse(envs), analyse_reference(envs)
    assert fast.outliers == slow.outliers and fast.outliers
    assert (fast.metrics, fast.values, fast.node_types) == (slow.metrics, slow.values, slow.node_types)
    named = {(o.node, o.module, o.metric) for o in fast.outliers}
    assert ("n02", "gpu1", "m3") in named and ("n01", None, "p2p_one_way") in named
    assert ("n03", None, "p2p_latency") in named  # lower is better: a higher latency is worse


def _variant(env, checks):
    return {**env, "checks": checks}


def test_peer_analysis_fast_fold_falls_back_whenever_a_node_differs():
    # most nodes share the first node's checks in order (the fold reuses its ids); the others must
    # be read check by check: another order, a skipped check, a bool, a module added, a name reused
    envs = _envelopes(24, np.random.default_rng(7), ragged=False)
    first = envs[0][1]["checks"]
    envs[4] = (envs[4][0], _variant(envs[4][1], list(reversed(envs[4][1]["checks"]))))
    envs[6] = (envs[6][0], _variant(envs[6][1], [dict(c, verdict="skip") if c["name"] == "m3" else c
                                                  for c in envs[6][1]["checks"]]))
    envs[8] = (envs[8][0], _variant(envs[8][1], [dict(c, value=True) if c["name"] == "m1" else c
                                                  for c in envs[8][1]["checks"]]))
    envs[9] = (envs[9][0], _variant(envs[9][1], [dict(c, module="gpu0") if c["name"] == "p2p_latency" else c
                                                  for c in envs[9][1]["checks"]]))
    envs[10] = (envs[10][0], _variant(envs[10][1], [dict(c, unit="ms") if c["name"] == "m0" else c
                                                    for c in envs[10][1]["checks"]]))
    fast, slow = analyse(envs), analyse_reference(envs)
    assert fast.outliers == slow.outliers and fast.outliers
    assert (fast.metrics, fast.values, fast.node_types) == (slow.metrics, slow.values, slow.node_types)
    assert first == envs[0][1]["checks"]  # the envelopes are not changed


def test_peer_analysis_of_identical_layouts_takes_the_array_path_and_agrees():
    from gpuvet.fleet.peers import PeerTable

    envs = _envelopes(30, np.random.default_rng(3), ragged=False)
    table = PeerTable()
    for where, env in envs:
        table.add(where, env)
    assert all(cols.regular for cols in table.types.values())  # the sort-free order is the one in use
    fast, slow = table.analyse(), analyse_reference(envs)
    assert fast.outliers == slow.outliers and len(fast.outliers) >= 3


def test_peer_analysis_on_the_grid_of_a_regular_fleet_agrees_with_the_reference():
    """Every series with as many figures per node (the usual fleet): medians, MADs and hits come
    from one (series, figures) grid; a flat series (MAD 0) and one exactly on the cut-off too."""
    from gpuvet.fleet.peers import PeerTable

    rng = np.random.default_rng(11)
    values = rng.normal(100.0, 1.0, (40, 4, 5))
    values[3, 2, 1] *= 0.8
    values[:, :, 4] = 50.0  # flat: the MAD is zero, the scale a thousandth of the median
    values[9, 0, 4] = 40.0
    envs = [envelope(n, module_checks(values[n])) for n in range(40)]
    table = PeerTable()
    for where, env in envs:
        table.add(where, env)
    (cols,) = table.types.values()
    assert cols.regular and cols._grids(np.frombuffer(cols.value), np.bincount(cols.series_of)) is not None
    fast, slow = table.analyse(), analyse_reference(envs)
    assert fast.outliers == slow.outliers
    assert {(o.node, o.module, o.metric) for o in fast.outliers} == {("n03", "gpu2", "m1"), ("n09", "gpu0", "m4")}
    for limit in (1.0, 2.0):  # many more hits, each as the reference finds it
        many = table.analyse(z_limit=limit, min_deviation=0.0).outliers
        assert len(many) > 20 and many == analyse_reference(envs, z_limit=limit, min_deviation=0.0).outliers


def _same_cells(node):
    small, arrays = link_matrix_small(node), link_matrix_arrays(node)
    assert list(small.cells.items()) == list(arrays.cells.items()) and small.host == arrays.host
    assert list(cell_items(arrays.cells)) == list(small.cells.items())  # the C-speed walk, same order
    assert cell_counts(arrays.cells) == cell_counts(small.cells) == Counter(small.cells.values())


def test_array_cells_are_a_mapping_that_refuses_what_a_dict_would():
    """The big matrix keeps one small integer per pair: lookups, length and counts behave as
    the dict the small path builds, and a module with itself or an unknown one is a KeyError."""
    node = build_node(load_spec("nvl72")[0])
    cells = link_matrix_arrays(node).cells
    small = link_matrix_small(node).cells
    assert len(cells) == len(small) == 72 * 71
    assert cells == small and ("gpu3", "gpu70") in cells and cells[("gpu70", "gpu3")] == small[("gpu70", "gpu3")]
    for bad in (("gpu3", "gpu3"), ("gpu3", "gpu999")):
        with pytest.raises(KeyError):
            cells[bad]
        assert bad not in cells


def test_plain_python_matrix_is_the_array_one_on_a_switched_domain_and_on_captures(tmp_path):
    """nvl72 (too big for the pair-by-pair oracle) with and without faults; topo -m captures,
    whose links have no known speed (assumed ones)."""
    from gpuvet.backends.select import open_backend

    for node in _nodes(tmp_path, "nvl72"):
        _same_cells(node)
    captures = sorted((Path(__file__).parent.parent / "data" / "captures").glob("topo_*.txt"))
    assert captures
    for path in captures:
        backend = open_backend(sim=None, from_files=[str(path)])
        node = backend.node()
        assert node.modules
        _same_cells(node)


def test_folded_route_bottlenecks_are_the_minimum_over_each_walked_route(tmp_path):
    """``bottleneck_rows`` never lists a route: from every endpoint to every other it must give
    the narrowest link, the 'assumed' flag and reachability of the route ``routes`` walks, on a
    switched domain with faults (down and degraded links, so some figures change) and on a
    topo -m capture (links of no known speed, modules that cannot reach some sockets)."""
    from gpuvet.backends.select import open_backend

    capture = sorted((Path(__file__).parent.parent / "data" / "captures").glob("topo_*.txt"))[0]
    nodes = [*_nodes(tmp_path, "nvl72"), open_backend(sim=None, from_files=[str(capture)]).node()]
    hgx = SimBackend.from_ref("hgx-h200-8").declared  # one PCIe link of unknown speed, mid-route
    unknown = next(lk for lk in hgx.links if lk.kind.name == "PCIE" and "gpu" not in lk.a + lk.b)
    nodes.append(dataclasses.replace(hgx, links=tuple(dataclasses.replace(lk, lane_gbps=None) if lk is unknown
                                                      else lk for lk in hgx.links)))
    for node in nodes:
        router = Router(node)
        guessed = np.array([e.link.lane_gbps is None for e in router.edges], dtype=bool)
        sources = np.arange(len(router.ids))
        low, guess, ok = router.bottleneck_rows(sources, guessed)
        pairs = [(a, b) for a in router.ids for b in router.ids if a != b]
        narrowest = []
        for (a, b), route in zip(pairs, router.routes(pairs), strict=True):
            i, j = router.index[a], router.index[b]
            assert ok[i, j] == (route is not None), (a, b)
            if route is None:
                assert np.isnan(low[i, j]) and not guess[i, j]
                continue
            narrowest.append(low[i, j])
            assert low[i, j] == min(router.capacity[e] for e in route), (a, b)
            assert guess[i, j] == any(guessed[e] for e in route), (a, b)
        assert len(set(narrowest)) > 1  # the faults and the capture give more than one figure
    assert guess.any() and not guess.all()  # the last node: some routes cross the unknown link, some not


def _one_metric(values, name="gemm_bf16"):
    return [envelope(i, [{"layer": "compute", "name": name, "value": v}]) for i, v in enumerate(values)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the reference's numpy on inf and NaN
@pytest.mark.parametrize("values, limits", [
    ([2000.0] * 4 + [float("-inf")], {"z_limit": 1e308}),  # the cut-off overflows to inf
    ([1.79e308, 1.2e308, 1e308, 0.7e308, -1.79e308], {}),  # |x - median| overflows
    ([k * 5e-324 for k in (1000, 1005, 995, 1010, 974)], {"z_limit": 3.5, "min_deviation": 0.0}),  # subnormal MAD
])
def test_the_grid_cut_off_keeps_hits_at_the_edges_of_floating_point(values, limits):
    """Found by review: a candidate bound computed as inf, or rounded on a subnormal scale, lost
    hits the exact z-score keeps."""
    envs = _one_metric(values)
    fast, slow = analyse(envs, **limits), analyse_reference(envs, **limits)
    assert fast.outliers == slow.outliers and fast.outliers


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_ragged_series_medians_are_numpys_with_nan_and_overflow():
    """The per-group median (series of different sizes): NaN when a figure is NaN, and the mean of
    the middle two overflowing as np.median's does."""
    nan_case = _one_metric([float("nan"), 100.0, 100.0, 101.0, 70.0], name="m")
    nan_case[0][1]["checks"].append({"layer": "compute", "name": "other", "value": 1.0})  # series of other sizes
    huge = _one_metric([1.7e308, 1.7e308, 1.6e308, 1.7e308, 1.0, 1.7e308], name="m")
    huge[0][1]["checks"].append({"layer": "compute", "name": "other", "value": 1.0})
    for envs in (nan_case, huge):
        assert analyse(envs).outliers == analyse_reference(envs).outliers
    assert not analyse(nan_case).outliers


def test_routes_asked_module_by_module_are_the_routes_asked_at_once():
    """Past a few asks on a node too big for one batch, each ask solves a batch of sources ahead
    (validate and doctor ask module by module): the routes are those of one ask for them all."""
    node = build_node(load_spec("nvl288")[0])
    by_one, at_once = Router(copy_module.copy(node)), Router(copy_module.copy(node))
    assert len(by_one.ids) > max(1, 250_000 // len(by_one.edges))  # more endpoints than one batch
    ids = node.module_ids
    pairs = [(ids[i], ids[(7 * i + 3) % len(ids)]) for i in range(0, len(ids), 5)]
    one_by_one = [by_one.routes([p])[0] for p in pairs]
    assert len(by_one._g.pred) > len(pairs)  # sources solved ahead of their ask
    assert one_by_one == at_once.routes(pairs) and all(one_by_one)
    table = by_one.route_table([(ids[i], ids[-1 - i]) for i in range(40)])  # arrays over prefetched trees
    again = at_once.route_table([(ids[i], ids[-1 - i]) for i in range(40)])
    assert table.edges.tolist() == again.edges.tolist() and table.indptr.tolist() == again.indptr.tolist()


@pytest.mark.parametrize("preset", SMALL)
def test_hops_from_are_the_lengths_of_the_walked_routes(tmp_path, preset):
    """Every endpoint's route length from each module at once, and the nearest socket chosen by
    it, as walking every route gives them (links down: no route, -1)."""
    from gpuvet.node.performance import PerformanceModel

    for node in _nodes(tmp_path, preset):
        router = Router(copy_module.copy(node))
        for module in node.module_ids[:6]:
            routes = router.routes([(module, e) for e in router.ids])
            want = [-1 if r is None else len(r) for r in routes]
            assert router.hops_from(module).tolist() == want
        model, sockets = PerformanceModel(node), node.sockets()
        for module in node.module_ids:
            walked = [(len(r), s) for s, r in zip(sockets, router.routes([(module, s) for s in sockets]), strict=True)
                      if r]
            assert model.socket_of(module) == min(walked)[1]


@pytest.mark.parametrize("sizes", [[1, 2, 2, 1], [2, 40, 1, 3], [9, 1, 8, 300, 2], [1], [40]])
def test_segment_minimum_is_numpys_reduceat_for_narrow_and_wide_groups(sizes):
    """Groups of a link or two (modules) beside a switch's hundreds: the wide ones no longer set
    how many passes the narrow ones take, and every group's minimum is still reduceat's."""
    from gpuvet.node.routing import _segment_min

    rows = np.random.default_rng(len(sizes)).normal(size=(sum(sizes), 5))
    rows[rows > 1.5] = np.inf
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    assert np.array_equal(_segment_min(rows, starts), np.minimum.reduceat(rows, starts, axis=0))


@pytest.mark.parametrize("seed", range(8))
def test_predecessors_with_endpoint_only_edges_are_shortest_and_batch_independent(seed):
    """Random graphs with ties (weights from a short list), parallel edges and edges a route may
    take only from its own source: every source's tree gives routes as short as scipy's
    Dijkstra on the graph with each such endpoint split in a sending and a receiving vertex,
    takes endpoint-only edges only as its first hop, and is the same whichever sources share a
    batch (those edges are handled per source, outside the batch's arrays)."""
    from gpuvet.node.routing import shortest_predecessors

    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 24))
    m = int(rng.integers(n, 4 * n))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    weight = rng.choice([0.5, 1.0, 1.0, 2.0], len(src))
    ends = rng.random(n) < 0.5  # endpoints that do not forward
    only = ends[src]
    everyone = np.arange(n)
    whole = shortest_predecessors(n, src, dst, weight, everyone, only)
    order = rng.permutation(n)
    for part in np.array_split(order, 3):
        assert np.array_equal(shortest_predecessors(n, src, dst, weight, part, only), whole[part])
    # scipy's graph: an end receives at n + e, a vertex nothing leaves; it sends from e, which
    # nothing enters (so only a route starting there leaves it); parallel edges: the lightest
    lightest: dict[tuple[int, int], float] = {}
    for s, d, w in zip(src.tolist(), np.where(ends[dst], n + dst, dst).tolist(), weight.tolist(), strict=True):
        lightest[(s, d)] = min(w, lightest.get((s, d), np.inf))
    rows, cols = zip(*lightest, strict=True)
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra

    dist = dijkstra(csr_matrix((list(lightest.values()), (rows, cols)), shape=(2 * n, 2 * n)), indices=everyone)
    for s in range(n):
        for d in range(n):
            want = 0.0 if s == d else dist[s, n + d if ends[d] else d]
            hops, cur, total = 0, d, 0.0
            while cur != s and whole[s, cur] >= 0 and hops <= n:
                e = whole[s, cur]
                assert not only[e] or src[e] == s  # only the source's own endpoint-only edges
                total += weight[e]
                cur, hops = src[e], hops + 1
            if np.isinf(want):
                assert whole[s, d] == -1
            else:
                assert cur == s and total == pytest.approx(want)


def test_pair_cells_from_a_wide_key_space_sort_instead_of_a_table_and_agree():
    """Keys span labels x speeds x 2: a spec with thousands of widths and speeds spreads them
    over ~1e8, where a table of every possible key would take hundreds of MB; those are sorted
    instead, with the same cells, counts and per-pair indexes as the table gives."""
    from gpuvet.node.matrix import _Codes
    from gpuvet.node.matrix_arrays import _pair_cells

    codes = _Codes()
    for name in ("-", "NV18", "SYS"):
        codes(name)
    rng = np.random.default_rng(3)
    ids = [f"gpu{i}" for i in range(12)]
    for distinct in (5, 20_000):  # a table, then a sort
        speeds = np.arange(-1.0, distinct - 1.0)  # -1: no route
        lab = rng.integers(0, 3, (12, 12))
        key = ((lab * len(speeds) + rng.integers(0, len(speeds), (12, 12))) * 2
               + rng.integers(0, 2, (12, 12))).astype(np.int32)
        assert (key.max() > 4 * 12 * 11 + 4096) == (distinct > 5)  # which way ``_pair_cells`` goes
        cells = _pair_cells(ids, key, codes, speeds)
        want = {(a, b): (codes.names[int(k) // (2 * len(speeds))], float(speeds[int(k) % (2 * len(speeds)) // 2]),
                         bool(k % 2))
                for (i, a), (j, b), k in ((x, y, key[x[0], y[0]]) for x in enumerate(ids) for y in enumerate(ids))
                if i != j}
        got = {pair: (c.label, c.gbps if c.gbps is not None else -1.0, c.assumed) for pair, c in cells.pairs()}
        assert got == want
        assert sum(cells.counts().values()) == len(want)
