"""Routes through the link graph: which links a transfer between two endpoints crosses.

Modules are endpoints: a route never passes through a module unless the node's fabric
forwards (see ``Router``). A route minimises the sum over its hops of 1/bandwidth (time per byte if each hop were
store-and-forward), so wide fabric links win over PCIe and short routes over long ones —
the path a communication library would take when the topology is read correctly.
Links that are down carry nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from gpuvet.node.model import Link, LinkKind, Node

# Used only to route over links whose lane speed a source could not see (e.g. topo -m).
ASSUMED_LANE_GBPS = {
    LinkKind.NVLINK: 25.0, LinkKind.XGMI: 64.0, LinkKind.SERDES: 64.0,
    LinkKind.PCIE: 1.969, LinkKind.SMP: 16.0,
}


def link_capacity_gbps(link: Link) -> float:
    bw = link.bandwidth_gbps
    return bw if bw is not None else link.width * ASSUMED_LANE_GBPS[link.kind]


@dataclass(frozen=True)
class Edge:
    """One direction of a link."""

    src: str
    dst: str
    link: Link
    capacity_gbps: float


class Router:
    """Shortest routes on a node's directed link graph; build once, query many.

    Modules are endpoints, not routers: a copy from one module to another never passes
    *through* a third (a GPU does not forward another GPU's traffic), so without a link or a
    switch path of their own two modules reach each other over PCIe and the host. Each module
    is two vertices, one that sends and one that receives, joined only when the node declares
    a fabric whose modules forward (``Node.modules_forward``: some torus and SerDes designs).
    """

    def __init__(self, node: Node, forwarding: bool | None = None) -> None:
        """``forwarding=True`` lets routes pass through modules whatever the fabric: what a
        collective's ring does (NCCL forwards through the ranks); copies never do."""
        self.node = node
        forwards = node.modules_forward if forwarding is None else forwarding
        self.ids = node.endpoint_ids()
        self.index = {e: i for i, e in enumerate(self.ids)}  # where routes start (a module's sending side)
        modules = node.module_ids
        n = len(self.ids)
        self._arrive = dict(self.index)  # where routes end (a module's receiving side)
        self._arrive.update({m: n + k for k, m in enumerate(modules)})
        size = n + len(modules)
        best: dict[tuple[int, int], Edge] = {}
        for link in node.links:
            if not link.up:
                continue
            cap = link_capacity_gbps(link)
            for s, d in ((link.a, link.b), (link.b, link.a)):
                key = (self.index[s], self._arrive[d])
                if key not in best or best[key].capacity_gbps < cap:
                    best[key] = Edge(s, d, link, cap)
        self.edges: list[Edge] = list(best.values())
        self.capacity = np.array([e.capacity_gbps for e in self.edges], dtype=float)
        self._edge_id = {k: i for i, k in enumerate(best)}
        rows = [k[0] for k in best]
        cols = [k[1] for k in best]
        weights = list(1.0 / self.capacity)
        self._transit: set[tuple[int, int]] = set()
        if forwards:
            for m in modules:  # arriving at a module may go on from it, at no cost
                key = (self._arrive[m], self.index[m])
                self._transit.add(key)
                rows.append(key[0])
                cols.append(key[1])
                weights.append(1e-12)
        self._graph = csr_matrix((np.array(weights, dtype=float),
                                  (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))),
                                 shape=(size, size))
        self._pred: dict[int, np.ndarray] = {}

    def _predecessors(self, sources: Sequence[int]) -> None:
        todo = sorted({s for s in sources if s not in self._pred})
        if not todo:
            return
        _, pred = dijkstra(self._graph, directed=True, indices=todo, return_predecessors=True)
        for row, s in enumerate(todo):
            self._pred[s] = pred[row]

    def route_edges(self, src: str, dst: str) -> list[int] | None:
        """Edge indices from src to dst, [] when src == dst, None when unreachable."""
        if src == dst:
            return []
        s, d = self.index[src], self._arrive[dst]
        self._predecessors([s])
        pred = self._pred[s]
        path: list[int] = []
        node = d
        while node != s:
            prev = int(pred[node])
            if prev < 0:
                return None
            if (prev, node) not in self._transit:
                path.append(self._edge_id[(prev, node)])
            node = prev
        path.reverse()
        return path

    def routes(self, pairs: Sequence[tuple[str, str]]) -> list[list[int] | None]:
        self._predecessors([self.index[s] for s, _ in pairs])
        return [self.route_edges(s, d) for s, d in pairs]

    def hops(self, edge_ids: Sequence[int]) -> list[str]:
        """Endpoint ids along a route."""
        if not edge_ids:
            return []
        return [self.edges[edge_ids[0]].src] + [self.edges[e].dst for e in edge_ids]

    def bottleneck_gbps(self, edge_ids: Sequence[int]) -> float:
        return float(self.capacity[list(edge_ids)].min()) if edge_ids else float("inf")
