"""Captured tool output from a machine where gpuvet is not installed.

Each file `gpuvet.captures` reads may be given: the matrix of ``nvidia-smi topo -m`` gives fabric
links and the PCIe tree; ``nvidia-smi -q -x`` XML or ``nvidia-smi -q`` text (also inside an
nvidia-bug-report.log) names the modules. A file with neither (nccl-tests output, a kernel log)
gives an empty node and a note saying so, never an invented one. Both may be given; the module
list then names the modules that the matrix connects.

The readers live beside it, one job each: topo_node.py (the NVIDIA matrix into a node),
fabric_node.py (AMD's and Ascend's link tables), module_lists.py (the module lists into readings).
This module reads each file once, keeps one vendor's node (another vendor's captures are named,
never joined) and joins its topology and module list.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from gpuvet import __version__
from gpuvet.backends.base import Backend
from gpuvet.backends.capture import pci_nics
from gpuvet.backends.capture.fabric_node import fabric_to_node, npu_fabric_to_node
from gpuvet.backends.capture.module_lists import (
    NOT_IN_CAPTURE,
    bare_module,
    kernel_listed,
    listed_indexes,
    listed_module,
    lspci_listed,
    npu_listed,
    parse_smi_xml,
    smi_indexes,
    text_module,
    xml_modules,
)
from gpuvet.backends.capture.topo_node import (
    cut_row_notes,
    host_side_notes,
    link_notes,
    parse_topo_matrix,
    topo_modules,
    topo_nics,
    topo_to_node,
    with_affinity,
)
from gpuvet.backends.nic_readings import Nic, NicReadings
from gpuvet.backends.readings import HostInfo, Inventory, ModuleInfo, SoftwareInfo, Unavailable
from gpuvet.captures import read as capture_read
from gpuvet.captures import smi_xml
from gpuvet.captures.driver_ids import DriverIds
from gpuvet.captures.files import once_each
from gpuvet.captures.kernel import KernelModule
from gpuvet.captures.links import ListedGpu
from gpuvet.captures.records import ListedParse
from gpuvet.captures.topo import TopoMatrix
from gpuvet.captures.verdicts import verdicts
from gpuvet.errors import CaptureError
from gpuvet.node.catalog import find_model, unknown_model
from gpuvet.node.model import PCIE_LANE_GBPS, Endpoint, EndpointKind, Host, Link, LinkKind, Module, Node

__all__ = ["CaptureBackend", "TopoMatrix", "fabric_to_node", "npu_fabric_to_node", "parse_smi_xml", "parse_topo_matrix",
           "topo_to_node"]


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
    for name, listed in (("AMD", fc.amd), ("Ascend", fc.npu), ("Intel", fc.xpu), (accel_vendor(fc.accel), fc.accel)):
        devices = len(listed.fabric.devices) if listed.fabric is not None else 0
        if listed.modules or devices:
            out.append(_Vendor(name, min(listed.claimed, default=0), tuple(listed.kinds),
                               len(listed.modules) or devices,
                               tuple(dict.fromkeys(m.name or "unknown" for m in listed.modules))))
    return sorted(out, key=lambda v: v.first)


def _with_placed(named: list[KernelModule], ids: DriverIds) -> list[KernelModule]:
    """The modules the kernel reader names, and after them those a driver line names by bus id only (NVRM's 'GPU
    0000:01:00.0 is already bound to vfio-pci.'): each a module the log names, its model and state not said."""
    have = {k.module for k in named}
    return named + [KernelModule(b, v) for b, v in ids.placed() if b not in have]


def _log_hosts(fc: capture_read.FileCapture) -> list[str]:
    """The hosts a multi-node log names: NCCL's 'host:pid:tid' prefixes and nccl-tests' rank lines (none where the
    poster masked them: '<hostname>', a word standing for any host)."""
    log = fc.nccl_log
    named = [*([] if log.redacted else log.seen_hosts), *log.test_hosts, *(h for r in fc.nccl.results for h in r.nodes)]
    return [h for h in dict.fromkeys(named) if h and not _MASKED.match(h)]


# a word standing for any host ('device': nccl-tests' next column where the host is empty), never a real short
# name: node1, host2, server3 are hosts a cluster names
_MASKED = re.compile(r"^(?:<.*>|\*+|x{3,}|device|host|hostname|node|nodename|localhost|server|machine|my-?host)$",
                     re.I)


def accel_vendor(listed: ListedParse) -> str:
    """The vendor another accelerator's listing names (captures/accel_tools.py, imported only where it read one)."""
    if not listed.modules:
        return "another accelerator"
    from gpuvet.captures.accel_tools import vendor

    return vendor(listed)


def _listed(fc: capture_read.FileCapture, vendor: str) -> ListedParse | None:
    """The module list of a vendor other than NVIDIA: AMD's, Ascend's, Intel's xpu-smi, another accelerator's."""
    return {"AMD": fc.amd, "Ascend": fc.npu, "Intel": fc.xpu}.get(vendor) or (
        fc.accel if fc.accel.modules and vendor == accel_vendor(fc.accel) else None)


def _other_vendor(label: str, v: _Vendor, node_vendor: str) -> str:
    models = f": {', '.join(v.models[:4])}" if v.models else ""
    return (f"{label}: also holds {v.name}'s {', '.join(v.kinds)} ({v.modules} module(s){models}): left out of "
            f"this node, whose modules are {node_vendor}'s (read first); no capture states a link between two "
            f"vendors' modules, and such a file is most often of several machines. Give it a --from run of its own")


def _counters_added(had: Nic, more: Nic) -> Nic | None:
    """``had`` with the error and traffic counters ``more`` read of its ports (where ``had`` read none), its ports
    ``had`` does not list added; None where ``more`` adds no counter (a second listing of the same device)."""
    mine = {p.port: p for p in had.ports}
    added = [p for p in more.ports if (p.counters or p.traffic) and not (mine.get(p.port) and mine[p.port].counters)]
    if not added:
        return None
    for p in added:
        mine[p.port] = replace(mine[p.port], counters=p.counters, traffic=p.traffic) if p.port in mine else p
    return replace(had, ports=tuple(mine[k] for k in sorted(mine)))


class CaptureBackend(Backend):
    """Readings from captured files; nothing is measured."""

    name = "capture"
    captured = True
    simulated = False

    def __init__(self, paths: list[str], parsed: Mapping[str, capture_read.FileCapture] | None = None) -> None:
        """``parsed``: parses of the files made already (doctor's read_captures), taken instead of reading them."""
        self.paths = paths
        self._notes: list[str] = []
        self._topo: Node | None = None
        self._matrix: TopoMatrix | None = None  # the topo -m read into _topo: inventory lists its header's GPUs
        self._vendor: str | None = None  # the node is this vendor's: another's modules are named, never joined
        self._modules: list[ModuleInfo] = []
        self._nics: dict[str, Nic] = {}  # the RDMA tools' listings, one entry per device
        self._topo_nics: list[Nic] = []  # the NICs topo -m names: inventory lists them, no port state judged
        self._run_nics: list[Nic] = []  # R14B: the devices perftest runs name: inventory lists them, nothing judged
        self._links: list[str] = []  # topo -m's cells between GPUs and devices: inventory says them
        self._software = SoftwareInfo(__version__, NOT_IN_CAPTURE, NOT_IN_CAPTURE, NOT_IN_CAPTURE)
        self._cpus: dict[str, None] = {}  # issue 46: the host CPUs a listing names (rocminfo's CPU agents), in order
        self._hosts: dict[str, None] = {}  # the hosts the files name (a bug report's uname, a prompt, NCCL's), in order
        if not paths:
            raise CaptureError("no capture file given", fix="pass --from FILE.")
        named: list[KernelModule] = []  # the modules kernel logs name: listed only where nothing else lists any
        loaded: str | None = None  # the driver version a kernel log's loading line names: where no tool names one
        on_bus: list[ListedGpu] = []  # the GPU functions lspci lists: the same, and before the kernel's (models named)
        npus: set[int] = set()  # the NPUs an Ascend error log names by device: listed last, where nothing else lists
        driver_ids = DriverIds()  # the PCI ids and VRAM the drivers' lines print: the kernel-named modules' models
        for path in once_each(paths, self._notes):
            fc = parsed[path] if parsed is not None and path in parsed else capture_read.read(path)
            label = Path(path).name
            self._notes += [f"{label}: {n}" for n in fc.notes]
            self._hosts.update(dict.fromkeys([*([fc.host] if fc.host else []), *_log_hosts(fc)]))
            named += [k for k in fc.kernel.modules if k not in named]
            driver_ids.ids += fc.driver_ids.ids
            driver_ids.banner += fc.driver_ids.banner
            loaded = fc.kernel.driver or loaded
            on_bus += [g for g in fc.lspci.listed if g.bus_id not in {b.bus_id for b in on_bus}]
            npus |= {f.at.dev for f in (*fc.ascend.failures, *fc.ascend.runtime) if f.at.dev is not None}
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
        self._banner_versions(driver_ids.banner)
        if loaded and not isinstance(self._software.driver_version, str):
            self._software = replace(self._software, driver_version=loaded)
        xml_node = _modules_node(self._modules, Path(paths[0]).stem) if self._modules else None
        self._node: Node = _merge(self._topo, xml_node) if self._topo and xml_node else (
            self._topo or xml_node or Node(Path(paths[0]).stem, (), (), (), Host(1), pcie_known=False,
                                           fabric_known=False))
        if not self._modules and self._topo is None:  # inventory lists them; the node gets no invented links
            named = _with_placed(named, driver_ids)
            self._modules = lspci_listed(on_bus, self._notes) or kernel_listed(named, self._notes, driver_ids) or \
                npu_listed(sorted(npus), self._notes)

    def _banner_versions(self, banner: list[tuple[str, str | None]]) -> None:
        """nvidia-smi's banner where no table under it was taken (its rows cut, or a log quoting its head): the
        driver and CUDA versions it prints, never over what a tool's listing gave."""
        if not banner or isinstance(self._software.driver_version, str):
            return
        driver, cuda = banner[0]
        self._software = replace(self._software, driver_version=driver, cuda_driver_version=cuda or NOT_IN_CAPTURE)

    def _take(self, fc: capture_read.FileCapture, vendor: str, path: str, label: str) -> int:
        """One vendor's topology (the first one given) and module list from the file; returns how many
        modules it lists."""
        stem = Path(path).stem
        if vendor == "NVIDIA" and fc.topo is not None:
            if self._topo is None:
                self._topo, self._matrix = topo_to_node(fc.topo, stem), fc.topo
                self._topo_nics = topo_nics(fc.topo, label)
                self._notes += [f"{label}: {n}" for n in host_side_notes(fc.topo, self._topo)]
                self._notes += [f"{label}: {n}" for n in cut_row_notes(fc.topo)]  # R14B
                self._links = [f"{label}: {n}" for n in link_notes(fc.topo)]
        listed = _listed(fc, vendor)
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
            modules = [text_module(f"gpu{k}", m, notes) for k, m in zip(smi_indexes(fc.smi.modules, notes), fc.smi.modules,
                                                                               strict=True)]
            software = SoftwareInfo(__version__, fc.smi.driver or NOT_IN_CAPTURE, fc.smi.cuda or NOT_IN_CAPTURE,
                                    NOT_IN_CAPTURE, fc.smi.cuda_runtime or NOT_IN_CAPTURE)
        elif (listed := _listed(fc, vendor)) is not None:  # another vendor's tool listed them
            ids = listed_indexes(listed.modules)
            numa = listed.fabric.numa if listed.fabric is not None else {}  # rocm-smi's (Topology) Numa Node
            modules = [listed_module(f"gpu{i}", m, notes, numa.get(re.sub(r"\W", "", m.label)))
                       for i, m in zip(ids, listed.modules, strict=True)]
            notes += [f"gpu{i} ({v.where}): {v.tool} says {v.field}: {v.value} ({v.severity}; doctor names it)"
                      for i, m in zip(ids, listed.modules, strict=True) for v in verdicts(m)
                      if v.severity in ("critical", "warn")]
            software = SoftwareInfo(__version__, listed.driver or NOT_IN_CAPTURE, NOT_IN_CAPTURE, NOT_IN_CAPTURE)
            self._cpus.update(dict.fromkeys(listed.host_cpus))
        else:
            return 0
        self._notes += [f"{label}: {n}" for n in notes]
        if self._modules and modules:
            self._notes.append(f"{label}: a second module list; the first one given is used")
        elif modules:
            self._modules, self._software = modules, software
        elif not self._modules and vendor == "NVIDIA" and isinstance(software.driver_version, str):
            self._software = software  # a table cut before its first module row: its versions alone
        return len(modules)

    def _take_nics(self, fc: capture_read.FileCapture, label: str) -> None:
        """Each RDMA device once, whichever file lists it first; a second listing is named."""
        if fc.perftest.runs:  # R14B: perftest's header names the device it ran on
            from gpuvet.backends.capture.perftest_nics import perftest_nics

            for n in perftest_nics(fc.perftest.runs, label):
                if n.device not in {m.device for m in self._run_nics}:
                    self._run_nics.append(n)
                    self._notes.append(f"{label}: {n.device}: {n.read_from}")
        if fc.nccl_log.choices:  # R14A: NCCL's NET/IB names the HCAs it chose
            from gpuvet.backends.capture.nccl_nics import nccl_nics

            named = {m.device for m in self._run_nics}
            for n in (n for n in nccl_nics(fc.nccl_log, label) if n.device not in named):
                self._run_nics.append(n)  # each host's HCA its own (REV67a #6), said as NCCL printed it
                self._notes.append(f"{label}: {n.device}: {n.read_from}")
        for nic in fc.nics.nics:
            if nic.device in self._nics and (merged := _counters_added(self._nics[nic.device], nic)) is not None:
                self._nics[nic.device] = merged  # a port's counters (sysfs, perfquery) beside ibstat's state
            elif nic.device in self._nics:
                self._notes.append(f"{label}: {nic.device} listed again: the first listing is used")
            else:
                self._nics[nic.device] = replace(nic, read_from=f"{label} ({'/'.join(fc.nics.kinds)})")
        together, said = pci_nics.merged(list(self._nics.values()))  # FX68E: lspci's model for rdma link's devices
        if said is not None:
            self._nics = {n.device: n for n in together}
            self._notes.append(f"{label}: {said}")

    def nics(self) -> NicReadings | None:
        """The NICs the captures list (ibstat, ibv_devinfo, ibdev2netdev); None where none does. A
        capture does not show the peer-memory module: that is left unknown, never assumed."""
        if not self._nics:
            return None
        return NicReadings(tuple(self._nics.values()), Unavailable("not in the captures (lsmod | grep peermem)"),
                           "captured ibstat/ibv_devinfo", captured=True)

    def listed_nics(self) -> NicReadings | None:
        """nics() and, beside them, the NICs topo -m names that no RDMA tool listed: inventory lists every NIC
        the capture names; doctor judges only those whose ports a tool read (nics())."""
        read = self.nics()
        topo: dict[str, Nic] = {}
        for n in self._topo_nics:
            topo.setdefault(n.device, n)  # the first listing of a device kept
        more = (*(n for n in topo.values() if n.device not in self._nics),
                *(n for n in self._run_nics if n.device not in self._nics and n.device not in topo))
        # the run NICs are one per device, or per host and device where NCCL's log names two hosts (_take_nics)
        if not more:
            return read
        return NicReadings((*(read.nics if read else ()), *more),
                           Unavailable("not in the captures (lsmod | grep peermem)"),
                           "captured ibstat/ibv_devinfo, nvidia-smi topo -m", captured=True)

    def node(self) -> Node:
        return self._node

    def notes(self) -> tuple[str, ...]:
        return tuple(self._notes)

    def inventory(self) -> Inventory:
        modules = self._modules or (topo_modules(self._matrix, self._node) if self._matrix and self._topo is self._node
                                    else [bare_module(m) for m in self._node.modules])
        if self._modules and self._matrix is not None:  # a module list beside topo -m: its affinity columns too
            modules = with_affinity(self._modules, topo_modules(self._matrix, self._node))
        # the host names the files give (several: a multi-node log's, joined), never the file's name; sockets only
        # where a topology was read (never Host(1))
        name = ", ".join(self._hosts) if self._hosts else None
        sockets = self._node.host.sockets if self._topo is not None else NOT_IN_CAPTURE
        cpu = " + ".join(self._cpus) if self._cpus else NOT_IN_CAPTURE
        host = HostInfo(name, cpu, sockets, NOT_IN_CAPTURE,
                        NOT_IN_CAPTURE, NOT_IN_CAPTURE, NOT_IN_CAPTURE, "captured", "captured", "captured",
                        tuple(self._hosts))
        return Inventory(self.name, False, tuple(modules), host, self._software,
                         (f"Read from captured files: {', '.join(self.paths)}; nothing was measured.", *self._notes,
                          *self._links))
