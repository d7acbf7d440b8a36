"""The monitors users run beside nvidia-smi, read into the module fields -q's are (so every check judges
them alike): gpustat's one line per GPU (``[0] NVIDIA A100-SXM4-80GB | 33°C,   0 % |     4 / 81920 MB |
user(…M)``, under its host/time/driver header or without it; --show-fan/-F, --show-power/-P, --show-codec/-e,
-c/-u/-p on the processes; older releases print 'C; ``??`` is a reading NVML did not give; ``((Unknown Error))``
a module NVML could not read), gpustat --json, ``nvidia-smi pmon`` (per-process rows, 545's and 550's column
sets), ``nvidia-smi --query-compute-apps`` CSV, nvidia-top's table, and the NVIDIA entries of ``nvtop -s``.

gpustat's MB are NVML's bytes // 2**20 (MiB). The processes these screens show (pid, name, type, memory) are placed
in their module's Processes fields as -q's and the table's are, so doctor's other_processes step judges them by the
one rule (the workload when no symptom or benchmark is given, a lead beside one); a screen that read a module's
processes and shows none there is 'Processes: None'. A process printed without its pid (gpustat without -p) is
said in a note and placed nowhere: the screen's processes are then not known, never none."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from gpuvet.captures.marks import Marker, Marks
from gpuvet.captures.records import UNNAMED, SmiTextModule
from gpuvet.captures.smi_text import SmiText, bus
from gpuvet.captures.text import MAX_MODULES, Line, ranges

_NUM = r"(\d{1,6}|\?\?|--)"
# gpustat's row, with the index peeled off or not (decorations take '[N] ' for a rank label on a run of rows)
_ROW = re.compile(r"^\s*(?:\[(\d{1,3})\]\s*)?([A-Za-z][^|]{1,60}?)\s*\|\s*" + _NUM + r"\s*(?:°C|'C|°|C)\s*,"
                  r"\s*(?:" + _NUM + r"\s*%\s*,\s*)?" + _NUM + r"\s*%(\s*\([^)]{0,60}\))?"
                  r"(?:\s*,\s*" + _NUM + r"\s*(?:/\s*" + _NUM + r"\s*)?W)?"
                  r"\s*\|\s*" + _NUM + r"\s*/\s*" + _NUM + r"\s*MB\s*\|(.*)$")
_LOST = re.compile(r"^\s*(?:\[(\d{1,3})\]\s*)?(?:([A-Za-z][^|]{1,60}?)\s*\|\s*)?\(\((?:Unknown Error|[^)]{1,40})\)\)")
_CUT = re.compile(r"^\s*(?:\[(\d{1,3})\]\s*)?([A-Za-z][^|]{1,60}?)\s*\|\s*$")  # a row cut after its name
_HEAD = re.compile(r"^\s*(\S{1,64})\s+(\S.{4,40}?\d)\s+(\d{2,3}\.\d{1,3}(?:\.\d{1,3})?)\s*$")  # host  time  driver
_PROC = re.compile(r"([^\s()]{1,120})\((\d+|\?)M\)")
_READINGS = ("Temperature/GPU Current Temp", "Fan Speed", "Utilization/Gpu", "GPU Power Readings/Power Draw",
             "GPU Power Readings/Current Power Limit", "FB Memory Usage/Used", "FB Memory Usage/Total")


@dataclass
class _Found:
    """What the readers found: the modules by their key (index, bus id or uuid), the keys whose processes a screen
    read (shown), and the processes printed without a pid (said only)."""

    out: SmiText = field(default_factory=SmiText)
    by_key: dict[str, SmiTextModule] = field(default_factory=dict)
    shown: set[str] = field(default_factory=set)
    unnamed: dict[str, list[str]] = field(default_factory=dict)
    kinds: list[str] = field(default_factory=list)

    def module(self, key: str, name: str = "", bus_id: str = "", index: str | None = None) -> SmiTextModule:
        if key not in self.by_key and len(self.by_key) < MAX_MODULES:
            at = bus_id or (f"{UNNAMED} #{len(self.by_key) + 1}" if self.by_key else UNNAMED)
            fields = {"Product Name": name} if name else {}
            self.by_key[key] = SmiTextModule(at, name, fields | ({"Index": index} if index is not None else {}))
        return self.by_key.get(key) or SmiTextModule(UNNAMED, name)

    def place(self, key: str, pid: str, kind: str | None, name: str | None, memory: str | None) -> None:
        """One process onto its module's Processes fields, as -q's table reader places the table's rows."""
        self.shown.add(key)
        if key not in self.by_key:
            return
        base = f"Processes/Process {pid}"
        said = {"Process ID": pid, "Type": kind, "Name": name, "Used GPU Memory": memory}
        self.by_key[key].fields.update({f"{base}/{k}": v for k, v in said.items() if v is not None})

    def said(self, key: str, what: str) -> None:
        """A process printed without its pid: named in a note, placed nowhere."""
        self.shown.add(key)
        self.unnamed.setdefault(key, []).append(what)

    def settle(self) -> None:
        """'Processes: None' on each module whose processes a screen read and showed none; where some process
        had no pid, no module's list is complete enough to say none."""
        for key in self.shown if not self.unnamed else ():
            at = self.by_key.get(key)
            if at is not None and not any(k.startswith("Processes/") for k in at.fields):
                at.fields["Processes"] = "None"


def _figure(value: str | None, unit: str) -> str | None:
    return f"{value} {unit}" if value is not None and value.isdigit() else None


def _gpustat_row(m: re.Match[str], found: _Found, at: int) -> None:
    """One gpustat row onto its module (by the index printed, else its place among the rows)."""
    index = m.group(1) or str(at)
    name = m.group(2).strip()
    mod = found.module(f"gpu{index}", name, index=index)
    values = (m.group(3), m.group(4), m.group(5), m.group(7), m.group(8), m.group(9), m.group(10))
    units = ("C", "%", "%", "W", "W", "MiB", "MiB")
    for path, value, unit in zip(_READINGS, values, units, strict=True):
        if (said := _figure(value, unit)) is not None:
            mod.fields[path] = said
    procs = m.group(11).strip()
    if procs == "(Not Supported)":
        return
    found.shown.add(f"gpu{index}")
    for p in _PROC.finditer(procs):
        memory = f"{p.group(2)} MiB" if p.group(2) != "?" else None
        if (named := re.fullmatch(r"(.*)/(\d{1,9})", p.group(1))) is not None:  # user:command/pid (gpustat -p)
            found.place(f"gpu{index}", named.group(2), None, named.group(1) or None, memory)
        else:
            found.said(f"gpu{index}", f"{p.group(1)} ({memory or 'memory not read'})")


def _gpustat(lines: list[Line], found: _Found) -> None:
    """gpustat's rows (a run of them), the header line right above the first, a row cut after its name at the
    paste's end, a module NVML could not read ('((Unknown Error))')."""
    rows = 0
    for i, ln in enumerate(lines):
        text = ln.text
        if "|" not in text and "((" not in text:
            continue
        if (m := _ROW.match(text)) is not None:
            if rows == 0 and i and (h := _HEAD.match(lines[i - 1].text)) is not None:
                found.out.driver = h.group(3)
                found.out.claimed.add(lines[i - 1].no)
                found.out.notes.append(f"gpustat: host {h.group(1)}, driver {h.group(3)} (its header line)")
            _gpustat_row(m, found, rows)
        elif (lost := _LOST.match(text)) is not None and (lost.group(1) or lost.group(2) or rows and
                                                            lines[i - 1].no in found.out.claimed):
            index = lost.group(1) or str(rows)
            mod = found.module(f"gpu{index}", (lost.group(2) or "").strip(), index=index)
            mod.unread.extend(k for k in _READINGS if k not in mod.unread)
            found.out.notes.append(f"gpustat: GPU {index} at line {ln.no}: NVML could not read it ({text.strip()[:80]})")
        elif rows and lines[i - 1].no in found.out.claimed and (cut := _CUT.match(text)) is not None:
            index = cut.group(1) or str(rows)
            found.module(f"gpu{index}", cut.group(2).strip(), index=index)
            found.out.notes.append(f"gpustat: GPU {index}'s row was cut after its name (line {ln.no}): its readings "
                                   "unknown")
        else:
            continue
        rows += 1
        found.out.claimed.add(ln.no)
    if rows:
        found.kinds.append("gpustat")


def _gpustat_json(lines: list[Line], found: _Found) -> None:
    """gpustat --json: one document whose "gpus" list holds NVML's fields by query name."""
    doc = json_span(lines, '"gpus"')
    if doc is None or not isinstance(doc[0], dict) or not isinstance(gpus := doc[0].get("gpus"), list):
        return
    keys = {"temperature.gpu": ("Temperature/GPU Current Temp", "C"), "fan.speed": ("Fan Speed", "%"),
            "utilization.gpu": ("Utilization/Gpu", "%"), "power.draw": ("GPU Power Readings/Power Draw", "W"),
            "enforced.power.limit": ("GPU Power Readings/Current Power Limit", "W"),
            "memory.used": ("FB Memory Usage/Used", "MiB"), "memory.total": ("FB Memory Usage/Total", "MiB")}
    for k, g in enumerate(g for g in gpus if isinstance(g, dict)):
        index = str(g.get("index", k))
        mod = found.module(f"gpu{index}", str(g.get("name") or ""), index=index)
        mod.fields |= {"GPU UUID": str(g["uuid"])} if g.get("uuid") else {}
        for key, (path, unit) in keys.items():
            if isinstance(g.get(key), (int, float)):
                mod.fields[path] = f"{g[key]:g} {unit}"
        procs = g.get("processes")
        found.shown |= {f"gpu{index}"} if isinstance(procs, list) else set()
        for p in procs if isinstance(procs, list) else []:
            if isinstance(p, dict):
                _json_process(found, f"gpu{index}", p)
    if isinstance(doc[0].get("driver_version"), str):
        found.out.driver = doc[0]["driver_version"]
    found.out.claimed |= doc[1]
    found.kinds.append("gpustat --json")


def _json_process(found: _Found, key: str, p: dict[str, object]) -> None:
    """One of gpustat --json's processes (pid, username, command, gpu_memory_usage in MiB)."""
    name = f"{p.get('username', '?')}:{p.get('command', '?')}"
    memory = f"{p['gpu_memory_usage']} MiB" if isinstance(p.get("gpu_memory_usage"), int) else None
    if isinstance(p.get("pid"), int):
        found.place(key, str(p["pid"]), None, name, memory)
    else:
        found.said(key, f"{name} ({memory or 'memory not read'})")


def json_span(lines: list[Line], key: str) -> tuple[object, set[int]] | None:
    """The outermost JSON document (object or list) around the first line holding ``key``, and its lines; None
    if none parses. At most a few openings above the key are tried (a pasted document, not a log of them)."""
    at = next((i for i, ln in enumerate(lines) if key in ln.text), None)
    if at is None:
        return None
    best: tuple[object, set[int]] | None = None
    tries = 0
    for start in range(at, max(-1, at - 400), -1):
        if not lines[start].text.lstrip().startswith(("{", "[")) or tries >= 6:
            continue
        tries += 1
        if (doc := _document(lines, start)) is not None:
            best = doc
    return best


def _document(lines: list[Line], start: int) -> tuple[object, set[int]] | None:
    depth = 0
    for j in range(start, min(len(lines), start + 20000)):
        t = lines[j].text
        depth += t.count("{") + t.count("[") - t.count("}") - t.count("]")
        if depth <= 0:
            try:
                return json.loads("\n".join(ln.text for ln in lines[start:j + 1])), {ln.no for ln in lines[start:j + 1]}
            except ValueError:
                return None
    return None


_PMON_HEAD = re.compile(r"^#\s*gpu\s+pid\s+type\s+(.*)$", re.I)
_PMON_ROW = re.compile(r"^\s*(?:\d{8}\s+\d\d:\d\d:\d\d\s+)?(\d{1,3})\s+(\d{1,9}|-)\s+(C\+G|C|G|M|-)\s+(.*)$")


def _pmon(lines: list[Line], found: _Found) -> None:
    """nvidia-smi pmon: under its '# gpu pid type …' header (and its units line), one row per process per
    module per tick ('-' in every cell: no process on the module). The command is the last cell."""
    columns: list[str] | None = None
    read = 0
    for ln in lines:
        s = ln.text.strip()
        if (h := _PMON_HEAD.match(s)) is not None:
            columns = h.group(1).split()
        elif columns is not None and s.startswith("#"):
            pass  # its units line ('# Idx # C/G % % …')
        elif columns is not None and (r := _PMON_ROW.match(s)) is not None:
            gpu, pid, kind, cells = r.group(1), r.group(2), r.group(3), r.group(4).split()
            found.module(f"gpu{gpu}", index=gpu)
            found.shown.add(f"gpu{gpu}")
            fb = dict(zip(columns, cells, strict=False)).get("fb", "-")  # its -s m column: FB memory in MB
            if pid != "-":
                found.place(f"gpu{gpu}", pid, kind, cells[-1] if cells else None, f"{fb} MiB" if fb.isdigit() else None)
            read += 1
        else:
            columns = None if s else columns
            continue
        found.out.claimed.add(ln.no)
    if read:
        found.kinds.append("nvidia-smi pmon")
        found.out.notes.append(f"nvidia-smi pmon: {read} row(s) of {len(found.by_key)} module(s) read; pmon names "
                               "modules by index only (no bus id, model or limits)")


_APPS_KEYS = {"pid", "process_name", "name", "gpu_uuid", "gpu_bus_id", "used_memory", "used_gpu_memory", "gpu_name",
              "gpu_serial"}


def _compute_apps(lines: list[Line], found: _Found) -> None:
    """nvidia-smi --query-compute-apps CSV: its header of query names (a process's and its module's), then one row
    per process; the module is named by its bus id, else its uuid."""
    columns: list[str] | None = None
    rows = 0
    for ln in lines:
        cells = [re.sub(r"\s*\[[^\]]*\]$", "", c.strip()) for c in ln.text.split(",")]
        names = set(cells)  # a process's key, a module's, and one of the format's markers (gpu_uuid, gpu_bus_id, …)
        if len(cells) >= 2 and names <= _APPS_KEYS and names & {"pid", "process_name"} and \
                names & {"gpu_uuid", "gpu_bus_id", "gpu_name"} and names & {"gpu_uuid", "gpu_bus_id", "process_name"}:
            columns = cells
            found.out.claimed.add(ln.no)
        elif columns is not None and len(cells) == len(columns) and not ln.text.lstrip().startswith("#"):
            row = dict(zip(columns, cells, strict=True))
            where = row.get("gpu_bus_id") or row.get("gpu_uuid") or row.get("gpu_name") or "?"
            mod = found.module(where, row.get("gpu_name", ""), bus_id=bus(row["gpu_bus_id"]) if "gpu_bus_id" in row
                               else "")
            mod.fields |= {"GPU UUID": row["gpu_uuid"]} if row.get("gpu_uuid", "").startswith("GPU-") else {}
            memory = row.get("used_memory") or row.get("used_gpu_memory") or None
            name = row.get("process_name") or row.get("name") or None
            if re.fullmatch(r"\d{1,9}", row.get("pid", "")):
                found.place(where, row["pid"], None, name, memory)
            else:
                found.said(where, f"{name or '?'} (pid not queried, {memory or 'memory not queried'})")
            found.out.claimed.add(ln.no)
            rows += 1
        elif ln.text.strip():
            columns = None
    if rows:
        found.kinds.append("nvidia-smi --query-compute-apps")


_NVTOP_ROW = re.compile(r"^\s*(\d{1,3})\s+(\S.{1,60}?)\*?\s+(\d+)\s*MiB\s*/\s*(\d+)\s*MiB\s+[\d.]+\s+(\d+(?:\.\d+)?)\s*W\s*/"
                        r"\s*(\d+(?:\.\d+)?)\s*W\s+(\d{1,3})\s*C\s*$")


def _nvidia_top(lines: list[Line], found: _Found) -> None:
    """nvidia-top's table: '#  Name  Mem. Use  Mem. Use  Pow. Use  Temp.' rows (a '*' after the name: it drives the
    display)."""
    headed = False
    for ln in lines:
        headed = headed or "Mem. Use" in ln.text  # rows are read only under its header
        if not headed or "MiB" not in ln.text or (m := _NVTOP_ROW.match(ln.text)) is None:
            continue
        mod = found.module(f"gpu{m.group(1)}", m.group(2).strip(), index=m.group(1))
        mod.fields |= {"FB Memory Usage/Used": f"{m.group(3)} MiB", "FB Memory Usage/Total": f"{m.group(4)} MiB",
                       "GPU Power Readings/Power Draw": f"{m.group(5)} W",
                       "GPU Power Readings/Current Power Limit": f"{m.group(6)} W",
                       "Temperature/GPU Current Temp": f"{m.group(7)} C"}
        found.out.claimed.add(ln.no)
        if "nvidia-top" not in found.kinds:
            found.kinds.append("nvidia-top")


_NVITOP_BANNER = re.compile(r"NVITOP\s+(\S+)\s+Driver Version:\s*(\S+)\s+CUDA Driver Version:\s*(\S+)")
_NVITOP_READ = re.compile(r"^\s*(?:(\d{1,3})\s+)?(\d{1,3}%|N/A|MAX)\s+(\d{1,3}C|N/A)\s+(P\d{1,2}|N/A)\s+(\d+W|N/A)\s*/\s*"
                          r"(\d+W|N/A)\s*$")
_NVITOP_MEM = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB)\s*/\s*(\d+(?:\.\d+)?)\s*(MiB|GiB|TiB)\s*$")
_BOX = "─═│┼┬┴╪╤╧╞╡╒╕╘╛├┤┌┐└┘"
_MIB = {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024, "TiB": 1024**2}


def _nvitop(lines: list[Line], found: _Found) -> None:
    """nvitop -1 (and its screen pasted): nvidia-smi's table drawn with box characters under 'NVITOP … Driver
    Version … CUDA Driver Version …'; memory in MiB or GiB with decimals; compact rows (-C) hold no name or bus."""
    rows = [(ln, [c for c in re.split(r"[│|]", ln.text)[1:-1]]) for ln in lines if "│" in ln.text or "NVITOP" in ln.text]
    named: tuple[str, str, str] | None = None
    read, headed = 0, False
    for ln, cells in rows:
        if (b := _NVITOP_BANNER.search(ln.text)) is not None:
            found.out.driver, found.out.cuda, headed = b.group(2), b.group(3), True
        elif not headed:
            continue  # rows are read only under its banner
        elif len(cells) >= 3 and (head := re.match(r"^\s*(\d{1,3})\s+(\S.*?)\s+(?:On|Off|N/A)?\s*$", cells[0])) and \
                (at := re.match(r"^\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s", cells[1])):
            named = (head.group(1), head.group(2).strip(), at.group(1))
        elif len(cells) >= 2 and (r := _NVITOP_READ.match(cells[0])) is not None and (r.group(1) or named):
            index, name, bus_id = (named if named and not r.group(1) else (r.group(1), "", ""))
            _nvitop_module(found.module(f"gpu{index}", name, bus(bus_id) if bus_id else "", index=index), r, cells)
            named, read = None, read + 1
        else:
            continue
        found.out.claimed.add(ln.no)
    if read:
        found.out.claimed |= {ln.no for ln in lines if ln.text.strip() and not ln.text.strip(_BOX + " \t")
                              or "│ GPU " in ln.text or "│ Fan " in ln.text}
        found.kinds.append("nvitop")


def _nvitop_module(mod: SmiTextModule, r: re.Match[str], cells: list[str]) -> None:
    """The readings row onto its module: fan, temperature, pstate, power / cap, memory used / total (MiB)."""
    said = {"Fan Speed": r.group(2).replace("%", " %"), "Temperature/GPU Current Temp": r.group(3).replace("C", " C"),
            "Performance State": r.group(4), "GPU Power Readings/Power Draw": r.group(5).replace("W", " W"),
            "GPU Power Readings/Current Power Limit": r.group(6).replace("W", " W")}
    mod.fields |= {k: v for k, v in said.items() if "N/A" not in v and "MAX" not in v}
    if (m := _NVITOP_MEM.match(cells[1])) is not None:
        mod.fields["FB Memory Usage/Used"] = f"{round(float(m.group(1)) * _MIB[m.group(2)])} MiB"
        mod.fields["FB Memory Usage/Total"] = f"{round(float(m.group(3)) * _MIB[m.group(4)])} MiB"
    if len(cells) > 2 and (u := re.match(r"^\s*(\d{1,3})%", cells[2])) is not None:
        mod.fields["Utilization/Gpu"] = f"{u.group(1)} %"


NVIDIA_NAME = re.compile(r"\b(?:NVIDIA|GeForce|Tesla|Quadro|TITAN|RTX)\b", re.I)


def nvtop_devices(lines: list[Line]) -> tuple[list[dict[str, str]], set[int]]:
    """nvtop -s's device entries (each a flat object of strings) and the document's lines."""
    doc = json_span(lines, '"device_name"')
    if doc is None or not isinstance(doc[0], list):
        return [], set()
    return [{str(k): str(v) for k, v in d.items()} for d in doc[0] if isinstance(d, dict) and "device_name" in d], doc[1]


def _nvtop(lines: list[Line], found: _Found) -> None:
    """The NVIDIA entries of nvtop -s (the others are other vendors' modules: captures/accel_tools)."""
    devices, span = nvtop_devices(lines)
    ours = [d for d in devices if NVIDIA_NAME.search(d["device_name"])]
    for k, d in enumerate(ours):
        mod = found.module(f"nvtop{k}", d["device_name"])
        for key, path, unit in (("temp", "Temperature/GPU Current Temp", "C"), ("power_draw",
                                "GPU Power Readings/Power Draw", "W"), ("gpu_util", "Utilization/Gpu", "%")):
            if (v := re.match(r"^\s*(\d{1,4})\s*" + unit, d.get(key, ""))) is not None:
                mod.fields[path] = f"{v.group(1)} {unit}"
    if ours:
        found.out.claimed |= span
        found.kinds.append("nvtop -s")


READERS: tuple[tuple[tuple[Marker, ...], Callable[[list[Line], _Found], None]], ...] = (
    (("°C,", "'C,", "((", "° C,"), _gpustat),
    (('"memory.total"',), _gpustat_json),
    (("pid",), _pmon),
    (("process_name", "gpu_uuid", "gpu_bus_id"), _compute_apps),
    (("Mem. Use",), _nvidia_top),
    (("NVITOP",), _nvitop),
    (('"device_name"',), _nvtop),
)
MARKERS: tuple[Marker, ...] = tuple(dict.fromkeys(m for markers, _ in READERS for m in markers))


def parse(lines: list[Line], marks: Marks | None = None) -> SmiText:
    """Every monitor screen in the lines, read as one module list; each reader runs only where the text holds
    one of its markers. The processes each module runs are placed in its Processes fields (one without a pid is
    said in a note)."""
    found, marks = _Found(), marks or Marks(lines)
    for markers, reader in READERS:
        if marks.any(markers):
            reader(lines, found)
    found.settle()
    found.out.modules = list(found.by_key.values())
    for key, said in found.unnamed.items():
        at = found.by_key.get(key)
        where = f"GPU {at.fields.get('Index')}" if at is not None and "Index" in at.fields else \
            (at.bus_id if at is not None and not at.bus_id.startswith(UNNAMED) else key)
        found.out.notes.append(f"{where}: the screen shows {len(said)} process(es) without a pid: {'; '.join(said[:6])}"
                               f"{' …' if len(said) > 6 else ''}; the screen's processes are not known (gpustat -p, "
                               "nvidia-smi -q or its table list the pids)")
    if found.out.modules:
        found.out.notes.insert(0, f"{', '.join(found.kinds)}: {len(found.out.modules)} module(s) read at line(s) "
                                  f"{ranges(sorted(found.out.claimed))}; NVIDIA's, as NVML names them")
    return found.out


def kinds_of(smi: SmiText) -> str:
    """The kind the file is read as: the first tool the parse read (its first note names them all)."""
    return smi.notes[0].split(":")[0].split(", ")[0] if smi.notes and smi.modules else ""


def beside(table: SmiText, screen: SmiText) -> SmiText:
    """The screen's modules, each the table's own where nvidia-smi's table beside it lists the same index (its bus
    id and fields), the screen's readings filling what the table's row lacks; the table's versions kept."""
    by_index = {m.fields.get("Index"): m for m in table.modules}
    joined = []
    for m in screen.modules:
        same = by_index.get(m.fields.get("Index"))
        if same is not None:
            same.fields |= {k: v for k, v in m.fields.items() if k not in same.fields}
        joined.append(same or m)
    screen.modules = joined
    screen.driver, screen.cuda = table.driver or screen.driver, table.cuda or screen.cuda
    if table.modules:
        screen.notes.append(f"nvidia-smi table beside it: {len(table.modules)} of the {len(joined)} module(s) named "
                            "there too (bus id, fields); the screen lists the rest")
    return screen
