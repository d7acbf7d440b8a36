"""Captured tool output from a machine where gpuvet is not installed.

Each file `gpuvet.captures` reads may be given: the matrix of ``nvidia-smi topo -m`` gives fabric
links and the PCIe tree; ``nvidia-smi -q -x`` XML or ``nvidia-smi -q`` text (also inside an
nvidia-bug-report.log) names the modules. A file with neither (nccl-tests output, a kernel log)
gives an empty node and a note saying so, never an invented one. Both may be given; the module
list then names the modules that the matrix connects.
"""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from gpuvet import __version__
from gpuvet.backends.base import Backend
from gpuvet.backends.nic_readings import Nic, NicReadings
from gpuvet.backends.readings import HostInfo, Inventory, ModuleInfo, SoftwareInfo, Unavailable
from gpuvet.captures import read as capture_read
from gpuvet.captures import smi_text, smi_xml
from gpuvet.captures.files import once_each
from gpuvet.captures.records import FabricTable, ListedModule, SmiProcess, SmiTextModule
from gpuvet.captures.text import clean, integer, number, reading
from gpuvet.captures.topo import TopoMatrix
from gpuvet.captures.topo import parse as _parse_topo
from gpuvet.captures.verdicts import verdicts
from gpuvet.errors import CaptureError
from gpuvet.node.catalog import CATALOG, find_model, unknown_model
from gpuvet.node.infer import infer_pcie_tree
from gpuvet.node.matrix import link_matrix
from gpuvet.node.model import PCIE_LANE_GBPS, Endpoint, EndpointKind, Host, Link, LinkKind, Module, Node
from gpuvet.node.relations import PcieRelation

_MAX_NVLINKS_PER_MODULE = 18  # the most any module has; more per module means a switch
_NOT_IN_CAPTURE = Unavailable("not in the captured file")
_WIDTHS = (1, 2, 4, 8, 12, 16, 32)
_MAX_MIB = 10 * max(m.memory_mib or 0 for m in CATALOG.values())  # 10x the largest module known: a corrupt reading

__all__ = ["CaptureBackend", "TopoMatrix", "fabric_to_node", "npu_fabric_to_node", "parse_smi_xml", "parse_topo_matrix",
           "topo_to_node"]


def parse_topo_matrix(text: str, where: str = "topo -m") -> TopoMatrix:
    """Parse ``nvidia-smi topo -m`` text. Raises CaptureError if it is not one, or cannot be trusted."""
    topo = _parse_topo(clean(text).lines, where)
    if topo is None:
        raise CaptureError("no `nvidia-smi topo -m` matrix found (expected a header line with GPU0 …)",
                           where=where, fix="capture it with `nvidia-smi topo -m > topo.txt`.")
    return topo


def _id(device: str) -> str:
    m = re.fullmatch(r"(GPU|NIC)(\d+)", device)
    return f"{m.group(1).lower()}{m.group(2)}" if m else device


def _relation(cell: str) -> PcieRelation | None:
    return PcieRelation(cell) if cell in PcieRelation.__members__ else None


def topo_to_node(topo: TopoMatrix, name: str) -> Node:
    gpus = [d for d in topo.devices if d.startswith("GPU")]
    rows = set(topo.devices) | set(_columns_only(topo))  # a NIC whose own row is cut keeps its column's cells
    ids = [_id(d) for d in [*topo.devices, *_columns_only(topo)]]
    rel = {frozenset((_id(a), _id(b))): _relation(c) for (a, b), c in
           ((tuple(k), v) for k, v in topo.cells.items()) if {a, b} <= rows}
    socket_of = {_id(d): topo.numa.get(d) for d in topo.devices}  # the NUMA Affinity each row read
    endpoints, links, sockets = infer_pcie_tree(ids, rel, socket_of)
    endpoints += [Endpoint(_id(d), EndpointKind.NIC, topo.nic_names.get(d)) for d in [*topo.devices,
                  *_columns_only(topo)] if not d.startswith("GPU")]
    links += _nvlinks(topo, gpus)
    if any(link.b == "nvswitch0" for link in links):
        endpoints.append(Endpoint("nvswitch0", EndpointKind.FABRIC_SWITCH))
    modules = tuple(Module(_id(g), unknown_model("unknown (topo -m)")) for g in gpus)
    unseen = frozenset(k for k, r in rel.items() if r is None) | _cut_nic_cells(topo, gpus)
    return Node(name, modules, tuple(endpoints), tuple(links), Host(sockets), unseen_relations=unseen)


def _cut_nic_cells(topo: TopoMatrix, gpus: list[str]) -> frozenset[frozenset[str]]:
    """GPU-NIC pairs with no cell read (a row cut short): the tree drawn places them somewhere, but
    a module's nearest NIC must not be judged on a relation the capture never gave."""
    nics = [d for d in [*topo.devices, *_columns_only(topo)] if not d.startswith("GPU")]
    return frozenset(frozenset((_id(g), _id(n))) for g in gpus for n in nics if frozenset((g, n)) not in topo.cells)


def _columns_only(topo: TopoMatrix) -> list[str]:
    """NICs named only as columns (their rows cut away) that the GPU rows read give a cell to."""
    named = {d for pair in topo.cells for d in pair} - set(topo.devices)
    gpus = [d for d in topo.devices if d.startswith("GPU")]
    nics = [d for d in named if not d.startswith("GPU") and any(frozenset((d, g)) in topo.cells for g in gpus)]
    return sorted(nics, key=lambda d: (re.sub(r"\d+$", "", d), int(m.group()) if (m := re.search(r"\d+$", d)) else 0))


def host_side_notes(topo: TopoMatrix, node: Node) -> list[str]:
    """What the host sides drawn rest on: the NUMA Affinity each GPU row read, or nothing read."""
    gpus = [d for d in topo.devices if d.startswith("GPU")]
    read = {g: topo.numa[g] for g in gpus if topo.numa.get(g) is not None}
    if not read:
        return [f"topo -m: no NUMA Affinity read: the host sides ({node.host.sockets} drawn) follow the matrix's "
                "SYS/NODE cells alone; which CPU socket each group is on is unknown"]
    mat = link_matrix(node)
    drawn = {g: mat.host[_id(g)].socket for g in gpus if _id(g) in mat.host}
    said = ", ".join(f"{_id(g)} {read[g]}" for g in read)
    unread = [_id(g) for g in gpus if g not in read]
    out = [f"topo -m: NUMA Affinity read: {said}"]
    if unread:
        out.append(f"topo -m: no NUMA Affinity for {', '.join(unread)} (row cut or N/A): host side placed by "
                   "its PCIe relations to a GPU read, else on one side drawn for all such devices (which "
                   "socket that is, is unknown)")
    sides: dict[str, set[int]] = {}
    for g, n in read.items():
        if n is not None:
            sides.setdefault(drawn.get(g) or "?", set()).add(n)
    if len(sides) != len(set(read.values())) or any(len(v) > 1 for v in sides.values()):
        out.append("topo -m: the NUMA Affinity column and the matrix disagree (GPUs of one NUMA node read SYS to "
                   "each other, or GPUs below one socket read on two nodes): the matrix is kept as read, so "
                   "the host sides drawn are its SYS groups, not the NUMA nodes above")
    else:
        out.append("topo -m: host sides from NUMA Affinity: " + ", ".join(
            f"{s} = NUMA node {next(iter(v))}" for s, v in sides.items()))
    return out


def _nvlinks(topo: TopoMatrix, gpus: list[str]) -> list[Link]:
    counts = {}
    for i, a in enumerate(gpus):
        for b in gpus[i + 1:]:
            m = re.fullmatch(r"NV(\d+)", topo.cells.get(frozenset((a, b)), ""))
            if m:
                counts[(a, b)] = int(m.group(1))
    everyone = len(counts) == len(gpus) * (len(gpus) - 1) // 2 and len(gpus) > 2
    if everyone and max(counts.values()) * (len(gpus) - 1) > _MAX_NVLINKS_PER_MODULE:
        # every pair sees more links than a module has, shared: they go to switches, and a pair's NV# is what
        # the fewer-linked of the two has up to them; a module's own count is the most any of its pairs reads
        own = {g: max(n for pair, n in counts.items() if g in pair) for g in gpus}
        return [Link(_id(g), "nvswitch0", LinkKind.NVLINK, own[g], None) for g in gpus]
    return [Link(_id(a), _id(b), LinkKind.NVLINK, n, None) for (a, b), n in counts.items()]


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


def listed_indexes(modules: list[ListedModule]) -> list[int]:
    """The tool's own index of each module (rocm-smi's GPU[1], amd-smi's GPU: 1, npu-smi's NPU 1), so a
    listing that starts at 1 or lists a subset keeps gpu1 as gpu1; numbered in order where the labels give
    no distinct index (rocm-bandwidth-test counts the CPUs among its devices, npu-smi's chips of one card)."""
    said = [int(m.group(0)) if (m := re.search(r"\d+", x.label)) else None for x in modules]
    if any(x.tool == "rocm-bandwidth-test" for x in modules) or None in said or len(set(said)) < len(said):
        return list(range(len(modules)))
    return [i for i in said if i is not None]


def _listed_module(module_id: str, m: ListedModule, notes: list[str], numa: int | None = None) -> ModuleInfo:
    none4: tuple[str | None, str | None, str | None, str | None] = (None, None, None, None)
    return _module(module_id, m.name, m.uuid, m.bus_id or "", m.memory_mib, (None, m.pcie_gen_max),
                   (None, m.pcie_width_max), (_NOT_IN_CAPTURE, _NOT_IN_CAPTURE, _NOT_IN_CAPTURE), None, none4,
                   None if numa is None else str(numa), notes)


# --- module lists: nvidia-smi -q -x (XML) and nvidia-smi -q (text) -------------------------

def _plausible(value: float | None, what: str, ok: bool, notes: list[str], module: str) -> float | Unavailable:
    """A figure from the capture, or Unavailable with the reason when it is not physical."""
    if value is None:
        return _NOT_IN_CAPTURE
    if not ok:
        notes.append(f"{module}: {what} {value:g} is not physical (a corrupt reading): ignored, shown as n/a")
        return Unavailable(f"implausible value in the capture ({value:g})")
    return value


def _memory(text: str | None, notes: list[str], module: str) -> float | None:
    """A memory total as printed; NaN or infinity is a corrupt reading, noted (None either way)."""
    bad: list[str] = []
    value = reading(text, (-math.inf, math.inf), "memory", bad)
    notes += [f"{module}: {b}" for b in bad]
    return value


def _int(v: float | Unavailable) -> int | Unavailable:
    return int(v) if isinstance(v, float) else v


def parse_smi_xml(text: str, where: str = "nvidia-smi -q -x") -> tuple[list[ModuleInfo], SoftwareInfo]:
    """Modules and software from ``nvidia-smi -q -x``. Raises CaptureError if it is not one."""
    modules, software, _ = read_smi_xml(text, where)
    return modules, software


def read_smi_xml(text: str, where: str) -> tuple[list[ModuleInfo], SoftwareInfo, list[str]]:
    xml = smi_xml.parse(clean(text).lines, where)
    if xml is None:
        raise CaptureError("no nvidia-smi XML found (expected <nvidia_smi_log> …)", where=where,
                           fix="capture it with `nvidia-smi -q -x > smi.xml`.")
    modules, software, notes = xml_modules(xml.root, where)
    return modules, software, xml.notes + notes


def xml_modules(root: ET.Element, where: str) -> tuple[list[ModuleInfo], SoftwareInfo, list[str]]:
    if root.tag not in ("nvidia_smi_log", "gpuvet_fragment"):
        raise CaptureError(f"root element is <{root.tag}>, expected <nvidia_smi_log>", where=where,
                           fix="capture it with `nvidia-smi -q -x > smi.xml`.")
    gpus = root.findall("gpu") if root.tag == "nvidia_smi_log" else root.findall(".//gpu") or (
        [root] if any(root.find(t) is not None for t in _GPU_PARTS) else [])  # a fragment from inside one <gpu>
    if len(gpus) > smi_xml.MAX_GPUS:
        raise CaptureError(f"{len(gpus)} <gpu> elements (at most {smi_xml.MAX_GPUS})", where=where,
                           fix="give the capture of one node.")
    uuids = [u for g in gpus if (u := smi_xml.text_of(g, "uuid"))]
    twice = sorted({u for u in uuids if uuids.count(u) > 1})
    if twice:
        raise CaptureError(f"two <gpu> elements have the same UUID {twice[0]}", where=where,
                           fix="give one unedited `nvidia-smi -q -x` per file.")
    notes: list[str] = []
    readable = [g for g in gpus if g.get("id") or smi_xml.text_of(g, "product_name") or smi_xml.text_of(g, "uuid")
                or g is root]
    if len(readable) < len(gpus):
        if not readable:
            raise CaptureError(f"{len(gpus)} <gpu> element(s) without an id, a name or a UUID (cut before its "
                               "first field?)", where=where, fix="capture it again with `nvidia-smi -q -x > smi.xml`.")
        notes.append(f"{len(gpus) - len(readable)} <gpu> element(s) without an id, a name or a UUID: left out")
    gpus = sorted(readable, key=lambda g: (g.get("id") or "").upper()[-12:])
    modules = [_xml_module(f"gpu{i}", g, notes) for i, g in enumerate(gpus)]
    software = SoftwareInfo(__version__, smi_xml.text_of(root, "driver_version") or _NOT_IN_CAPTURE,
                            smi_xml.text_of(root, "cuda_version") or _NOT_IN_CAPTURE, _NOT_IN_CAPTURE)
    return modules, software, notes


_GPU_PARTS = ("power_readings", "gpu_power_readings", "temperature", "fb_memory_usage", "pci", "clocks")


def _xml_module(module_id: str, g: ET.Element, notes: list[str]) -> ModuleInfo:
    t = smi_xml.text_of
    link = "pci/pci_gpu_link_info"
    power = g.find("gpu_power_readings")  # drivers >= 535; older ones say power_readings
    if power is None:
        power = g.find("power_readings")

    def pw(*tags: str) -> float | Unavailable:
        for tag in tags:
            if power is not None and t(power, tag) is not None:
                return _watts(t(power, tag), tag, notes, module_id)
        return _NOT_IN_CAPTURE

    info = _module(module_id, t(g, "product_name"), t(g, "uuid"), (t(g, "pci/pci_bus_id") or g.get("id") or ""),
                   _memory(t(g, "fb_memory_usage/total"), notes, module_id),
                   (number(t(g, f"{link}/pcie_gen/current_link_gen")), number(t(g, f"{link}/pcie_gen/max_link_gen"))),
                   (number(t(g, f"{link}/link_widths/current_link_width")),
                    number(t(g, f"{link}/link_widths/max_link_width"))),
                   (pw("current_power_limit", "power_limit"), pw("default_power_limit"), pw("max_power_limit")),
                   t(g, "ecc_mode/current_ecc"),
                   (t(g, "clocks/sm_clock"), t(g, "clocks/mem_clock"), t(g, "max_clocks/sm_clock"),
                    t(g, "max_clocks/mem_clock")), t(g, "numa_node_id"), notes)
    info = replace(info, serial=_named(t(g, "serial")), vbios_version=_named(t(g, "vbios_version")),
                   inforom_version=_named(t(g, "inforom_version/img_version")),
                   gsp_firmware=_named(t(g, "gsp_firmware_version")))
    return _settings(module_id, t(g, "persistence_mode"), smi_xml.processes(g), notes, info)


def _named(text: str | None) -> str | Unavailable:
    """A serial or firmware version the capture names (what the module ledger and an RMA packet
    keep); left out or N/A: not in the capture."""
    value = (text or "").strip()
    return value[:64] if value and value.upper() != "N/A" else _NOT_IN_CAPTURE


def _indexes(modules: list[SmiTextModule], notes: list[str]) -> list[str]:
    """nvidia-smi's own index of each module wherever the listing prints one (the table, a --query-gpu with
    index), so gpu1 stays gpu1; a module without one (or whose index an earlier module holds) takes the
    lowest number no printed index uses, named in a note: never another module's index."""
    said = [str(int(i)) if i.isdigit() else "" for i in (m.fields.get("Index", "") for m in modules)]
    taken = set(filter(None, said))
    free = (str(n) for n in itertools.count() if str(n) not in taken)
    out: list[str] = []
    for i in said:
        out.append(i if i and i not in out else next(free))
    moved = [f"gpu{o} ({m.bus_id})" for i, o, m in zip(said, out, modules, strict=True) if i != o]
    if moved and taken:  # a listing that prints no index at all (-q) is numbered in its order, as always
        notes.append(f"nvidia-smi printed no index (or one an earlier module holds) for {', '.join(moved[:8])}"
                     f"{' …' if len(moved) > 8 else ''}: numbered after the indexes it printed")
    return out


def _text_module(module_id: str, m: SmiTextModule, notes: list[str]) -> ModuleInfo:
    f = m.fields

    def get(*keys: str) -> str | None:
        return smi_text.get(f, *keys)

    def pw(*keys: str) -> float | Unavailable:
        return _watts(get(*keys), keys[0].rsplit("/", 1)[-1], notes, module_id)

    fragment_bus = get("PCI/Bus Id", "Bus Id") or ""  # an excerpt from the PCI section names the module's bus id there
    info = _module(module_id, m.product or None, get("GPU UUID"),
                   (fragment_bus if re.fullmatch(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]",
                                                 fragment_bus) else "") if m.bus_id.startswith("GPU") else m.bus_id,
                   _memory(get("FB Memory Usage/Total"), notes, module_id),
                   (number(get("PCIe Generation/Current")), number(get("PCIe Generation/Device Max",
                                                                           "PCIe Generation/Max"))),
                   (number(get("Link Width/Current")), number(get("Link Width/Max"))),
                   (pw(*_POWER_KEYS["Current Power Limit"]), pw(*_POWER_KEYS["Default Power Limit"]),
                    pw(*_POWER_KEYS["Max Power Limit"])),
                   get("ECC Mode/Current", "Ecc Mode/Current"),  # driver 535+ prints 'Ecc Mode'
                   (get("Clocks/SM"), get("Clocks/Memory"), get("Max Clocks/SM"), get("Max Clocks/Memory")), None,
                   notes)
    info = replace(info, serial=_named(get("Serial Number")), vbios_version=_named(get("VBIOS Version")),
                   inforom_version=_named(get("Inforom Version/Image Version")),
                   gsp_firmware=_named(get("GSP Firmware Version")))
    return _settings(module_id, get("Persistence Mode"), smi_text.processes(f), notes, info)


# driver >= 530 prints a 'GPU Power Readings' section (beside 'GPU Memory Power Readings' and 'Module Power
# Readings', whose limits are not the GPU's); older ones 'Power Readings', whose set limit is 'Power Limit'
_POWER_KEYS: dict[str, tuple[str, ...]] = {key: (f"GPU Power Readings/{key}", f"Power Readings/{key}") for key in
               ("Current Power Limit", "Default Power Limit", "Max Power Limit")}
_POWER_KEYS["Current Power Limit"] += ("GPU Power Readings/Power Limit", "Power Readings/Power Limit")
_WATTS = re.compile(r"\s*([-+]?(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|nan|inf(?:inity)?))\s*W?\s*", re.I)
_NOT_A_FIGURE = ("n/a", "[n/a]", "not supported", "[not supported]", "unknown error", "err!", "")


def _watts(text: str | None, what: str, notes: list[str], module: str) -> float | Unavailable:
    """A power figure as printed ('700.00 W'). One gpuvet cannot read as printed ('700,00 W' of a localised
    copy: 700 or 70000?) is named in a note and left out, never guessed; N/A is not in the capture."""
    if text is None or text.strip().lower() in _NOT_A_FIGURE:
        return _NOT_IN_CAPTURE
    m = _WATTS.fullmatch(text)
    if m is None:
        comma = " (a decimal comma? a localised copy)" if "," in text else ""
        notes.append(f"{module}: {what} {text.strip()[:40]!r} is not a figure gpuvet reads{comma}: left out, "
                     "shown as n/a")
        return Unavailable(f"unreadable in the capture ({text.strip()[:40]!r})")
    v = float(m.group(1))
    return _plausible(v, f"power {what}", math.isfinite(v) and 0 < v < 5000, notes, module)


def _settings(module_id: str, persistence: str | None, procs: tuple[SmiProcess, ...] | None, notes: list[str],
              info: ModuleInfo) -> ModuleInfo:
    """Persistence mode and the compute processes a -q (text or XML) shows: doctor judges both."""
    said = (persistence or "").strip()
    mode: bool | Unavailable = (said == "Enabled" if said in ("Enabled", "Disabled") else _NOT_IN_CAPTURE if not said
                                else Unavailable(f"the capture says {said[:40]!r}"))
    return replace(info, persistence_mode=mode, processes=_pids(module_id, procs, notes))


def _pids(module_id: str, procs: tuple[SmiProcess, ...] | None, notes: list[str]) -> tuple[int, ...] | Unavailable:
    """The pids of the compute processes listed (type C, C+G, M…; a graphics-only G is not compute), each
    process named in a note as printed, so a finding's pid can be told from the job the user meant."""
    if procs is None:
        return _NOT_IN_CAPTURE
    pids: list[int] = []
    shown: list[str] = []
    for p in procs:
        pid = integer(p.pid)
        compute = p.type is None or p.type.strip().upper() != "G"
        if pid is not None and pid >= 0 and compute:
            pids.append(pid)
        kind = "not a process id: left out" if pid is None or pid < 0 else "compute" if compute else "graphics only"
        shown.append(f"pid {p.pid[:20]} {(p.name or '?')[:60]} ({p.type or 'type not printed'}, "
                     f"{p.memory or 'memory not printed'}; {kind})")
    if shown:
        more = f" and {len(shown) - 4} more" if len(shown) > 4 else ""
        notes.append(f"{module_id}: the capture lists {len(shown)} process(es) on it: {'; '.join(shown[:4])}{more}")
    return tuple(dict.fromkeys(pids))


def _module(module_id: str, name: str | None, uuid: str | None, bus_id: str, mib: float | None,
            gen: tuple[float | None, float | None], width: tuple[float | None, float | None],
            power: tuple[float | Unavailable, float | Unavailable, float | Unavailable], ecc: str | None,
            clocks: tuple[str | None, str | None, str | None, str | None], numa: str | None,
            notes: list[str]) -> ModuleInfo:
    name = name or "unknown"
    mem = _plausible(mib, "memory (MiB)", mib is not None and 0 < mib <= _MAX_MIB, notes, module_id)

    def gen_of(v: float | None, what: str) -> int | Unavailable:
        return _int(_plausible(v, what, v is not None and v in (1, 2, 3, 4, 5, 6, 7), notes, module_id))

    def width_of(v: float | None, what: str) -> int | Unavailable:
        return _int(_plausible(v, what, v is not None and v in _WIDTHS, notes, module_id))

    def clock(v: str | None, what: str) -> int | Unavailable:
        n = number(v)
        return _int(_plausible(n, what, n is not None and 0 <= n < 100_000, notes, module_id))

    return ModuleInfo(
        id=module_id, model=name, in_catalog=find_model(name) is not None,
        uuid=uuid or _NOT_IN_CAPTURE, bus_id=bus_id.upper()[-12:] or _NOT_IN_CAPTURE,
        memory_bytes=int(mem * 2**20) if isinstance(mem, float) else mem,
        pcie_gen_current=gen_of(gen[0], "PCIe generation"), pcie_gen_max=gen_of(gen[1], "PCIe generation (max)"),
        pcie_width_current=width_of(width[0], "PCIe width"), pcie_width_max=width_of(width[1], "PCIe width (max)"),
        power_limit_w=power[0], power_limit_default_w=power[1], power_limit_max_w=power[2],
        ecc_enabled=(ecc == "Enabled") if ecc in ("Enabled", "Disabled") else _NOT_IN_CAPTURE,  # 'Unknown Error': not off
        sm_clock_mhz=clock(clocks[0], "SM clock"), mem_clock_mhz=clock(clocks[1], "memory clock"),
        sm_clock_max_mhz=clock(clocks[2], "max SM clock"), mem_clock_max_mhz=clock(clocks[3], "max memory clock"),
        numa_node=integer(numa) if integer(numa) is not None else _NOT_IN_CAPTURE,  # type: ignore[arg-type]
    )


def _modules_node(modules: list[ModuleInfo], name: str) -> Node:
    mods, links = [], []
    for m in modules:
        mem = m.memory_bytes if isinstance(m.memory_bytes, int) else None
        model = find_model(m.model) or unknown_model(m.model, mem)
        mods.append(Module(m.id, model, m.bus_id if isinstance(m.bus_id, str) else None,
                           m.uuid if isinstance(m.uuid, str) else None))
        gen = m.pcie_gen_max if isinstance(m.pcie_gen_max, int) else None
        read = isinstance(m.pcie_width_current, int)
        width = m.pcie_width_current if isinstance(m.pcie_width_current, int) else 16
        links.append(Link(m.id, "cpu0", LinkKind.PCIE, width, PCIE_LANE_GBPS.get(gen) if gen else None, gen,
                          width_known=read))
    return Node(name, tuple(mods), (Endpoint("cpu0", EndpointKind.SOCKET),), tuple(links), Host(1),
                pcie_known=False, fabric_known=False)


def _merge(topo_node: Node, xml_node: Node) -> Node:
    """Structure from the matrix, identity and PCIe link figures from the module list."""
    by_id = {m.id: m for m in xml_node.modules}
    modules = tuple(by_id.get(m.id, m) for m in topo_node.modules)
    own = {m.id: xml_node.pcie_link(m.id) for m in xml_node.modules}
    links = []
    for link in topo_node.links:
        mine = own.get(link.a) if link.kind is LinkKind.PCIE else None
        links.append(replace(link, width=mine.width, lane_gbps=mine.lane_gbps, gen=mine.gen,
                             width_known=mine.width_known) if mine else link)
    return replace(topo_node, modules=modules, links=tuple(links))


@dataclass(frozen=True)
class _Vendor:
    """The captures of one vendor's tools in a file: they make a node together, never with another's."""

    name: str  # NVIDIA, AMD, Ascend
    first: int  # the first line read as one of them (the file's order decides which vendor comes first)
    kinds: tuple[str, ...]
    modules: int
    models: tuple[str, ...]


_NVIDIA_KINDS = ("nvidia-smi -q -x", "nvidia-smi topo -m", "nvidia-smi -q")


def _vendors(fc: capture_read.FileCapture) -> list[_Vendor]:
    """The vendors whose module lists or topologies the file holds, in the order they appear."""
    out: list[_Vendor] = []
    nvidia = [p.claimed for p in (fc.xml, fc.topo, fc.smi) if p is not None]
    if nvidia:
        names = ([smi_xml.text_of(g, "product_name") or "unknown" for g in fc.xml.root.findall(".//gpu")] if fc.xml
                 else [m.product or "unknown" for m in fc.smi.modules] if fc.smi else [])
        gpus = len(names) or (sum(d.startswith("GPU") for d in fc.topo.devices) if fc.topo else 0)
        out.append(_Vendor("NVIDIA", min(min(c, default=0) for c in nvidia),
                           tuple(k for k in fc.kinds if k in _NVIDIA_KINDS), gpus, tuple(dict.fromkeys(names))))
    for name, listed in (("AMD", fc.amd), ("Ascend", fc.npu)):
        devices = len(listed.fabric.devices) if listed.fabric is not None else 0
        if listed.modules or devices:
            out.append(_Vendor(name, min(listed.claimed, default=0), tuple(listed.kinds),
                               len(listed.modules) or devices,
                               tuple(dict.fromkeys(m.name or "unknown" for m in listed.modules))))
    return sorted(out, key=lambda v: v.first)


def _other_vendor(label: str, v: _Vendor, node_vendor: str) -> str:
    models = f": {', '.join(v.models[:4])}" if v.models else ""
    return (f"{label}: also holds {v.name}'s {', '.join(v.kinds)} ({v.modules} module(s){models}): left out of "
            f"this node, whose modules are {node_vendor}'s (read first); no capture states a link between two "
            f"vendors' modules, and such a file is most often of several machines. Give it a --from run of its own")


class CaptureBackend(Backend):
    """Readings from captured files; nothing is measured."""

    name = "capture"
    captured = True
    simulated = False

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self._notes: list[str] = []
        self._topo: Node | None = None
        self._vendor: str | None = None  # the node is this vendor's: another's modules are named, never joined
        self._modules: list[ModuleInfo] = []
        self._nics: dict[str, Nic] = {}  # the RDMA tools' listings, one entry per device
        self._software = SoftwareInfo(__version__, _NOT_IN_CAPTURE, _NOT_IN_CAPTURE, _NOT_IN_CAPTURE)
        if not paths:
            raise CaptureError("no capture file given", fix="pass --from FILE.")
        for path in once_each(paths, self._notes):
            fc = capture_read.read(path)
            label = Path(path).name
            self._notes += [f"{label}: {n}" for n in fc.notes]
            took = 0
            self._take_nics(fc, label)
            for v in _vendors(fc):
                self._vendor = self._vendor or v.name
                if v.name != self._vendor:
                    self._notes.append(_other_vendor(label, v, self._vendor))
                else:
                    took += self._take(fc, v.name, path, label)
            if not took and self._topo is None:
                self._notes.append(f"{label}: holds {', '.join(fc.kinds)}: no topology or module list in it")
        xml_node = _modules_node(self._modules, Path(paths[0]).stem) if self._modules else None
        self._node: Node = _merge(self._topo, xml_node) if self._topo and xml_node else (
            self._topo or xml_node or Node(Path(paths[0]).stem, (), (), (), Host(1), pcie_known=False,
                                           fabric_known=False))

    def _take(self, fc: capture_read.FileCapture, vendor: str, path: str, label: str) -> int:
        """One vendor's topology (the first one given) and module list from the file; returns how many
        modules it lists."""
        stem = Path(path).stem
        if vendor == "NVIDIA" and fc.topo is not None:
            if self._topo is None:
                self._topo = topo_to_node(fc.topo, stem)
                self._notes += [f"{label}: {n}" for n in host_side_notes(fc.topo, self._topo)]
        listed = fc.amd if vendor == "AMD" else fc.npu if vendor == "Ascend" else None
        if listed is not None and listed.fabric is not None and listed.fabric.devices and self._topo is None:
            make = fabric_to_node if vendor == "AMD" else npu_fabric_to_node
            self._topo, fabric_notes = make(listed.fabric, stem)
            self._notes += [f"{label}: {n}" for n in fabric_notes]
        return self._take_modules(fc, vendor, path, label)

    def _take_modules(self, fc: capture_read.FileCapture, vendor: str, path: str, label: str) -> int:
        """Modules the vendor's tools list in the file (XML before text); returns how many."""
        notes: list[str] = []
        if vendor == "NVIDIA" and fc.xml is not None:
            modules, software, notes = xml_modules(fc.xml.root, path)
        elif vendor == "NVIDIA" and fc.smi is not None:
            modules = [_text_module(f"gpu{k}", m, notes) for k, m in zip(_indexes(fc.smi.modules, notes), fc.smi.modules,
                                                                               strict=True)]
            software = SoftwareInfo(__version__, fc.smi.driver or _NOT_IN_CAPTURE, fc.smi.cuda or _NOT_IN_CAPTURE,
                                    _NOT_IN_CAPTURE)
        elif vendor in ("AMD", "Ascend"):  # another vendor's tool listed them
            listed = fc.amd if vendor == "AMD" else fc.npu
            ids = listed_indexes(listed.modules)
            numa = listed.fabric.numa if listed.fabric is not None else {}  # rocm-smi's (Topology) Numa Node
            modules = [_listed_module(f"gpu{i}", m, notes, numa.get(re.sub(r"\W", "", m.label)))
                       for i, m in zip(ids, listed.modules, strict=True)]
            notes += [f"gpu{i} ({v.where}): {v.tool} says {v.field}: {v.value} ({v.severity}; doctor names it)"
                      for i, m in zip(ids, listed.modules, strict=True) for v in verdicts(m)
                      if v.severity in ("critical", "warn")]
            software = SoftwareInfo(__version__, listed.driver or _NOT_IN_CAPTURE, _NOT_IN_CAPTURE, _NOT_IN_CAPTURE)
        else:
            return 0
        self._notes += [f"{label}: {n}" for n in notes]
        if self._modules and modules:
            self._notes.append(f"{label}: a second module list; the first one given is used")
        elif modules:
            self._modules, self._software = modules, software
        return len(modules)

    def _take_nics(self, fc: capture_read.FileCapture, label: str) -> None:
        """Each RDMA device once, whichever file lists it first; a second listing is named."""
        for nic in fc.nics.nics:
            if nic.device in self._nics:
                self._notes.append(f"{label}: {nic.device} listed again: the first listing is used")
            else:
                self._nics[nic.device] = replace(nic, read_from=f"{label} ({'/'.join(fc.nics.kinds)})")

    def nics(self) -> NicReadings | None:
        """The NICs the captures list (ibstat, ibv_devinfo, ibdev2netdev); None where none does. A
        capture does not show the peer-memory module: that is left unknown, never assumed."""
        if not self._nics:
            return None
        return NicReadings(tuple(self._nics.values()), Unavailable("not in the captures (lsmod | grep peermem)"),
                           "captured ibstat/ibv_devinfo")

    def node(self) -> Node:
        return self._node

    def notes(self) -> tuple[str, ...]:
        return tuple(self._notes)

    def inventory(self) -> Inventory:
        modules = self._modules or [_bare_module(m) for m in self._node.modules]
        host = HostInfo(self._node.name, _NOT_IN_CAPTURE, self._node.host.sockets, _NOT_IN_CAPTURE,
                        _NOT_IN_CAPTURE, _NOT_IN_CAPTURE, _NOT_IN_CAPTURE, "captured", "captured", "captured")
        return Inventory(self.name, False, tuple(modules), host, self._software,
                         (f"Read from captured files: {', '.join(self.paths)}; nothing was measured.", *self._notes))


def _bare_module(m: Module) -> ModuleInfo:
    u = _NOT_IN_CAPTURE
    return ModuleInfo(m.id, m.model.name, False, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u)
