"""Captured ``nvidia-smi`` output from a machine where gpuvet is not installed.

- ``nvidia-smi topo -m`` (text): the device matrix -> fabric links and the PCIe tree.
- ``nvidia-smi -q -x`` (XML): modules with name, UUID, bus id, memory, PCIe, settings.
Both may be given; the XML then names the modules that the matrix connects.
Parsing is separate from reading files so it is tested on recorded text.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from pathlib import Path

from gpuvet import __version__
from gpuvet.backends.base import Backend
from gpuvet.backends.readings import HostInfo, Inventory, ModuleInfo, SoftwareInfo, Unavailable
from gpuvet.errors import CaptureError
from gpuvet.node.catalog import find_model, unknown_model
from gpuvet.node.infer import infer_pcie_tree
from gpuvet.node.model import PCIE_LANE_GBPS, Endpoint, EndpointKind, Host, Link, LinkKind, Module, Node
from gpuvet.node.relations import PcieRelation

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CELL_ALIASES = {"SOC": "SYS", "CPU": "NODE"}  # names used by older drivers
_CELL = re.compile(r"X|NV\d+|PIX|PXB|PHB|NODE|SYS")
_MAX_NVLINKS_PER_MODULE = 18  # the most any module has; more per module means a switch
_NOT_IN_CAPTURE = Unavailable("not in the captured file")


@dataclass
class TopoMatrix:
    devices: list[str]  # as printed: GPU0, NIC0, mlx5_0 …
    cells: dict[frozenset[str], str]
    numa: dict[str, int | None]
    nic_names: dict[str, str] = field(default_factory=dict)


def parse_topo_matrix(text: str, where: str = "topo -m") -> TopoMatrix:
    """Parse ``nvidia-smi topo -m`` text. Raises CaptureError if it is not one."""
    lines = [_ANSI.sub("", line).rstrip() for line in text.splitlines()]
    # the header is the first line naming GPU0 that starts blank (rows start with their name)
    header_at = next((i for i, line in enumerate(lines) if re.search(r"\bGPU0\b", line)
                      and line[:1].isspace()), None)
    if header_at is None:
        raise CaptureError("no `nvidia-smi topo -m` matrix found (expected a header line with GPU0 …)",
                           where=where, fix="capture it with `nvidia-smi topo -m > topo.txt`.")
    tokens = [t for t in re.split(r"\t+| {2,}", lines[header_at].strip()) if t]
    devices = [t for t in tokens if not re.search(r"affinity|numa", t, re.I)]
    extra = [t for t in tokens if re.search(r"affinity|numa", t, re.I)]
    cells: dict[frozenset[str], str] = {}
    numa: dict[str, int | None] = {}
    for line in lines[header_at + 1:]:
        row = [t.strip() for t in re.split(r"\t+| {2,}", line.strip()) if t.strip()]
        if not row or row[0] not in devices:
            if row and row[0].lower().startswith("legend"):
                break
            continue
        name, values = row[0], row[1:]
        if len(values) < len(devices):
            raise CaptureError(f"row {name} has {len(values)} cells for {len(devices)} devices",
                               where=where, fix="capture the whole output, unwrapped.")
        for other, cell in zip(devices, values, strict=False):
            cell = _CELL_ALIASES.get(cell, cell)
            if not _CELL.fullmatch(cell):
                raise CaptureError(f"row {name}, column {other}: {cell!r} is not a topo -m cell "
                                   "(X, NV#, PIX, PXB, PHB, NODE, SYS)", where=where,
                                   fix="capture the whole output, unwrapped and unedited.")
            if other != name:
                cells[frozenset((name, other))] = cell
        numa[name] = _numa(values[len(devices):], extra)
    if not any(d.startswith("GPU") for d in numa):
        raise CaptureError("the matrix has no GPU rows", where=where, fix="capture the whole output.")
    nic_names = dict(re.findall(r"^\s*(NIC\d+):\s*(\S+)", "\n".join(lines), re.M))
    return TopoMatrix(devices, cells, numa, nic_names)


def _numa(values: list[str], headers: list[str]) -> int | None:
    for header, value in zip(headers, values, strict=False):
        if header.lower().startswith("numa") and value.isdigit():
            return int(value)
    return None


def _id(device: str) -> str:
    m = re.fullmatch(r"(GPU|NIC)(\d+)", device)
    return f"{m.group(1).lower()}{m.group(2)}" if m else device


def _relation(cell: str) -> PcieRelation | None:
    return PcieRelation(cell) if cell in PcieRelation.__members__ else None


def topo_to_node(topo: TopoMatrix, name: str) -> Node:
    gpus = [d for d in topo.devices if d.startswith("GPU")]
    ids = [_id(d) for d in topo.devices]
    rel = {frozenset((_id(a), _id(b))): _relation(c) for (a, b), c in
           ((tuple(k), v) for k, v in topo.cells.items())}
    socket_of = {_id(d): topo.numa.get(d) for d in topo.devices}
    if not all(socket_of.get(_id(g)) is not None for g in gpus):
        socket_of = {}
    endpoints, links, sockets = infer_pcie_tree(ids, rel, socket_of)
    endpoints += [Endpoint(_id(d), EndpointKind.NIC, topo.nic_names.get(d)) for d in topo.devices
                  if not d.startswith("GPU")]
    links += _nvlinks(topo, gpus)
    if any(link.b == "nvswitch0" for link in links):
        endpoints.append(Endpoint("nvswitch0", EndpointKind.FABRIC_SWITCH))
    modules = tuple(Module(_id(g), unknown_model("unknown (topo -m)")) for g in gpus)
    unseen = frozenset(k for k, r in rel.items() if r is None)
    return Node(name, modules, tuple(endpoints), tuple(links), Host(sockets), unseen_relations=unseen)


def _nvlinks(topo: TopoMatrix, gpus: list[str]) -> list[Link]:
    counts = {}
    for i, a in enumerate(gpus):
        for b in gpus[i + 1:]:
            m = re.fullmatch(r"NV(\d+)", topo.cells.get(frozenset((a, b)), ""))
            if m:
                counts[(a, b)] = int(m.group(1))
    everyone = len(counts) == len(gpus) * (len(gpus) - 1) // 2 and len(set(counts.values())) == 1
    if everyone and len(gpus) > 2 and next(iter(counts.values())) * (len(gpus) - 1) > _MAX_NVLINKS_PER_MODULE:
        width = next(iter(counts.values()))  # every pair sees all links: they go to a switch
        return [Link(_id(g), "nvswitch0", LinkKind.NVLINK, width, None) for g in gpus]
    return [Link(_id(a), _id(b), LinkKind.NVLINK, n, None) for (a, b), n in counts.items()]


# --- nvidia-smi -q -x --------------------------------------------------------------------

def _find(el: ET.Element, path: str) -> str | None:
    found = el.find(path)
    if found is None or found.text is None:
        return None
    text = found.text.strip()
    return None if text in ("", "N/A", "[N/A]", "Not Supported", "[Not Supported]") else text


def _number(text: str | None) -> float | None:
    m = re.match(r"[-+]?\d+(\.\d+)?", text or "")
    return float(m.group(0)) if m else None


def _int_or(text: str | None) -> int | Unavailable:
    n = _number(text)
    return int(n) if n is not None else _NOT_IN_CAPTURE


def _float_or(text: str | None) -> float | Unavailable:
    n = _number(text)
    return n if n is not None else _NOT_IN_CAPTURE


def parse_smi_xml(text: str, where: str = "nvidia-smi -q -x") -> tuple[list[ModuleInfo], SoftwareInfo]:
    """Modules and software from ``nvidia-smi -q -x``. Raises CaptureError if it is not one."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise CaptureError(f"not well-formed XML ({exc})", where=where,
                           fix="capture it with `nvidia-smi -q -x > smi.xml`.") from None
    if root.tag != "nvidia_smi_log":
        raise CaptureError(f"root element is <{root.tag}>, expected <nvidia_smi_log>", where=where,
                           fix="capture it with `nvidia-smi -q -x > smi.xml`.")
    gpus = sorted(root.findall("gpu"), key=lambda g: (g.get("id") or "").upper()[-12:])
    modules = [_xml_module(f"gpu{i}", g) for i, g in enumerate(gpus)]
    software = SoftwareInfo(__version__, _find(root, "driver_version") or _NOT_IN_CAPTURE,
                            _find(root, "cuda_version") or _NOT_IN_CAPTURE, _NOT_IN_CAPTURE)
    return modules, software


def _xml_module(module_id: str, g: ET.Element) -> ModuleInfo:
    name = _find(g, "product_name") or "unknown"
    mib = _number(_find(g, "fb_memory_usage/total"))
    link = "pci/pci_gpu_link_info"
    power = g.find("gpu_power_readings")  # drivers >= 535; older ones say power_readings
    if power is None:
        power = g.find("power_readings")

    def pw(*tags: str) -> float | Unavailable:
        for tag in tags:
            if power is not None and _find(power, tag) is not None:
                return _float_or(_find(power, tag))
        return _NOT_IN_CAPTURE

    ecc = _find(g, "ecc_mode/current_ecc")
    return ModuleInfo(
        id=module_id, model=name, in_catalog=find_model(name) is not None,
        uuid=_find(g, "uuid") or _NOT_IN_CAPTURE,
        bus_id=(_find(g, "pci/pci_bus_id") or g.get("id") or "").upper()[-12:] or _NOT_IN_CAPTURE,
        memory_bytes=int(mib * 2**20) if mib is not None else _NOT_IN_CAPTURE,
        pcie_gen_current=_int_or(_find(g, f"{link}/pcie_gen/current_link_gen")),
        pcie_gen_max=_int_or(_find(g, f"{link}/pcie_gen/max_link_gen")),
        pcie_width_current=_int_or(_find(g, f"{link}/link_widths/current_link_width")),
        pcie_width_max=_int_or(_find(g, f"{link}/link_widths/max_link_width")),
        power_limit_w=pw("current_power_limit", "power_limit"),
        power_limit_default_w=pw("default_power_limit"), power_limit_max_w=pw("max_power_limit"),
        ecc_enabled=(ecc == "Enabled") if ecc else _NOT_IN_CAPTURE,
        sm_clock_mhz=_int_or(_find(g, "clocks/sm_clock")), mem_clock_mhz=_int_or(_find(g, "clocks/mem_clock")),
        sm_clock_max_mhz=_int_or(_find(g, "max_clocks/sm_clock")),
        mem_clock_max_mhz=_int_or(_find(g, "max_clocks/mem_clock")),
        numa_node=_int_or(_find(g, "numa_node_id")),
    )


def _xml_node(modules: list[ModuleInfo], name: str) -> Node:
    mods, links = [], []
    for m in modules:
        mem = m.memory_bytes if isinstance(m.memory_bytes, int) else None
        model = find_model(m.model) or unknown_model(m.model, mem)
        mods.append(Module(m.id, model, m.bus_id if isinstance(m.bus_id, str) else None,
                           m.uuid if isinstance(m.uuid, str) else None))
        gen = m.pcie_gen_max if isinstance(m.pcie_gen_max, int) else None
        width = m.pcie_width_current if isinstance(m.pcie_width_current, int) else 16
        links.append(Link(m.id, "cpu0", LinkKind.PCIE, width, PCIE_LANE_GBPS.get(gen) if gen else None, gen))
    return Node(name, tuple(mods), (Endpoint("cpu0", EndpointKind.SOCKET),), tuple(links), Host(1),
                pcie_known=False, fabric_known=False)


def _merge(topo_node: Node, xml_node: Node) -> Node:
    """Structure from the matrix, identity and PCIe link figures from the XML."""
    by_id = {m.id: m for m in xml_node.modules}
    modules = tuple(by_id.get(m.id, m) for m in topo_node.modules)
    own = {m.id: xml_node.pcie_link(m.id) for m in xml_node.modules}
    links = []
    for link in topo_node.links:
        mine = own.get(link.a) if link.kind is LinkKind.PCIE else None
        links.append(replace(link, width=mine.width, lane_gbps=mine.lane_gbps, gen=mine.gen) if mine else link)
    return replace(topo_node, modules=modules, links=tuple(links))


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise CaptureError(f"cannot read the file ({exc.strerror})", where=path,
                           fix="check the path; capture with `nvidia-smi topo -m` or `nvidia-smi -q -x`.") from None


class CaptureBackend(Backend):
    """Readings from captured files; nothing is measured."""

    name = "capture"
    captured = True
    simulated = False

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        topo_node = xml_node = None
        self._modules: list[ModuleInfo] = []
        self._software = SoftwareInfo(__version__, _NOT_IN_CAPTURE, _NOT_IN_CAPTURE, _NOT_IN_CAPTURE)
        for path in paths:
            text = _read(path)
            if text.lstrip().startswith("<"):
                self._modules, self._software = parse_smi_xml(text, path)
                xml_node = _xml_node(self._modules, Path(path).stem)
            else:
                topo_node = topo_to_node(parse_topo_matrix(text, path), Path(path).stem)
        if topo_node and xml_node:
            self._node = _merge(topo_node, xml_node)
        else:
            self._node = topo_node or xml_node  # type: ignore[assignment]
        if self._node is None:
            raise CaptureError("no capture file given", fix="pass --from FILE.")

    def node(self) -> Node:
        return self._node

    def inventory(self) -> Inventory:
        modules = self._modules or [_bare_module(m) for m in self._node.modules]
        host = HostInfo(self._node.name, _NOT_IN_CAPTURE, self._node.host.sockets, _NOT_IN_CAPTURE,
                        _NOT_IN_CAPTURE, _NOT_IN_CAPTURE, _NOT_IN_CAPTURE, "captured", "captured", "captured")
        return Inventory(self.name, False, tuple(modules), host, self._software,
                         (f"Read from captured files: {', '.join(self.paths)}; nothing was measured.",))


def _bare_module(m: Module) -> ModuleInfo:
    u = _NOT_IN_CAPTURE
    return ModuleInfo(m.id, m.model.name, False, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u)
