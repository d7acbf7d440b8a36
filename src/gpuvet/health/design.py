"""The nominal design inferred from what was found, for a node checked without ``--expect``:
catalog link counts per module, the domain sizes switched boards are built in, the modal pair
width of a mesh, the modal number of modules per PCIe switch. Never from the degraded state
alone: a module short of links is judged against its catalog figure, not against its peers'."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from gpuvet.node.model import EndpointKind, Link, LinkKind, Module, Node

# Modules per switched NVLink domain as they are built: HGX 8-GPU boards (A100, H100, H200,
# B200), HGX-2/DGX-2 (16), GB200 NVL36 and NVL72 racks.
SWITCHED_DOMAIN_SIZES = (8, 16, 36, 72)


@dataclass(frozen=True)
class Shortfall:
    """Something the found node lacks against its inferred design."""

    check: str  # presence or fabric
    reason: str
    module: str | None = None


def effective_links(node: Node, module: Module) -> tuple[float, list[Link]]:
    """(fabric links up, counted at their nominal lane speed; the links that are down)."""
    nominal_lane = module.model.fabric_lane_gbps
    up, down = 0.0, []
    for link in node.links_of(module.id):
        if not link.kind.is_fabric:
            continue
        if not link.up:
            down.append(link)
            continue
        share = link.lane_gbps / nominal_lane if link.lane_gbps and nominal_lane else 1.0
        up += link.width * min(share, 1.0)
    return up, down


def _switched(node: Node) -> bool:
    switches = {e.id for e in node.endpoints if e.kind is EndpointKind.FABRIC_SWITCH}
    return any(link.kind.is_fabric and (link.a in switches or link.b in switches) for link in node.links)


def _modal_pair_width(node: Node) -> int | None:
    modules = set(node.module_ids)
    widths = [link.width for link in node.links if link.kind.is_fabric and link.a in modules and link.b in modules]
    return Counter(widths).most_common(1)[0][0] if widths else None


def presence_shortfalls(node: Node) -> list[Shortfall]:
    """Modules that the found node's design says should be there and are not."""
    out: list[Shortfall] = []
    n = len(node.modules)
    if _switched(node):
        size = next((s for s in SWITCHED_DOMAIN_SIZES if s >= n), None)
        if size is not None and n < size:
            out.append(Shortfall("presence", f"{n} modules on the switched fabric, switched boards hold {size}: "
                                             f"{size - n} missing"))
    elif node.fabric_known and node.fabric_links():
        missing = _mesh_missing(node)
        if missing:
            out.append(Shortfall("presence", f"every module lacks the links of {missing} mesh peer(s): "
                                             f"{missing} module(s) missing"))
    out.extend(_pcie_switch_gaps(node))
    return out


def _mesh_missing(node: Node) -> int:
    """Peers missing from a mesh: every module short of its catalog links by the same multiple
    of the modal pair width (a down link leaves two modules short, not all of them)."""
    width = _modal_pair_width(node)
    if not width:
        return 0
    shorts = set()
    for m in node.modules:
        total = m.model.fabric_links
        if not total:
            return 0
        up, down = effective_links(node, m)
        short = total - up - sum(link.width for link in down)
        shorts.add(round(short / width) if short > 0.5 and abs(short / width - round(short / width)) < 0.1 else 0)
    return shorts.pop() if len(shorts) == 1 else 0


def _pcie_switch_gaps(node: Node) -> list[Shortfall]:
    switches = [e.id for e in node.endpoints if e.kind is EndpointKind.PCIE_SWITCH]
    modules = set(node.module_ids)
    held = {s: sum(1 for link in node.links_of(s) if link.kind is LinkKind.PCIE and link.other(s) in modules)
            for s in switches}
    held = {s: c for s, c in held.items() if c > 0}
    if len(held) < 2:
        return []
    modal = Counter(held.values()).most_common(1)[0][0]
    return [Shortfall("presence", f"PCIe switch {s} holds {c} module(s) where the others hold {modal}: "
                                  f"{modal - c} missing below it") for s, c in sorted(held.items()) if c < modal]


def fabric_shortfalls(node: Node, explained_by_presence: bool) -> list[Shortfall]:
    """Modules with fewer fabric links up than their catalog count, and links that are down."""
    if not node.fabric_known or not node.fabric_links():
        return []
    out: list[Shortfall] = []
    seen: set[frozenset[str]] = set()
    for m in node.modules:
        total = m.model.fabric_links
        up, down = effective_links(node, m)
        for link in down:
            if link.ends in seen:
                continue
            seen.add(link.ends)
            out.append(Shortfall("fabric", f"{link.a}-{link.b}: {link.width} {link.kind} link(s) down", m.id))
        if total and up < total - 0.05 and not down and not explained_by_presence:
            out.append(Shortfall("fabric", _short_text(m, up, total), m.id))
    return out


def _short_text(m: Module, up: float, total: int) -> str:
    kind = m.model.fabric or "fabric"
    lane = m.model.fabric_lane_gbps
    if up == int(up) or not lane:
        return f"{m.id}: {up:g} of {total} {kind} links up ({m.model.name} has {total})"
    return (f"{m.id}: {kind} carries {up * lane:.0f} of {total * lane:.0f} GB/s per direction "
            f"({100 * up / total:.0f}%, links below their speed)")
