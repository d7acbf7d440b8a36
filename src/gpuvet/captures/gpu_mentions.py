"""Issue 46: text that names GPUs in a form no reader of gpuvet reads (a tool's listing it has never seen, a
JSON dump, a poster's paste), read as an engineer reads an unknown paste: the GPU identities it states, and
nothing more. Reached from formats.read_unrecognised only where no format, no quoted message and no known fault
line inside an unknown surrounding (fallback.py) read the file; the file is then said to be 'text naming GPUs':
its format not read, its modules listed, and only the known fault lines looked for.

An identity is a model name of the vendors gpuvet knows (NVIDIA, AMD, Intel, Huawei Ascend, Habana Gaudi), a
PCI vendor:device id of a display, 3D or accelerator function (the class on its line, or function 0 where the
line gives the function and no class), an AMD gfx target, or a module index ('GPU[1]', 'GPU 1:', 'Device 1:')
on a line naming a model. A bus id is kept where the same line names the GPU; none is ever invented. One device
named on several lines (by bus id, by index, else by model) is counted once."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from gpuvet.captures import fallback, module_spellings
from gpuvet.captures.kernel import KernelParse
from gpuvet.captures.records import UNNAMED, ListedModule, ListedParse, SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import MAX_MODULES, Cleaned, Line
from gpuvet.node.bus import bus_key
from gpuvet.node.catalog import pci_product

KIND = "text naming GPUs"  # what such a file is read as (its format is not one gpuvet reads)
_CAP = 2000  # lines searched at most: a paste's few, never a log's millions
HEAD = 1000  # characters of a line searched (a one-line JSON dump names its device first)

_NV = (r"(?:NVIDIA(?: Corporation)?\s+)?(?:GeForce|Tesla|Quadro|TITAN|Jetson)(?:\s+[A-Z0-9][\w-]*){1,4}|"
       r"NVIDIA\s+(?:RTX\s+)?[A-Z]{1,3}\d{1,4}[\w-]*(?:\s+(?:\d+GB|HBM\d?e?|PCIe|SXM\d?|NVL|Ti|SUPER))*|"
       r"(?:GTX|RTX)\s?\d{3,4}(?:\s?Ti|\s?SUPER)?")
_AMD = (r"(?:AMD\s+)?(?:Radeon\s+Instinct|Instinct|Radeon)(?:\s+(?:Pro|RX|VII|[A-Z]{0,3}\d{2,4}[A-Z]?|XTX?|"
        r"[WV]\d{3,4}\w*))+")
_INTEL = (r"Intel(?:\(R\))?\s+(?:Arc(?:\(TM\))?\s+(?:Pro\s+)?[AB]\d{2,3}\w*|Data Center GPU (?:Max|Flex)\s*\d*|"
          r"(?:Iris(?:\(R\))?\s+Xe|UHD|HD)\s+Graphics(?:\s+\d{3,4})?|Graphics\s+\[0x[0-9a-fA-F]{4}\])")
_OTHER = r"Ascend\s?9\d0[A-Z]?\d?|Gaudi\s?\d?|HL-\d{3}"
_MODEL = re.compile(rf"(?<![\w-])(?P<model>{_NV}|{_AMD}|{_INTEL}|{_OTHER})(?![\w-])")
_VENDOR_OF = (("AMD", re.compile(r"Radeon|Instinct|^gfx")), ("Intel", re.compile(r"^Intel|^8086:")),
              ("Ascend", re.compile(r"^Ascend|^19e5:")), ("Habana", re.compile(r"^Gaudi|^HL-|^1da3:")),
              ("AMD", re.compile(r"^1002:")))
_PCI_ID = re.compile(r"(?<![\w:])(?:0x)?(?P<vendor>10de|1002|8086|19e5|1da3):(?:0x)?(?P<device>[0-9a-fA-F]{4})(?![\w])")
_GPU_CLASS = re.compile(r"\b(?:VGA compatible controller|3D controller|Display controller|Processing accelerators)\b|"
                        r"\[03(?:00|02|80)\]|\[1200\]|(?<![\w:])(?:0300|0302|0380|1200): ", re.I)
_OTHER_CLASS = re.compile(r"\b(?:Audio device|USB controller|Serial bus controller|Bridge|Ethernet controller|"
                          r"Non-Volatile memory controller|Network controller|Infiniband controller)\b", re.I)
# a function number after the id, as FAHClient --lspci prints one ('0x10de:0x13c0:3:0:0:NVIDIA Corporation:')
_ID_FUNCTION = re.compile(r"(?:0x)?[0-9a-fA-F]{4}:(?:0x)?[0-9a-fA-F]{4}:(\d{1,3}):(\d{1,2}):([0-7]):")
_BUS = re.compile(r"(?<![\w:.])((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?![\w:])")
_GFX = re.compile(r"(?<![\w-])(gfx(?:90[0-9a-c]|94[0-9]|95[0-9]|10\d\d|11\d\d|12\d\d|80\d|70\d))(?![\w-])")
_INDEX = re.compile(r"(?<![\w-])(?:GPU\s?\[(\d{1,4})\]|GPU\s?(\d{1,4})\s*:|Device\s+(\d{1,4})\s*:)")


class _Capture(Protocol):
    """What this fills of a capture (formats.FileCapture; not imported here: formats imports this)."""

    kinds: list[str]
    kernel: KernelParse
    smi: SmiText | None
    amd: ListedParse
    xpu: ListedParse
    npu: ListedParse
    accel: ListedParse


@dataclass
class _Named:
    """One device the text names: its key (bus id, index or model), model, bus id and where it was named."""

    model: str
    vendor: str
    bus: str | None = None
    lines: set[int] = field(default_factory=set)
    row: str | None = None  # the address a listing's row gives (FAHClient --lspci's bus:slot:function), as printed


def read(fc: _Capture, cleaned: Cleaned) -> set[int]:
    """The GPUs the text names, listed on ``fc`` under KIND (NVIDIA's as a module list, the other vendors'
    as their listing); the lines that name them. Nothing where the text names no GPU (still refused)."""
    if fc.kernel.nvrm_lines or any(_driver_line(ln.text) for ln in cleaned.lines[:_CAP]):
        return set()  # a GPU driver's line no reader read: gpuvet can't tell what it says (refused, never clear)
    named = mentions(cleaned.lines)
    if not named:
        return set()
    note = (f"{KIND}: its format is not one gpuvet reads; {len(named)} GPU(s) named "
            f"({', '.join(dict.fromkeys(n.model for n in named))[:200]}), listed as named (bus id only where "
            "the same line gives it); only known fault lines were looked for in it")
    rows = [n.row for n in named if n.row is not None]
    if twice := sorted({r for r in rows if rows.count(r) > 1}):  # the listing's artefact, not two cards in one slot
        note += (f"; {len(rows) - len(set(rows)) + len(twice)} of its rows give the same PCI address "
                 f"(bus:slot:function {', '.join(twice[:4])}): each row is listed, its address not taken for a bus id")
    notes = [note]  # said once, by the first vendor's list
    if nvidia := [n for n in named if n.vendor == "NVIDIA"]:
        fc.smi = SmiText(modules=[SmiTextModule(n.bus or f"{UNNAMED} #{i}", n.model, {"Product Name": n.model})
                                  for i, n in enumerate(nvidia, 1)], notes=notes)
        notes = []
    for vendor, listed in (("AMD", fc.amd), ("Intel", fc.xpu), ("Ascend", fc.npu), ("Habana", fc.accel)):
        if mine := [n for n in named if n.vendor == vendor]:
            listed.modules = [ListedModule(f"GPU {i}", n.model, n.bus.upper() if n.bus else None)
                              for i, n in enumerate(mine)]
            listed.kinds, listed.claimed, listed.notes = [KIND], set().union(*(n.lines for n in mine)), notes
            notes = []
    fc.kinds = [KIND]
    return set().union(*(n.lines for n in named))


def _driver_line(text: str) -> bool:
    """A GPU driver's kernel line (its stamp, then the driver's name), or any line naming NVRM or an Xid."""
    head = text[:HEAD]
    if ("NVRM" in head or "Xid" in head) and _NVRM.search(head):
        return True
    return fallback._KERNEL_SHAPE.match(head) is not None and fallback._gpu_driver(head.lstrip()) is not None


_NVRM = re.compile(r"\bNVRM\b|\bXid\b")


def mentions(lines: list[Line]) -> list[_Named]:
    """Each device the lines name, once (by bus id, by index, else by model), in the order first named."""
    seen: dict[str, _Named] = {}
    arch: dict[str, set[str]] = {}  # a module named by model -> the gfx targets on its lines (module_spellings)
    for ln in lines[:_CAP]:
        if ln.elision or len(seen) >= MAX_MODULES:
            continue
        head = ln.text[:HEAD]
        for key, named in (found := _on_line(head, ln.no)):
            arch.setdefault(key, set()).update(module_spellings.targets(head, [n.model for _, n in found]))
            got = seen.setdefault(key, named)
            if got.bus is None and named.bus is not None:
                got.bus = named.bus
            got.lines.add(ln.no)
    spelled = Counter(t for key, ts in arch.items() if not module_spellings.GFX.fullmatch(seen[key].model) for t in ts)
    return _merged(module_spellings.without_second_spellings(list(seen.values()), spelled))


def _on_line(head: str, no: int) -> list[tuple[str, _Named]]:
    """The devices one line names, each with its key (a listing's row, as FAHClient --lspci prints one, is one
    function however many rows give the same address)."""
    out: list[tuple[str, _Named]] = []
    buses = [bus_key(b) for b in _BUS.findall(head)]
    bus = buses[0] if len(buses) == 1 else None  # two bus ids on a line: which is the GPU's is not said
    for m in _PCI_ID.finditer(head):
        if _gpu_function(head, m):
            pid = f"{m.group('vendor')}:{m.group('device').lower()}"
            known = pci_product(pid)
            model = known.product if known is not None else f"PCI device {pid}"
            fn = _ID_FUNCTION.match(head, m.start())
            row = f"{pid}@line {no}" if fn else f"{pid}@{len(out)}"
            out.append((bus or row, _Named(model, _vendor(pid), bus, row=":".join(fn.groups()) if fn else None)))
    models = [m.group("model").strip() for m in _MODEL.finditer(head)]
    models += [g for g in _GFX.findall(head)] if not models else []
    if models and not out:
        index = _INDEX.search(head)
        which = next((g for g in index.groups() if g is not None), None) if index else None
        for model in dict.fromkeys(models):
            key = bus or (f"#{which}" if which is not None and len(models) == 1 else _norm(model))
            out.append((key, _Named(model, _vendor(model), bus)))
    return out


def _gpu_function(head: str, m: re.Match[str]) -> bool:
    """The id is a display, 3D or accelerator function: its class on the line, or (no class given) function 0
    where the line gives the function, or a product the catalog's pci.ids names."""
    if _GPU_CLASS.search(head):
        return True
    if _OTHER_CLASS.search(head):
        return False
    fn = _ID_FUNCTION.match(head, m.start())
    if fn is not None:
        return fn.group(3) == "0"
    return pci_product(f"{m.group('vendor')}:{m.group('device')}") is not None


def _vendor(name: str) -> str:
    return next((vendor for vendor, rx in _VENDOR_OF if rx.search(name)), "NVIDIA")


def _merged(named: list[_Named]) -> list[_Named]:
    """A model named bare (no bus id, no index) beside the same model named with one is that device again."""
    placed = {_norm(n.model) for n in named if n.bus is not None}
    return [n for n in named if n.bus is not None or _norm(n.model) not in placed]


def _norm(model: str) -> str:
    """A model's name without its vendor's word, case or punctuation ('NVIDIA GeForce RTX 3090' = 'GeForce RTX 3090')."""
    return "".join(ch for ch in _VENDOR_WORD.sub("", model).lower() if ch.isalnum())


_VENDOR_WORD = re.compile(r"^(?:NVIDIA(?: Corporation)?|AMD|Intel(?:\(R\))?)\s+")
