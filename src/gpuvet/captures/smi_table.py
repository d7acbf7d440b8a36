"""`nvidia-smi`'s default table, as drivers from 3xx to 5xx print it: per module a row of index, name,
persistence mode, bus id, display and volatile uncorrectable ECC, then a row of fan, temperature,
performance state, power draw / cap, memory used / total, utilisation and compute mode (the
column widths changed at 530; the cells did not). Drivers before 340 print memory in MB (nvidia-smi's
MB were MiB: 6143MB on a 6 GiB card) and, before 319, no persistence column and the memory
utilisation before the memory cell. A module whose readings row an excerpt cut at its end keeps
its name and bus id, its readings unknown. Read into the same module fields as
`nvidia-smi -q`, so every check judges them alike. A reading the tool could not take (ERR!, N/A,
[Unknown Error]) stays unknown and is named in a note, never a figure; a line is a module row
only when its cells hold a bus id and its next line holds those readings."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.records import SmiTextModule
from gpuvet.captures.smi_text import SmiText, bus
from gpuvet.captures.text import MAX_MODULES, Line, ranges

# the 610 drivers name the kernel module's version 'KMD Version' and the CUDA driver's 'CUDA UMD Version'; the one
# banner regex (env_report and driver_ids read the same line with it)
BANNER = lazy(r"NVIDIA-SMI\s+(\S+)\s+(?:Driver|KMD) Version:\s*(\S+)(?:\s+CUDA (?:UMD )?Version:\s*(\S+))?")
_FRAME = lazy(r"^\s*[+|][-=+|\s]*[+|]\s*$")  # +----+ and |====| lines
# the date nvidia-smi prints above its table ('Sun Dec  6 17:05:11 2026'): the tool's own first line
_STAMP = lazy(r"^\s*(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\s*$")
_HEADS = ("GPU  Name", "Fan  Temp", "MIG M.", "Persistence-M", "Memory-Usage")
_ROW1 = (lazy(r"^\s*(\d{1,3})\s+(\S.*?)(?:\s+(On|Off|WDDM|TCC))?\s*$"),  # Windows prints the driver model
         lazy(r"^\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s+(On|Off|N/A)\s*$"))
_READING = r"(\d+(?:\.\d+)?W|N/A|ERR!|\[[^\]]{1,30}\])"
_ROW2 = (lazy(r"^\s*(\d{1,3}%|N/A|ERR!)\s+(\d{1,3}C|N/A|ERR!)\s+(P\d{1,2}|N/A|ERR!)\s+" + _READING +
              r"\s*/\s*" + _READING + r"\s*$"),
         lazy(r"^\s*(?:\d{1,3}%\s+)?(\d+)Mi?B\s*/\s*(\d+)Mi?B\s*$"))


_PROCESS = lazy(r"^\|\s+(\d{1,3})\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(\d{1,9})\s+(C\+G|C|G|M\+C|M)\s+(\S.*?)\s+"
                r"(\d+MiB|N/A)\s*\|$")
_NO_PROCESS = lazy(r"^\|\s+No running processes found\s*\|$")


@dataclass(frozen=True)
class _Row:
    index: str
    name: str
    persistence: str
    bus_id: str
    ecc: str


def parse(lines: list[Line]) -> SmiText:
    """Every module row pair of the table in the lines (possibly none), with the banner's versions."""
    out = SmiText()
    unread: list[int] = []
    banners: set[int] = set()  # claimed only where a module row is read: a banner over garbage is no table
    for i, ln in enumerate(lines):
        text = ln.text
        if "|" not in text:
            continue
        if (b := BANNER.search(text)) is not None:
            out.driver, out.cuda = b.group(2), _cuda(b.group(3), ln.no, out)
            banners.add(ln.no)
            continue
        row = _first_row(text)
        if row is None and (cut := _cut_first_row(lines, i)) is not None:
            out.modules.append(cut)
            out.claimed.add(ln.no)
            out.notes.append(f"nvidia-smi table: module {cut.fields['Index']} ({cut.bus_id}) was cut inside its first "
                             f"row (line {ln.no}): its name and bus id read, its ECC cell and readings unknown")
            continue
        if row is None or i + 1 >= len(lines):
            continue
        module = _second_row(row, lines[i + 1].text, unread, lines[i + 1].no)
        if module is None and _cut_here(lines, i + 1):
            module = _cut_readings(row, lines[i + 1].text, unread, lines[i + 1].no)
            read = "its whole cells read, the cut one unknown" if len(module.fields) > 2 else "its readings unknown"
            out.notes.append(f"nvidia-smi table: the readings of module {row.index} ({row.bus_id}) were cut at "
                             f"line {lines[i + 1].no}: its name and bus id read, {read}")
        if module is not None:
            out.modules.append(module)
            out.claimed |= {ln.no, lines[i + 1].no}
            _mig_row(lines[i + 2:i + 3], module, out)
    if out.modules:
        out.claimed |= banners
        _once_each(out)
        _processes(lines, out)
        first, last = min(out.claimed) - 8, max(out.claimed) + 2  # the frame and headings around the rows
        out.claimed |= {ln.no for ln in lines if first <= ln.no <= last and (_frame_or_head(ln.text) or (
            ln.no > min(out.claimed) and _framed(ln.text)) or _STAMP.match(ln.text))}  # MIG-mode, Processes heads
        out.notes.append(f"nvidia-smi table: {len(out.modules)} module(s) read (index, name, bus id, temperature, "
                         "power, memory); the table gives no PCIe link, clocks or throttle reasons")
        _driver_models(out)
        out.notes += _cut_names(out)
    if not out.modules and banners:
        _heading_only(lines, min(banners), out)
    if unread:
        out.notes.append(f"nvidia-smi table: a reading the tool could not take (ERR!, [Unknown Error]) at "
                         f"line(s) {ranges(unread)}: left unknown as a figure; NVML could not read the module "
                         "(doctor judges it)")
    return out


def _cuda(version: str | None, no: int, out: SmiText) -> str | None:
    """The banner's CUDA version; 'ERR!' (NVML could not ask the driver's CUDA library) is none, said in a note."""
    if version != "ERR!":
        return version
    out.notes.append(f"nvidia-smi table: CUDA Version: ERR! (line {no}): NVML could not read the CUDA version from "
                     "the driver's CUDA library (libcuda missing, shadowed or of another driver; inside WSL the one "
                     "under /usr/lib/wsl/lib): CUDA programs are likely to fail to start")
    return None


def _driver_models(out: SmiText) -> None:
    """Windows' table names each module's driver model (WDDM, TCC): said once, with what it means."""
    models = [(m.fields.get("Index", "?"), m.fields["Driver Model/Current"]) for m in out.modules
              if "Driver Model/Current" in m.fields]
    if models:
        out.notes.append("nvidia-smi table (Windows): driver model " + ", ".join(f"GPU {i} {dm}" for i, dm in models)
                         + ("; a GPU in TCC mode drives no display and is not visible inside WSL" if any(
                             dm == "TCC" for _, dm in models) else ""))


def _heading_only(lines: list[Line], banner: int, out: SmiText) -> None:
    """A table cut after its banner and column headings, before any module row (a paste's end, or its cut
    mark): its versions are read, and what was cut is said; a banner under which no heading follows is none."""
    after = [ln for ln in lines if ln.no > banner]
    head = [ln for ln in after[:4] if _frame_or_head(ln.text) or any(h in ln.text for h in _HEADS)]
    rest = [ln for ln in after if ln.no > max((h.no for h in head), default=banner)]
    if not any(h in ln.text for ln in head for h in _HEADS) or any("|" in ln.text for ln in rest):
        return
    out.claimed |= {banner, *(ln.no for ln in head)}
    out.notes.append(f"nvidia-smi table: cut after its headings (line {max(out.claimed)}), before any module row: "
                     "driver and CUDA versions read, no module in the excerpt")


def _once_each(out: SmiText) -> None:
    """One module per bus id: a file holding the table several times (nvidia-smi run again, or under
    watch) keeps each module's last row, as --query-gpu keeps its last tick; at most MAX_MODULES."""
    last: dict[str, SmiTextModule] = {}
    for m in out.modules:
        last[m.bus_id] = m
    snapshots = max(Counter(m.bus_id for m in out.modules).values())
    if snapshots > 1:
        out.notes.append(f"nvidia-smi table: {snapshots} snapshots of the table read ({len(out.modules)} rows): "
                         f"each module's last row kept, {len(last)} module(s)")
    out.modules = list(last.values())
    if len(out.modules) > MAX_MODULES:
        out.notes.append(f"nvidia-smi table: {len(out.modules):,} modules, more than one node has: the first "
                         f"{MAX_MODULES:,} kept")
        out.modules = out.modules[:MAX_MODULES]


def _processes(lines: list[Line], out: SmiText) -> None:
    """The table's Processes section: each row onto its module (by nvidia-smi's index) as -q lists it;
    'No running processes found' is none on every module. No section: the processes are not known."""
    by_index = {m.fields.get("Index"): m for m in out.modules}
    for ln in lines:
        text = ln.text.strip()
        if _NO_PROCESS.match(text):
            for m in out.modules:
                m.fields["Processes"] = "None"
            out.claimed.add(ln.no)
        elif (p := _PROCESS.match(text)) is not None and (on := by_index.get(p.group(1))) is not None:
            base = f"Processes/Process {p.group(2)}"
            on.fields.update({f"{base}/Process ID": p.group(2), f"{base}/Type": p.group(3),
                             f"{base}/Name": p.group(4), f"{base}/Used GPU Memory": p.group(5).replace("MiB", " MiB")})
            out.claimed.add(ln.no)
    listed = [m for m in out.modules if any(k.startswith("Processes/") for k in m.fields)]
    if listed and not any("Processes" in m.fields for m in out.modules):
        for m in out.modules:  # a section that lists some modules' processes lists none on the others
            if m not in listed:
                m.fields["Processes"] = "None"


def _mig_row(after: list[Line], module: SmiTextModule, out: SmiText) -> None:
    """The third row drivers from 450 print under a module's two (the MIG M. column): Enabled or Disabled
    is its MIG mode, read as -q's 'MIG Mode/Current'; N/A (no MIG on the module) leaves it unknown."""
    cells = _cells(after[0].text) if after else []
    if len(cells) == 3 and not cells[0].strip() and not cells[1].strip() and cells[2].strip() in (
            "Enabled", "Disabled", "N/A"):
        out.claimed.add(after[0].no)
        if cells[2].strip() != "N/A":
            module.fields["MIG Mode/Current"] = cells[2].strip()


def _framed(text: str) -> bool:
    """A row of the table's frame: between pipes (or + corners) at both ends."""
    t = text.strip()
    return len(t) > 2 and t[0] in "|+" and t[-1] in "|+"


def _frame_or_head(text: str) -> bool:
    return bool(_FRAME.match(text)) or ("|" in text and (any(h in text for h in _HEADS)
                                                         or not text.replace("|", "").strip()))


def _cells(text: str) -> list[str]:
    parts = text.strip().split("|")
    return [p for p in parts[1:-1]] if len(parts) >= 4 else []


def _first_row(text: str) -> _Row | None:
    cells = _cells(text)
    if len(cells) < 3:
        return None
    a, b = _ROW1[0].match(cells[0]), _ROW1[1].match(cells[1])
    if a is None or b is None:
        return None
    return _Row(a.group(1), a.group(2), a.group(3) or "", b.group(1), cells[2].strip())


_CUT_BUS = lazy(r"^\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])(?:\s+(?:On|Off|N/A))?\s*$")


def _cut_first_row(lines: list[Line], at: int) -> SmiTextModule | None:
    """A module's first row the excerpt ends inside (index and name, then its whole bus id, the rest cut,
    no table line after it): the module is listed with what the row gave, never its readings guessed."""
    parts = lines[at].text.strip().split("|")
    if len(parts) < 3 or parts[0] or len([p for p in parts[1:] if p.strip()]) > 2:
        return None
    a, b = _ROW1[0].match(parts[1]), _CUT_BUS.match(parts[2])
    if a is None or b is None or any("|" in ln.text or _FRAME.match(ln.text) for ln in lines[at + 1:]):
        return None
    return SmiTextModule(bus(b.group(1)), a.group(2), {"Product Name": a.group(2), "Index": a.group(1)}, [])


def _cut_here(lines: list[Line], at: int) -> bool:
    """The excerpt ends inside the readings row at ``at``: it opens as one (fan, temperature cells),
    stops before its last cell closes, and no table line follows it (a paste cut mid-row)."""
    parts = lines[at].text.strip().split("|")
    if not 2 <= len(parts) < 5 or parts[0] or _ROW2[0].match(parts[1]) is None and not re.match(
            r"^\s*(\d{1,3}%|N/A)\s+(\d{1,3}C|N/A)\s", parts[1]):
        return False
    return all("|" not in ln.text and not _FRAME.match(ln.text) for ln in lines[at + 1:])


def _cut_readings(row: _Row, text: str, unread: list[int], no: int) -> SmiTextModule:
    """A readings row cut in its last cell (utilisation, compute mode): the two cells closed before the cut
    (fan to power cap, memory used / total) are whole and read; the cut cell stays unknown."""
    parts = text.strip().split("|")
    module = _second_row(row, "|".join(parts[:-1]) + "| |", unread, no) if len(parts) == 4 else None
    if module is None:
        return SmiTextModule(bus(row.bus_id), row.name, {"Product Name": row.name, "Index": row.index}, [])
    return module


_LOST = ("Unknown Error", "ERR!", "GPU is lost")  # a memory cell nvidia-smi could not fill


def _second_row(row: _Row, text: str, unread: list[int], no: int) -> SmiTextModule | None:
    cells = _cells(text)
    if len(cells) < 3:
        return None
    a, b = _ROW2[0].match(cells[0]), _ROW2[1].match(cells[1])
    lost = b is None and cells[1].strip() in _LOST  # the memory cell NVML could not read either: a lost module
    unsaid = b is None and cells[1].strip() == "N/A"  # MIG enabled: memory is its instances', in the MIG table
    if a is None or (b is None and not lost and not unsaid):
        return None
    fan, temp, pstate, draw, cap = a.groups()
    util = cells[2].split()
    fields = {"Product Name": row.name, "Index": row.index}
    if b is not None:
        fields |= {"FB Memory Usage/Used": f"{b.group(1)} MiB", "FB Memory Usage/Total": f"{b.group(2)} MiB"}
    known = {"Fan Speed": fan.replace("%", " %"), "Temperature/GPU Current Temp": temp.replace("C", " C"),
             "Performance State": pstate, "GPU Power Readings/Power Draw": draw.replace("W", " W"),
             "GPU Power Readings/Current Power Limit": cap.replace("W", " W"),
             "Utilization/Gpu": util[0].replace("%", " %") if util else "N/A",
             "Compute Mode": util[1] if len(util) > 1 else "N/A"}
    if row.persistence in ("On", "Off"):
        fields["Persistence Mode"] = "Enabled" if row.persistence == "On" else "Disabled"
    elif row.persistence:
        fields["Driver Model/Current"] = row.persistence
    if row.ecc.isdigit() and int(row.ecc) > 0:  # a count: the table shows no remapping nor retired pages to clear
        known["ECC Errors/Volatile/Uncorrectable"] = row.ecc
    if row.ecc.isdigit():  # a count at all is ECC on: the column says N/A where ECC is off (newcomer 56)
        fields["ECC Mode/Current"] = "Enabled"
    errors: list[str] = ["FB Memory Usage"] * lost + ["ECC Errors"] * (row.ecc == "ERR!")
    printed = [cells[1].strip()] * lost + ["ERR!"] * (row.ecc == "ERR!")
    not_read: list[str] = []  # REVFIX65: N/A, [N/A], [Not Supported]: the module does not report it (not read)
    for key, value in known.items():
        if value in ("N/A", "ERR!") or value.startswith("["):
            said = value.strip("[]").lower() in ("n/a", "not supported")
            unread += [no] if not said else []
            errors += [key] if not said else []
            printed += [value] if not said else []
            not_read += [key] if said else []
            continue
        fields[key] = value
    if "GPU is lost" in printed or "[GPU is lost]" in printed:  # REVFIX65: NVML's word, the module is lost
        fields["GPU Lost"] = "the table printed GPU is lost"
    return SmiTextModule(bus(row.bus_id), row.name, fields, errors, printed, not_read)


def _cut_names(out: SmiText) -> list[str]:
    """nvidia-smi cuts a name wider than its Name column and ends it with '...' ('Tesla P100-SXM2...'): said as
    cut, the rest never guessed (issue 46: the model is named only as far as the tool printed it)."""
    cut = sorted({m.product for m in out.modules if m.product.endswith("...")})
    return [f"nvidia-smi table: the name '{n}' is cut by nvidia-smi to its column ('...'): the model's whole name "
            "is not in the table (nvidia-smi -L or -q prints it)" for n in cut]
