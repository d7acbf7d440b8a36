"""Every captured format gpuvet reads, as one unit each: what it is, the FileCapture field it fills,
how it is parsed and which lines it sees; and FORMATS, the one ordered list read.py walks. A new
format is its parser module, one line in FORMATS and its field in FileCapture (docs/architecture.md).

Order matters: a format given ``UNCLAIMED`` sees only the lines no earlier format claimed, so the
specific formats come first and the loose ones (topo -m, then nvidia-smi -q, whose ``Key : value``
shape is the least specific) read what the others left. ``SHARED`` formats see the same lines as
the format before them (read side by side, their claims do not hide lines from each other);
``ALL`` sees every line whatever was claimed.

A format's parser may be named by its module and attribute (``_one("smi_list.parse")``): imported on its first run,
so a text without the format's markers never imports it (issue 43: the readers' imports were a third of a short
capture's startup). A parser given as a function still works.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from string import ascii_uppercase, digits
from typing import TYPE_CHECKING, Any, Literal, Protocol

from gpuvet.captures import (
    accel_marks,
    aer,
    amd_smi,
    app_errors,
    app_marks,
    ascend_errors,
    ascend_marks,
    bench,
    bench_results,
    cuda_samples,
    dcgm,
    dcgm_health,
    driver_ids,
    driver_marks,
    fabric_manager,
    gpu_burn,
    kernel,
    links,
    lspci_tree,
    nccl_log,
    nic_driver,
    nic_tools,
    perftest,
    rocm_validation,
    smi_mig,
    smi_text,
    topo,
    ucx,
)
from gpuvet.captures.marks import Marker, Needing
from gpuvet.captures.marks import Marks as Marks  # read.py's too: it imports formats and text alone
from gpuvet.captures.records import (
    AMD_EXPORTER,
    DCGM_EXPORTER,
    EXPORTER_NVLINK,
    HCCL_TEST,
    PCIE_STATUS,
    TRANSFERBENCH,
    ListedParse,
)
from gpuvet.captures.runtime_marks import OPS_MARKS, RUNTIME, RUNTIME_LINES, RUNTIME_MARKS, SIDE_MARKS
from gpuvet.captures.text import Cleaned, Line
from gpuvet.captures.tool_failures import VERDICT_MARKS, ToolFailures
from gpuvet.captures.windows_marks import EVENTS, LIST_MARKS, MARKS, WHEA, WHEA_MARKS
from gpuvet.captures.windows_marks import WINDOWS as WINDOWS  # module_list names the listing by it

if TYPE_CHECKING:
    from gpuvet.captures import smi_xml


@dataclass
class FileCapture:
    """What one file holds, one field per format. The fields holding notes are said in this order
    (read.py reads them from every field that has ``notes``)."""

    path: str
    kinds: list[str] = field(default_factory=list)
    xml: smi_xml.SmiXml | None = None
    p2p: topo.P2pStatus = field(default_factory=topo.P2pStatus)  # topo -p2p's statuses (before the field `topo`)
    topo: topo.TopoMatrix | None = None
    smi: smi_text.SmiText | None = None  # -q text, else the table, the --query-gpu CSV or nccl-tests' device lines
    nccl: bench.NcclParse = field(default_factory=bench.NcclParse)  # nccl-tests, rccl-tests, HCCL Test
    nvb: bench.NvbParse = field(default_factory=bench.NvbParse)  # nvbandwidth, TransferBench
    kernel: kernel.KernelParse = field(default_factory=kernel.KernelParse)
    driver_ids: driver_ids.DriverIds = field(default_factory=driver_ids.DriverIds)  # the ids its lines print (INV2)
    nvlink: links.NvLinkParse = field(default_factory=links.NvLinkParse)
    lspci: links.LspciParse = field(default_factory=links.LspciParse)
    lspci_tree: lspci_tree.LspciTree = field(default_factory=lspci_tree.LspciTree)  # lspci -t: counted, not judged
    dcgm: dcgm.DcgmParse = field(default_factory=dcgm.DcgmParse)
    dmon: smi_text.Dmon = field(default_factory=smi_text.Dmon)
    amd: ListedParse = field(default_factory=ListedParse)  # amd-smi, rocm-smi, rocm-bandwidth-test
    npu: ListedParse = field(default_factory=ListedParse)  # npu-smi info
    xpu: ListedParse = field(default_factory=ListedParse)  # Intel xpu-smi discovery, diag, health
    nccl_log: nccl_log.NcclLog = field(default_factory=nccl_log.NcclLog)  # NCCL_DEBUG lines, RCCL's, HCCL's plog
    ascend: ascend_errors.AscendLog = field(default_factory=ascend_errors.AscendLog)  # CANN's HCCL/HCCP codes (torch_npu)
    rbt_validation: rocm_validation.RbtValidation = field(default_factory=rocm_validation.RbtValidation)  # -v
    aer: aer.AerParse = field(default_factory=aer.AerParse)  # the kernel's PCIe AER lines
    nics: nic_tools.NicToolsParse = field(default_factory=nic_tools.NicToolsParse)  # ibstat, ibv_devinfo, …
    fabric_manager: fabric_manager.FabricManagerLog = field(default_factory=fabric_manager.FabricManagerLog)
    perftest: perftest.PerftestParse = field(default_factory=perftest.PerftestParse)  # ib_write_bw, …
    ucx: ucx.UcxParse = field(default_factory=ucx.UcxParse)  # UCX's completion errors on an RDMA port
    nic_driver: nic_driver.NicDriverParse = field(default_factory=nic_driver.NicDriverParse)  # a NIC its driver failed
    samples: cuda_samples.CudaSamplesParse = field(default_factory=cuda_samples.CudaSamplesParse)  # deviceQuery, …
    dcgm_health: dcgm_health.DcgmHealthParse = field(default_factory=dcgm_health.DcgmHealthParse)  # dcgmi health -c
    gpu_burn: gpu_burn.GpuBurnParse = field(default_factory=gpu_burn.GpuBurnParse)
    mig: smi_mig.MigListing = field(default_factory=smi_mig.MigListing)  # nvidia-smi mig -lgi/-lgip/-lci/-lcip
    app_errors: app_errors.AppErrorsParse = field(default_factory=app_errors.AppErrorsParse)  # CUDA, NVML, PyTorch
    accel: ListedParse = field(default_factory=ListedParse)  # hl-smi, habanalabs, neuron-ls, tt-smi (accel_tools)
    tool_failures: ToolFailures = field(default_factory=ToolFailures)  # a GPU tool's failure verdicts (SAFE)
    results: bench_results.BenchResults = field(default_factory=bench_results.BenchResults)  # R14E: HPL, STREAM, …
    notes: list[str] = field(default_factory=list)
    bug_report: bool = False
    host: str | None = None  # the host the file names as its own (one syslog host, one pdsh host), else None


@dataclass(frozen=True)
class Parsed:
    """What one format found in the lines it saw: ``value`` fills its field (None leaves the field
    as it is), ``claimed`` are the lines it understood. ``found`` names the file with the format's
    name; a format that tells several tools apart names them itself in ``kinds``."""

    value: object | None
    claimed: set[int]
    found: bool = False
    kinds: tuple[str, ...] = ()


Lines = Literal["unclaimed", "shared", "all"]
UNCLAIMED: Lines = "unclaimed"
SHARED: Lines = "shared"
ALL: Lines = "all"


@dataclass(frozen=True)
class Gated:
    """A parser of several tools' readers, each with markers of its own: given the whole text's marks, it
    runs only the readers whose markers the text holds (issue 43: amd-smi's ten)."""

    parse: Callable[[list[Line], str, Marks], Parsed]
    groups: tuple[tuple[Marker, ...], ...] = ()  # each reader's markers


@dataclass(frozen=True)
class Format:
    """One captured format. ``field`` is the FileCapture field it fills (None: kept by name for
    ``choose_smi``); ``adds`` puts what it found beside what an earlier format left in that field
    (HCCL Test beside nccl-tests), field by field, instead of replacing it. ``markers`` (issue 43):
    literal strings or patterns, one of which every line the parser can claim or read holds (taken
    from the parser's own patterns); a text holding none of them is not given to the parser, which
    would find nothing in it. None declared: always parsed."""

    name: str  # the kind a file is read as when it holds this format
    field: str | None
    parse: Callable[[list[Line], str], Parsed] | Gated
    lines: Lines = UNCLAIMED
    adds: bool = False
    markers: tuple[Marker, ...] = ()
    unmarked: str = ""  # why a format has no markers (then it is cheap on other tools' lines)

    def groups(self) -> tuple[tuple[Marker, ...], ...]:
        """The marker groups a run of this format may ask about: its own, and each of its readers'."""
        return (self.markers, *self.parse.groups) if isinstance(self.parse, Gated) else (self.markers,)

    def run(self, lines: list[Line], where: str, marks: Marks | None = None) -> Parsed:
        """The parse of ``lines``; ``marks``: the whole text's, for a Gated parser (else the lines')."""
        if isinstance(self.parse, Gated):
            return self.parse.parse(lines, where, marks or Marks(lines))
        return self.parse(lines, where)


def _loaded(parse: Callable[..., Any] | str) -> Callable[..., Any]:
    """``parse``, or the function a ``module.attr`` under gpuvet.captures names (its module imported now)."""
    if not isinstance(parse, str):
        return parse
    module, attr = parse.split(".")
    return getattr(importlib.import_module(f"gpuvet.captures.{module}"), attr)  # type: ignore[no-any-return]


class _Claims(Protocol):
    @property
    def claimed(self) -> set[int]: ...


class _Lists(_Claims, Protocol):
    @property
    def kinds(self) -> list[str]: ...


def _one(parse: Callable[[list[Line]], _Claims] | str) -> Callable[[list[Line], str], Parsed]:
    """A parser that takes the lines alone, found when it claimed one."""
    def run(lines: list[Line], where: str) -> Parsed:
        got = _loaded(parse)(lines)
        return Parsed(got, got.claimed, found=bool(got.claimed))
    return run


def _marked(parse: str) -> Callable[[list[Line], str, Marks], Parsed]:
    """A parser named by ``module.attr`` that takes the lines and the text's marks (a literal they rule out is
    never searched), found when it claimed one."""
    def run(lines: list[Line], where: str, marks: Marks) -> Parsed:
        got = _loaded(parse)(lines, marks)
        return Parsed(got, got.claimed, found=bool(got.claimed))
    return run


def _listed(parse: Callable[[list[Line]], _Lists] | str) -> Callable[[list[Line], str], Parsed]:
    """A parser that names the tools it found itself (amd-smi or rocm-smi, ibstat or ibv_devinfo)."""
    def run(lines: list[Line], where: str) -> Parsed:
        got = _loaded(parse)(lines)
        return Parsed(got, got.claimed, kinds=tuple(got.kinds))
    return run


def _found(parse: str) -> Callable[[list[Line], str], Parsed]:
    """A parser named by ``module.attr`` whose value fills the field only where it claimed a line, else the field
    keeps what an earlier format left (gpu-fryer's summary beside gpu-burn's, TransferBench's beside nvbandwidth's)."""
    def run(lines: list[Line], where: str) -> Parsed:
        got = _loaded(parse)(lines)
        return Parsed(got if got.claimed else None, got.claimed, bool(got.claimed), tuple(getattr(got, "kinds", ())))
    return run


def _kernel(lines: list[Line], where: str, marks: Marks) -> Parsed:  # the words the text lacks are not searched
    return Parsed(got := kernel.parse(lines, marks), got.claimed, found=bool(got.claimed))


def _ops_layer(lines: list[Line], where: str, marks: Marks) -> Parsed:
    from gpuvet.captures import ops_layer  # imported on the format's first run (issue 43)
    got = ops_layer.parse(lines, marks)  # the words it looks for that the text lacks are not searched
    return Parsed(got, got.claimed, found=bool(got.claimed))


def read_quoted(fc: FileCapture, lines: list[Line]) -> set[int]:
    """Issue 46, called by read.py only where no format read anything: the messages a poster's sentence quotes
    (app_errors.quoted) and the Xids it names (quoted.quoted_xids) are their report, named as such. The lines read."""
    from gpuvet.captures import quoted

    (fc.kernel.xids, xids), fc.app_errors = quoted.quoted_xids(lines), app_errors.quoted(lines)
    fc.kernel.events, said = quoted.quoted_messages(lines)
    dcgm = fc.dcgm_health = dcgm_health.quoted(lines)  # DCGM's failure messages in the poster's words
    if (fabric := _loaded("ib_fabric.quoted")(lines)).nics:  # AX3: an RDMA fabric tool's line a sentence quotes
        fc.nics, fc.kinds, said = fabric, fabric.kinds, said | fabric.claimed
    fc.kinds = [app_errors.QUOTED] if fc.app_errors.errors or fc.kernel.xids or fc.kernel.events or dcgm.claimed \
        else fc.kinds
    return fc.app_errors.claimed | xids | said | dcgm.claimed


def read_unrecognised(fc: FileCapture, cleaned: Cleaned, walk: Callable[[FileCapture, list[Line]], set[int]]) -> set[int]:
    """Issue 46, called by read.py where nothing was read, not even a quoted message: fallback.py, gpu_mentions.py
    (MX1), gpu_software.py (OX1), gpu_text.py (GEN1), each only where those before it read nothing."""
    from gpuvet.captures import fallback, gpu_mentions, gpu_software, gpu_text
    claimed = fallback.read(fc, cleaned, walk, lambda: FileCapture(fc.path, bug_report=fc.bug_report))
    for step in (gpu_mentions.read, gpu_software.read, gpu_text.read):
        claimed = claimed if claimed and fc.kinds else step(fc, cleaned)
    return claimed


def read_leads(fc: FileCapture, lines: list[Line], claimed: set[int]) -> None:
    """GEN1, called by read.py last: the failure lines no reader claimed, as leads (captures/unread_leads.py); none
    in a bug report (its other sections are no GPU tool's output: never searched, nothing imported)."""
    if not fc.bug_report:
        from gpuvet.captures import container_layer, unread_leads  # IGC: a container's view of its GPUs first
        fc.tool_failures.found += unread_leads.of(fc, lines, claimed | container_layer.framed(fc.app_errors, lines, claimed))


def read_hosted(fc: FileCapture, cleaned: Cleaned) -> None:
    """Issue 46, called by read.py where prefixes named two hosts or more: captures/hosted.py."""
    from gpuvet.captures import hosted

    hosted.by_host((fc.kernel, fc.aer, fc.app_errors, fc.fabric_manager), cleaned.lines, cleaned.host_of, fc.ucx)


def _amd(lines: list[Line], where: str, marks: Marks) -> Parsed:
    return Parsed(got := amd_smi.parse(lines, marks), got.claimed, kinds=tuple(got.kinds))


def _aside(parse: str) -> Callable[[list[Line], str], Parsed]:
    """A parser of lines another format claimed (its value added beside that format's): none claimed."""
    return lambda lines, where: Parsed(_loaded(parse)(lines), set())


def _xml(lines: list[Line], where: str) -> Parsed:
    from gpuvet.captures import smi_xml
    got = smi_xml.parse(lines, where)
    return Parsed(got, got.claimed if got else set(), found=got is not None)


def _nccl(lines: list[Line], where: str) -> Parsed:
    return Parsed(got := bench.parse_nccl(lines, where), got.claimed, found=bool(got.claimed))


def _no_devices(lines: list[Line], where: str) -> Parsed:
    """nvidia-smi's answer when the driver brought up no module: lspci's parse claims and keeps the line
    (``LspciParse.smi_none``); here it only names the file, after the kinds read beside it."""
    return Parsed(None, set(), found=any("No devices were found" in ln.text and links.smi_none(ln.text) for ln in lines))


def _rbt_validation(lines: list[Line], where: str) -> Parsed:  # its header alone is claimed; named with PASS/FAIL
    return Parsed(got := rocm_validation.parse(lines), got.claimed, found=bool(got.checks))


def _hccl(lines: list[Line], where: str) -> Parsed:
    from gpuvet.captures import hccl
    return Parsed(got if (got := hccl.parse(lines, where)).claimed else None, got.claimed, found=bool(got.claimed))


def _pcie_status(lines: list[Line], where: str) -> Parsed:  # R3C: and the sysfs *_link_* files (pcie_sysfs.py)
    from gpuvet.captures import pcie_status
    return Parsed((got := pcie_status.read(lines))[0], got[0].claimed if got[0] else set(), kinds=got[1])


def _nics(lines: list[Line], where: str) -> Parsed:
    return Parsed((got := nic_tools.parse(lines))[0], got[1], kinds=tuple(got[0].kinds))


def _ib_counters(lines: list[Line], where: str) -> Parsed:
    """sysfs' RDMA port counters, added to the NIC tools' records (loaded only where a text has the markers)."""
    from gpuvet.captures import ib_counters

    got, claimed = ib_counters.parse(lines)
    return Parsed(got if claimed else None, claimed, kinds=tuple(got.kinds))


def _kept(parse: Callable[[list[Line]], smi_text.SmiText] | str) -> Callable[[list[Line], str], Parsed]:
    """The table and the --query-gpu CSV: their lines claimed now, their modules kept for choose_smi."""
    def run(lines: list[Line], where: str) -> Parsed:
        got = _loaded(parse)(lines)
        return Parsed(got, got.claimed)
    return run


def _topo(lines: list[Line], where: str) -> Parsed:
    if (got := topo.parse(lines, where)) is not None:
        topo.again(lines, got, where)  # a second matrix in the file: compared with the first, said
    return Parsed(got, got.claimed if got else set(), found=got is not None)


def _smi(lines: list[Line], where: str) -> Parsed:
    return Parsed(got, got.claimed, found=True) if (got := smi_text.parse(lines, where)).modules else Parsed(None, set())


def _dcgm_json(lines: list[Line], where: str) -> Parsed:
    """dcgmi diag -j: one JSON document over many lines, read from the whole text; its lines from the
    first ``{`` to the last ``}`` claimed."""
    if not any("test_categories" in ln.text for ln in lines):
        return Parsed(None, set())
    got = dcgm.parse_json("\n".join(ln.text for ln in lines))
    if got is None:
        return Parsed(None, set())
    first = next(ln.no for ln in lines if "{" in ln.text)
    last = max(ln.no for ln in lines if "}" in ln.text)
    got.claimed = {ln.no for ln in lines if first <= ln.no <= last}
    return Parsed(got, got.claimed, found=True)


# markers (Format.markers): each is in every line its parser can claim or read, from the parser's patterns
# nccl-tests: a header (bench._NCCL_HEADER, _RANK), a failure (_FAILURE, _OOB) or a result row (_NEW_ROW,
# _MID_ROW, _OLD_ROW: two counts, then a word and four fields); without one it returns an empty parse
_NCCL_MARKS = ("nThread", "Using devices", "Avg bus bandwidth", "Out of bounds", "Rank", " failure ",
               "algbw", "Test FAILED", "Init failed",  # NCCL 1's tests: a header, mpi_test's verdict (nccl_legacy)
               Needing(re.compile(r"size\s+count"), ("count",)),
               re.compile(r"\n[^\S\n]*\d+[^\S\n]+\d+[^\S\n]+\w+" + r"[^\S\n]+\S+" * 4))
# AER: aer._ERROR, _DEVICE, _FROM, _RECOVERY (a recovery excerpt alone is read); a '[bit] Name' (_BIT) after a device
_AER_MARKS = ("PCIe Bus Error", "error status/mask=", "received", "recover")
# HCCL Test: hccl.parse reads nothing without its header or a failed row (both '|' tables), its first
# line or an error line; a one-character marker is a memchr, the cheapest look
_HCCL_MARKS = ("|", "minbytes is", "interface return err")
# TransferBench: transferbench._is_transferbench (its version, a title, a Transfer line, a sweep or an a2a head)
_TB_MARKS = ("Transfer", "directional copy peak", "Scaling benchmark", "STotal")
# npu-smi info: a topo header (npu_topo._FIRST), or its '|' table (npu_smi._HEAD, a chip's rows)
_NPU_MARKS = ("|", "NPU", "Phy-ID", "Health Status")  # and -t health's status line
# dcgmi health -c: its box or its -j document (dcgm_health.parse), DCGM's log lines, or DCGM's failure messages' words
_HEALTH_MARKS = (*dcgm_health.REPORT_MARKS, *dcgm_health.MESSAGE_MARKS)
# the NIC tools (nic_tools.parse): ibstat's CA line or a port block without it (_unnamed_ca), ibv_devinfo's hca_id,
# ibstatus' block head, lshca's 'FW:' line or its '|' table, mlxlink's command line or block title, ibdev2netdev
_NIC_MARKS = ("CA '", "hca_id:", "Infiniband device '", "FW:", "|", "mlxlink", "Operational Info", "==>", "DEVICE_TYPE",
              re.compile(r"Port \d{1,3}:\s*$", re.M),
              Needing(re.compile(r"\n[^\S\n]*state:\s*PORT_[A-Z]"), ("PORT_",)))  # the last: ibv_devinfo without its
# hca_id line, looked for at line starts (a '^' of re.M is tried at every character: 0.08 s of a 20 MB report)

# sysfs' RDMA port counters (ib_counters): a path under /sys/class/infiniband, a loop's or head's title, or a
# counter's name (each holds one of the last five: symbol_error, link_downed, port_xmit_discards, VL15_dropped, …);
# perfquery's dotted counters ('LinkDownedCounter:......255'): ':..'
# issue 43: a head as ib_counters._HEAD reads it ('=== ./link_downed ===', '==> name <=='), not any '===': every bug
# report's '====NVSMI LOG====' banner holds that, and the walk of every line it woke was 0.09 s of a 20 MB report; at a
# line's start, as _HEAD reads it (searched with the other line starts, not alone: 10 ms of a 20 MB report)
_IB_HEADS = Needing(re.compile(r"\n[^\S\n]*(?:===|==>)[^\S\n]*[\w/.-]*\w[^\S\n]*(?:===|<==)"), ("===", "==>"))
# '_error': every counter name holding 'error' holds it ('error' alone is in every bug report, searched to its end)
_IB_COUNTER_MARKS = ("/sys/class/infiniband", _IB_HEADS, "_error", "xmit", "rcv", "link_downed", "VL15", ":..")

# nvidia-smi -q -x: smi_xml.find_span reads nothing without its root, the XML declaration or one of its tags (_MARK)
_XML_MARKS = ("<nvidia_smi_log", "<?xml", "<gpu id=", "clocks_throttle_reasons>", "clocks_event_reasons>",
              "fb_memory_usage>", "pci_gpu_link_info>", "temperature>", "retired_pages>", "remapped_rows>",
              "power_readings>", "max_clocks>", "ecc_errors>")
# Ascend's codes: 'E', a capital and four digits opening a line (ascend_errors._CODE); an ASCII text without 'E',
# a capital and a digit together holds none (\d is any script's digit: a text of others searched)
_CODE_OPENS = Needing(re.compile(r"\n[^\S\n]*E[A-Z]\d{4}\b"), tuple(f"E{c}{d}" for c in ascii_uppercase for d in digits),
                      unicode=True)
# nvbandwidth: parse_nvbandwidth reads nothing without a 'Running'/'Waiving' line, its name or a matrix title
# (_TITLE, any case, ends '(GB/s)', '(ns)' or '(us)'; a copy kernel's 'Measured bandwidth in GB/s of size …')
_NVB_MARKS = ("Running ", "Waiving ", "nvbandwidth", "s)", "S)", "Measured bandwidth")
# nvidia-smi nvlink -s/-e and -L's module lines (a line opening 'GPU 0: …', products kept), dcgmi nvlink's 'gpuId 0:'
_NVLINK_MARKS = (re.compile(r"\n[^\S\n]*GPU \d+: "), "gpuId ")
# nvidia-smi -L: a module line ('GPU 0: … (UUID: …)', or elided: '…' or '...' after its name), the driver's /proc
# listing ('Bus Location:'); MIG and capability lines are read only after a module line
_LIST_MARKS = ("(UUID: ", "...", "…", "Bus Location:")
# dcgmi diag's table: its header row or a category row ('| Diagnostic', '+--- Deployment ---+')
_DIAG_MARKS = ("|", "+-")
# perftest: a title (_TITLE, any case: '… BW Test', '… Latency Test': 'Test'), its units row (_UNITS), or a failure in
# its own words (_HEADLESS: HOST:PORT after "Couldn't connect to", a QP/HCA/GID, …)
_PERFTEST_MARKS = perftest.MARKS  # and each failure line perftest._FAIL reads holds one of its own words
# the CUDA samples: cuda_samples.parse's titles (deviceQuery, p2pBandwidthLatencyTest's matrices, bandwidthTest)
_SAMPLES_MARKS = ("deviceQuery", "CUDA Device Query", "Matrix (GB/s)", "Matrix (us)", "Access Peer Device=",
                  "[CUDA Bandwidth Test]",
                  " Bandwidth, ", "cudaGetDeviceCount returned",  # deviceQuery's tail pasted alone
                  "_Bandwidth_pinned", "_Bandwidth_pageable")  # hipBusBandwidth's tests (hip_bus.MARKS)
_HIP_MARKS = ("hip", "HIP", "Hip", "hsa_", "HSA_", "Hsa_", "emory access fault", "EMORY ACCESS FAULT", "ROCk module",
              "AMDSMI_STATUS_DRIVER", "Unable to detect any GPU", "No AMD GPUs",  # and the ROCm tools' no-driver lines
              "xception by GPU node", "/sys/class/kfd", "/dev/kfd'", "KFD topology", "NOT added due", "rejects atomics",
              "kfd not supported", "supported in kfd", "program ISA", "hsa api call")  # hip_errors' (R5A, R8C)
_OLD_NCCL = Needing(re.compile(r":\d{1,9} \[\d{1,4}\] (?:\S{1,120}:\d{1,6} )?(?:INFO|WARN) "), ("INFO", "WARN"))
_NCCL_LOG_MARKS = ("CCL", "ccl", "Ccl", "Rank", "Got completion", _OLD_NCCL)  # a bare IB error; NCCL 2.0-2.2's prefix

TABLE, QUERY, VGPU, NODES = "nvidia-smi table", "nvidia-smi --query-gpu", "nvidia-smi vgpu", "GPU device nodes"
# a --query-gpu table opens with its header (smi_query._columns: query names, each lower case first, split by commas)
# or under the command line: not any ',' (issue 43: every bug report's, its walk of every line 0.03 s of 20 MB)
_QUERY_HEAD = Needing(re.compile(r"\n[^\S\n]*[a-z][a-z0-9_.]{1,60}(?:[^\S\n]*\[[^\]\n]{1,12}\])?[^\S\n]*,[^\S\n]*[a-z]"),
                      (",",))
LISTING, DISCOVERY = "nvidia-smi -L", "dcgmi discovery -l"
ENV = "environment report"  # collect_env, check_env, *-cli env, ds_report, nvcc -V, /proc's version, container-cli info
_ENV_MARKS = ("CUDA available", "GPU available", "used to build PyTorch", "GPU models and", "(GPU?)", "listing device",
              "Cuda compilation tools", "torch cuda version", "CUDA Driver Version", "Nvidia driver version", "NVRM version",
              "vLLM Version", "GPU type", "Device Index", "(accelerator?)", "proc/driver/nvidia/version",  # and
              "NVIDIA-SMI version", "HIP_PLATFORM",  # --version's, hipconfig --full's; nvidia-smi's header line alone:
              Needing(re.compile(r"\n[^\S\n]*NVIDIA-SMI [\d.]+ +(?:Driver|KMD)"), ("NVIDIA-SMI",)))
MONITOR = "gpustat, pmon or another monitor"  # issue 46: captures/monitor_tools.py (its kinds name the tool)
RIG = "rig report (nvidia-smi's fields restated)"  # a markdown summary's GPU bullets (captures/rig_report.py)
NCCL_TOPO = "NCCL topology XML"  # NCCL_TOPO_DUMP_FILE's <system> dump (captures/nccl_topo.py)
EXPORTER = DCGM_EXPORTER + " metrics"
FIELDS = "DCGM field values"  # a monitor's log of them by field tag ('GPU 0 power_usage (FP64), value: 35.274')
FORMATS: tuple[Format, ...] = (
    Format("nvidia-smi -q -x", "xml", _xml, markers=_XML_MARKS),
    Format("nccl-tests", "nccl", _nccl, markers=_NCCL_MARKS),
    Format("nvbandwidth", "nvb", _one(bench.parse_nvbandwidth), SHARED, markers=_NVB_MARKS),
    Format("kernel log", "kernel", Gated(_kernel), SHARED, unmarked="many drivers' own words (kernel_messages.yaml, "
           "amdgpu, NVRM, the PCI core); one literal test a line before any regex"),
    Format("driver device ids", "driver_ids", _aside("driver_ids.parse"), ALL, markers=driver_ids.MARKERS),
    Format("nvlink state", "nvlink", _one(links.parse_nvlink), SHARED, markers=_NVLINK_MARKS),
    Format("dcgmi nvlink -e", "nvlink", _one("dcgmi_more.parse"), SHARED, adds=True, markers=("NVLINK Error Counts",)),
    Format("lspci -vvv", "lspci", _one(links.parse_lspci), SHARED, unmarked="a device line is a bus id and a class "
           "name, no literal; a line that opens nothing while nothing is open is passed over first"),
    Format("dcgmi diag", "dcgm", _one(dcgm.parse_text), SHARED, markers=_DIAG_MARKS),
    Format("DCGM diagnostic JSON", "dcgm", _one("dcgm_events.parse"), SHARED, adds=True,
           markers=("{",)),  # any keys kept, jq'd logs; read only from a line opening an object
    Format("nvidia-smi dmon", "dmon", _one(smi_text.parse_dmon), SHARED, markers=("#", "dcgmi dmon")),
    # its '# gpu …' header (dcgmi's '#Entity'), or dcgmi's command line naming the columns of rows printed without it
    Format("kernel AER", "aer", Gated(_marked("aer.parse")), SHARED, markers=_AER_MARKS),
    Format("device plugin, dcgm-exporter or gpud Xids", "kernel", _one("plugin_xids.parse"), SHARED, adds=True,
           markers=("XidCriticalError", "DCGM_FI_DEV_XID_ERRORS", "detected on PCI:", "detected by ", '\\"xid\\"')),
    # the monitors' Xid words, beside the kernel's (gpud's: its event text, its JSON event's escaped Xid)
    Format("miner NVML lines", "kernel", _one("app_gpu_lines.parse"), SHARED, adds=True, markers=app_marks.MARKS),
    # miners' 'GPU is lost' (miner_lost), their card errors, hashcat, Folding@home, ffmpeg's encoders (issue 46)
    Format("nvidia-smi's messages", "kernel", Gated(_marked("smi_messages.parse")), SHARED, adds=True, unmarked="its WORDS"),
    Format(WINDOWS, None, _kept("windows.listing"), SHARED, markers=LIST_MARKS),  # its NVIDIA adapters
    Format(WINDOWS + " (AMD)", "amd", _listed("windows.amd_listing"), SHARED, markers=LIST_MARKS),  # as amd-smi's
    Format("nvidia-smi: no devices", None, _no_devices, SHARED, markers=("No devices were found",)),
    Format("amd-smi, rocm-smi, rocm-bandwidth-test", "amd", Gated(_amd, tuple(m for m, _ in amd_smi.READERS)), SHARED,
           markers=amd_smi.MARKERS),
    Format("npu-smi info", "npu", _listed("npu_smi.parse"), SHARED, markers=_NPU_MARKS),
    Format("xpu-smi", "xpu", _listed("xpu_smi.parse"), SHARED,
           markers=("Device ID", "DeviceId", "xpu-smi", "XPUM_STATS_", '"device_list"', '"pci_bdf_address"',
                    '"component_list"', '"device_name"', '"core_temperature"', "Level Zero Version", "Device Name:")),
    # a box's header, dump's, stats' command, stats -j's metrics, discovery/health/diag -j's keys, a headless row
    Format("xpu-smi table", "xpu", _listed("xpu_smi_table.parse"), SHARED, adds=True,
           markers=("XPU-SMI", "xpu-smi")),  # the default table's title box, or the bare command above its rows
    # the runtimes' own logs: before -q, whose `Key : value` they resemble
    Format("NCCL, RCCL or HCCL debug log", "nccl_log", _listed(nccl_log.parse), SHARED, markers=_NCCL_LOG_MARKS),
    Format("rocm-bandwidth-test -v", "rbt_validation", _rbt_validation, SHARED,
           markers=("Inter-Device Access", "Data Path Validation", " FAIL")),  # its PASS/FAIL matrix (and access
    # matrix); ' FAIL': the matrix's rows pasted without its title (rocm_validation._untitled)
    Format(HCCL_TEST, "nccl", _hccl, adds=True, markers=_HCCL_MARKS),  # Ascend HCCL Test, read as nccl-tests' records
    Format(TRANSFERBENCH, "nvb", _found("transferbench.records"), adds=True, markers=_TB_MARKS),  # as nvbandwidth's
    Format("TransferBench devices", "amd", _aside("transferbench.listing"), SHARED, adds=True, markers=_TB_MARKS),
    Format("rocm-bandwidth-test copies", "nvb", _aside("rocm_bandwidth.parse"), ALL,
           adds=True, markers=("copy peak bandwidth",)),  # its copy matrices as nvbandwidth's (amd_smi claimed them)
    Format("rccl-tests devices", "amd", _aside("nccl_devices.amd_listing"), ALL,
           adds=True, markers=("Rank",)),  # the AMD modules rccl-tests' device lines name (nccl-tests' claimed them)
    Format("xmrig GPU health", "amd", _listed("miner_health.parse"), adds=True,
           markers=("opencl ",)),  # its health lines' backend ('opencl   #0 03:00.0  94W 55C …')
    Format(AMD_EXPORTER, "amd", _listed("prom_metrics.parse_amd"), ALL, adds=True,
           markers=('gpu_id="', "rocm_")),  # its Prometheus samples' module label; omnistat's metric names (YX1)
    Format("amdgpu sysfs, amdvbflash", "amd", _listed("amd_sysfs.parse"), ALL, adds=True,
           markers=("pp_dpm_", "pp_od_clk_voltage", "bios p/n")),  # YX1: clock levels' files, amdvbflash -i's header
    Format(PCIE_STATUS, "lspci", _pcie_status, ALL,
           adds=True, markers=("available PCIe bandwidth", "_link_", "Link status: gen")),  # the PCI core's, mqnic's
    Format("lspci -m, -nn", "lspci", _one("lspci_list.parse"), adds=True,
           markers=('" "', "]: ")),  # the quoted fields' gap (-m), the class code's bracket and colon (-nn)
    Format(lspci_tree.KIND, "lspci_tree", _one(lspci_tree.parse), markers=("+-", "\\-", "--", "]-", "`-")),  # its drawing
    Format("Ascend HCCL error codes", "ascend", _one(ascend_errors.parse),  # EI/EJ lines torch_npu prints
           markers=("[ERROR]", _CODE_OPENS, "(EI", "(EJ", "Hccl", "Hcom", "CANN error:",  # torch_npu's, a code opening a
                    "synapse error", "synStatus", "The condition [")),  # line or after its name ('…(EI0006)'), an
    # HCCL call's 'HcclX … ret = 9' (a traceback); YX1: Gaudi's Synapse statuses and HCL checks (synapse_errors.py)
    Format("ibstat, ibstatus, ibv_devinfo, ibdev2netdev", "nics", _nics, markers=_NIC_MARKS),  # the RDMA NICs
    Format("ethtool", "nics", _found("ethtool.parse"), adds=True, markers=nic_tools.ETHTOOL_MARKS),  # PHRM: -i, -S
    Format("ifconfig, ip -s link", "nics", _found("netdev_stats.parse"), adds=True, markers=("flags=", "encap:", "> mtu ")),
    Format("sysfs IB counters", "nics", _ib_counters, adds=True, markers=_IB_COUNTER_MARKS),  # a port's counters
    Format("RDMA fabric tools", "nics", Gated(lambda lines, _, marks: _loaded("ib_fabric.parsed")(lines, marks, Parsed)),
           adds=True, markers=nic_tools.FABRIC_MARKS),  # AX3: rdma, iblinkinfo, ibnetdiscover, ibqueryerrors, ibdiagnet
    Format("EFA hw_counters", "nics", _found("efa_counters.parse"), adds=True, markers=nic_tools.EFA_MARKS),  # FX68E
    Format("fi_info", "nics", _found("fi_info.parse"), adds=True, markers=nic_tools.FI_INFO_MARKS),  # FX68E
    Format("NICs by PCI function", "nics", _found("nic_pci.parse"), adds=True, markers=nic_tools.PCI_MARKS),  # FX68E
    # the fabric manager's journal and perftest: before -q, which would take perftest's header for modules
    Format("fabric manager log", "fabric_manager", _one(fabric_manager.parse), markers=fabric_manager.MARKS),
    Format("perftest", "perftest", _one(perftest.parse), SHARED, markers=_PERFTEST_MARKS),
    Format("NIC driver kernel lines", "nic_driver", Gated(_marked("nic_driver.parse")), markers=nic_driver.MARKS),  # ZX1
    Format("UCX log", "ucx", _one(ucx.parse), markers=ucx.MARKS),  # its port, memlock, a raw-verbs completion status
    Format("RDMA verbs lines", "ucx", Gated(_marked("ucx.parse_verbs")), adds=True, markers=ucx.VERBS_MARKS),  # RDV
    # issue 46: the CUDA samples, DCGM's health report, gpu-burn, then the error lines programs print
    Format("CUDA samples", "samples", _listed(cuda_samples.parse), markers=_SAMPLES_MARKS),  # deviceQuery, …
    Format("dcgmi health", "dcgm_health", Gated(_marked("dcgm_health.parse_marked")), markers=_HEALTH_MARKS),
    Format("gpu-burn", "gpu_burn", _one(gpu_burn.parse),  # its progress, verdict, or init error (a grep keeps it alone)
           markers=("proc'd:", "Tested ", "Couldn't init a GPU test", "Initialized device")),
    Format("gpu-fryer", "gpu_burn", _found("gpu_fryer.parse"), markers=("Gflops/s",)),  # issue 46: its summary
    # R14E: benchmarks and listings read for their figures and their own checks (captures/bench_results.py)
    Format("HPL", "results", _found("hpl.parse"), adds=True, markers=("HPLinpack", "T/V", "||Ax-b||", "HPL-")),
    Format("GPU STREAM", "results", _found("gpu_stream.parse"), adds=True, markers=("STREAM_", "Function")),
    Format("intel_gpu_top", "results", _found("intel_gpu_top.parse"), adds=True,
           markers=('"engines"', "intel-gpu-top:", "Freq MHz")),  # -J's key, the screen's header, -l's columns
    Format("host IB port GUID listing", "results", _found("ib_guid_hosts.parse"), adds=True, markers=("VM_hostname",)),
    Format("NVSwitch listing", "results", _aside("nvswitch_listing.parse"), ALL, adds=True,
           markers=("nvidia-nvswitch: Probing", "NVSwitch pci bus id", "Fabric Manager version")),  # a note, no claim
    Format(MONITOR, None, _kept("monitor_tools.parse"), markers=("°C,", "'C,", "((", '"memory.total"', "# gpu", "#gpu",
           "process_name", "gpu_uuid", "gpu_bus_id", "Mem. Use", "NVITOP", '"device_name"')),  # issue 46: monitor_tools
    Format("tegrastats", None, _kept("tegrastats.parse"), markers=("GR3D_FREQ", "Temp GPU")),  # R13D: + jtop stats
    Format("i915/xe driver boot lines", "xpu", _listed("intel_boot.parse"), adds=True,
           markers=("i915", "xe ", "xe:")),  # YX1: the drivers' healthy boot lines (their errors: the kernel log's)
    Format("Gaudi, Neuron or Tenstorrent tools", "accel", _listed("accel_tools.parse"),
           markers=accel_marks.ACCEL),  # R8A, R10A: tt readers' markers; R13C: XRT, amdxdna, NRT (accel_marks)
    Format("application error lines", "app_errors", Gated(_marked("app_errors.parse")), unmarked="its words in any case; "
           "its one search of the lowered text (app_errors._candidates) is its gate"),
    Format("Ascend runtime codes", "app_errors", _one("ascend_codes.parse"), ALL, adds=True, markers=ascend_marks.CODES),
    Format("hccn_tool", "app_errors", _one("hccn_tool.parse"), ALL, adds=True, markers=ascend_marks.HCCN),  # ASC
    Format("lspci ACS control", "app_errors", _one("pcie_acs.parse"), ALL, adds=True, markers=("ACSCtl:", "ACSCap:")),
    Format("vGPU licence status", "app_errors", lambda lines, _: _loaded("vgpu_license.parsed")(lines, Parsed), ALL,
           adds=True, markers=("License Status",)),  # issue 46 (BJ): a vGPU guest's -q licence, read beside -q
    Format("show_gids/ethtool/mthreads-gmi/dcgmi -l table", "app_errors", _one("side_tables.parse"), ALL, adds=True,
           markers=SIDE_MARKS),
    Format("ROCm/HIP error lines", "app_errors", _one("hip_errors.parse"), SHARED, adds=True,
           markers=_HIP_MARKS),  # HIP's, HSA's
    Format("scheduler and runtime GPU lines", "app_errors", Gated(_ops_layer), ALL, adds=True, markers=OPS_MARKS),
    # issue 46 (dev_k_ops): Slurm, Kubernetes, the device plugin, DCGM's host engine, CDI, a driver container
    Format("driver installation and binding", "app_errors", Gated(_marked("driver_state.parse")), ALL, adds=True,
           markers=driver_marks.STATE),  # issue 46 (dev_m_drv): lspci -k, lshw, inxi, dkms, modprobe, persistenced
    Format("GPU functions against their device nodes", "app_errors", Gated(_marked("device_nodes.parse")), ALL,
           adds=True, markers=driver_marks.NODES),  # issue 46 (ZX3; R7A: absent_stack's missing files, providers)
    Format("lshw, inxi or ubuntu-drivers GPUs", "lspci", Gated(_marked("driver_state.listing")), ALL, adds=True,
           markers=driver_marks.LISTED),
    Format(RUNTIME_LINES, "app_errors", _one("runtime_status.parse"), ALL, adds=True, markers=RUNTIME_MARKS),  # issue 46
    Format(RUNTIME, None, _kept("runtime_status.listing"), ALL, markers=RUNTIME_MARKS),  # llama.cpp, ollama, TF, JAX,
    Format(RUNTIME + " (AMD)", "amd", _aside("runtime_status.amd_listing"), ALL, adds=True, markers=RUNTIME_MARKS),
    Format("nvidia-smi mig operations", "app_errors", _one("mig_ops.parse"), ALL, adds=True,  # FX68F: -cgi/-cci,
           markers=("GPU instance", "compute instance", "MIG devices:")),  # their failures, a MIG devices box alone
    Format("nvidia-smi mig", "mig", _one(smi_mig.parse), markers=("instances:", "instance profiles:",
                                                                  "MIG-enabled devices found")),  # its box titles
    Format(EXPORTER, None, _kept("prom_metrics.parse_dcgm"), ALL,
           markers=("DCGM_", "dcgm_")),  # its Prometheus samples, the first exporter's lower-case names (YX1)
    Format("NVML values (a binding's)", None, _kept("nvml_values.parse"),  # YX1: CUDA.jl's, pynvml's, go-nvml's
           markers=("clock_event_reasons", "hw_slow", "ThrottleReasons", "EventReasons", "clock_info")),
    Format(FIELDS, None, _kept("dcgm_fields.parse"), ALL, markers=(", value: ",)),
    Format(EXPORTER_NVLINK, "nvlink", _one("prom_metrics.parse_dcgm_nvlink"), ALL, adds=True,
           markers=("DCGM_FI_DEV_NVLINK_",)),  # as nvidia-smi nvlink -e's counters
    Format(LISTING, None, _kept("smi_list.parse"),
           markers=_LIST_MARKS),  # nvidia-smi -L (and nvlink's headers nothing took), /proc's
    Format(DISCOVERY, None, _kept(dcgm_health.parse_discovery), markers=("Name:",)),  # its GPU rows ('| 0 | Name: …')
    Format(RIG, None, _kept("rig_report.parse"), markers=("**GPU ",)),  # its GPU bullet ('- **GPU 0:** …')
    Format(NCCL_TOPO, None, _kept("nccl_topo.parse"), markers=("<system version=",)),  # its root element
    Format(TABLE, None, _kept("smi_table.parse"), markers=("|",)),  # nvidia-smi's default table
    Format(NODES, None, _kept("ctk_nodes.listing"), ALL, markers=("/dev/nvidia",)),  # BJ: ls -l /dev/nvidia*, nvidia-ctk
    Format("amd-ctk gpu list", "amd", _listed("ctk_nodes.amd"), ALL, adds=True, markers=("amd.com/gpu=", "AMD GPU device")),
    Format(VGPU, None, _kept("smi_vgpu.listing"), ALL, markers=("vGPU ID",)),  # issue 46 (BJ): its header's row
    Format(WHEA, "aer", _one("whea.parse"), ALL, adds=True, markers=WHEA_MARKS),  # WIN: Windows' AER records
    Format(EVENTS, "kernel", _one("windows.parse"), ALL, adds=True, markers=MARKS),  # after the table: its CUDA ERR! too
    Format(QUERY, None, _kept("smi_query.parse"), markers=(_QUERY_HEAD, "--query-gpu")),  # nvidia-smi --query-gpu CSV
    Format("nvidia-smi topo -m", "topo", _topo, markers=("GPU0", *(f"NV{d}" for d in range(1, 10)))),  # its header
    # names GPU0; rows pasted from a later GPU on, without it, hold NV# (topo._own_row)
    Format("nvidia-smi topo -p2p", "p2p", _one(topo.parse_p2p), SHARED, markers=("GPU0",)),  # its header names GPU0
    Format("nvidia-smi -q", "smi", _smi, unmarked="excerpts of 'Key : value' lines, no literal of their own; a line "
           "that opens nothing while nothing is open is passed over first"),
    Format("dcgmi diag -j", "dcgm", _dcgm_json, ALL, markers=("test_categories",)),  # replaces the text table's rows
    Format(ENV, "app_errors", lambda lines, _: _loaded("env_report.parsed")(lines, Parsed), ALL, adds=True,
           markers=_ENV_MARKS),
    Format(ENV + " GPUs", None, _kept("env_report.listing"), ALL, markers=_ENV_MARKS),  # read last: its claims hide nothing
    Format(ENV + " AMD GPUs", "amd", _aside("env_report.amd"), ALL, adds=True, markers=_ENV_MARKS),  # a ROCm build's
    Format("GPU tools' failures", "tool_failures", Gated(_marked("tool_failures.parse")), ALL, markers=VERDICT_MARKS),
)
