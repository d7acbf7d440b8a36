"""How two modules relate: the direct fabric link between them, and their PCIe relation in
``nvidia-smi topo -m`` terms (PIX, PXB, PHB, NODE, SYS)."""

from __future__ import annotations

from collections import deque
from enum import StrEnum

from gpuvet.node.memo import per_node
from gpuvet.node.model import EndpointKind, Link, LinkKind, Node


class PcieRelation(StrEnum):
    PIX = "PIX"  # at most one PCIe switch between them
    PXB = "PXB"  # several PCIe switches, no host bridge
    PHB = "PHB"  # through a PCIe host bridge
    NODE = "NODE"  # between host bridges of one socket (NUMA node)
    SYS = "SYS"  # across the inter-socket link

    @property
    def rank(self) -> int:
        return list(PcieRelation).index(self)


def _tree_adjacency(node: Node) -> dict[str, list[str]]:
    adj: dict[str, list[str]] = {e: [] for e in node.endpoint_ids()}
    for link in node.links:
        if link.kind in (LinkKind.PCIE, LinkKind.SMP):
            adj[link.a].append(link.b)
            adj[link.b].append(link.a)
    return adj


def _path(adj: dict[str, list[str]], src: str, dst: str) -> list[str] | None:
    prev: dict[str, str | None] = {src: None}
    queue = deque([src])
    while queue:
        cur = queue.popleft()
        if cur == dst:
            out = [cur]
            while (p := prev[out[-1]]) is not None:
                out.append(p)
            return out[::-1]
        for nxt in adj[cur]:
            if nxt not in prev:
                prev[nxt] = cur
                queue.append(nxt)
    return None


def classify(node: Node, path: list[str]) -> PcieRelation:
    """Relation of the two ends of a PCIe/SMP path from what lies between them."""
    inner = [node.kind_of(e) for e in path[1:-1]]
    sockets = inner.count(EndpointKind.SOCKET)
    if sockets >= 2:
        return PcieRelation.SYS
    if sockets == 1:
        return PcieRelation.NODE
    if EndpointKind.HOST_BRIDGE in inner:
        return PcieRelation.PHB
    if inner.count(EndpointKind.PCIE_SWITCH) >= 2:
        return PcieRelation.PXB
    return PcieRelation.PIX


def pcie_relations(node: Node, ids: list[str] | None = None) -> dict[frozenset[str], PcieRelation | None]:
    """Relation of every pair among ``ids`` (default: the modules); None if not connected. Kept on
    the node per list of ids: a topology diff asks it of the same node more than once, and a
    576-module node has 165,600 pairs. Callers must not change the dict."""
    ids = ids if ids is not None else node.module_ids
    cache = per_node(node, "relations.pairs", dict[tuple[str, ...], dict[frozenset[str], PcieRelation | None]])
    key = tuple(ids)
    if key not in cache:
        out: dict[frozenset[str], PcieRelation | None] = {}
        for i, a in enumerate(ids):
            get = relations_from(node, a).get
            for b in ids[i + 1:]:
                out[frozenset((a, b))] = get(b)
        cache[key] = out
    return cache[key]


def relations_from(node: Node, src: str) -> dict[str, PcieRelation]:
    """Relation of ``src`` to every endpoint its PCIe/SMP tree reaches (itself excluded).

    One breadth-first search, kept on the node, in place of one search per pair: the route to
    each endpoint is the one ``_path`` finds (same search, same order), and what lies between
    is counted on the way instead of walking the path again.
    """
    cache = per_node(node, "relations.from", dict[str, dict[str, PcieRelation]])
    if src not in cache:
        cache[src] = _bfs_relations(node, per_node(node, "relations.adjacency", lambda: _tree_adjacency(node)), src)
    return cache[src]


def _bfs_relations(node: Node, adj: dict[str, list[str]], src: str) -> dict[str, PcieRelation]:
    # inner[v]: (sockets, host bridges, PCIe switches) strictly between src and v
    inner: dict[str, tuple[int, int, int]] = {src: (0, 0, 0)}
    out: dict[str, PcieRelation] = {}
    queue = deque([src])
    while queue:
        cur = queue.popleft()
        s, h, p = inner[cur]
        if cur != src:
            kind = node.kind_of(cur)
            out[cur] = _relation(s, h, p)
            s += kind is EndpointKind.SOCKET
            h += kind is EndpointKind.HOST_BRIDGE
            p += kind is EndpointKind.PCIE_SWITCH
        for nxt in adj[cur]:
            if nxt not in inner:
                inner[nxt] = (s, h, p)
                queue.append(nxt)
    return out


def _relation(sockets: int, bridges: int, switches: int) -> PcieRelation:
    """``classify`` from counts of what lies between."""
    if sockets >= 2:
        return PcieRelation.SYS
    if sockets == 1:
        return PcieRelation.NODE
    if bridges:
        return PcieRelation.PHB
    return PcieRelation.PXB if switches >= 2 else PcieRelation.PIX


def direct_fabric_links(node: Node) -> dict[frozenset[str], Link]:
    """Fabric links keyed by their two ends (module-module or module-switch)."""
    return {link.ends: link for link in node.links if link.kind.is_fabric}
