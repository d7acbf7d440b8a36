"""`nvidia-smi --query-gpu=… --format=csv` output: a header of query field names (with their units in
brackets, also under `nounits`), then one row per module; under `noheader` the fields are taken from the
`--query-gpu=` command line pasted above the rows. The fields are read into the same module fields as
`nvidia-smi -q`, so every check judges them alike. A field the tool could not read ([Unknown Error],
[N/A], [Not Supported]) stays unknown and is named in a note, never a figure. A line is a header only
when every cell is a query name and most are ones nvidia-smi has."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.records import UNNAMED, SmiTextModule
from gpuvet.captures.smi_text import SmiText, bus
from gpuvet.captures.text import MAX_MODULES, Line, ranges

# query field (and its aliases) -> the -q field it is, and the unit -q prints after the value
_FIELDS: dict[str, tuple[str, str]] = {
    "name": ("Product Name", ""), "gpu_name": ("Product Name", ""), "uuid": ("GPU UUID", ""),
    "gpu_uuid": ("GPU UUID", ""), "serial": ("Serial Number", ""), "vbios_version": ("VBIOS Version", ""),
    "mig.mode.current": ("MIG Mode/Current", ""), "mig.mode.pending": ("MIG Mode/Pending", ""),
    "temperature.gpu": ("Temperature/GPU Current Temp", " C"), "power.draw": ("GPU Power Readings/Power Draw", " W"),
    "power.limit": ("GPU Power Readings/Current Power Limit", " W"),
    "enforced.power.limit": ("GPU Power Readings/Current Power Limit", " W"),
    "power.default_limit": ("GPU Power Readings/Default Power Limit", " W"),
    "power.max_limit": ("GPU Power Readings/Max Power Limit", " W"),
    "memory.total": ("FB Memory Usage/Total", " MiB"), "memory.used": ("FB Memory Usage/Used", " MiB"),
    "utilization.gpu": ("Utilization/Gpu", " %"), "utilization.memory": ("Utilization/Memory", " %"),
    "pstate": ("Performance State", ""), "compute_cap": ("Compute Capability", ""), "fan.speed": ("Fan Speed", " %"),
    "pcie.link.gen.current": ("PCIe Generation/Current", ""), "pcie.link.gen.max": ("PCIe Generation/Max", ""),
    "pcie.link.gen.gpucurrent": ("PCIe Generation/Device Current", ""),
    "pcie.link.gen.gpumax": ("PCIe Generation/Device Max", ""), "pcie.link.gen.hostmax": ("PCIe Generation/Host Max", ""),
    "pcie.link.width.current": ("Link Width/Current", ""), "pcie.link.width.max": ("Link Width/Max", ""),
    "clocks.sm": ("Clocks/SM", " MHz"), "clocks.current.sm": ("Clocks/SM", " MHz"),
    "clocks.gr": ("Clocks/Graphics", " MHz"), "clocks.current.graphics": ("Clocks/Graphics", " MHz"),
    "clocks.mem": ("Clocks/Memory", " MHz"), "clocks.current.memory": ("Clocks/Memory", " MHz"),
    "clocks.max.sm": ("Max Clocks/SM", " MHz"), "clocks.max.memory": ("Max Clocks/Memory", " MHz"),
    "ecc.mode.current": ("ECC Mode/Current", ""), "temperature.memory": ("Temperature/Memory Current Temp", " C"),
    "ecc.errors.uncorrected.volatile.total": ("ECC Errors/Volatile/Double Bit/Total", ""),
    "ecc.errors.uncorrected.aggregate.total": ("ECC Errors/Aggregate/Double Bit/Total", ""),
    "retired_pages.pending": ("Retired Pages/Pending Page Retirement", ""),
    "retired_pages.sbe": ("Retired Pages/Single Bit ECC", ""), "retired_pages.dbe": ("Retired Pages/Double Bit ECC", ""),
    "remapped_rows.pending": ("Remapped Rows/Pending", ""),
    "remapped_rows.failure": ("Remapped Rows/Remapping Failure Occurred", ""),
    "remapped_rows.uncorrectable": ("Remapped Rows/Uncorrectable Error", ""),
}
_FLAGS = frozenset(("remapped_rows.pending", "remapped_rows.failure", "retired_pages.pending"))  # yes/no fields
# the clock event (throttle) reasons, under either family name nvidia-smi has used: -q's Clocks Event Reasons
_REASONS = {"gpu_idle": "Idle", "applications_clocks_setting": "Applications Clocks Setting",
            "sw_power_cap": "SW Power Cap", "hw_slowdown": "HW Slowdown", "hw_thermal_slowdown": "HW Thermal Slowdown",
            "hw_power_brake_slowdown": "HW Power Brake Slowdown", "sw_thermal_slowdown": "SW Thermal Slowdown",
            "sync_boost": "Sync Boost"}
_FIELDS.update({f"{family}.{k}": (f"Clocks Event Reasons/{v}", "") for family in ("clocks_throttle_reasons",
                "clocks_event_reasons") for k, v in _REASONS.items()})
# nvidia-smi's query families (--help-query-gpu): a header naming their fields is its, read or not by gpuvet
_FAMILIES = ("clocks_throttle_reasons.", "clocks_event_reasons.", "ecc.", "retired_pages.", "remapped_rows.",
             "temperature.", "power.", "memory.", "utilization.", "pcie.", "clocks.", "clocks_applications.",
             "clocks_default_applications.", "enforced.", "encoder.", "fan.", "mig.", "driver_model.", "accounting.",
             "inforom.", "reset_status.", "fabric.", "gsp.", "gom.", "protected_memory.", "compute_mode", "compute_cap",
             "display_", "count", "vbios", "module_id", "addressing_mode", "platform.")
# QX2: the PCI ids a query may ask for (the catalogue PRs' 'name,pci.device_id'): known names, never a figure; each
# cell is the id as nvidia-smi prints it ('0x232110DE'), which a line of prose is not
_PCI_IDS = ("pci.device_id", "pci.sub_device_id")
_PCI_ID_CELL = re.compile(r"^0x[0-9A-Fa-f]{8}$")
_KEYS = ("pci.bus_id", "gpu_bus_id", "index", "driver_version", "timestamp", "persistence_mode", *_PCI_IDS)
_NAME = re.compile(r"^[a-z][a-z0-9_.]{1,60}(?:\s*\[[^\]]{1,12}\])?$")
_COMMAND = re.compile(r"--query-gpu[= ]([a-z0-9_.,]+)")
_UNREAD = re.compile(r"^\[[^\]]{1,40}\]$|^N/A$")
_NVML_ERROR = re.compile(r"^\[(?:Unknown Error|GPU is lost|GPU requires reset)\]$", re.I)  # not [N/A], [Not Supported]
_NOT_KNOWN = re.compile(r"^\[?(?:N/A|Not Supported)\]?$", re.I)  # a field the module does not report: not read
_NUMBER_UNIT = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(?:W|%|MiB|MHz|C)?$")
_BUS = re.compile(r"^(?:[0-9A-Fa-f]{4,8}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")
# a program's print of the tool's output split into lines (Python's ['row', '']): the row is the one string
_LISTED = re.compile(r"""^\[(['"])([^'"]{1,4000})\1(?:,\s*(['"])\3)*\]$""")
_ONE_VALUE = re.compile(r"^[^\s$#>@:,]+(?: [^\s$#>@:,]+){0,5}$")  # a name, version or mode: no prompt, no prose
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")  # what a header's first query name (_NAME) starts with


@dataclass
class _Table:
    columns: list[str]
    rows: list[tuple[int, list[str]]] = field(default_factory=list)
    lines: set[int] = field(default_factory=set)  # its header's and rows' lines: claimed only where a row is read


def parse(lines: list[Line]) -> SmiText:
    """Every --query-gpu table in the lines (possibly none)."""
    out = SmiText()
    unread: list[int] = []
    skipped: list[int] = []
    bare: list[int] = []
    for table in _tables(lines, skipped, bare):
        out.claimed |= table.lines
        for no, cells in _module_rows(table):
            out.modules.append(_module(out, table.columns, cells, no, unread))
            if "driver_version" in table.columns:
                out.driver = cells[table.columns.index("driver_version")].strip()
    if skipped:
        out.claimed |= set(skipped)  # read, and named below: not left to the file's unread-lines note
        out.notes.append(f"nvidia-smi --query-gpu: line(s) {ranges(skipped)} have the header's width but no bus id "
                         "or index nvidia-smi prints (nor figures where the header asks for them): not a module, "
                         "skipped")
    if bare and not out.modules:  # issue 46 (batch R): read, and said; no module, so nothing is judged from it
        out.claimed |= set(bare)
        out.notes.append(f"nvidia-smi --query-gpu: the header at line(s) {ranges(bare)} has no row under it (the "
                         "output was cut there, or no GPU answered): no module read from it")
    if len(out.modules) > MAX_MODULES:
        out.notes.append(f"nvidia-smi --query-gpu: {len(out.modules):,} modules, more than one node has: the first "
                         f"{MAX_MODULES:,} kept")
        out.modules = out.modules[:MAX_MODULES]
    if out.modules:
        out.notes.append(f"nvidia-smi --query-gpu: {len(out.modules)} module(s) read from its CSV")
    if unread:
        out.notes.append(f"nvidia-smi --query-gpu: a field the tool could not read ([Unknown Error], [N/A], [Not "
                         f"Supported]) at line(s) {ranges(unread)}: left unknown (a read failure, not a fault)")
    return out


def _columns(text: str, asked: bool = False) -> list[str] | None:
    """The query names of a header line (or, ``asked``, of the command line's --query-gpu=, where one name is
    a table too: its rows are one value each), None where it is not one."""
    cells = [c.strip() for c in text.split(",")]
    if len(cells) < 2 - asked or not all(_NAME.match(c) for c in cells):
        return None
    names = [re.sub(r"\s*\[.*$", "", c) for c in cells]
    known = sum(n in _FIELDS or n in _KEYS or n.startswith(_FAMILIES) for n in names)
    return names if known * 3 >= len(names) * 2 else None


def _tables(lines: list[Line], skipped: list[int], bare: list[int]) -> list[_Table]:
    """The tables with at least one row read; a line of the header's width that is no row is in ``skipped``, a
    header line with no row under it in ``bare``."""
    tables: list[_Table] = []
    current: _Table | None = None
    asked: tuple[list[str], int] | None = None
    for ln in lines:
        t = ln.text
        named = current.columns if current is not None else asked[0] if asked is not None else []
        single = len(named) == 1  # a one-name query: its rows hold no comma
        if "--query-gpu" not in t and ("," not in t and not single or current is None and asked is None
                                       and (head := t[:1]) not in _LOWER and not head.isspace()):
            if current is not None and t.strip():  # no row, and no header (its first name is lower case)
                current = None
            continue
        s = ln.text.strip()
        if "--query-gpu" in s and (c := _COMMAND.search(s)) is not None:
            asked = (cols, ln.no) if (cols := _columns(c.group(1), asked=True)) else None
            current = None
            continue
        if (cols := _columns(s)) is not None:
            current = _Table(cols, lines={ln.no})
            tables.append(current)
            continue
        if not s:
            continue
        if s[:1] == "[" and (listed := _LISTED.match(s)) is not None:
            s = listed.group(2).strip()
        table = current or (_Table(asked[0], lines={asked[1]}) if asked else None)
        cells = [c.strip() for c in s.split(",")]
        if table is None or len(cells) != len(table.columns):
            current = None
            continue
        if table is not current:
            tables.append(table)
            current = table
        if _is_header(table.columns, cells):  # issue 46 (BJ): the header of a one-name query is no module
            table.lines.add(ln.no)
        elif _is_row(table.columns, cells):
            table.rows.append((ln.no, cells))
            table.lines.add(ln.no)
        elif len(cells) == 1:  # one value a line: a line that is none ends the table (prose, the next prompt)
            current = asked = None
        else:
            skipped.append(ln.no)
    kept = [t for t in tables if t.rows]
    heads = [min(t.lines) for t in tables if not t.rows and len(t.lines) == 1]
    bare += [h for h in heads if not any(no > h for no in skipped)]  # a header alone: nothing of its width under it
    skipped[:] = [no for no in skipped if any(min(t.lines) < no for t in kept)]  # garbage under no table read: not ours
    return kept


def _is_header(columns: list[str], cells: list[str]) -> bool:
    """The header line of the query asked (its names, with or without their units): nvidia-smi prints it above
    the rows in every form but noheader, and a one-name query's header ('uuid') has no comma to tell it by."""
    return all(_NAME.match(c) is not None and re.sub(r"\s*\[.*$", "", c) == n
               for n, c in zip(columns, cells, strict=True))


def _is_row(columns: list[str], cells: list[str]) -> bool:
    """A module's row: a bus id or a digit index where the header has those columns (a line of prose or
    garbage of the same width has neither); without them, a figure (or the tool's unread mark) in every
    column that holds one."""
    named = [(n, c) for n, c in zip(columns, cells, strict=True) if n in ("pci.bus_id", "gpu_bus_id", "index")]
    if named:
        return any(_BUS.match(c) if n != "index" else c.isdigit() for n, c in named)
    if any(n in _PCI_IDS and not _PCI_ID_CELL.match(c) for n, c in zip(columns, cells, strict=True)):
        return False
    figures = [c for n, c in zip(columns, cells, strict=True) if n in _FIELDS and _FIELDS[n][1]]
    if len(columns) == 1 and not figures:  # one text value a line: the tool's, never a prompt or a sentence
        return _UNREAD.match(cells[0]) is not None or _ONE_VALUE.match(cells[0]) is not None
    return all(_NUMBER_UNIT.match(c) or _UNREAD.match(c) for c in figures)


def _module_rows(table: _Table) -> list[tuple[int, list[str]]]:
    """The rows, one per module: a query looped with -l prints every module again each tick (its timestamp,
    bus id or index repeats): the last tick is kept."""
    for key in ("pci.bus_id", "gpu_bus_id", "uuid", "gpu_uuid", "index"):
        if key in table.columns:
            k = table.columns.index(key)
            last: dict[str, tuple[int, list[str]]] = {}
            for no, cells in table.rows:
                last[cells[k]] = (no, cells)
            return list(last.values())
    if "timestamp" in table.columns:
        k = table.columns.index("timestamp")
        tick = table.rows[-1][1][k]
        return [(no, cells) for no, cells in table.rows if cells[k] == tick]
    return table.rows


def _module(out: SmiText, columns: list[str], cells: list[str], no: int, unread: list[int]) -> SmiTextModule:
    fields: dict[str, str] = {}
    bus_id, errors, printed, not_read = "", list[str](), list[str](), list[str]()
    for name, value in zip(columns, cells, strict=True):
        if _UNREAD.match(value):
            unread += [no] if value != "N/A" else []
            if name in _FIELDS:  # R9A: NVML's error; REVFIX65: [N/A] / [Not Supported] a field not read
                errors += [_FIELDS[name][0]] if (nvml := _NVML_ERROR.match(value)) else []
                printed += [value] if nvml else []
                not_read += [_FIELDS[name][0]] if _NOT_KNOWN.match(value) else []
            if value.lower() == "[gpu requires reset]":  # NVML_ERROR_RESET_REQUIRED: the driver's word, as -q's
                fields["GPU Recovery Action"] = "Reset (a field printed [GPU requires reset])"
            if value.lower() == "[gpu is lost]":  # NVML_ERROR_GPU_IS_LOST: the module is off the bus (nv_driver_faults)
                fields["GPU Lost"] = f"{name}: [GPU is lost]"
            continue
        if name in ("pci.bus_id", "gpu_bus_id") and _BUS.match(value):
            bus_id = bus(value)
        elif name == "index" and value.isdigit():
            fields["Index"] = value
        elif name == "persistence_mode":
            fields["Persistence Mode"] = value
        elif name in _FLAGS and value in ("0", "1"):  # --query-remapped-rows prints its flags as 0/1, -q as No/Yes
            fields[_FIELDS[name][0]] = "Yes" if value == "1" else "No"
        elif name in _FIELDS:
            path, unit = _FIELDS[name]
            figure = _NUMBER_UNIT.match(value)
            fields[path] = f"{figure.group(1)}{unit}" if figure is not None and unit else value
    if not bus_id:
        k = sum(m.bus_id.startswith(UNNAMED) for m in out.modules)
        bus_id = UNNAMED if k == 0 else f"{UNNAMED} #{k + 1}"
    return SmiTextModule(bus_id, fields.get("Product Name", ""), fields, errors, printed, not_read)
