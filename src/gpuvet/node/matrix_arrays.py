"""The link matrix of a big node as arrays: every pair's label, bottleneck and host path in a
few numpy passes (a 576-module domain has 331,200 ordered pairs)."""

from __future__ import annotations

import numpy as np

from gpuvet.node.matrix import _ABBREV, Cell, HostPath, LinkMatrix, PairCells, _Codes, _socket_of
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
    off = ~np.eye(n, dtype=bool)  # row-major: permutations(ids, 2) order
    rows = router.bottleneck_rows(at, _guessed(router))
    low, guess, ok = rows
    gbps, assumed, reachable = low[:, at][off], guess[:, at][off], ok[:, at][off]
    label = np.where(fabric >= 0, fabric, np.where(rel >= 0, rel, dash))[off]
    label = np.where(reachable, label, dash)
    speeds, speed = np.unique(np.where(np.isnan(gbps), -1.0, gbps), return_inverse=True)  # -1: no route
    # one integer per (label, speed, assumed), in that lexicographic order: a 1-D unique, not a row-wise one
    key = (label * len(speeds) + speed.reshape(-1)) * 2 + assumed.astype(np.int64)
    uniq, inverse = np.unique(key, return_inverse=True)
    lab, rest = np.divmod(uniq, 2 * len(speeds))
    made = [Cell(codes.names[la], None if speeds[sp] < 0 else float(speeds[sp]), bool(is_guess))
            for la, sp, is_guess in zip(lab.tolist(), (rest // 2).tolist(), (rest % 2).tolist(), strict=True)]
    per_pair = inverse.reshape(-1)  # the off-diagonal in row-major order: permutations(ids, 2) order
    cells = PairCells(ids, made, per_pair.tolist(), np.bincount(per_pair, minlength=len(made)).tolist())
    return LinkMatrix(tuple(ids), cells, _host_paths(node, router, rows))


def _guessed(router: Router) -> np.ndarray:
    """Per edge: its link has no known lane speed (the figure is a typical one)."""
    return np.array([e.link.lane_gbps is None for e in router.edges], dtype=bool)


def _host_paths(node: Node, router: Router, rows: tuple[np.ndarray, np.ndarray, np.ndarray]) -> dict[str, HostPath]:
    """Each module's path to its socket, read off ``rows`` (``bottleneck_rows`` from every
    module, in module order)."""
    ids = node.module_ids
    sockets = {m: _socket_of(node, m) for m in ids}
    pairs = [(i, m, s) for i, (m, s) in enumerate(sockets.items()) if s]
    row = np.array([i for i, _, _ in pairs], dtype=np.int64)
    dst = np.array([router.index[s] for _, _, s in pairs], dtype=np.int64)
    low, guess, _ = rows
    found = {m: (None if np.isnan(g) else float(g), bool(a))
             for (_, m, _), g, a in zip(pairs, low[row, dst].tolist(), guess[row, dst].tolist(), strict=True)}
    return {m: HostPath(sockets[m], *found.get(m, (None, False))) for m in ids}
