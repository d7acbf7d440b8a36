"""A link's capacity for routing: its bandwidth, or a typical one where a source could not see
its lane speed. Kept apart from the routers so that the plain-Python ones need no numpy."""

from __future__ import annotations

from gpuvet.node.model import Link, LinkKind

# Used only to route over links whose lane speed a source could not see (e.g. topo -m).
ASSUMED_LANE_GBPS = {
    LinkKind.NVLINK: 25.0, LinkKind.XGMI: 64.0, LinkKind.SERDES: 64.0,
    LinkKind.PCIE: 1.969, LinkKind.SMP: 16.0,
}


def link_capacity_gbps(link: Link) -> float:
    bw = link.bandwidth_gbps
    return bw if bw is not None else link.width * ASSUMED_LANE_GBPS[link.kind]
