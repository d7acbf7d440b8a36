"""The node other vendors' link tables draw: amd-smi topology / rocm-smi --showtopo (xGMI) and
npu-smi info -t topo (Ascend's HCCS, with the links a full HCCS mesh says are down). Apart from
the backend because each table is a vendor's own shape, judged against its own design."""

from __future__ import annotations

import re
from collections import Counter

from gpuvet.captures.records import FabricTable
from gpuvet.node.catalog import unknown_model
from gpuvet.node.model import Endpoint, EndpointKind, Host, Link, LinkKind, Module, Node

# --- link tables of other vendors' tools (amd-smi topology, rocm-smi --showtopo) ----------
_FABRIC_KINDS = {"XGMI": LinkKind.XGMI}  # the tools' link type words -> gpuvet's link kinds
_ONE_FABRIC_HOP = 15  # the link weight of one direct xGMI hop (amdgpu KFD io_link; AMD SMI's docs)


def fabric_to_node(table: FabricTable, name: str) -> tuple[Node, list[str]]:
    """Modules gpu0… in the table's order, a direct fabric link for each pair the tables join
    directly (one per pair: the tables give no count), PCIe to each module's NUMA node."""
    said = [int(d[3:]) for d in table.devices if re.fullmatch(r"GPU\d+", d)]  # rocm-smi's own index: GPU1 stays gpu1
    ids = ({d: f"gpu{int(d[3:])}" for d in table.devices} if len(said) == len(set(said)) == len(table.devices)
           else {d: f"gpu{i}" for i, d in enumerate(table.devices)})
    notes: list[str] = []
    sockets = sorted({table.numa[d] for d in table.devices if d in table.numa}) or [0]
    links = [Link(ids[d], f"cpu{table.numa.get(d, sockets[0])}", LinkKind.PCIE, 16, None, width_known=False)
             for d in table.devices]
    links += [Link(ids[a], ids[b], kind, 1, None) for a, b, kind in _direct(table, notes) if a in ids and b in ids]
    modules = tuple(Module(ids[d], unknown_model(f"unknown ({table.source})"),
                           d.upper() if re.fullmatch(r"[0-9a-fA-F]{4,8}:\S+", d) else None) for d in table.devices)
    known = bool(table.link_type or table.weight)
    if not known:
        notes.append(f"{table.source}: only the hops table: it is 1 for any pair reachable over the fabric, direct "
                     "or not, so the links are not known (give the whole output: its LINK TYPE and WEIGHT tables)")
    node = Node(name, modules, tuple(Endpoint(f"cpu{s}", EndpointKind.SOCKET) for s in sockets), tuple(links),
                Host(len(sockets)), pcie_known=False, fabric_known=known)
    return node, notes


def _direct(table: FabricTable, notes: list[str]) -> list[tuple[str, str, LinkKind]]:
    """Pairs on a fabric link type; where weights are given, only those one fabric hop apart."""
    out: list[tuple[str, str, LinkKind]] = []
    pairs = set(table.link_type) | {p for p, w in table.weight.items() if w == _ONE_FABRIC_HOP}
    far = 0
    for pair in sorted(pairs, key=sorted):
        kind = _FABRIC_KINDS.get(table.link_type.get(pair, "XGMI"))
        weight = table.weight.get(pair)
        if kind is None:
            continue
        if weight is not None and weight != _ONE_FABRIC_HOP:
            far += 1
            continue
        a, b = sorted(pair, key=table.devices.index)
        out.append((a, b, kind))
    if far:
        notes.append(f"{table.source}: {far} pair(s) reach each other over the fabric through another module "
                     f"(weight above {_ONE_FABRIC_HOP}): not direct links")
    return out


# --- Ascend: npu-smi info -t topo ----------------------------------------------------------
# HCCS is Ascend's module-to-module fabric. The node model has no HCCS link kind (node/model.py),
# so HCCS, HCCS_SW and SIO links are SerDes fabric links there; the notes and docs say HCCS.
_HCCS_SWITCH = "hccssw0"
_PCIE_CELLS = frozenset({"PIX", "PXB", "PHB", "NODE", "SYS", "PIB"})  # a printed relation without HCCS
_MAX_PAIR_NOTES = 16  # notes per kind; every down pair is still a link (and a finding)


def npu_fabric_to_node(table: FabricTable, name: str) -> tuple[Node, list[str]]:
    """Modules gpu0… in the matrix's order (NPU0…), an HCCS link for each HCCS or SIO pair, one to an
    HCCS switch for HCCS_SW, PCIe to a socket whose place the matrix does not give. A pair printed
    with a PCIe relation where the peers form a full HCCS mesh is an HCCS link down; NA or missing
    is not known (see _hccs_missing)."""
    ids = {d: f"gpu{i}" for i, d in enumerate(table.devices)}
    notes: list[str] = []
    links = [Link(ids[d], "cpu0", LinkKind.PCIE, 16, None, width_known=False) for d in table.devices]
    ends = [sorted((ids[a], ids[b]), key=_order) for a, b in _pairs(table, ("HCCS", "SIO"))]
    links += [Link(a, b, LinkKind.SERDES, 1, None) for a, b in ends]
    switched = sorted({ids[d] for pair in _pairs(table, ("HCCS_SW",)) for d in pair}, key=_order)
    links += [Link(m, _HCCS_SWITCH, LinkKind.SERDES, 1, None) for m in switched]
    links += _hccs_missing(table, ids, notes)
    endpoints = [Endpoint("cpu0", EndpointKind.SOCKET)]
    if switched:
        endpoints.append(Endpoint(_HCCS_SWITCH, EndpointKind.FABRIC_SWITCH, "HCCS switch"))
    modules = tuple(Module(ids[d], unknown_model(f"unknown ({table.source})")) for d in table.devices)
    return Node(name, modules, tuple(endpoints), tuple(links), Host(1), pcie_known=False), notes


def _order(module_id: str) -> int:
    return int(module_id[3:])


def _pairs(table: FabricTable, cells: tuple[str, ...]) -> list[tuple[str, str]]:
    order = {d: i for i, d in enumerate(table.devices)}
    return sorted((tuple(sorted(p, key=order.__getitem__)) for p, c in table.link_type.items()  # type: ignore[misc]
                   if c in cells and p <= order.keys()), key=lambda ab: (order[ab[0]], order[ab[1]]))


def _hccs_missing(table: FabricTable, ids: dict[str, str], notes: list[str]) -> list[Link]:
    """Judged against the peers, never against the pair itself: when most NPUs (a strict majority, of
    three or more) reach every other NPU over HCCS, the board is a full HCCS mesh, and a pair whose
    cell prints a PCIe relation (PIX, PXB, PHB, NODE, SYS, PIB) has its HCCS link down. A pair shown
    NA (npu-smi's "Unknown relationship"), shown by no readable cell, or in rows the capture lacks
    is not known: a "can't tell" note, no link."""
    devices = [d for d in table.devices if d in ids]
    hccs = [p for p, c in table.link_type.items() if c == "HCCS"]
    degree = Counter(d for p in hccs for d in p)  # one pass: O(pairs), not O(devices x pairs)
    full = sum(1 for d in devices if degree[d] == len(devices) - 1)
    if len(devices) < 3 or not hccs or 2 * full <= len(devices):
        return []
    design = f"the board's design, as {full} of its {len(devices)} NPUs show it, joins every pair over HCCS"
    out: list[Link] = []
    down: list[str] = []
    unknown: list[str] = []
    for i, a in enumerate(devices):
        for b in devices[i + 1:]:
            cell = table.link_type.get(frozenset((a, b)))
            if cell in _PCIE_CELLS:
                down.append(f"{table.source}: {a}-{b} shows {cell} where {design}: an HCCS link down")
                out.append(Link(ids[a], ids[b], LinkKind.SERDES, 1, None, up=False))
            elif cell is None or cell == "NA":
                why = ("shows NA (npu-smi's \"Unknown relationship\")" if cell == "NA" else
                       "is shown by no readable cell (cut rows or unreadable cells)")
                unknown.append(f"can't tell {ids[a]}-{ids[b]}: {table.source} {a}-{b} {why}, where {design}: "
                               "not called down")
    notes += down[:_MAX_PAIR_NOTES] + unknown[:_MAX_PAIR_NOTES]
    if len(down) > _MAX_PAIR_NOTES:
        notes.append(f"{table.source}: {len(down) - _MAX_PAIR_NOTES} more HCCS link(s) down the same way")
    if len(unknown) > _MAX_PAIR_NOTES:
        notes.append(f"can't tell {len(unknown) - _MAX_PAIR_NOTES} more pair(s) of {table.source} the same way")
    return out
