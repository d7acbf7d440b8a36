"""What a node should be when nobody declared it: the nominal design inferred from the modules
found and the catalog — never from the state of their links, which is what is being judged.

- a module's fabric links at the catalog's count and lane speed (H100/H200 SXM: 18 NVLink 4
  links of 25 GB/s per direction), every fabric link up;
- a link between modules at the width of its class (the modal width of that kind of link
  between modules) and the catalog's lane speed;
- a module's PCIe link at its maximum width (the module's own report, else the catalog): the
  width does not drop at idle, the generation does;
- host links (switch uplinks, sockets) at the widest of their peers;
- a PCIe switch or socket holding fewer modules than its peers: a module is missing there.

What cannot be inferred (a module that left no trace) is listed in ``unjudged``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace

from gpuvet.node.model import PCIE_LANE_GBPS, EndpointKind, Link, LinkKind, Node

_PLURAL = {"pcie_switch": "PCIe switches", "fabric_switch": "fabric switches", "host_bridge": "host bridges",
           "socket": "sockets"}  # endpoint kinds as a sentence names them


@dataclass(frozen=True)
class MissingSlot:
    """A place in the topology whose module is not there."""

    parent: str  # the PCIe switch or socket, or "fabric"
    count: int
    guess: str | None  # the id the gap in the numbering suggests
    reason: str


@dataclass(frozen=True)
class Design:
    node: Node
    source: str  # what the node is judged against, in words
    inferred: bool
    missing: tuple[MissingSlot, ...] = ()
    unjudged: tuple[str, ...] = ()


def declared_design(declared: Node, name: str) -> Design:
    return Design(declared, f"the declared design {name}", inferred=False)


def _modal(values: list[int] | list[float]) -> float | None:
    return Counter(values).most_common(1)[0][0] if values else None


def _majority(values: list[int]) -> float | None:
    """The width most links of a class share, if more than half do; None where the class mixes
    widths by design (a DGX-1V's NV1 and NV2 pairs, eight each): no width is then nominal."""
    if not values:
        return None
    width, count = Counter(values).most_common(1)[0]
    return width if count * 2 > len(values) else None


def _kinds(node: Node, link: Link) -> tuple[EndpointKind, EndpointKind]:
    a, b = node.kind_of(link.a), node.kind_of(link.b)
    return (a, b) if a <= b else (b, a)


def _nominal_link(node: Node, link: Link, classes: Mapping[tuple[object, ...], tuple[float, float]],
                  pcie_width_max: Mapping[str, int]) -> Link:
    kinds = _kinds(node, link)
    module_ends = [e for e in (link.a, link.b) if node.kind_of(e) is EndpointKind.MODULE]
    width = float(link.width)
    lane = link.lane_gbps
    if link.kind.is_fabric and module_ends:
        model = node.module(module_ends[0]).model
        if EndpointKind.FABRIC_SWITCH in kinds and model.fabric_links:
            width = max(width, model.fabric_links)  # its whole bond goes to the switch
        elif len(module_ends) == 2:
            width = max(width, classes.get((link.kind, kinds), (width, 0.0))[0])
        lane = model.fabric_lane_gbps or classes.get((link.kind, kinds), (0.0, lane or 0.0))[1] or lane
    elif link.kind is LinkKind.PCIE and module_ends:
        model = node.module(module_ends[0]).model
        width = max(width, pcie_width_max.get(module_ends[0], 0), model.pcie_width or 0)
        lane = PCIE_LANE_GBPS.get(link.gen, lane) if link.gen else lane  # the generation's lane rate
    else:
        peer_width, peer_lane = classes.get((link.kind, kinds), (width, lane or 0.0))
        width = max(width, peer_width)
        lane = max(lane or 0.0, peer_lane) or lane
    return replace(link, width=int(width), lane_gbps=lane, up=True)


def _classes(node: Node) -> dict[tuple[object, ...], tuple[float, float]]:
    """(link kind, endpoint kinds) → (modal width, modal lane speed) over the links that are up."""
    groups: dict[tuple[object, ...], list[Link]] = {}
    for link in node.links:
        if link.up:
            groups.setdefault((link.kind, _kinds(node, link)), []).append(link)
    out = {}
    for key, links in groups.items():
        lanes = [lk.lane_gbps for lk in links if lk.lane_gbps is not None]
        out[key] = (float(_majority([lk.width for lk in links]) or 0), float(_modal(lanes) or 0.0))
    return out


def _numbering_gaps(ids: list[str]) -> list[str]:
    """``gpu3`` when gpu0..gpu7 lack gpu3 (real drivers renumber, so this is only a guess)."""
    parsed = [re.fullmatch(r"(.*?)(\d+)", i) for i in ids]
    if not ids or not all(parsed):
        return []
    prefixes = {m.group(1) for m in parsed if m}
    if len(prefixes) != 1:
        return []
    prefix = prefixes.pop()
    have = {int(m.group(2)) for m in parsed if m}
    return [f"{prefix}{i}" for i in range(max(have) + 1) if i not in have]


def _missing_under_parents(node: Node) -> list[MissingSlot]:
    """Modules per PCIe parent (switch, bridge, socket): one holding fewer than its peers of the
    same kind lacks a module."""
    holders: dict[str, int] = {}
    for m in node.module_ids:
        link = node.pcie_link(m)
        if link is not None:
            holders[link.other(m)] = holders.get(link.other(m), 0) + 1
    by_kind: dict[EndpointKind, list[str]] = {}
    for e in node.endpoints:
        if e.kind in (EndpointKind.PCIE_SWITCH, EndpointKind.HOST_BRIDGE, EndpointKind.SOCKET):
            by_kind.setdefault(e.kind, []).append(e.id)
    gaps = _numbering_gaps(node.module_ids)
    out = []
    for kind, parents in by_kind.items():
        counts = [holders.get(p, 0) for p in parents]
        if sum(counts) == 0 or len(parents) < 2:
            continue
        usual = int(_modal([c for c in counts if c > 0]) or 0)
        for parent, count in zip(parents, counts, strict=True):
            if 0 < count < usual:  # a switch with no module at all may be a NIC's or a disk's
                guess = gaps.pop(0) if gaps else None
                out.append(MissingSlot(parent, usual - count, guess,
                                       f"{parent} holds {count} module(s) where the other "
                                       f"{_PLURAL.get(kind.value, kind.value + 's')} hold {usual}"))
    return out


def _missing_from_mesh(node: Node) -> list[MissingSlot]:
    """In a mesh every module has all its catalog links to peers: if every module lacks the same
    whole number of pair bonds, that many peers are missing."""
    mods = node.modules
    if not mods or any(lk.kind.is_fabric and node.kind_of(lk.a) is not EndpointKind.MODULE for lk in node.links):
        return []
    lacking = []
    for m in mods:
        bonds = [lk for lk in node.links_of(m.id) if lk.kind.is_fabric]
        if not bonds or not m.model.fabric_links:
            return []
        lacking.append((m.model.fabric_links - sum(lk.width for lk in bonds), int(_modal([lk.width for lk in bonds]) or 1)))
    short, bond = lacking[0]
    if short <= 0 or any(x != (short, bond) for x in lacking) or short % bond:
        return []
    count = short // bond
    gaps = _numbering_gaps(node.module_ids)
    full = mods[0].model.fabric_links or 0
    return [MissingSlot("fabric", count, gaps[0] if len(gaps) == 1 == count else None,
                        f"every module has {full - short} of its {full} "
                        f"fabric links in use: the mesh implies {len(mods) + count} modules, {len(mods)} found")]


def infer_design(found: Node, pcie_width_max: Mapping[str, int] | None = None) -> Design:
    """The nominal design of ``found``: see the module docstring."""
    widths = dict(pcie_width_max or {})
    classes = _classes(found)
    links = tuple(_nominal_link(found, lk, classes, widths) for lk in found.links)
    nominal = replace(found, links=links)
    missing = tuple(_missing_under_parents(found) or _missing_from_mesh(found))
    models = Counter(m.model.name for m in found.modules)
    fabric = sorted({lk.kind.value for lk in found.links if lk.kind.is_fabric})
    switched = any(e.kind is EndpointKind.FABRIC_SWITCH for e in found.endpoints)
    shape = (f"{'/'.join(fabric)} {'switched' if switched else 'mesh'}" if fabric else "PCIe")
    what = " + ".join(f"{n}×{name}" for name, n in models.items()) or "no modules"
    unjudged = ["wiring (which module is cabled where) and modules that left no trace in the topology: "
                "declare the node (gpuvet spec export on a good day, then --expect) to judge those"]
    if not found.fabric_known:
        unjudged.append("the fabric: the source could not see it")
    return Design(nominal, f"the nominal {what} {shape} design inferred from the modules found and the catalog",
                  inferred=True, missing=missing, unjudged=tuple(unjudged))
