"""Intel xpu-smi's default table (issue 46): ``xpu-smi`` with no command prints, since v2, an nvidia-smi-like
box under an ``Intel XPU-SMI vX  Driver: …`` title: per device two rows of three cells, ``GPU Name
Persistence-M | Bus-Id Disp.A | Volatile Uncorr. ECC`` then ``Fan Temp Pwr:Usage/Cap | Memory-Usage |
GPU-Util Compute M.``. The name cell may be empty (a device the tool cannot name): the device is still
listed by its index and bus id. Read into the xpu-smi modules beside discovery's (xpu_smi.py).

A paste may keep only the device rows under the command that printed them (``$ xpu-smi`` then
``|   0  Intel(R) Arc(TM) Pro B  Off  | 0000:18:00.0  Off  |  Disabled |``): the bare command opens the table as
its title would. A name wider than its cell wraps onto the next row ('Intel(R) Arc(TM) Pro B' then
'60 Graphics'): joined as printed; one whose wrapped row the paste cut off is said cut, never completed."""

from __future__ import annotations

import re

from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line, reading

KIND = "xpu-smi"
_TITLE = re.compile(r"XPU-SMI\b(?:\s+v?([\w.]+))?(?:.*?\bDriver:\s*(\S+))?", re.I)
_RULE = re.compile(r"^\s*\+[-=+]+\s*$")
_BDF = re.compile(r"\b[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\b")
_FIRST = re.compile(r"^\s*(\d+)\b(.*?)\s*(?:\b(On|Off|N/A)\s*)?$")  # GPU index, name, Persistence-M
_POWER = re.compile(r"(?:(?<!\d)(\d+(?:\.\d+)?)\s*W|N/A)\s*/\s*(\d+(?:\.\d+)?)\s*W\b")  # usage (or N/A) / cap
_TEMP = re.compile(r"\b(\d+(?:\.\d+)?)\s*C\b")
_MEMORY = re.compile(r"(?<!\d)(\d+(?:\.\d+)?)\s*MiB\s*/\s*(\d+(?:\.\d+)?)\s*MiB\b")
UNNAMED = "Intel GPU (xpu-smi printed no name)"  # the vendor is known: the tool is Intel's
_PERSISTENCE = re.compile(r"\s(On|Off|N/A)\s*$")  # the Persistence-M cell's word ending the first cell
_COMMAND = re.compile(r"^(?:[$#>]\s*)?(?:sudo\s+)?xpu-smi\s*(?:#.*)?$")  # the bare command: the default table
_HEADS = ("Bus-Id", "Memory-Usage", "Pwr:Usage/Cap", "Persistence-M", "Compute M.", "GPU-Util")


def parse(lines: list[Line]) -> ListedParse:
    """The devices of each default table a title opens; the table ends at a line that is neither a rule nor a row."""
    out = ListedParse()
    inside, first = False, None  # first: the device whose first row was read, waiting for its second
    cells_of: dict[str, tuple[int, int, int]] = {}  # label -> its name cell: column, length shown, the cell's width
    for ln in lines:
        s = ln.text.strip()
        if "xpu-smi" in s and _COMMAND.match(s):
            inside, first = True, None
            out.claimed.add(ln.no)
            continue
        if (t := _TITLE.search(s)) is not None and s.startswith("|"):
            inside, first = True, None
            out.claimed.add(ln.no)
            out.driver = out.driver or t.group(2)
            continue
        if not inside:
            continue
        if _RULE.match(s):
            out.claimed.add(ln.no)
            continue
        if not s.startswith("|"):
            inside = False
            continue
        out.claimed.add(ln.no)
        cells = [c.strip() for c in s.strip("|").split("|")]
        if any(h in s for h in _HEADS) and not _BDF.search(s):
            continue  # the column heads
        raw = s.strip("|").split("|")[0]
        if first is not None and _tail(cells):
            first = _wrapped(out, raw, first, cells_of)
            continue
        first = _row(out, cells, first)
        if first is not None and first.name and first.name in raw:
            at, pm = raw.index(first.name), _PERSISTENCE.search(raw)
            cells_of[first.label] = (at, len(first.name), pm.start(1) - at - 2 if pm else len(first.name))
    out.kinds = [KIND] if out.modules else []
    if first is not None and (c := cells_of.get(first.label)) and c[1] == c[2]:  # cut after its first row
        out.notes.append(f"xpu-smi: {first.label}: its name '{first.name}' fills its cell and the paste ends before "
                         "the row xpu-smi wraps the rest onto: the name is cut short, not the model's whole name")
    return out


def _tail(cells: list[str]) -> bool:
    """A row holding only the rest of the name cell above it (xpu-smi wraps a name wider than its cell: 'Intel(R)
    Arc(TM) Pro B' then '60 Graphics'): text in the first cell alone, no reading in it."""
    return len(cells) >= 2 and bool(cells[0]) and not any(cells[1:]) and not (
        _POWER.search(cells[0]) or _TEMP.search(cells[0]) or "MiB" in cells[0])


def _wrapped(out: ListedParse, raw: str, first: ListedModule, cells_of: dict[str, tuple[int, int, int]]) -> ListedModule:
    """The first row's name joined with its wrapped rest as the cell printed it: cut at the cell's width mid-word
    ('Pro B' then '60 Graphics': 'Pro B60 Graphics'), at a space where the first row fell short of the width
    ('A770 ' then 'Graphics': 'A770 Graphics')."""
    at, shown, width = cells_of.get(first.label, (0, 0, 0))
    rest = raw[at:] if at and not raw[:at].strip() else raw.strip()
    gap = " " if shown < width or rest[:1] == " " else ""
    module = ListedModule(first.label, name=f"{first.name}{gap}{rest.strip()}", bus_id=first.bus_id, tool=KIND)
    out.modules[out.modules.index(first)] = module
    cells_of[first.label] = (at, -1, width)
    return module


def _row(out: ListedParse, cells: list[str], first: ListedModule | None) -> ListedModule | None:
    """A device's first row (index, name, bus id) adds its module; its second (power, memory) fills it in."""
    head = _FIRST.match(cells[0])
    bus = _BDF.search(cells[1]) if len(cells) > 1 else None
    if head is not None and bus is not None:
        name = head.group(2).strip() or UNNAMED
        if name == UNNAMED:
            out.notes.append(f"xpu-smi: GPU {head.group(1)} at {bus.group(0)}: its name cell is empty (not printed)")
        module = ListedModule(f"GPU {head.group(1)}", name=name, bus_id=bus.group(0).upper(), tool=KIND)
        out.modules.append(module)
        return module
    if first is None:
        return None
    bad: list[str] = []
    power, temp = _POWER.search(cells[0]), _TEMP.search(cells[0])
    memory = _MEMORY.search(cells[1]) if len(cells) > 1 else None
    i = out.modules.index(first)
    out.modules[i] = ListedModule(
        first.label, name=first.name, bus_id=first.bus_id, tool=KIND,
        memory_mib=reading(memory.group(2), (1.0, float(2**24)), "Memory-Usage total (MiB)", bad) if memory else None,
        temperature_c=reading(temp.group(1), (-50.0, 200.0), "Temp (C)", bad) if temp else None,
        power_limit_w=reading(power.group(2), (1.0, 5000.0), "Pwr cap (W)", bad) if power else None)
    out.notes.extend(f"xpu-smi: {first.label}: {b}" for b in bad)
    return None
