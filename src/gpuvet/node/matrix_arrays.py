"""The link matrix of a big node as arrays: every pair's label, bottleneck and host path in a
few numpy passes (a 576-module domain has 331,200 ordered pairs)."""

from __future__ import annotations

import itertools

import numpy as np

from gpuvet.node.matrix import _ABBREV, Cell, HostPath, LinkMatrix, _Codes, _socket_of
from gpuvet.node.model import EndpointKind, Node
from gpuvet.node.relations import relations_from
from gpuvet.node.routing import Router


def _fabric_labels(node: Node, ids: list[str], codes: _Codes) -> np.ndarray:
    """Per ordered module pair (a, b), the code of its fabric label (-1: none): a direct up
    fabric link (the first listed) gives NV#/XG#/SD#; else the first fabric switch on b's list
    that a also reaches gives the same NV#/XG#/SD# label (nvidia-smi topo -m prints NV18 through
    NVSwitches too), the narrower of the two links."""
    pos = {m: i for i, m in enumerate(ids)}
    labels = np.full((len(ids), len(ids)), -1, dtype=np.int64)
    members: dict[str, dict[int, int]] = {}  # switch -> module position -> width of its link (last wins)
    prefix: dict[str, str] = {}  # switch -> label prefix of its links' kind
    ranked: dict[tuple[int, str], list[tuple[int, int]]] = {}  # (rank on b's list, switch) -> [(b, width)]
    for m in ids:
        mine = [(lk.other(m), lk) for lk in node.links_of(m) if lk.kind.is_fabric and lk.up]
        on = [(o, lk) for o, lk in mine if node.kind_of(o) is EndpointKind.FABRIC_SWITCH]
        for o, lk in on:
            members.setdefault(o, {})[pos[m]] = lk.width
            prefix.setdefault(o, _ABBREV[lk.kind])
        for rank, (o, lk) in enumerate(on):
            ranked.setdefault((rank, o), []).append((pos[m], lk.width))
    for (_, switch), bs in sorted(ranked.items(), key=lambda kv: -kv[0][0]):  # the first rank is written last
        a_pos = np.fromiter(members[switch], dtype=np.int64)
        a_width = np.fromiter(members[switch].values(), dtype=np.int64)
        b_pos, b_width = (np.array(v, dtype=np.int64) for v in zip(*bs, strict=True))
        width = np.minimum.outer(a_width, b_width)
        uniq, inverse = np.unique(width, return_inverse=True)
        sw = np.array([codes(f"{prefix[switch]}{w}") for w in uniq.tolist()], dtype=np.int64)
        labels[np.ix_(a_pos, b_pos)] = sw[inverse.reshape(width.shape)]
    for link in reversed(node.links):  # the first listed link is written last
        if link.kind.is_fabric and link.up and link.a in pos and link.b in pos:
            code = codes(f"{_ABBREV[link.kind]}{link.width}")
            labels[pos[link.a], pos[link.b]] = labels[pos[link.b], pos[link.a]] = code
    return labels


def _relation_labels(node: Node, ids: list[str], codes: _Codes) -> np.ndarray:
    """Per module pair, the code of its PCIe relation (-1: none), as ``pcie_relations`` pairs them."""
    pos = {m: i for i, m in enumerate(ids)}
    out = np.full((len(ids), len(ids)), -1, dtype=np.int64)
    if not node.pcie_known:
        return out
    for i, a in enumerate(ids):
        for b, rel in relations_from(node, a).items():
            j = pos.get(b)
            if j is not None and j > i:
                out[i, j] = out[j, i] = codes(str(rel))
    return out


def link_matrix_arrays(node: Node) -> LinkMatrix:
    """The link matrix as arrays: all sources' routes at once, labels as small integers."""
    router = Router(node)
    ids = node.module_ids
    n = len(ids)
    codes = _Codes()
    dash = codes("-")
    fabric, rel = _fabric_labels(node, ids, codes), _relation_labels(node, ids, codes)
    at = np.array([router.index[m] for m in ids], dtype=np.int64)
    a_pos, b_pos = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    off = a_pos != b_pos
    a_pos, b_pos = a_pos[off], b_pos[off]
    gbps, assumed, reachable = _route_figures(router, at[a_pos], at[b_pos])
    label = np.where(fabric >= 0, fabric, np.where(rel >= 0, rel, dash))[a_pos, b_pos]
    label = np.where(reachable, label, dash)
    speeds, speed = np.unique(np.where(np.isnan(gbps), -1.0, gbps), return_inverse=True)  # -1: no route
    # one integer per (label, speed, assumed), in that lexicographic order: a 1-D unique, not a row-wise one
    key = (label * len(speeds) + speed.reshape(-1)) * 2 + assumed.astype(np.int64)
    uniq, inverse = np.unique(key, return_inverse=True)
    lab, rest = np.divmod(uniq, 2 * len(speeds))
    made = [Cell(codes.names[la], None if speeds[sp] < 0 else float(speeds[sp]), bool(guess))
            for la, sp, guess in zip(lab.tolist(), (rest // 2).tolist(), (rest % 2).tolist(), strict=True)]
    pairs = itertools.permutations(ids, 2)  # (a, b) for a != b in a_pos/b_pos order, made in C
    cells = dict(zip(pairs, map(made.__getitem__, inverse.reshape(-1).tolist()), strict=True))
    return LinkMatrix(tuple(ids), cells, _host_paths(node, router))


def _route_figures(router: Router, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair of endpoint indices: the bottleneck of its route (NaN without one), whether a
    link on it has an assumed speed, whether there is a route."""
    table = router.route_table_idx(src, dst)
    has = np.diff(table.indptr) > 0
    if table.edges.size == 0:
        return np.full(len(src), np.nan), np.zeros(len(src), dtype=bool), table.reachable
    guessed = np.array([e.link.lane_gbps is None for e in router.edges], dtype=bool)
    safe = np.minimum(table.indptr[:-1], table.edges.size - 1)
    low = np.minimum.reduceat(router.capacity[table.edges], safe)
    any_guess = np.maximum.reduceat(guessed[table.edges], safe)
    return np.where(has, low, np.nan), any_guess & has, table.reachable


def _host_paths(node: Node, router: Router) -> dict[str, HostPath]:
    ids = node.module_ids
    sockets = {m: _socket_of(node, m) for m in ids}
    pairs = [(m, s) for m, s in sockets.items() if s]
    src = np.array([router.index[m] for m, _ in pairs], dtype=np.int64)
    dst = np.array([router.index[s] for _, s in pairs], dtype=np.int64)
    gbps, assumed, _ = _route_figures(router, src, dst)
    found = {m: (None if np.isnan(g) else float(g), bool(a))
             for (m, _), g, a in zip(pairs, gbps.tolist(), assumed.tolist(), strict=True)}
    return {m: HostPath(sockets[m], *found.get(m, (None, False))) for m in ids}
