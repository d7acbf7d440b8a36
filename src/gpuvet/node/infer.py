"""Rebuild a PCIe tree from pairwise relations (``nvidia-smi topo -m`` cells or NVML's
common-ancestor levels), so a detected or captured node has the same shape as a declared one.

Switch and bridge names are made up (``pcisw0``, ``hb0``); what matters is that the tree
reproduces every known relation, which ``tests/test_infer.py`` checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from gpuvet.node.model import Endpoint, EndpointKind, Link, LinkKind
from gpuvet.node.relations import PcieRelation

Relations = Mapping[frozenset[str], PcieRelation | None]


def _components(ids: list[str], rel: Relations, allowed: set[PcieRelation]) -> list[list[str]]:
    parent = {i: i for i in ids}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            r = rel.get(frozenset((a, b)))
            if r is not None and r in allowed:
                parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for device in ids:
        groups.setdefault(find(device), []).append(device)
    return list(groups.values())


def _has(ids: list[str], rel: Relations, wanted: PcieRelation) -> bool:
    return any(rel.get(frozenset((a, b))) == wanted for i, a in enumerate(ids) for b in ids[i + 1:])


class _TreeBuilder:
    def __init__(self, links_of: Mapping[str, Link] | None) -> None:
        self.endpoints: list[Endpoint] = []
        self.links: list[Link] = []
        self.own_link = links_of or {}
        self._n = {"pcisw": 0, "hb": 0}

    def new(self, prefix: str, kind: EndpointKind, parent: str) -> str:
        name = f"{prefix}{self._n[prefix]}"
        self._n[prefix] += 1
        self.endpoints.append(Endpoint(name, kind))
        self.links.append(Link(name, parent, LinkKind.PCIE, 16, None, width_known=False))
        return name

    def attach(self, device: str, parent: str) -> None:
        known = self.own_link.get(device)
        if known is not None:
            self.links.append(replace(known, a=device, b=parent, kind=LinkKind.PCIE))
        else:
            self.links.append(Link(device, parent, LinkKind.PCIE, 16, None, width_known=False))

    def switch_tree(self, ids: list[str], rel: Relations, parent: str) -> None:
        if len(ids) == 1:
            self.attach(ids[0], parent)
            return
        if _has(ids, rel, PcieRelation.PXB):
            upper = self.new("pcisw", EndpointKind.PCIE_SWITCH, parent)
            for leaf in _components(ids, rel, {PcieRelation.PIX}):
                sw = self.new("pcisw", EndpointKind.PCIE_SWITCH, upper)
                for dev in leaf:
                    self.attach(dev, sw)
            return
        sw = self.new("pcisw", EndpointKind.PCIE_SWITCH, parent)
        for dev in ids:
            self.attach(dev, sw)


def infer_pcie_tree(devices: list[str], rel: Relations, socket_of: Mapping[str, int | None],
                    own_links: Mapping[str, Link] | None = None
                    ) -> tuple[list[Endpoint], list[Link], int]:
    """Endpoints (sockets, bridges, switches) and PCIe/SMP links that reproduce ``rel``.

    Returns the endpoints, the links and the number of sockets.
    """
    socket_groups = _socket_groups(devices, rel, socket_of)
    builder = _TreeBuilder(own_links)
    sockets = [Endpoint(f"cpu{s}", EndpointKind.SOCKET) for s in range(len(socket_groups))]
    builder.endpoints.extend(sockets)
    for s, group in enumerate(socket_groups):
        for hb_group in _components(group, rel, {PcieRelation.PIX, PcieRelation.PXB, PcieRelation.PHB}):
            parent = f"cpu{s}"
            if _has(hb_group, rel, PcieRelation.PHB):
                parent = builder.new("hb", EndpointKind.HOST_BRIDGE, parent)
            for tree in _components(hb_group, rel, {PcieRelation.PIX, PcieRelation.PXB}):
                builder.switch_tree(tree, rel, parent)
    for i, a in enumerate(sockets):
        for b in sockets[i + 1:]:
            builder.links.append(Link(a.id, b.id, LinkKind.SMP, 1, None))
    return builder.endpoints, builder.links, len(sockets)


def _socket_groups(devices: list[str], rel: Relations, socket_of: Mapping[str, int | None]) -> list[list[str]]:
    """Devices by host side: the NUMA node each row read (topo -m's NUMA Affinity), a device without
    one on the side of a device it shares a PCIe path below the SMP link with; the rest, unread, by
    their relations alone (a group of their own, never a side guessed from a number)."""
    same_socket = {PcieRelation.PIX, PcieRelation.PXB, PcieRelation.PHB, PcieRelation.NODE}
    known = {d: n for d in devices if (n := socket_of.get(d)) is not None}
    if not known:
        return _components(devices, rel, same_socket) if devices else [[]]
    groups: dict[int, list[str]] = {n: [] for n in dict.fromkeys(known.values())}  # cpu0 is the first row's side
    unread: list[str] = []
    for d in devices:
        side = known.get(d)
        if side is None:
            side = next((known[o] for o in known if rel.get(frozenset((d, o))) in same_socket), None)
        if side is None:
            unread.append(d)
        else:
            groups[side].append(d)
    known_sides = list(groups.values())
    for rest in ([unread], _components(unread, rel, same_socket)) if unread else ([],):
        out = known_sides + [g for g in rest if g]  # the unread together (one side not read) where the cells allow
        if numa_agrees(out, rel):
            return out
    return _components(devices, rel, same_socket)


def numa_agrees(groups: list[list[str]], rel: Relations) -> bool:
    """Whether host sides drawn from NUMA nodes keep every relation read: no pair below one socket
    (PIX…NODE) split across two. Where they disagree the matrix is kept. A SYS pair on one NUMA node is
    no contradiction: the root complexes of one AMD EPYC socket read SYS to each other (NPS1), and the
    NUMA node the driver names is the host side."""
    side = {d: i for i, g in enumerate(groups) for d in g}
    for pair, r in rel.items():
        a, b = tuple(pair)
        if a not in side or b not in side or r is None:
            continue
        if r is not PcieRelation.SYS and side[a] != side[b]:
            return False
    return True
