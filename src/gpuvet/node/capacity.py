"""A link's capacity for routing: its bandwidth, or a typical one where a source could not see
its lane speed. Kept apart from the routers so that the plain-Python ones need no numpy."""

from __future__ import annotations

from gpuvet.node.model import Link, LinkKind, Node

# Used only to route over links whose lane speed a source could not see (e.g. topo -m).
ASSUMED_LANE_GBPS = {
    LinkKind.NVLINK: 25.0, LinkKind.XGMI: 64.0, LinkKind.SERDES: 64.0,
    LinkKind.PCIE: 1.969, LinkKind.SMP: 16.0,
}


def link_capacity_gbps(link: Link) -> float:
    bw = link.bandwidth_gbps
    return bw if bw is not None else link.width * ASSUMED_LANE_GBPS[link.kind]


WidestEdge = tuple[int, int, Link, float]  # src index, dst index (in node.endpoint_ids()), link, capacity


def widest_edges(node: Node) -> list[WidestEdge]:
    """One directed edge per ordered endpoint pair over the links that are up: the widest (the
    first of equals). The graph every router walks, array-backed or plain Python."""
    index = {e: i for i, e in enumerate(node.endpoint_ids())}
    best: dict[tuple[int, int], WidestEdge] = {}
    for link in node.links:
        if not link.up:
            continue
        cap = link_capacity_gbps(link)
        for s, d in ((link.a, link.b), (link.b, link.a)):
            key = (index[s], index[d])
            if key not in best or best[key][3] < cap:
                best[key] = (key[0], key[1], link, cap)
    return list(best.values())
