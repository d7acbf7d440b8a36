"""Issue 46 (GEN1): a text no format claims that still names GPU, accelerator or NIC things (a vendor tool's or
driver's own name or banner words, a runtime's or collective library's name, a PCI bus id) is read, not refused.
Each blind batch refused healthy fragments no reader knew (a cut table, an ibstat fragment, a program's dict of
npu-smi values) and each got a reader of its own; the next unknown fragment was refused again. Such a text is read
as KIND: its format is not read, every check that would judge it says it can't tell (gpu_software.UnreadGpuText),
the bus ids, names and driver versions it states are said, and a failure line in it is a lead (unread_leads.py).

Reached from read.py only where every reader, the fallbacks, gpu_mentions and gpu_software read nothing (the file
would be refused): a text naming none of these things (prose, a recipe, an image's bytes, an empty file) stays
refused as before."""

from __future__ import annotations

import re
from typing import Protocol

from gpuvet.captures import gpu_software, stack_benign, unread_leads
from gpuvet.captures.kernel import KernelParse
from gpuvet.captures.text import Cleaned, Line, ranges
from gpuvet.captures.tool_failures import ToolFailures

KIND = "text naming GPUs: no tool output gpuvet reads"
SOURCE = "GPU-related"  # doctor: "N GPU-related line(s) not understood"
_CAP = 2000  # lines searched at most: a paste's few, never a log's millions
_HEAD = 1000  # characters of a line searched
# the things' own names, as their tools, drivers and libraries print them (never the bare word 'GPU': a poster's
# sentence holds it as often as a tool does)
_NAMES = re.compile(r"(?<![\w-])(?:nvidia-smi|nvidia-bug-report|NVRM|NVML|nvml\w+|nvidia(?:[-_]\w+)+|"
                    r"NVIDIA|CUDA(?:_\w+)?|cuda[A-Z]\w+|cuDNN|NCCL\w*|RCCL|HCCL|nccl-tests|rccl-tests|DCGM\w*|dcgmi|"
                    r"nv-hostengine|nvidia-fabricmanager|NVLink|NVSwitch|amdgpu|ROCm|rocm-smi|rocm_smi|rocminfo|"
                    r"amd-smi|amdsmi|HIP|hip[A-Z]\w+|HSA_\w+|XGMI|xGMI|npu-smi|Ascend|xpu-smi|xpumanager|i915|"
                    r"habanalabs|hl-smi|Gaudi|neuron-ls|ibstat|ibstatus|ibv_devinfo|ibv_\w+|iblinkinfo|ibportstate|"
                    r"ibdev2netdev|mlx[45]_\w+|mlxlink|mlxconfig|mst|Mellanox|ConnectX-?\d*|InfiniBand|RDMA|"
                    r"rocm-bandwidth-test|rocm_bandwidth_test|nvbandwidth|TransferBench|gpu-burn|gpu_burn|"
                    # GEN2: the container and scheduler layer's names (the toolkit, CDI, the device plugin, the GPU
                    # operator, a node's GPU resource, the device nodes, Slurm's GPU GRES)
                    r"libnvidia-[\w-]+(?:\.so[\d.]*)?|/dev/nvidia[\w-]*|/dev/kfd|/dev/dri/\w+|CDI|"
                    r"(?:nvidia|amd)\.com/(?:gpu|mig-[\w.-]+)|gpu-operator|(?:k8s-)?device-plugins?|"
                    r"gpu-feature-discovery|dcgm-exporter|gres/gpu[\w:.-]*|Gres(?: Name)?=gpu[\w:.-]*)(?![\w-])")
_BUS = re.compile(r"(?<![\w:.])((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?![\w:])")
_DRIVER_VERSION = re.compile(r"(?i:driver)[\w ]{0,20}?(?:version)?\s*[:=]?\s*v?(\d{2,3}\.\d{1,3}(?:\.\d{1,3})?)\b")
SHOWN = 6  # names, bus ids said at most
# a poster's line, never a tool's: one that asks, quotes (a message in quotes or backticks is the quoted-report rules',
# read_quoted), is code (a source file's line, an assignment, a raise, a comment) or prose (three plain lower-case
# words in a row: 'this is not nvidia-smi', 'we moved the job on mlx5_0'): a tool's bare name in a sentence is none
_POSTERS = re.compile(r"\b[a-z][a-z']+(?:,? [a-z][a-z']*){2,}\b|\?|^\s*(?:raise|msg|if|#|//)\b|"
                      + unread_leads.QUOTED_OR_CODE.pattern)
# GEN2: a log's own line, a tool's whatever lower-case words, quotes or question it holds (the prose rule above dropped
# 'running command chroot with args [...]' and every logfmt record): a stamp first (ISO 8601, syslog's, dmesg's,
# klog's 'E0304 10:12:01.123456', Slurm's '[2026-…]'), a level word first, or a logfmt field (level=, msg=)
_LOGGED = re.compile(r"^\s*(?:\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\[\s*\d+\.\d+\]|"
                     r"[IWEF]\d{4} \d\d:\d\d:\d\d|\[?(?:INFO|WARN(?:ING)?|ERROR|DEBUG|FATAL|CRITICAL|NOTICE)\b)|"
                     r"(?:^|\s)(?:level|msg|ts|time)=")
# ... or, where it reads as no sentence (no capital word first, no first person, no quote, code or question), a
# component's prefix ('chroot: …', 'slurmd[2211]: …'), a key=value field, or a bracketed argument list or a path
_SHAPED = re.compile(r"^\s*(?!(?:edit|update|note|ps|solved|fixed|answer|question|result)\b)[a-z][\w.-]*(?:\[\d+\])?: \S|"
                     r"(?<![\w=])\w+=[^\s=]|\[[^\]\s]*/[^\]]*\]|(?:^|\s)/(?:dev|run|proc|sys|usr|var|etc|opt|lib)/\S")
_SAID = re.compile(r"^\s*[\"'(]?[A-Z][a-z']*\s|\b(?:I|I'm|I've|my|we|our|me|us)\b|\?")


class _Capture(Protocol):
    """What read() fills of a capture (formats.FileCapture; not imported here: formats imports this)."""

    kinds: list[str]
    kernel: KernelParse
    tool_failures: ToolFailures


def read(fc: _Capture, cleaned: Cleaned) -> set[int]:
    """The file read as KIND where its lines name GPU, accelerator or NIC things, or a line of it reports a failure
    of one (unread_leads.py); the lines claimed (none otherwise: refused as before, or read by read.py for a GPU
    tool's failure verdicts alone)."""
    if fc.tool_failures.found:
        return set()
    body = [ln for ln in cleaned.lines[:_CAP] if _content(ln)]
    if not body or any(gpu_software.FAULT_WORDS.search(ln.text[:_HEAD]) or gpu_software.table_row(ln.text)
                       for ln in body):
        return set()  # NVIDIA's fault lines are only their readers'; a table's row is a reading to judge (gpu_software)
    own = [ln for ln in body if _tools(ln.text[:_HEAD])]
    names = list(dict.fromkeys(m.group(0) for ln in own for m in _NAMES.finditer(ln.text[:_HEAD])))
    buses = list(dict.fromkeys(b.lower() for ln in own for b in _BUS.findall(ln.text[:_HEAD])))
    benign = [b for ln in body if (b := stack_benign.benign(ln.text[:_HEAD])) is not None]  # R12C: read, no fault
    if not names and not buses and not benign and not unread_leads.leads(body, set()):  # sentences and code apart
        return set()
    versions = list(dict.fromkeys(m.group(1) for ln in body if "river" in ln.text[:_HEAD]
                                  for m in _DRIVER_VERSION.finditer(ln.text[:_HEAD])))
    said = [f"it names {', '.join(names[:SHOWN])}" if names else "",
            f"bus id(s) {', '.join(buses[:SHOWN])}" if buses else "",
            f"driver version(s) {', '.join(versions[:SHOWN])}" if versions else "",
            f"{len(benign)} line(s) the NVIDIA stack prints with no fault ({stack_benign.said(benign)})" if benign else ""]
    claimed = {ln.no for ln in body}
    note = (f"{KIND}: line(s) {ranges(sorted(claimed))} ({len(claimed)}) are in no form gpuvet reads, so none of "
            f"them was judged (the checks that would judge them can't tell); {'; '.join(s for s in said if s)}"
            "; give the tool's whole output (nvidia-smi -q, amd-smi, ibstat, the kernel log) to have them judged")
    fc.kernel = gpu_software.UnreadGpuText(claimed=claimed, notes=[note.replace("; ;", ";")], unread=len(claimed),
                                           source=SOURCE)
    fc.kinds = [KIND]
    return claimed


def _tools(text: str) -> bool:
    """The line is a tool's, not a poster's: a log's own line (_LOGGED), a line shaped as a tool's (_SHAPED) that
    reads as no sentence, or a line neither prose nor code (_POSTERS) nor a sentence (gpu_software.SENTENCE)."""
    if _LOGGED.search(text):
        return True
    if _SHAPED.search(text) and not _SAID.search(text) and not unread_leads.QUOTED_OR_CODE.search(text):
        return True
    return not _POSTERS.search(text) and not gpu_software.SENTENCE.match(text.strip())


def _content(ln: Line) -> bool:
    """A line of the paste's own (not blank, not a poster's cut or a '# source:' comment)."""
    s = ln.text.strip()
    return bool(s) and not ln.elision and not s.startswith("# ")
