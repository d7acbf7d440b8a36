"""The link matrix: for every two modules how they connect and what one transfer between
them can get (like ``nvidia-smi topo -m``, with bandwidths), and each module's path to host
memory."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuvet.node.memo import per_node
from gpuvet.node.model import EndpointKind, Link, LinkKind, Node
from gpuvet.node.relations import relations_from
from gpuvet.node.routing import Router

_ABBREV = {LinkKind.NVLINK: "NV", LinkKind.XGMI: "XG", LinkKind.SERDES: "SD"}


@dataclass(frozen=True)
class Cell:
    label: str  # NV18, SW18 (through a fabric switch), PIX, PXB, PHB, NODE, SYS, "-" (no route)
    gbps: float | None  # one transfer's bottleneck bandwidth, per direction
    assumed: bool = False  # a link on the route has no known speed (e.g. from topo -m): gbps is a guess


@dataclass(frozen=True)
class HostPath:
    socket: str | None
    gbps: float | None
    assumed: bool = False


@dataclass(frozen=True)
class LinkMatrix:
    modules: tuple[str, ...]
    cells: dict[tuple[str, str], Cell]
    host: dict[str, HostPath]


def _socket_of(node: Node, module: str) -> str | None:
    """The socket reached first going up the module's PCIe path."""
    seen, frontier = {module}, [module]
    while frontier:
        nxt = []
        for cur in frontier:
            for link in node.links_of(cur):
                if link.kind is not LinkKind.PCIE:
                    continue
                other = link.other(cur)
                if other in seen or node.kind_of(other) is EndpointKind.MODULE:
                    continue
                if node.kind_of(other) is EndpointKind.SOCKET:
                    return other
                seen.add(other)
                nxt.append(other)
        frontier = nxt
    return None


class _Labels:
    """Fabric labels of module pairs from per-module link tables, built once: the same answer
    as scanning every link for every pair, without the O(n³)."""

    def __init__(self, node: Node) -> None:
        self.direct: dict[frozenset[str], Link] = {}
        self.switches: dict[str, dict[str, Link]] = {}  # module -> fabric switch -> its link (last wins)
        self.switch_order: dict[str, list[tuple[str, Link]]] = {}  # module -> (switch, link) in link order
        for link in node.links:
            if link.kind.is_fabric and link.up:
                self.direct.setdefault(link.ends, link)
        for m in node.module_ids:
            mine = [(lk.other(m), lk) for lk in node.links_of(m) if lk.kind.is_fabric and lk.up]
            self.switches[m] = dict(mine)
            self.switch_order[m] = [(o, lk) for o, lk in mine if node.kind_of(o) is EndpointKind.FABRIC_SWITCH]

    def label(self, a: str, b: str, rel: str | None) -> str:
        link = self.direct.get(frozenset((a, b)))
        if link is not None:
            return f"{_ABBREV[link.kind]}{link.width}"
        mine = self.switches[a]
        for other, lk in self.switch_order[b]:
            if other in mine:
                return f"SW{min(lk.width, mine[other].width)}"
        return rel or "-"


def link_matrix(node: Node) -> LinkMatrix:
    """Computed once per node and kept on it (the node never changes)."""
    return per_node(node, "matrix.link_matrix", lambda: _link_matrix(node))


def _link_matrix(node: Node) -> LinkMatrix:
    router = Router(node)
    ids = node.module_ids
    labels = _Labels(node)
    pairs = [(a, b) for a in ids for b in ids if a != b]
    position = {m: i for i, m in enumerate(ids)}
    gbps, assumed, reachable = _route_figures(router, pairs)
    interned: dict[tuple[str, float | None, bool], Cell] = {}
    cells = {}
    for i, (a, b) in enumerate(pairs):
        if reachable[i]:
            first, second = (a, b) if position[a] < position[b] else (b, a)  # as pcie_relations pairs them
            rel = relations_from(node, first).get(second) if node.pcie_known else None
            key = (labels.label(a, b, str(rel) if rel else None), gbps[i], assumed[i])
        else:
            key = ("-", None, False)
        cell = interned.get(key)
        if cell is None:
            cell = interned[key] = Cell(*key)
        cells[(a, b)] = cell
    return LinkMatrix(tuple(ids), cells, _host_paths(node, router))


def _route_figures(router: Router, pairs: list[tuple[str, str]]
                   ) -> tuple[list[float | None], list[bool], list[bool]]:
    """Per pair: the bottleneck of its route (None without one), whether a link on it has an
    assumed speed, whether there is a route."""
    table = router.route_table(pairs)
    starts = table.indptr[:-1]
    has = np.diff(table.indptr) > 0
    if table.edges.size == 0:
        return [None] * len(pairs), [False] * len(pairs), table.reachable.tolist()
    guessed = np.array([e.link.lane_gbps is None for e in router.edges], dtype=bool)
    safe = np.minimum(starts, table.edges.size - 1)
    low = np.minimum.reduceat(router.capacity[table.edges], safe)
    any_guess = np.maximum.reduceat(guessed[table.edges], safe)
    gbps = [float(g) if h else None for g, h in zip(low.tolist(), has.tolist(), strict=True)]
    return gbps, (any_guess & has).tolist(), table.reachable.tolist()


def _host_paths(node: Node, router: Router) -> dict[str, HostPath]:
    ids = node.module_ids
    sockets = {m: _socket_of(node, m) for m in ids}
    pairs = [(m, s) for m, s in sockets.items() if s]
    gbps, assumed, _ = _route_figures(router, pairs) if pairs else ([], [], [])
    found = {m: (g, a) for (m, _), g, a in zip(pairs, gbps, assumed, strict=True)}
    return {m: HostPath(sockets[m], *found.get(m, (None, False))) for m in ids}
