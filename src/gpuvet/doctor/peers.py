"""The design read from the peers inside one capture: on a switched fabric every module of one
model has the same links to the switches, so a module with fewer than all its peers is one
degraded module ("gpu3: 16 of 18 NVLinks"), named without --expect. The expected count is the
one most peers share (at least half of them), never the module's own."""

from __future__ import annotations

from collections import Counter

from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import HIGH
from gpuvet.node.model import EndpointKind, LinkKind, Node

_FABRIC = (LinkKind.NVLINK, LinkKind.XGMI)


def switch_widths(node: Node) -> dict[str, int]:
    """Each module's links to the fabric switches (NVSwitch), summed; modules without any are absent."""
    out: dict[str, int] = {}
    modules = set(node.module_ids)
    for link in node.links:
        if link.kind not in _FABRIC or not link.up:
            continue
        for mod, other in ((link.a, link.b), (link.b, link.a)):
            if mod in modules and node.kind_of(other) is EndpointKind.FABRIC_SWITCH:
                out[mod] = out.get(mod, 0) + link.width
    return out


def peer_degraded(node: Node, source: str) -> tuple[list[Finding], list[Cited]]:
    """Modules with fewer switch links than the count most of their peers share (the design the
    peers show); with the count each module has, cited."""
    widths = switch_widths(node)
    if len(widths) < 3:
        return [], []  # two modules cannot outvote each other
    design, peers = Counter(widths.values()).most_common(1)[0]
    # issue 46: a module of the peers' model with no link to the switches at all (topo -m: NODE/SYS to every
    # peer that reads NV18) is off the fabric: 0 of the design, when those peers are most of the node
    models = {node.module(m).model.name for m in widths}
    off = [m for m in node.module_ids if m not in widths and node.module(m).model.name in models]
    if peers * 2 <= len(widths) + len(off) or len(widths) + len(off) < len(node.module_ids):
        return [], []
    widths.update(dict.fromkeys(off, 0))
    found = [finding("nvlink_down", HIGH, module=m, detail=f"{m}: {w} of {design} NVLinks to the switches",
                     expected=design, measured=w, basis=f"{peers} of its {len(widths) - 1} peers read {design}")
             for m, w in widths.items() if w < design]
    cited = [Cited(source, "links to the switches per module (the peers' design)",
                   ", ".join(f"{m} {w}" for m, w in widths.items()))]
    return found, cited
