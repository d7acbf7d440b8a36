"""Issue 46 (OX1): text that plainly comes from a GPU software stack (a collective library's log, a management
daemon's log, a driver's or firmware loader's lines) in a form no reader of gpuvet reads, and holding no known
fault line. Refusing it as 'nothing in it is output gpuvet can read' is untrue: it is read as '<its source> lines
gpuvet has no reader for', no finding drawn from it, and every check that would judge such lines says it can't
tell, with the count of lines not understood (never clear: captures/fallback.py's guard, kept by other means).

Reached from formats.read_unrecognised last: after fallback.py (known messages, a kernel excerpt; a kernel
line of a GPU driver is still refused there) and gpu_mentions.py (the GPUs a text names, listed there). A line
naming NVRM or an Xid keeps the file refused: those are NVIDIA's fault lines, which only their readers judge; so
does a markdown table's row (a poster's table of readings, such as DCGM field values: values to judge, not a log).
The source is named from the text's own words; a text naming no GPU software stays refused. QX2: a GPU
tool's own banner or record shape is such a source too (rocm-smi's, rocminfo's, amd-smi's, nvidia-smi's, npu-smi's,
NCCL's topology XML): a tool's healthy output in a form no reader reads is said, never refused."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from gpuvet.captures.kernel import KernelParse
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Cleaned, Line

KIND = "GPU software lines gpuvet has no reader for"
_CAP = 2000  # lines searched at most: a paste's few, never a log's millions
HEAD = 1000  # characters of a line searched

# nvidia-smi -r's own lines: the modules it could not reset (and why), and a reset that worked
_RESET = (r"\bThe following GPUs could not be reset:|^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7](?::| was "
          r"successfully reset\.)")
# each stack by its own words, the most specific first (a collective library's log names CUDA or HIP too)
_SOURCES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("NCCL topology XML", lazy(r"<(?:system version|gpu dev|nvlink target)=\"")),
    ("RCCL/NCCL", lazy(r"\b[RN]CCL\b|^=== System : maxBw\b|\bNCCL_\w+")),
    # QX2: a GPU tool's own banner, record shape or error/notice line (its healthy output is never refused); never
    # the tool's bare name, which a poster's sentence or a program's code holds as well
    ("rocm-smi", lazy(r"ROCm System Management Interface|End of ROCm SMI Log|\bRSMI_STATUS_\w+|"
                      r"^(?:ERROR|WARNING):\s+(?:\d{1,3}\s+)?GPU\[\d{1,4}\]")),
    ("rocminfo", lazy(r"^HSA (?:Agents|System Attributes)$|^ROCk module (?:is|version)\b")),
    ("amd-smi", lazy(r"\bAMDSMI_STATUS_[A-Z_]+")),
    # XR1: nvidia-smi -r's outcome lines, and npu-smi's keys in any wrapping (a program's dict of its values)
    ("nvidia-smi", lazy(r"\bNVIDIA-SMI \d{2,3}\.\d|=+NVSMI LOG=+|" + _RESET + r"|^</?(?:nvidia_smi_log|"
                        r"driver_version|fb_memory_usage|encoder_stats|fbc_stats)>")),  # a -q -x fragment
    ("npu-smi", lazy(r"\bnpu-smi \d{1,2}\.\d|['\"](?:Chip Name|NPU ID|HBM Capacity\(MB\)|Aicore Count)['\"]:")),
    # XR1: ibstat's and ibv_devinfo's port fields quoted alone (their own words: 'State: Active', 'PORT_ACTIVE')
    ("ibstat/ibv_devinfo", lazy(r"^(?:State|Physical state):\s+(?:Active|Down|Initializing|Armed|LinkUp|Polling|"
                                r"Disabled)\b|\bPORT_(?:ACTIVE|DOWN|INIT|ARMED)\b|\bphys_state:\s+LINK_")),
    ("Intel XPU Manager", lazy(r"\bxpumd\b|\bXPU Manager:\s|\bXPUM: |\bxpum\w*::")),  # R14C: xpumd's own log
    ("ROCm RDC", lazy(r"\bRdc[A-Z]\w*\.(?:cc|cpp|h)\(\d+\)|\brdcd\b|\bRDC_FI_\w+")),
    ("NVIDIA DCGM", lazy(r"\bDCGM_\w+|\bdcgmi?\b|\bnv-hostengine\b")),
    ("FreeBSD drm-kmod", lazy(r"^drmn\d+: |\bdrm-(?:\d+-)?kmod\b")),
    ("amdgpu driver", lazy(r"\bamdgpu\b")),
    ("ROCm/HIP runtime", lazy(r"\bROCm\b|\bhip[A-Z]\w+|\bHSA_STATUS_\w+|\bhsa_\w+")),
    ("CUDA runtime", lazy(r"\bcuda[A-Z]\w+|\bCUDA_ERROR_\w+|\bCUresult\b")),
    # R10B: a Python traceback's frame in a PyTorch install (its site-packages, a 'pytorch_1.11.0' environment): a
    # GPU program's own stack, cut before its error or holding none gpuvet reads, said as such, never refused
    ("PyTorch program (a Python traceback)", lazy(r"^\s*File \"[^\"]*/(?:site-packages/torch|pytorch[\w.-]*)/")),
)
# XR1: nvidia-smi's own table lines (its frame, banner, header, a row cut after its index): the tool's words, never a
# poster's table of readings
_SMI_FRAME = lazy(r"^\|(?:[-=+|\s]*|\s*NVIDIA-SMI \d.*|\s*(?:GPU\s+Name|Fan\s+Temp)\b.*|[\s|]*MIG M\.[\s|]*|"
                  r"\s+\d{1,2}\s*)$")
# NVIDIA's fault lines: only their readers judge them (the file stays refused, as before)
FAULT_WORDS = lazy(r"\bNVRM\b|\bXid\b|\bSXid\b")

# a poster's sentence, the one rule gpu_text.py and unread_leads.py share (a line stripped of its indent): a capital
# word, three words more and a full stop or '!' last; a capital or a list's marker first, four plain words in a row,
# a full stop, '!' or '...' last; or any line asking. Their account of a stack (a plan, a question), never its output
SENTENCE = lazy(r"^[\"'(]?[A-Z][a-z']*\s+(?:\S+\s+){2,}\S*[.!][\"')]?$|.*\?[\"')]?$|"
                r"^\s*(?:[-*>]\s+|\d{1,2}[.)]\s+)?[\"'(]?[A-Z][\w'’-]*\b.*?\b[a-z][a-z'’-]*(?:,?\s+[a-z][a-z'’-]*){3}"
                r"\b.*[.!…][\"')]?\s*$")


class _Said(Protocol):
    """What unread() fills of a capture (formats.FileCapture; not imported here: formats imports this)."""

    kinds: list[str]
    kernel: KernelParse


class _Capture(_Said, Protocol):
    """What read() fills of a capture besides: the modules the lines name."""

    amd: ListedParse
    npu: ListedParse


@dataclass
class UnreadGpuText(KernelParse):
    """Lines of a GPU software stack no reader read: ``unread`` of them, from ``source`` (doctor's checks that
    would judge such lines say they can't tell, never clear)."""

    unread: int = 0
    source: str = ""


def read(fc: _Capture, cleaned: Cleaned) -> set[int]:
    """The file read as KIND where its words name a GPU software stack; the lines claimed (none otherwise)."""
    body = [ln for ln in cleaned.lines[:_CAP] if _content(ln)]
    if not body or any(FAULT_WORDS.search(ln.text[:HEAD]) or table_row(ln.text) for ln in body):
        return set()  # a table's row is a document's reading (a value to judge), not a stack's log line
    own = [ln.text[:HEAD].strip() for ln in body if not SENTENCE.match(ln.text[:HEAD].strip())]
    source = next((name for name, rx in _SOURCES if any(rx.search(text) for text in own)), None)
    if source is None:
        return set()
    claimed = unread(fc, cleaned, source, _named(body).removeprefix("; "))
    if source in ("FreeBSD drm-kmod", "amdgpu driver"):
        _chips(fc, [ln.text[:HEAD] for ln in body])
    if source == "npu-smi":
        _npu_chips(fc, [ln.text[:HEAD] for ln in body])
    return claimed


def unread(fc: _Said, cleaned: Cleaned, source: str, said: str = "") -> set[int]:
    """The file's own lines read as KIND from ``source`` (none judged: the checks that would can't tell), what they
    show ``said``; the lines claimed."""
    body = [ln for ln in cleaned.lines[:_CAP] if _content(ln)]
    note = (f"{source} lines gpuvet has no reader for: {len(body)} line(s) not understood, no finding drawn "
            "from them (the checks that would judge them can't tell)" + (f"; {said}" if said else ""))
    claimed = {ln.no for ln in body}
    fc.kernel = UnreadGpuText(claimed=claimed, notes=[note], unread=len(body), source=source)
    fc.kinds = [KIND]
    return claimed


def _npu_chips(fc: _Capture, texts: list[str]) -> None:
    """XR1: each chip npu-smi's values in a program's dict name (its 'Chip Name' with its 'PCIe Bus Info'), listed as
    a module with what the dict printed; nothing judged (no Health key in such a dict)."""
    for text in texts:
        fields = {m["key"]: m["value"] for m in _NPU_FIELD.finditer(text)}
        if "Chip Name" in fields and (bus := fields.get("PCIe Bus Info", "")).count(":") == 2:
            memory = re.search(r"'HBM Capacity\(MB\)': '(\d{1,7})'", text)
            fc.npu.modules.append(ListedModule(f"NPU {len(fc.npu.modules)}", name=f"Ascend {fields['Chip Name']}",
                                               bus_id=bus.upper(), memory_mib=float(memory[1]) if memory else None))


def _chips(fc: _Capture, texts: list[str]) -> None:
    """The AMD chips the lines' firmware images name, listed as modules without a bus id (drm-kmod's drmn0 where
    the lines name one device): a firmware loader's chatter still says which card it is for."""
    from gpuvet.captures.amd_firmware import chips_named
    from gpuvet.captures.drm_kmod import DRMN_NAME

    named = chips_named(texts)
    devices = list(dict.fromkeys(n.group(1) for t in texts if (n := DRMN_NAME.search(t)) is not None))
    for i, (code, chip) in enumerate(named):
        label = devices[0] if len(devices) == 1 and len(named) == 1 else f"GPU {i}"
        fc.amd.modules.append(ListedModule(label, name=f"AMD {chip} ({code})", tool="amdgpu firmware images"))
    if named:
        fc.amd.notes.append(f"amdgpu firmware images name the chip: {', '.join(f'{c} = {n}' for c, n in named)} "
                            "(no bus id in the lines)")


def table_row(text: str) -> bool:
    """A markdown or text table's row that is not nvidia-smi's own frame, banner or header (XR1)."""
    s = text.strip()
    return s.startswith("|") and not _SMI_FRAME.match(s)


def _content(ln: Line) -> bool:
    """A line of the paste's own (not blank, not a poster's cut, '# source:' comment or code fence)."""
    s = ln.text.strip()
    return bool(s) and not ln.elision and s != "\u2026" and not s.startswith(("#", "```", "~~~"))


# what such lines name that is worth saying as printed (never judged): RCCL/NCCL's topology summary's bandwidths
# and link types, a firmware loader's images loaded
_SYSTEM_BW = lazy(r"=== System : maxBw (?P<max>[\d.]+) totalBw (?P<total>[\d.]+) ===")
_LINK_BW = lazy(r"(?<![\w/])(?P<link>XGMI|NVL|NVLS|PCI|NET|SYS|C2C)\[(?P<bw>[\d.]+)\]")
_FW_LOADED = lazy(r"^drmn\d+: successfully loaded firmware image '(?P<image>[^']{1,80})'")


def _named(body: list[Line]) -> str:
    """What the lines name, said as printed (a topology summary's bandwidths, the firmware images loaded)."""
    said: list[str] = []
    heads = [ln.text[:HEAD].strip() for ln in body]
    if system := next((m for h in heads if (m := _SYSTEM_BW.search(h)) is not None), None):
        said.append(f"topology summary: maxBw {system['max']} totalBw {system['total']} GB/s")
    links = dict.fromkeys(f"{m['link']} {m['bw']}" for h in heads for m in _LINK_BW.finditer(h))
    if links:
        said.append(f"links named: {', '.join(list(links)[:8])} GB/s")
    images = [m["image"] for h in heads if (m := _FW_LOADED.match(h)) is not None]
    if images:
        said.append(f"{len(images)} firmware image(s) loaded ({', '.join(images[:6])})")
    said += _tool_words(heads)
    return f"; it names {'; '.join(said)}" if said else ""


# XR1: what a GPU or NIC tool's fragments say, as printed: nvidia-smi -r's outcome per module, the port states of
# ibstat/ibv_devinfo, npu-smi's chip and bus in a program's dict
_RESET_SAID = lazy(r"^(?:GPU )?(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])(?::\s*(?P<why>.{1,60})| "
                   r"(?P<ok>was successfully reset)\.)$")
_PORT_STATE = lazy(r"^(?P<key>State|Physical state|(?:RDMA )?state|phys_state):\s+(?P<value>[A-Za-z_]+(?: \(\d\))?)$")
_NPU_FIELD = lazy(r"'(?P<key>Chip Name|PCIe Bus Info|Health|Temperature\(C\))': '(?P<value>[^']{1,40})'")


def _tool_words(heads: list[str]) -> list[str]:
    """The reset outcomes, port states and NPU fields the lines print (said, never judged)."""
    resets = [f"{m['bus']} {'reset' if m['ok'] else 'not reset (' + m['why'].strip() + ')'}"
              for h in heads if (m := _RESET_SAID.match(h)) is not None]
    states = dict.fromkeys(f"{m['key']} {m['value']}" for h in heads if (m := _PORT_STATE.match(h)) is not None)
    npu = dict.fromkeys(f"{m['key']} {m['value']}" for h in heads for m in _NPU_FIELD.finditer(h))
    return ([f"nvidia-smi -r outcomes in order: {', '.join(resets[:6])}"] if resets else []) + (
        [f"port states: {', '.join(list(states)[:6])}"] if states else []) + (
        [f"npu-smi fields: {', '.join(list(npu)[:6])}"] if npu else [])
