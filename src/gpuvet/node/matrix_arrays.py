"""The link matrix of a big node as arrays: every pair's label, bottleneck and host path in a
few numpy passes (a 576-module domain has 331,200 ordered pairs)."""

from __future__ import annotations

from array import array

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
    labels = np.full((len(ids), len(ids)), -1, dtype=np.int32)  # codes are a handful: small pages
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
        widths = _distinct(np.r_[a_width, b_width])  # a handful: min commutes with their rank
        least = np.minimum.outer(np.searchsorted(widths, a_width).astype(np.int32),
                                 np.searchsorted(widths, b_width).astype(np.int32))  # rank of the narrower
        seen = np.flatnonzero(np.bincount(least.ravel(), minlength=len(widths)))  # codes for widths in use only
        sw = np.full(len(widths), -1, dtype=np.int32)
        sw[seen] = [codes(f"{prefix[switch]}{w}") for w in widths[seen].tolist()]
        labels[np.ix_(a_pos, b_pos)] = sw[least]
    for link in reversed(node.links):  # the first listed link is written last
        if link.kind.is_fabric and link.up and link.a in pos and link.b in pos:
            code = codes(f"{_ABBREV[link.kind]}{link.width}")
            labels[pos[link.a], pos[link.b]] = labels[pos[link.b], pos[link.a]] = code
    return labels


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``, sorted, without the import of ``numpy.ma`` (10 ms) that numpy 2.4's
    plain ``unique`` makes."""
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


def _relation_labels(node: Node, ids: list[str], codes: _Codes) -> np.ndarray:
    """Per module pair, the code of its PCIe relation (-1: none), as ``pcie_relations`` pairs them."""
    pos = {m: i for i, m in enumerate(ids)}
    out = np.full((len(ids), len(ids)), -1, dtype=np.int32)
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
    codes = _Codes()
    dash = codes("-")
    fabric, rel = _fabric_labels(node, ids, codes), _relation_labels(node, ids, codes)
    label = np.where(fabric >= 0, fabric, np.where(rel >= 0, rel, dash))
    # a bottleneck is one of the links' capacities: rank them (a handful) instead of sorting every pair
    speeds = _distinct(np.r_[-1.0, router.capacity])  # -1: no route
    sockets = {m: _socket_of(node, m) for m in ids}
    key, host_gbps, host_guess = _pair_keys(router, ids, label, dash, speeds, list(sockets.values()))
    cells = _pair_cells(ids, key, codes, speeds)
    host = {m: HostPath(s, None if np.isnan(g) else g, a)
            for (m, s), g, a in zip(sockets.items(), host_gbps.tolist(), host_guess.tolist(), strict=True)}
    return LinkMatrix(tuple(ids), cells, host)


def _pair_keys(router: Router, ids: list[str], label: np.ndarray, dash: int, speeds: np.ndarray,
               sockets: list[str | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per module pair, one integer for its (label, speed, assumed), in that lexicographic order;
    per module, the bottleneck to its socket and whether it is assumed. Each block of source rows
    is reduced as it comes: on a 576-module node, fresh pages for whole-matrix temporaries cost
    as much as the arithmetic."""
    n = len(ids)
    at = np.array([router.index[m] for m in ids], dtype=np.int64)
    to_host = np.array([router.index[s] if s else -1 for s in sockets], dtype=np.int64)
    key = np.empty((n, n), dtype=np.int32)  # a few thousand keys at most
    host_gbps, host_guess = np.full(n, np.nan), np.zeros(n, dtype=bool)
    for rows, (low, guess, ok) in router.bottleneck_blocks(at, _guessed(router)):
        gbps = low[:, at]
        speed = np.searchsorted(speeds, np.where(np.isnan(gbps), -1.0, gbps))
        key[rows] = (np.where(ok[:, at], label[rows], dash) * len(speeds) + speed) * 2 + guess[:, at]
        row = np.flatnonzero(to_host[rows] >= 0)  # within the block
        module = rows.start + row
        host_gbps[module] = low[row, to_host[module]]
        host_guess[module] = guess[row, to_host[module]]
    return key, host_gbps, host_guess


def _pair_cells(ids: list[str], key: np.ndarray, codes: _Codes, speeds: np.ndarray) -> PairCells:
    """The distinct cells of ``_pair_keys``'s keys, and each pair's index into them."""
    pair_key = key[~np.eye(len(ids), dtype=bool)]  # the off-diagonal in row-major order: permutations(ids, 2) order
    if len(pair_key) and int(pair_key.max()) > 4 * len(pair_key) + 4096:  # a spec of thousands of widths and speeds:
        uniq, index, count = np.unique(pair_key, return_inverse=True, return_counts=True)  # sort, not a huge table
    else:  # a table of keys: no sort of every pair
        per_key = np.bincount(pair_key)
        uniq = np.flatnonzero(per_key)
        count = per_key[uniq]
        inverse = np.zeros(len(per_key), dtype=_smallest_uint(len(uniq)))
        inverse[uniq] = np.arange(len(uniq))
        index = inverse[pair_key]
    lab, rest = np.divmod(uniq, 2 * len(speeds))
    made = [Cell(codes.names[la], None if speeds[sp] < 0 else float(speeds[sp]), bool(is_guess))
            for la, sp, is_guess in zip(lab.tolist(), (rest // 2).tolist(), (rest % 2).tolist(), strict=True)]
    # indexes to ints as a list would, in a byte or two a pair (a list's 8 were 10 ms of fresh pages)
    small = np.dtype(_smallest_uint(len(made)))
    per_pair = array(small.char, index.astype(small, copy=False).tobytes())
    return PairCells(ids, made, per_pair, count.tolist())


def _smallest_uint(count: int) -> type[np.unsignedinteger]:
    """The narrowest unsigned type that numbers ``count`` things."""
    return next(t for t in (np.uint8, np.uint16, np.uint32) if count <= np.iinfo(t).max + 1)


def _guessed(router: Router) -> np.ndarray:
    """Per edge: its link has no known lane speed (the figure is a typical one)."""
    return np.array([e.link.lane_gbps is None for e in router.edges], dtype=bool)
