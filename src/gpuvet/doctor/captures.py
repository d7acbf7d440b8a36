"""Evidence captured on a machine without gpuvet, gathered for doctor's checks.

Every file given with --from is read by `gpuvet.captures` (which detects the format by content
and notes what it skipped); this module collects what all files said into one typed record.
Files holding a topology or a module list are also handed to the capture backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpuvet.captures.records import (
    UNNAMED,
    AppError,
    CopyCheckFailure,
    DcgmResult,
    ListedModule,
    ModuleHealth,
    NcclResult,
    NcclRow,
    NvbDevice,
    NvLinkErrors,
    NvLinkState,
    PcieLink,
    SmiTextModule,
    ToolVerdict,
    XidLine,
)
from gpuvet.doctor.xids import xid_catalog
from gpuvet.errors import CaptureError
from gpuvet.node.bus import bus_key
from gpuvet.node.vendor_tools import CAPTURED, GIVE

if TYPE_CHECKING:  # the parsers load when a file is read: a simulated or live node reads none (issue 43)
    from gpuvet.captures import read
    from gpuvet.captures.aer import AerParse
    from gpuvet.captures.bench import NcclFailure, NvbWaived
    from gpuvet.captures.dcgm_health import DcgmHealthParse
    from gpuvet.captures.fabric_manager import FabricManagerLog
    from gpuvet.captures.gpu_burn import GpuBurnParse
    from gpuvet.captures.kernel import KernelEvent
    from gpuvet.captures.links import ListedGpu, NotEnabled
    from gpuvet.captures.nccl_log import NcclLog
    from gpuvet.captures.nic_driver import NicCompletionError, NicDriverFailure, NicLinkChange
    from gpuvet.captures.perftest import PerftestRun
    from gpuvet.captures.rdma_verbs import VerbsSetup
    from gpuvet.captures.rocm_validation import CopyCheck
    from gpuvet.captures.tool_failures import ToolFailure
    from gpuvet.captures.ucx import UcxError, UcxLimit

__all__ = ["Captures", "NcclResult", "NcclRow", "SmiTextModule", "XID_MEANINGS", "XidLine", "parse_nccl_tests",
           "parse_nvbandwidth", "parse_smi_text", "parse_xid_log", "read_captures", "sniff"]

XID_MEANINGS = {code: info.meaning for code, info in xid_catalog().items()}


@dataclass
class Captures:
    xids: list[XidLine] = field(default_factory=list)
    nccl: list[NcclResult] = field(default_factory=list)
    nvbandwidth: dict[str, list[list[float | None]]] = field(default_factory=dict)  # test -> matrix (GB/s)
    nvb_devices: list[NvbDevice] = field(default_factory=list)
    copy_failures: list[CopyCheckFailure] = field(default_factory=list)
    smi_text: list[SmiTextModule] = field(default_factory=list)
    health: list[ModuleHealth] = field(default_factory=list)  # from -q text and -q -x XML
    nvlink_states: list[NvLinkState] = field(default_factory=list)
    nvlink_errors: list[NvLinkErrors] = field(default_factory=list)
    pcie_links: list[PcieLink] = field(default_factory=list)
    nic_links: list[PcieLink] = field(default_factory=list)  # lspci's NIC functions: the NIC rule judges them
    pcie_others: list[PcieLink] = field(default_factory=list)  # lspci's other endpoints at a narrower width (R12B)
    not_enabled: list[NotEnabled] = field(default_factory=list)  # lspci's GPU functions with bus mastering off
    gone_from_bus: list[ListedGpu] = field(default_factory=list)  # lspci's GPU functions reading '(rev ff)'
    dcgm: list[DcgmResult] = field(default_factory=list)
    kernel_events: list[KernelEvent] = field(default_factory=list)  # NVRM messages without an Xid
    kernel_lines: int = 0  # NVRM lines read: a log without any says nothing about the driver
    kernel_plain: int = 0  # issue 46: kernel lines of an excerpt with no GPU, NIC-to-GPU or driver line (fallback.py)
    kernel_other: dict[str, int] = field(default_factory=dict)  # issue 46: lines of GPU drivers with no messages known
    gpu_unread: dict[str, int] = field(default_factory=dict)  # OX1: a GPU stack's lines no reader read, by source
    nccl_failures: list[NcclFailure] = field(default_factory=list)
    nvb_waived: list[NvbWaived] = field(default_factory=list)
    nvlink_products: dict[str, str] = field(default_factory=dict)  # "GPU 0" -> product, for its design link count
    topo_and_xml: list[str] = field(default_factory=list)  # paths for CaptureBackend
    parsed: dict[str, read.FileCapture] = field(default_factory=dict, compare=False, repr=False)  # path -> its parse:
    # the backend takes these (cli/doctor.py), not a second read of each file (a stat, read and hash when unsettled)
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    read_as: dict[str, list[str]] = field(default_factory=dict)  # file name -> the kinds read in it (cited as evidence)
    clock_reasons_read: set[str] = field(default_factory=set)  # modules whose capture had a clock-reasons section
    verdicts: list[ToolVerdict] = field(default_factory=list)  # npu-smi Health, amd-smi RAS/ECC, per listed module
    states: list[tuple[str, ListedModule]] = field(default_factory=list)  # (file, a module its table's figures state)
    fabric_manager: list[tuple[str, FabricManagerLog]] = field(default_factory=list)  # (file, its FM lines)
    perftest: list[tuple[str, PerftestRun]] = field(default_factory=list)  # (file, one ib_*_bw run)
    rdma_errors: list[tuple[str, UcxError]] = field(default_factory=list)  # (file, UCX's completion error on a port)
    rdma_memlock: list[tuple[str, UcxLimit]] = field(default_factory=list)  # (file, a verbs call ulimit -l failed)
    rdma_setup: list[tuple[str, VerbsSetup]] = field(default_factory=list)  # (file, a QP a program could not set up)
    nic_driver: list[tuple[str, NicDriverFailure]] = field(default_factory=list)  # (file, a NIC its driver failed)
    nic_carrier: list[tuple[str, NicLinkChange]] = field(default_factory=list)  # (file, a NIC link lost or flapping)
    nic_completions: list[tuple[str, NicCompletionError]] = field(default_factory=list)  # (file, the RDMA core's)
    nccl_logs: list[tuple[str, NcclLog]] = field(default_factory=list)  # (file, its NCCL/RCCL/HCCL log lines)
    copy_checks: list[tuple[str, CopyCheck]] = field(default_factory=list)  # (file, a rocm-bandwidth-test -v cell)
    no_peer: list[tuple[str, CopyCheck]] = field(default_factory=list)  # (file, GPUs rocm-bandwidth-test cannot join)
    bus_gpus: list[tuple[str, str]] = field(default_factory=list)  # NVIDIA GPU functions an lspci listing names
    bus_other_gpus: int = 0  # other vendors' GPU functions lspci lists: nvidia-smi's 'none' is no fault
    smi_none: list[tuple[str, int]] = field(default_factory=list)  # (file, line) of nvidia-smi's 'No devices were found'
    aer: list[tuple[str, AerParse]] = field(default_factory=list)  # (file, the kernel's PCIe AER lines by device)
    app_errors: list[tuple[str, AppError]] = field(default_factory=list)  # (file, a program's CUDA/NVML error line)
    gpu_burn: list[tuple[str, GpuBurnParse]] = field(default_factory=list)  # (file, one gpu-burn run)
    dcgm_health: list[tuple[str, DcgmHealthParse]] = field(default_factory=list)  # (file, its dcgmi health -c)
    samples_passed: list[tuple[str, bool]] = field(default_factory=list)  # (file, deviceQuery's Result = PASS/FAIL)
    # (file, model, i, j, what said it): p2pBandwidthLatencyTest's CANNOT Access Peer, topo -p2p's NS/GNS/CNS …
    p2p_denied: list[tuple[str, str, int, int, str]] = field(default_factory=list)
    tool_failures: list[tuple[str, ToolFailure]] = field(default_factory=list)  # (file, a GPU tool's failure line)


def read_captures(paths: list[str]) -> Captures:
    """Read every file. Raises CaptureError (naming the file and what was expected)."""
    from gpuvet.captures import read
    from gpuvet.captures.files import once_each
    from gpuvet.doctor import file_hosts

    caps = Captures(files=list(paths))
    caps.parsed = {p: read.read(p) for p in once_each(paths, caps.notes)}
    files = [(Path(p).name, fc) for p, fc in caps.parsed.items()]
    files, apart = file_hosts.apart(files)  # two files naming one module: kept apart, each in its place (issue 46)
    for _, fc in files:
        _add(caps, fc)
    caps.notes += apart
    caps.notes += _foreign_xids(caps)
    return caps


def _foreign_xids(caps: Captures) -> list[str]:
    """Xids on buses no listed module has: a kernel log of another machine given beside a module
    listing (the findings stay, named by bus; nothing is joined to a module silently)."""
    listed = {bus_key(h.module) for h in caps.health if h.module != UNNAMED}
    if not listed:
        return []
    foreign = sorted({x.bus_id for x in caps.xids if bus_key(x.bus_id) not in listed})
    if not foreign:
        return []
    return [f"Xid(s) on bus {', '.join(foreign[:4])}{' …' if len(foreign) > 4 else ''}, which no listed module has "
            f"(the listing names {len(listed)}): a kernel log of another machine? they are named by bus, not "
            "joined to a module"]


def _add(caps: Captures, fc: read.FileCapture) -> None:
    from gpuvet.captures import fallback, gpu_software, kernel_driver_oops, smi_text
    from gpuvet.captures.smi_xml import health as xml_health

    label = Path(fc.path).name
    caps.notes += [f"{label}: read as {', '.join(fc.kinds)}"] + [f"{label}: {n}" for n in fc.notes]
    caps.read_as[label] = list(fc.kinds)
    before = len(caps.health)
    if fc.topo is not None or fc.xml is not None or fc.smi is not None or fc.amd.modules or fc.amd.fabric \
            or fc.npu.modules or fc.npu.fabric or fc.nics.nics or fc.accel.modules:  # a node, or its NICs, to rebuild
        caps.topo_and_xml.append(fc.path)
    if fc.smi is not None:
        caps.smi_text += fc.smi.modules
        caps.health += [smi_text.health(m) for m in fc.smi.modules]
        caps.clock_reasons_read |= {m.bus_id for m in fc.smi.modules  # an empty set of reasons is evidence only if read
                                    if any(sec in k.split("/") for k in m.fields for sec in smi_text._EVENT_SECTIONS)}
    if fc.xml is not None:
        gpus = fc.xml.root.findall(".//gpu") or ([fc.xml.root] if fc.xml.root.tag == "gpuvet_fragment" else [])
        named = [(smi_text.bus(g.get("id") or "") or f"GPU {i} of the XML", g) for i, g in enumerate(gpus)]
        caps.health += [xml_health(name, g) for name, g in named]
        caps.clock_reasons_read |= {name for name, g in named if g.find("clocks_event_reasons") is not None
                                    or g.find("clocks_throttle_reasons") is not None}
    caps.nccl += fc.nccl.results
    caps.nvbandwidth.update(fc.nvb.matrices)
    caps.nvb_devices += fc.nvb.devices
    caps.copy_failures += fc.nvb.failures
    caps.xids += fc.kernel.xids
    caps.nvlink_states += fc.nvlink.states
    caps.nvlink_errors += fc.nvlink.errors
    _add_bus(caps, fc, label)
    _add_aer(caps, fc, label)
    caps.dcgm += fc.dcgm.results
    caps.kernel_events += kernel_driver_oops.hosted(fc.kernel.events, fc.host)  # FX68C: the node that crashed
    caps.kernel_lines += fc.kernel.nvrm_lines
    caps.kernel_plain += fc.kernel.lines if isinstance(fc.kernel, fallback.GpulessKernel) else 0
    for driver, n in fc.kernel.unknown_drivers.items():
        caps.kernel_other[driver] = caps.kernel_other.get(driver, 0) + n
    if isinstance(fc.kernel, gpu_software.UnreadGpuText):  # OX1: never judged clear (captures/gpu_software.py)
        caps.gpu_unread[fc.kernel.source] = caps.gpu_unread.get(fc.kernel.source, 0) + fc.kernel.unread
    caps.nccl_failures += fc.nccl.failures
    caps.nvb_waived += fc.nvb.waived
    caps.nvlink_products.update(fc.nvlink.products)
    _add_listed(caps, fc, label)
    caps.verdicts += fc.amd.unnamed  # rocm-smi's words on a module it does not name (captures/rocm_sensors.py)
    if fc.fabric_manager.events:
        caps.fabric_manager.append((label, fc.fabric_manager))
    caps.perftest += [(label, run) for run in fc.perftest.runs]
    caps.rdma_errors += [(label, e) for e in fc.ucx.errors]
    caps.rdma_memlock += [(label, e) for e in fc.ucx.limits]
    caps.rdma_setup += [(label, e) for e in fc.ucx.setups]
    caps.nic_driver += [(label, f) for f in fc.nic_driver.failures]
    caps.nic_carrier += [(label, c) for c in fc.nic_driver.links]
    caps.nic_completions += [(label, c) for c in fc.nic_driver.completions]
    caps.nccl_logs += [(label, log) for log in (fc.nccl_log, fc.ascend) if log.lines]
    caps.copy_checks += [(label, c) for c in fc.rbt_validation.checks]
    caps.no_peer += [(label, c) for c in fc.rbt_validation.no_peer]
    caps.tool_failures += [(label, f) for f in fc.tool_failures.found]  # SAFE: doctor/tool_leads.py
    _add_programs(caps, fc, label)
    caps.notes += [f"{label}: {h.module}: {c}" for h in caps.health[before:] for c in h.corrupt]


def _add_aer(caps: Captures, fc: read.FileCapture, label: str) -> None:
    """The kernel's AER lines, a log of several hosts each host's devices apart (captures/hosted.py); a device
    that is not a GPU is noted, never a module finding."""
    for aer in (fc.aer, *fc.aer.hosted):
        if not aer.devices:
            continue
        caps.aer.append((label, aer))
        on = f"{aer.host} " if aer.host else ""
        caps.notes += [f"{label}: kernel AER: {d.driver} {on}{d.bus} (not a GPU: no module finding), {d.correctable} "
                       f"correctable, {d.uncorrectable} uncorrectable" for d in aer.devices.values()
                       if d.driver not in ("pcieport", "nvidia") and not aer.gpu(d.bus)]


def _add_bus(caps: Captures, fc: read.FileCapture, label: str) -> None:
    """What an lspci listing says of the bus, and nvidia-smi's 'No devices were found' read beside it."""
    caps.pcie_links += fc.lspci.links
    caps.pcie_others += fc.lspci.others
    caps.nic_links += fc.lspci.nics
    caps.not_enabled += fc.lspci.not_enabled
    caps.gone_from_bus += fc.lspci.gone
    caps.bus_gpus += [g for g in fc.lspci.gpus if g not in caps.bus_gpus]
    caps.bus_other_gpus += sum(1 for g in fc.lspci.listed if g.vendor != "NVIDIA")
    caps.smi_none += [(label, fc.lspci.smi_none)] if fc.lspci.smi_none else []


def _add_listed(caps: Captures, fc: read.FileCapture, label: str) -> None:
    """The vendor tools' listed modules: their own verdicts, and the figures of their state tables (STJ:
    doctor/state_judgment.py reads them against each other)."""
    from gpuvet.captures.verdicts import verdicts

    listed = (*fc.amd.modules, *fc.npu.modules, *fc.xpu.modules, *fc.accel.modules)
    caps.verdicts += [v for m in listed for v in verdicts(m)]
    caps.states += [(label, m) for m in listed if m.state is not None]


def _add_programs(caps: Captures, fc: read.FileCapture, label: str) -> None:
    """What programs printed (issue 46): their error lines, the CUDA samples' tables and verdicts,
    gpu-burn's run, dcgmi health's report."""
    caps.app_errors += [(label, e) for e in (*fc.samples.errors, *fc.app_errors.errors)]
    caps.nvbandwidth.update(fc.samples.matrices)
    caps.nvb_devices += fc.samples.devices
    caps.samples_passed += [(label, fc.samples.passed)] if fc.samples.passed is not None else []
    names = {int(m.fields.get("Index", -1)): m.product for m in fc.samples.modules.modules}  # deviceQuery's
    names.update({d.index: d.name for d in fc.samples.devices})
    caps.p2p_denied += [(label, names.get(i, ""), i, j,
                         fc.samples.peer_said.get((i, j), f"Device={i} CANNOT Access Peer Device={j}"))
                        for i, j in sorted(fc.samples.no_peer) if i < j]
    caps.p2p_denied += _p2p_statuses(fc, label)
    caps.gpu_burn += [(label, fc.gpu_burn)] if fc.gpu_burn.ran else []
    caps.dcgm_health += [(label, fc.dcgm_health)] if fc.dcgm_health.overall is not None else []


def _p2p_statuses(fc: read.FileCapture, label: str) -> list[tuple[str, str, int, int, str]]:
    """`nvidia-smi topo -p2p`'s pairs without peer access, each with the model the same file's listing
    gives its row's index (none: judged as a model not named)."""
    from gpuvet.captures.topo import P2P_MEANING

    names = {m.fields.get("Index", ""): m.product for m in (fc.smi.modules if fc.smi else [])}
    from gpuvet.doctor.p2p_pcie import prop_denied

    return [(label, names.get(str(i), ""), i, j, f"topo -p2p: GPU{i}-GPU{j} {st} ({P2P_MEANING.get(st, st)})")
            for i, j, st in fc.p2p.denied()] + prop_denied(fc, label, names)


def sniff(path: str) -> str:
    """What kind of capture a file mainly is (the first kind found in it)."""
    from gpuvet.captures import read

    return read.read(path).kinds[0]


# --- single-format readers kept for callers and tests that want one format only -----------
def parse_xid_log(text: str, where: str) -> list[XidLine]:
    from gpuvet.captures import kernel
    from gpuvet.captures.text import clean

    xids = kernel.parse(clean(text).lines).xids
    if not xids:
        raise CaptureError("no `NVRM: Xid (PCI:…): N,` lines", where=where,
                           fix="capture the kernel log with `dmesg -T | grep -i xid` or `journalctl -k | grep Xid`.")
    return xids


def parse_nccl_tests(text: str, where: str) -> NcclResult:
    from gpuvet.captures import bench
    from gpuvet.captures.text import clean

    parsed = bench.parse_nccl(clean(text).lines, where)
    if not parsed.results or not parsed.results[0].rows:
        raise CaptureError("no result rows (size count type redop root time algbw busbw #wrong …)", where=where,
                           fix="give the complete stdout of an nccl-tests binary (all_reduce_perf -b 8 -e 1G -g 8).")
    return parsed.results[0]


def parse_nvbandwidth(text: str, where: str) -> dict[str, list[list[float | None]]]:
    from gpuvet.captures import bench
    from gpuvet.captures.text import clean

    parsed = bench.parse_nvbandwidth(clean(text).lines)
    if not parsed.matrices:
        raise CaptureError("no `Running <test>.` section with a bandwidth matrix", where=where,
                           fix="give the stdout of nvbandwidth (e.g. nvbandwidth -t device_to_device_memcpy_read_ce).")
    return parsed.matrices


def parse_smi_text(text: str, where: str) -> list[SmiTextModule]:
    from gpuvet.captures import smi_text
    from gpuvet.captures.text import clean

    modules = smi_text.parse(clean(text).lines).modules
    if not modules:
        raise CaptureError(f"no `{CAPTURED['smi_q']}` fields (`Key : value` lines)", where=where,
                           fix=f"capture it with {GIVE['smi_q']}.")
    return modules
