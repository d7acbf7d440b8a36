"""A link's capacity for routing: its bandwidth, or a typical one where a source could not see
its lane speed. Kept apart from the routers so that the plain-Python ones need no numpy."""

from __future__ import annotations

from gpuvet.node.model import EndpointKind, Link, LinkKind, Node

# Used only to route over links whose lane speed a source could not see (e.g. topo -m).
ASSUMED_LANE_GBPS = {
    LinkKind.NVLINK: 25.0, LinkKind.XGMI: 64.0, LinkKind.SERDES: 64.0,
    LinkKind.PCIE: 1.969, LinkKind.SMP: 16.0,
}


def link_capacity_gbps(link: Link, assumed_lane_gbps: float | None = None) -> float:
    """The link's bandwidth; where its lane speed was not read, its width at ``assumed_lane_gbps``
    (else the kind's typical lane speed)."""
    bw = link.bandwidth_gbps
    if bw is not None:
        return bw
    return link.width * max(assumed_lane_gbps or 0.0, ASSUMED_LANE_GBPS[link.kind])


def assumed_pcie_lanes(node: Node) -> dict[int, float]:
    """Per unread PCIe link (its index in ``node.links``), the fastest lane speed read on a PCIe
    link below it (further from the sockets), where one was read.

    A switch's uplink that no source saw (``nvidia-smi topo -m`` gives relations, not speeds)
    is assumed no slower per lane than the links read beneath it: a module that trained at Gen5
    sits behind a Gen5 switch. Assuming the kind's typical Gen4 speed instead made every unread
    uplink the bottleneck of the module's host path, so that a module read at x8 looked the
    same as its peers read at x16."""
    pcie = [(i, lk) for i, lk in enumerate(node.links) if lk.kind is LinkKind.PCIE]
    if not any(lk.lane_gbps is None for _, lk in pcie) or all(lk.lane_gbps is None for _, lk in pcie):
        return {}
    near: dict[str, list[int]] = {}
    for i, lk in pcie:
        near.setdefault(lk.a, []).append(i)
        near.setdefault(lk.b, []).append(i)
    depth = {e.id: 0 for e in node.endpoints if e.kind is EndpointKind.SOCKET}
    order = list(depth)
    for end in order:  # breadth first from the sockets
        for i in near.get(end, ()):
            other = node.links[i].other(end)
            if other not in depth:
                depth[other] = depth[end] + 1
                order.append(other)
    below: dict[str, float] = {}  # endpoint -> fastest lane read on a link under it
    out: dict[int, float] = {}
    for end in reversed(order):
        for i in near.get(end, ()):
            lk = node.links[i]
            child = lk.other(end)
            if depth.get(child, -1) != depth[end] + 1:
                continue
            lane = lk.lane_gbps if lk.lane_gbps is not None else below.get(child)
            if lk.lane_gbps is None and child in below:
                out[i] = below[child]
            if lane is not None:
                below[end] = max(below.get(end, 0.0), lane)
    return out


WidestEdge = tuple[int, int, Link, float]  # src index, dst index (in node.endpoint_ids()), link, capacity


def widest_edges(node: Node) -> list[WidestEdge]:
    """One directed edge per ordered endpoint pair over the links that are up: the widest (the
    first of equals). The graph every router walks, array-backed or plain Python."""
    index = {e: i for i, e in enumerate(node.endpoint_ids())}
    assumed = assumed_pcie_lanes(node)
    best: dict[tuple[int, int], WidestEdge] = {}
    for k, link in enumerate(node.links):
        if not link.up:
            continue
        cap = link_capacity_gbps(link, assumed.get(k))
        for s, d in ((link.a, link.b), (link.b, link.a)):
            key = (index[s], index[d])
            if key not in best or best[key][3] < cap:
                best[key] = (key[0], key[1], link, cap)
    return list(best.values())
