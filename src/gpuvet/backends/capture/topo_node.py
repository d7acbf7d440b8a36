"""The node ``nvidia-smi topo -m`` draws: its matrix read into modules, NICs, the PCIe tree
inferred from the relation cells, NVLink counts (or the NVSwitch they go to), and what the host
sides drawn rest on. Apart from the backend because it is the one NVIDIA topology reader that
tests and tools call alone (parse_topo_matrix, topo_to_node)."""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.backends.nic_readings import Nic
from gpuvet.backends.readings import ModuleInfo, Unavailable
from gpuvet.captures.text import clean
from gpuvet.captures.topo import TopoMatrix, numa_id
from gpuvet.captures.topo import parse as _parse_topo
from gpuvet.errors import CaptureError
from gpuvet.node.catalog import unknown_model
from gpuvet.node.infer import infer_pcie_tree
from gpuvet.node.matrix import link_matrix
from gpuvet.node.model import Endpoint, EndpointKind, Host, Link, LinkKind, Module, Node
from gpuvet.node.relations import PcieRelation

_CUT = "unknown (topo -m; its row cut)"  # R10D: named in the header, its row not in the capture: listed as cut
_MAX_NVLINKS_PER_MODULE = 18  # the most any module has; more per module means a switch


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


def cut_gpu_columns(topo: TopoMatrix) -> list[str]:
    """GPUs named in the header whose own row the paste cut, that a GPU row read gives a cell to (R14B: GPU0's row
    reads NV12 to GPU1-7). They stay out of the node drawn (a module with only some of its links read would be judged
    as one with links down); cut_row_notes says what the rows read give them."""
    read = [d for d in topo.devices if d.startswith("GPU")]
    return [g for g in topo.header if re.fullmatch(r"GPU\d+", g) and g not in topo.devices
            and any(frozenset((g, r)) in topo.cells for r in read)]


def cut_row_notes(topo: TopoMatrix) -> list[str]:
    """What the rows read say of the GPUs whose rows are cut (R14B), and what is not in the capture."""
    cut = cut_gpu_columns(topo)
    if not cut:
        return []
    read = [d for d in topo.devices if d.startswith("GPU")]
    said = sorted({f"{_id(r)}-{_id(g)} {c}" for g in cut for r in read if (c := topo.cells.get(frozenset((g, r))))},
                  key=lambda s: [int(n) for n in re.findall(r"\d+", s)])
    return [f"topo -m: {', '.join(_id(g) for g in cut)}: rows cut; read from the rows there: {', '.join(said)}; "
            "their other cells, host side and NICs are not in the capture (never guessed), so the matrix drawn "
            "keeps the rows read"]


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


def link_notes(topo: TopoMatrix) -> list[str]:
    """What topo -m prints between each GPU and every other device (NV#, PIX, PXB, PHB, NODE, SYS), grouped
    by the cell as printed: inventory says the links the capture gives, not only the modules at their ends
    (a NIC is named as the legend names it, NIC0 (mlx5_0))."""
    named = list(dict.fromkeys([*topo.devices, *topo.header]))
    gpus = [d for d in named if d.startswith("GPU")]
    by_cell: dict[str, list[str]] = {}
    for i, a in enumerate(named):
        for b in named[i + 1:]:
            cell = topo.cells.get(frozenset((a, b)), "")
            if cell and cell != "X" and (a in gpus or b in gpus):
                by_cell.setdefault(cell, []).append(f"{_shown(topo, a)}-{_shown(topo, b)}")
    return [f"topo -m links as printed: {cell} {', '.join(pairs)}" for cell, pairs in by_cell.items()]


def _shown(topo: TopoMatrix, device: str) -> str:
    name = topo.nic_names.get(device)
    return f"{device} ({name})" if name and name != device else device


def _nvlinks(topo: TopoMatrix, gpus: list[str]) -> list[Link]:
    counts = {}
    for i, a in enumerate(gpus):
        for b in gpus[i + 1:]:
            m = re.fullmatch(r"NV(\d+)", topo.cells.get(frozenset((a, b)), ""))
            if m:
                counts[(a, b)] = int(m.group(1))
    # issue 46: a module with no NV# to any peer is off the fabric (no links), not a reason to read the rest as direct
    linked = [g for g in gpus if any(g in pair for pair in counts)]
    everyone = len(counts) == len(linked) * (len(linked) - 1) // 2 and len(linked) > 2
    if everyone and max(counts.values()) * (len(linked) - 1) > _MAX_NVLINKS_PER_MODULE:
        # every pair sees more links than a module has, shared: they go to switches, and a pair's NV# is what
        # the fewer-linked of the two has up to them; a module's own count is the most any of its pairs reads
        own = {g: max(n for pair, n in counts.items() if g in pair) for g in linked}
        return [Link(_id(g), "nvswitch0", LinkKind.NVLINK, own[g], None) for g in linked]
    return [Link(_id(a), _id(b), LinkKind.NVLINK, n, None) for (a, b), n in counts.items()]

def topo_modules(topo: TopoMatrix, node: Node) -> list[ModuleInfo]:
    """The modules inventory lists from topo -m alone: every GPU its header names (one whose row the
    capture cut is still a module of the node, its readings unknown), each with the NUMA Affinity its
    row read."""
    u = Unavailable("not in the captured file")
    known = {m.id: m.model.name for m in node.modules}
    gpus = [d for d in (topo.header or topo.devices) if re.fullmatch(r"GPU\d+", d)]
    return [ModuleInfo(_id(g), known.get(_id(g), _CUT if g not in topo.devices else "unknown (topo -m)"), False, *(u,) * 15,
                       numa_node=topo.numa[g] if topo.numa.get(g) is not None else u,  # type: ignore[arg-type]
                       cpu_affinity=_column(topo, g, "CPU Affinity", u),
                       gpu_numa_id=_numa_id(topo, g, u)) for g in gpus]


def with_affinity(modules: list[ModuleInfo], from_topo: list[ModuleInfo]) -> list[ModuleInfo]:
    """Another list's modules with topo -m's CPU affinity and GPU NUMA ID for the same id, where both lists
    name the same modules (ids read alike); unchanged otherwise."""
    if [m.id for m in modules] != [m.id for m in from_topo]:
        return modules
    return [replace(m, cpu_affinity=t.cpu_affinity, gpu_numa_id=t.gpu_numa_id) for m, t in
            zip(modules, from_topo, strict=True)]


def _numa_id(topo: TopoMatrix, gpu: str, u: Unavailable) -> int | Unavailable:
    """A GPU's own NUMA node (topo -m's GPU NUMA ID): a number, or why not ('N/A': it has none of its own)."""
    value = topo.affinity.get(gpu, {}).get("GPU NUMA ID", "")
    if value == "N/A":
        return Unavailable("N/A in topo -m: the GPU has no NUMA node of its own")
    return u if (got := numa_id(value)) is None else got


def _column(topo: TopoMatrix, gpu: str, title: str, u: Unavailable) -> str | Unavailable:
    """One affinity column of a GPU's row as topo -m printed it; unread where the row or column is absent."""
    value = topo.affinity.get(gpu, {}).get(title)
    return value if value else u


def topo_nics(topo: TopoMatrix, label: str) -> list[Nic]:
    """The NICs topo -m names (its NIC rows and columns, mlx5_N rows of older drivers), under the device name its
    legend gives (NIC0: mlx5_0): the node's NICs as the capture shows them; their ports, state and bus id are
    not in the matrix, so none is given (never invented)."""
    named = [d for d in dict.fromkeys([*topo.header, *topo.devices]) if re.fullmatch(r"NIC\d+|[a-z]+\d*_\d+", d)]
    out = []
    for d in named:
        numa = topo.numa.get(d)
        out.append(Nic(topo.nic_names.get(d, d), None, None, (), numa_node=numa if isinstance(numa, int) else None,
                       read_from=f"{label} (nvidia-smi topo -m {d}: ports and state not in the matrix)"))
    return out
