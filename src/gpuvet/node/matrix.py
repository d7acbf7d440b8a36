"""The link matrix: for every two modules how they connect and what one transfer between
them can get (like ``nvidia-smi topo -m``, with bandwidths), and each module's path to host
memory."""

from __future__ import annotations

from dataclasses import dataclass

from gpuvet.node.model import EndpointKind, LinkKind, Node
from gpuvet.node.relations import pcie_relations
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


def _label(node: Node, a: str, b: str, rel: str | None) -> str:
    for link in node.links:
        if link.kind.is_fabric and link.ends == frozenset((a, b)) and link.up:
            return f"{_ABBREV[link.kind]}{link.width}"
    switch_a = {lk.other(a): lk for lk in node.links_of(a) if lk.kind.is_fabric and lk.up}
    for lk in node.links_of(b):
        other = lk.other(b)
        if lk.kind.is_fabric and lk.up and other in switch_a and node.kind_of(other) is EndpointKind.FABRIC_SWITCH:
            return f"SW{min(lk.width, switch_a[other].width)}"
    return rel or "-"


def link_matrix(node: Node) -> LinkMatrix:
    router = Router(node)
    ids = node.module_ids
    rel = pcie_relations(node, ids) if node.pcie_known else {}
    cells = {}
    for a in ids:
        for b in ids:
            if a == b:
                continue
            route = router.route_edges(a, b)
            r = rel.get(frozenset((a, b)))
            label = _label(node, a, b, str(r) if r else None)
            cells[(a, b)] = Cell(label if route is not None else "-",
                                 router.bottleneck_gbps(route) if route else None, _assumed(router, route))
    host = {}
    for m in ids:
        socket = _socket_of(node, m)
        route = router.route_edges(m, socket) if socket else None
        host[m] = HostPath(socket, router.bottleneck_gbps(route) if route else None, _assumed(router, route))
    return LinkMatrix(tuple(ids), cells, host)


def _assumed(router: Router, route: list[int] | None) -> bool:
    return bool(route) and any(router.edges[e].link.lane_gbps is None for e in route or [])
