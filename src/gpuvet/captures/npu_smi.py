"""Huawei Ascend's ``npu-smi info`` table as people paste it: two rows per chip, the first with
the NPU id, name, health, power and temperature, the second with the chip id (and physical id on
newer releases), bus id, AI core use and memory (Memory-Usage, and HBM-Usage where the chip has
HBM). NPU and chip are words of this module only: the rest of gpuvet sees modules. The
``-t topo`` matrix is read by captures/npu_topo into the same listing.

Bus ids a poster masked (``0000:xx:00.0``) are left out and noted, never guessed; a model the
catalog lacks stays an unknown model with the memory the table gives.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures import mx_smi, npu_listing, npu_mapping, npu_processes, npu_topo
from gpuvet.captures.dedupe import merge_listed
from gpuvet.captures.records import ListedModule, ListedParse, StateReading
from gpuvet.captures.text import TEMP_C, Line, number, reading

MAX_MODULES = 4096
_BORDER = re.compile(r"^\s*\+[-=+]+\+?\s*$")
# R14E: the table's title, 'npu-smi 25.5.1   Version: 25.5.1': the Ascend driver package's version it reports
_VERSION = re.compile(r"^\s*\|\s*npu-smi\s+\S+\s+Version:\s*([\w.-]{1,32})")
_HEAD = re.compile(r"^\s*\|\s*(NPU\s+Name|Chip\b|npu-smi\s+\S+\s+Version:|NPU\s+Chip\s)")
_BUS = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-Fx]{2}:[0-9a-fA-Fx]{2}\.\d$")
# issue 46: a chip with no PCIe bus id of its own (the Atlas 200I A2 / 310B SoC boards print 'NA'): keyed by its ids
_NO_BUS = ("NA", "N/A", "-", "--")
_USAGE = re.compile(r"(?<![-+\w.])([-+\w.]+)\s*/\s*([-+\w.]+)")  # used / total, each token whole: '1e308' is not '1'
_MAX_MIB = 2**24  # 16 TiB: no chip's memory; a larger total is a corrupt reading (the backend bounds it closer)
_NO_PROCESS = re.compile(r"^\s*(?:\|\s*)?No running processes found in NPU \d+", re.I)
# its options in either order ('-t health -i 2 -c 0', the guide's '-i 2 -c 0 -t health')
_HEALTH_COMMAND = re.compile(r"npu-smi\s+info\b(?=[^\n]*\s-t\s+health\b)[^\n]*?\s-i\s+(\d{1,4})\b"
                             r"(?:[^\n]*?\s-c\s+(\d{1,3}))?")
_FAULT_CODE = re.compile(r"\b(?:0[xX])?([0-9A-Fa-f]{8,9})\b")  # a fault code as npu-smi prints it ('80E18402')
FAULT_CODE = "npu-smi: fault code"  # the verdict path of one (captures/verdicts.py: its level's severity)
_HEALTH_STATUS = re.compile(r"^\s*Health Status\s*:\s*(\w+)\s*$")
_ERROR_CODE = re.compile(r"^\s*(Error Code|Error Information)\s*:\s*(\S.*?)\s*$")


def _cells(text: str) -> list[str]:
    """A row's cells; a row the paste cut short (no closing '|') keeps its last, partial cell as empty."""
    parts = text.strip().split("|")
    if len(parts) >= 3 and not text.rstrip().endswith("|"):
        return [p.strip() for p in parts[1:-1]] + [""]
    return [p.strip() for p in parts[1:-1]] if len(parts) >= 3 else []


def parse(lines: list[Line]) -> ListedParse:
    """The chips of every ``npu-smi info`` table in the lines, and the ``npu-smi info -t topo``
    matrix (captures/npu_topo) when the file holds one."""
    if (mx := mx_smi.parse(lines)) is not None:  # R10D: nvidia-smi's layout, a GPU's bus id in its first row
        return mx
    out, lines_all = ListedParse(), lines
    npu_topo.parse(lines, out)
    _health(lines, out)
    health = bool(out.modules)
    npu_listing.read(lines, out)  # R10D: -l's NPU ID blocks, -t TYPE's key/value lines (not nvidia-smi -q's)
    procs = npu_processes.read(lines, out)  # R14C: its process rows, which start as a chip's first row does
    mapped = ListedParse()
    npu_mapping.read(lines, mapped)  # R14C: -m's chip-to-logic-id rows (kept where no table lists the chips)
    lines = [ln for ln in lines if ln.no not in out.claimed | mapped.claimed]
    if not any(_HEAD.match(ln.text) for ln in lines) and not _has_rows(lines):
        if health:
            out.kinds.append("npu-smi info -t health")
        return npu_mapping.adopt(mapped, out)
    hbm = any("HBM-Usage" in ln.text for ln in lines)
    first: tuple[list[str], Line] | None = None
    masked = 0
    for ln in lines:
        if _BORDER.match(ln.text) or _HEAD.match(ln.text) or _NO_PROCESS.match(ln.text):
            out.claimed.add(ln.no)
            continue
        cells = _cells(ln.text)
        if len(cells) < 3:
            continue
        if _is_chip_row(cells) and first is not None:  # a chip's second row
            if not ln.text.rstrip().endswith("|"):
                out.notes.append(f"npu-smi: line {ln.no}: the chip's second row is cut after its bus id: listed, "
                                 "its memory not read")
            module, was_masked = _chip(first[0], cells, hbm, out.notes)
            masked += was_masked
            if len(out.modules) < MAX_MODULES:
                out.modules.append(module)
            out.claimed |= {first[1].no, ln.no}
            first = None
        elif cells[0].split()[:1] and cells[0].split()[0].isdigit() and len(cells[0].split()) >= 2:
            first = (cells, ln)
    if not out.modules and first is None and not _has_rows(lines):  # R5C: the header alone (no /dev/davinci*)
        out.kinds.append("npu-smi info")
        out.notes.append("npu-smi info: the table's header and no NPU row: no NPU is visible in this view (a "
                         "container started without /dev/davinci*, or the paste stops at the header)")
    if out.modules:
        out.kinds.append("npu-smi info")
        out.driver = next((v.group(1) for ln in lines if (v := _VERSION.match(ln.text)) is not None), out.driver)
        out.modules, twice = merge_listed(out.modules, "npu-smi info")
        out.notes += twice
        npu_processes.attach([ln for ln in lines_all if ln.no in procs], procs, out)
    _zero_power(out)
    if masked:
        out.notes.append(f"npu-smi: {masked} bus id(s) masked in the capture (xx): left out, not guessed")
    if first is not None and (out.modules or any(_HEAD.match(ln.text) for ln in lines)):  # issue 46: not another
        out.notes.append(f"npu-smi: line {first[1].no} starts a chip whose second row is cut: left out")  # tool's
    return npu_mapping.adopt(mapped, out)


def _health(lines: list[Line], out: ListedParse) -> None:
    """``npu-smi info -t health -i N [-c C]``: one chip's ``Health Status : OK|Warning|Alarm|Critical`` (and its
    ``Error Code``), the chip named by the command line above it (chip 0 where ``-c`` is not given)."""
    chip: str | None = None
    for ln in lines:
        if (asked := _HEALTH_COMMAND.search(ln.text)) is not None:
            chip = f"NPU {asked.group(1)} chip {asked.group(2) or 0}"
        elif chip is not None and (said := _HEALTH_STATUS.match(ln.text)) is not None:
            out.modules.append(ListedModule(chip, health=said.group(1), tool="npu-smi info"))
            out.claimed.add(ln.no)
        elif chip is not None and (code := _ERROR_CODE.match(ln.text)) is not None:
            out.claimed.add(ln.no)
            if code.group(2).upper() not in ("NA", "N/A", "0"):
                out.notes.append(f"npu-smi: {chip}: {code.group(1)} {code.group(2)[:160]}")
                if code.group(1) == "Error Code":
                    _fault_codes(out, chip, code.group(2))


def _fault_codes(out: ListedParse, chip: str, said: str) -> None:
    """ASC: the chip's fault codes ('Error Code : 80E18402 80C98008'), each a verdict on it with the level Ascend's
    own cluster software handles it at and its documented cause (knowledge/npu_fault_codes.yaml)."""
    from gpuvet.knowledge.ascend import npu_fault  # the tables read only where a chip printed a code

    codes = [m.group(1).upper() for m in _FAULT_CODE.finditer(said)][:16]
    ras = []
    for code in codes:
        fault = npu_fault(code)
        what = f"{fault.level}: {fault.meaning or 'its cause not documented'}" if fault else "not in Ascend's tables"
        ras.append((f"{FAULT_CODE} {code}", what[:200]))
    k = next((k for k in range(len(out.modules) - 1, -1, -1) if out.modules[k].label == chip), None)
    if k is None:
        out.modules.append(ListedModule(chip, tool="npu-smi info", ras=tuple(ras)))
    else:
        out.modules[k] = replace(out.modules[k], ras=out.modules[k].ras + tuple(ras))


def _is_chip_row(cells: list[str]) -> bool:
    """A chip's second row: its ids (chip, and device or physical id) all digits, then its bus id or NA."""
    ids = cells[0].split()
    return bool(ids) and all(c.isdigit() for c in ids) and (_BUS.match(cells[1]) is not None
                                                             or cells[1].upper() in _NO_BUS)


def _zero_power(out: ListedParse) -> None:
    """Issue 46: chips whose Power(W) reads 0.0, said once (with their health): a listed chip drawing nothing is a
    sensor not read or a chip held idle; not a fault by itself, a figure to read beside a Health alarm."""
    zero = [f"{m.label}{f' (Health {m.health})' if m.health else ''}" for m in out.modules
            if m.tool == "npu-smi info" and m.state is not None and m.state.power_w == 0.0]
    if zero:
        out.notes.append(f"npu-smi: Power(W) reads 0.0 W on {len(zero)} chip(s): {', '.join(zero[:8])}"
                         f"{' …' if len(zero) > 8 else ''} (no draw reported: its sensor not read or the chip held "
                         "idle; said, not judged alone)")


def _has_rows(lines: list[Line]) -> bool:
    return any(len(c := _cells(ln.text)) >= 3 and _BUS.match(c[1]) for ln in lines)


def _chip(first: list[str], second: list[str], hbm: bool, notes: list[str]) -> tuple[ListedModule, bool]:
    """One chip from its two rows: NPU id and name | health | power temp …, then chip [phy id] |
    bus id | AI core, memory used / total, HBM used / total. A figure out of physical bounds (an
    HBM total of 1e308, 99999 °C, NaN) is noted and left out, never read as another number."""
    npu, name = first[0].split()[0], " ".join(first[0].split()[1:])
    chip = second[0].split()[0] if second[0].split() else "?"
    label = f"NPU {npu} chip {chip}"
    bad: list[str] = []
    usage = _USAGE.findall(second[2])
    what = "HBM total (MB)" if hbm else "memory total (MB)"
    total = reading(usage[-1][1], (1.0, _MAX_MIB), what, bad) if usage and (hbm or len(usage) == 1) else None
    figures = first[2].split()
    temp = reading(figures[1], TEMP_C, "Temp(C)", bad) if len(figures) > 1 else None
    notes += [f"npu-smi: {label}: {b}" for b in bad]
    no_bus = second[1].upper() in _NO_BUS
    masked = not no_bus and "x" in second[1].lower().split(":", 1)[-1]
    return ListedModule(label, name=name or None, bus_id=None if masked or no_bus else second[1].upper(),
                        memory_mib=total, health=first[1] or None, temperature_c=temp, tool="npu-smi info",
                        state=_state(figures, second[2].split())), masked


def _state(figures: list[str], use: list[str]) -> StateReading | None:
    """Power(W), the first row's first figure, and AICore(%), the second row's (STJ: doctor/state_judgment.py)."""
    def figure(cells: list[str], top: float) -> float | None:
        value = number(cells[0]) if cells and cells[0][:1].isdigit() else None
        return value if value is not None and 0 <= value <= top else None

    power, busy = figure(figures, 2000.0), figure(use, 100.0)  # issue 46: either alone is kept (a 0.0 W beside NA)
    return StateReading(busy_pct=busy, power_w=power) if power is not None or busy is not None else None
