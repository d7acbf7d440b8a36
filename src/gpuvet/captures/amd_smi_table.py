"""``amd-smi``'s default table (amd-smi 24.7 and later, run with no command) as people paste it: a
boxed table whose header names two rows per GPU (``BDF  GPU-Name | Mem-Uti  Temp  UEC  Power-Usage``
then ``GPU  HIP-ID  OAM-ID  Partition-Mode | GFX-Uti  Fan  Mem-Usage``), each GPU's first row led by its
bus id and model, its second by its index. The cells right of the bar are read by the header's names,
whatever columns a release prints: the temperature, the uncorrectable ECC count (UEC) and the VRAM
total of ``used/total MB``. A cut copy keeps the rows it holds."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.records import ListedModule, ListedParse, StateReading
from gpuvet.captures.text import Line, integer, number

TOOL = "amd-smi (default table)"  # the tool and the kind the file is read as, as amd-smi monitor's
_CELLS = re.compile(r"\s{2,}")
_FIRST = re.compile(r"^([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(\S.*?)$")
_SECOND = re.compile(r"^(\d{1,4})(?:\s|$)")
_FRAME = re.compile(r"^(?:[+|][-=+|]{10,}|\|\s*(?:AMD-SMI \S+|Platform:).*\|)$")
_USAGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)\s*(MB|MiB|GB|GiB)\s*$")
_POWER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:/\s*(\d+(?:\.\d+)?)\s*)?W\s*$")  # 'Power-Usage': '57/300 W'
_PCT = re.compile(r"^\s*(\d{1,3}(?:\.\d+)?)\s*%\s*$")


@dataclass
class _Table:
    """The header's column names right of the bar, for a GPU's first and second row."""

    first: list[str] = field(default_factory=list)
    second: list[str] = field(default_factory=list)


def _halves(text: str) -> tuple[str, str] | None:
    """A boxed row's two cells (``| left | right |``), None for a border or a line of another shape."""
    body = text.strip()
    if not (body.startswith("|") and body.endswith("|")) or body.count("|") != 3:
        return None
    left, right = body[1:-1].split("|")
    return left.strip(), right.strip()


def read(lines: list[Line], out: ListedParse) -> None:
    """Each GPU of amd-smi's default table, as a module (where no other AMD tool listed one)."""
    table: _Table | None = None
    found: list[ListedModule] = []
    frame: list[int] = []  # borders and the title rows: the table's, once a GPU row is read
    for ln in lines:
        cells = _halves(ln.text)
        if cells is None:
            if _FRAME.match(ln.text.strip()):
                frame.append(ln.no)
            continue
        left, right = cells
        if left.startswith("BDF") and "GPU-Name" in left:
            table = _Table(first=_CELLS.split(right))
        elif table is not None and left.startswith("GPU ") and "HIP-ID" in left:
            table.second = _CELLS.split(right)
        elif table is not None and (row := _FIRST.match(left)):
            found.append(_module(len(found), row.group(1), row.group(2), dict(zip(table.first, _CELLS.split(right),
                                                                                  strict=False))))
        elif table is not None and found and (second := _SECOND.match(left)):
            found[-1] = _second(found[-1], second.group(1), dict(zip(table.second, _CELLS.split(right), strict=False)))
        else:
            continue
        out.claimed.add(ln.no)
    if found:
        out.claimed.update(frame)
    if found and not out.modules:
        out.modules += found
        out.kinds.append(TOOL)


def _module(k: int, bus_id: str, name: str, row: dict[str, str]) -> ListedModule:
    power = _POWER.match(row.get("Power-Usage", ""))
    state = None if power is None else StateReading(power_w=float(power.group(1)),
                                                    power_cap_w=number(power.group(2)) if power.group(2) else None)
    return ListedModule(f"GPU {k}", name=name, bus_id=bus_id.upper(), temperature_c=number(row.get("Temp")),
                        ecc_uncorrectable=integer(row.get("UEC")), tool=TOOL, state=state)


def _second(m: ListedModule, index: str, row: dict[str, str]) -> ListedModule:
    """The GPU's second row: its index (the label amd-smi's other commands use) and its VRAM total."""
    usage = _USAGE.match(row.get("Mem-Usage", ""))
    scale = 1024.0 if usage is not None and usage.group(3).startswith("G") else 1.0
    mib = None if usage is None else float(usage.group(2)) * scale
    busy = _PCT.match(row.get("GFX-Uti", ""))
    state = StateReading(busy_pct=float(busy.group(1)) if busy else None,
                         power_w=m.state.power_w if m.state else None, power_cap_w=m.state.power_cap_w if m.state else None,
                         memory_used_mib=None if usage is None else float(usage.group(1)) * scale)
    return ListedModule(f"GPU {index}", name=m.name, bus_id=m.bus_id, memory_mib=mib, temperature_c=m.temperature_c,
                        ecc_uncorrectable=m.ecc_uncorrectable, tool=m.tool, state=state)


PROCESS_MARKERS = ("Process Name",)  # amd-smi process's box: 'GPU  PID  Process Name  GTT_MEM  VRAM_MEM …  CU %'
_PROCESS_HEAD = re.compile(r"^\|\s*GPU\s+PID\s+Process Name\s.*\|$")
_PROCESS_ROW = re.compile(r"^\|\s*(\d{1,4})\s+(\d{1,9})\s+\S.*\|$")


def read_processes(lines: list[Line], out: ListedParse) -> None:
    """The GPUs amd-smi's process box names by index (where no other AMD tool listed a module): a process runs on
    each, so each exists; its bus id and model are not in the box (issue 46, batch T)."""
    head: int | None = None
    gpus: dict[str, list[int]] = {"": []}  # '': the box's header rows
    for ln in lines:
        text = ln.text.strip()
        if _PROCESS_HEAD.match(text):
            head = ln.no
            gpus[""].append(ln.no)
        elif head is not None and (row := _PROCESS_ROW.match(text)):
            gpus.setdefault(row.group(1), []).append(ln.no)
        elif head is not None and not _FRAME.match(text):
            head = None  # the box ended
    if len(gpus) == 1 or out.modules:
        return
    out.modules += [ListedModule(f"GPU {g}", tool="amd-smi (process list)") for g in sorted(filter(None, gpus), key=int)]
    out.claimed.update(no for rows in gpus.values() for no in rows)
    out.kinds.append("amd-smi (process list)")
