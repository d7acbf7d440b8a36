"""rocm-bandwidth-test's validation mode (``-v``, unidirectional copies): after its device list it
prints a 'Data Path Validation' matrix whose cell is PASS, FAIL or N/A for each copy from the row's
device to the column's (rocm_bandwidth_test_report.cpp: FAIL where the copied buffer differed from
the source). A FAIL is data corrupted on that path; CPUs are listed as devices without a GPU UUID.

Every run (``-a``, ``-A``, the default) also prints its 'Inter-Device Access' matrix: 1 where the row's
device can reach the column's memory, 0 where not. A 0 between two GPUs is peer access the runtime does
not have: the test copies nothing between them (its bandwidth cells read N/A)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.text import Line

_TITLE = re.compile(r"^\s*Data Path Validation\s*$")
_ACCESS = re.compile(r"^\s*Inter-Device Access\s*$")
_ACCESS_ROW = re.compile(r"^\s*(\d+)((?:\s+[01])+)\s*$")
_COLUMNS = re.compile(r"^\s*D/D((?:\s+\d+)+)\s*$")
_ROW = re.compile(r"^\s*(\d+)((?:\s+(?:PASS|FAIL|N/A))+)\s*$")
# 'Device: 2,  AMD Instinct MI210, GPU-…, 05:0.0'; 2.3.x printed the bus id without a UUID ('Vega 10 XT …,  2f:0.0')
_DEVICE = re.compile(r"^\s*Device:\s*(\d{1,4}),\s*([^,]+?)\s*(?:,\s*(GPU-[0-9A-Za-z]+))?"
                     r"\s*(?:,\s*((?:[0-9a-fA-F]{1,8}:)?[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2}\.[0-7]))?\s*$")


@dataclass(frozen=True)
class CopyCheck:
    """One copy the matrix judged: from device ``src`` to ``dst``, as named in the device list."""

    src: str
    dst: str
    passed: bool
    line: int
    models: tuple[str, str] = ("", "")  # the two devices' product names (the list's), for their design


@dataclass
class RbtValidation:
    checks: list[CopyCheck] = field(default_factory=list)
    no_peer: list[CopyCheck] = field(default_factory=list)  # GPU pairs the access matrix says cannot reach each other
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[CopyCheck]:
        return [c for c in self.checks if not c.passed]


# a host processor's name as the HSA runtime reports it (the CPU's brand string); any other agent is a GPU
_CPU_NAME = re.compile(r"\bCPU\b|Xeon|EPYC|Ryzen|Threadripper|Opteron|Core\(TM\)|Processor|Kunpeng|Ampere\(R\)", re.I)


def is_cpu(name: str, uuid: str | None = None) -> bool:
    """A device of the list that is a host CPU: newer releases print a GPU's UUID and bus id beside its name,
    older ones (1.0) the name alone for every device, so a name without a UUID is told by its words."""
    return uuid is None and _CPU_NAME.search(name) is not None


def devices(lines: list[Line]) -> list[tuple[int, str, str | None, str | None]]:
    """Each 'Device: N, NAME[, GPU-UUID, BUS]' line: (index, name, uuid, bus) as printed."""
    return [(int(m.group(1)), m.group(2).strip()[:80], m.group(3), m.group(4)) for ln in lines
            if "Device:" in ln.text and (m := _DEVICE.match(ln.text)) is not None]


def _names(lines: list[Line]) -> dict[int, str]:
    """Device index -> 'Device 2 (AMD Instinct MI210, 05:0.0)', 'Device 1 (Vega 10 XTX …)' or 'Device 0 (CPU: …)'."""
    return {i: f"Device {i} (CPU: {name})" if is_cpu(name, uuid) else
            f"Device {i} ({name}{', ' + bus if bus else ''})" for i, name, uuid, bus in devices(lines)}


def parse(lines: list[Line]) -> RbtValidation:
    out = RbtValidation()
    _access(lines, out)
    start = next((i for i, ln in enumerate(lines) if _TITLE.match(ln.text)), None)
    if start is None:
        _untitled(lines, out)
        return out
    names = _names(lines)
    out.claimed.add(lines[start].no)
    columns: list[int] = []
    for ln in lines[start + 1:]:
        if not ln.text.strip():
            continue
        if (c := _COLUMNS.match(ln.text)) is not None and not columns:
            columns = [int(x) for x in c.group(1).split()]
        elif (r := _ROW.match(ln.text)) is not None and columns:
            src = int(r.group(1))
            for dst, cell in zip(columns, r.group(2).split(), strict=False):
                if cell != "N/A":
                    out.checks.append(CopyCheck(names.get(src, f"Device {src}"), names.get(dst, f"Device {dst}"),
                                                cell == "PASS", ln.no))
        else:
            break
        out.claimed.add(ln.no)
    if not out.checks:
        out.notes.append(f"rocm-bandwidth-test: 'Data Path Validation' at line {lines[start].no} without a row of "
                         "PASS/FAIL cells (cut?): nothing to judge")
    return out


def _untitled(lines: list[Line], out: RbtValidation) -> None:
    """The matrix pasted without its 'Data Path Validation' title (a grep for FAIL, the block around it): rows
    of PASS/FAIL/N/A cells are its own words. Their columns are the 'D/D' line's above them, else, where
    the rows are square and numbered 0..n-1 in order (each row a device, each cell one), those numbers."""
    at = next((i for i, ln in enumerate(lines) if (r := _ROW.match(ln.text)) and "FAIL" in r.group(2)), None)
    if at is None:
        return
    while at > 0 and (not lines[at - 1].text.strip() or _ROW.match(lines[at - 1].text)):
        at -= 1  # back to the block's first row
    rows = [(ln, r) for ln in lines[at:] if ln.text.strip() for r in [_ROW.match(ln.text)]]
    rows = rows[:next((k for k, (_, r) in enumerate(rows) if r is None), len(rows))]
    head = next((c for ln in reversed(lines[:at]) if ln.text.strip() for c in [_COLUMNS.match(ln.text)]), None)
    cells = [(ln, int(r.group(1)), r.group(2).split()) for ln, r in rows if r is not None]
    square = [n for _, n, _ in cells] == list(range(len(cells))) and all(len(c) == len(cells) for _, _, c in cells)
    columns = [int(x) for x in head.group(1).split()] if head else list(range(len(cells))) if square else []
    if not columns:
        out.notes.append("rocm-bandwidth-test: PASS/FAIL rows without their header, not square: columns unknown")
        return
    names = _names(lines)
    for ln, src, row in cells:
        for dst, cell in zip(columns, row, strict=False):
            if cell != "N/A":
                out.checks.append(CopyCheck(names.get(src, f"Device {src}"), names.get(dst, f"Device {dst}"),
                                            cell == "PASS", ln.no))
        out.claimed.add(ln.no)
    out.notes.append("rocm-bandwidth-test: a PASS/FAIL matrix without its 'Data Path Validation' title, read as it")


def _access(lines: list[Line], out: RbtValidation) -> None:
    """The 'Inter-Device Access' matrix's 0 cells between two GPUs (each pair once)."""
    start = next((i for i, ln in enumerate(lines) if "Access" in ln.text and _ACCESS.match(ln.text)), None)
    if start is None:
        return
    listed = {i: (name, uuid) for i, name, uuid, _ in devices(lines)}
    names = _names(lines)
    columns: list[int] = []
    seen: set[frozenset[int]] = set()
    for ln in lines[start + 1:]:
        if not ln.text.strip():
            continue
        if (c := _COLUMNS.match(ln.text)) is not None and not columns:
            columns = [int(x) for x in c.group(1).split()]
        elif (r := _ACCESS_ROW.match(ln.text)) is not None and columns:
            src = int(r.group(1))
            for dst, cell in zip(columns, r.group(2).split(), strict=False):
                gpus = all(k in listed and not is_cpu(*listed[k]) for k in (src, dst))
                if cell == "0" and src != dst and gpus and frozenset((src, dst)) not in seen:
                    seen.add(frozenset((src, dst)))
                    out.no_peer.append(CopyCheck(names[src], names[dst], False, ln.no,
                                                 (listed[src][0], listed[dst][0])))
        else:
            break
        out.claimed.add(ln.no)
    out.claimed.add(lines[start].no)
