"""Intel xpu-smi's telemetry (issue 46): ``xpu-smi stats -d N`` (a two-column box under ``| Device ID | N |``
of ``Metric (unit) | value`` rows; a multi-tile device prints ``Tile 0: v; Tile 1: v``, an engine row
``v; Engine 0: v``, an unsupported metric an empty cell) and ``xpu-smi dump -m …`` (CSV under a ``Timestamp,
DeviceId, <metric> (unit), …`` header, one row per device per sample; ``N/A`` or an empty cell where the metric
is not read; a ``TileId`` column with ``-t``). Both versions' metric names are read by what they say, not by
position: temperatures and power for the inventory, and the device's own counters (resets, driver and
programming errors, correctable and uncorrectable cache/memory errors, the throttle reason) kept as printed
in ``ListedModule.ras`` and judged in captures.verdicts. A stats fragment pasted without its ``Device ID`` row
is read only when its rows are metrics xpu-smi prints, its device taken from the command line above it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from gpuvet.captures.records import ListedModule
from gpuvet.captures.text import Line, number
from gpuvet.captures.xpu_smi_table import UNNAMED

STATS, DUMP = "xpu-smi stats", "xpu-smi dump"
_CELLS = re.compile(r"^\s*\|([^|]*)\|([^|]*)\|?\s*$")
_COMMAND = re.compile(r"xpu-smi\s+(?:stats|dump)\b.*?(?:-d|--device)\s+\"?(\d{1,3})\b")
_DUMP_HEAD = re.compile(r"^\s*Timestamp\s*,\s*DeviceId\s*,", re.I)
_DUMP_ROW = re.compile(r"^\s*\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\s*,")
_TILE = re.compile(r"Tile\s*(\d+)\s*:\s*([-\d.]+)")
# the counters xpu-smi prints (stats' rows, dump's columns): what each is, for the verdicts
COUNTERS = {"reset": "Reset", "reset counter": "Reset", "programming errors": "Programming Errors",
            "driver errors": "Driver Errors", "cache errors correctable": "Cache Errors Correctable",
            "cache errors uncorrectable": "Cache Errors Uncorrectable",
            "mem errors correctable": "Memory Errors Correctable",
            "mem errors uncorrectable": "Memory Errors Uncorrectable",
            "gpu memory errors correctable": "Memory Errors Correctable",
            "gpu memory errors uncorrectable": "Memory Errors Uncorrectable", "throttle reason": "Throttle Reason",
            # stats -j's metrics_type names (XPUM_STATS_RAS_ERROR_CAT_…), read the same way
            "non compute errors correctable": "Memory Errors Correctable",
            "non compute errors uncorrectable": "Memory Errors Uncorrectable"}
_TEMPERATURE = ("gpu core temperature",)
_METRICS = ("gpu utilization", "eu array active", "eu array stall", "eu array idle", "compute engine util",
            "render engine util", "media engine util", "decoder engine util", "encoder engine util",
            "copy engine util", "media em engine util", "3d engine util", "gpu power", "gpu frequency",
            "media engine freq", "gpu core temperature", "gpu memory temperature", "gpu memory read",
            "gpu memory write", "gpu memory bandwidth", "gpu memory used", "gpu memory util", "xe link throughput",
            "gpu energy consumed", "pcie read", "pcie write", *COUNTERS)


@dataclass
class _Device:
    """What stats or dump said of one device: its counters (the largest a dump's samples gave) and hottest core."""

    tool: str
    counters: dict[str, str] = field(default_factory=dict)
    temperature: float | None = None


@dataclass
class Telemetry:
    devices: dict[str, _Device] = field(default_factory=dict)
    kinds: list[str] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)

    def modules(self) -> list[ListedModule]:
        """One module per device named, its counters as printed (``xpu-smi stats: Reset``, ``0``)."""
        return [ListedModule(f"GPU {d}", name=UNNAMED, temperature_c=v.temperature, tool=v.tool,
                             ras=tuple((f"{v.tool}: {k}", c) for k, c in v.counters.items()))
                for d, v in self.devices.items()]


def metric(cell: str) -> str:
    """A metric's name without its unit: 'GPU Core Temperature (C)' -> 'gpu core temperature'."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", cell.strip()).strip().lower()


def read(lines: list[Line]) -> Telemetry:
    """Every stats box, headless stats fragment, dump CSV and stats -j document in the lines."""
    out = Telemetry()
    _json(lines, out)
    device = _command_device(lines)
    current: str | None = None
    header: list[str] | None = None
    for ln in lines:
        if (named := _COMMAND.search(ln.text)) is not None:
            device = named.group(1)
        if _DUMP_HEAD.match(ln.text):
            header = [metric(c) for c in ln.text.split(",")]
            out.claimed.add(ln.no)
            _kind(out, DUMP)
            continue
        if header is not None and _DUMP_ROW.match(ln.text):
            _dump_row(out, header, ln)
            continue
        header = None
        current = _stats_row(out, ln, current, device)
    return out


def _command_device(lines: list[Line]) -> str | None:
    return next((m.group(1) for ln in lines if (m := _COMMAND.search(ln.text)) is not None), None)


def _kind(out: Telemetry, kind: str) -> None:
    if kind not in out.kinds:
        out.kinds.append(kind)


def _stats_row(out: Telemetry, ln: Line, current: str | None, device: str | None) -> str | None:
    """One box row: a ``Device ID`` row opens a device; a metric row under it (or, headless, one of xpu-smi's own
    metrics after its command line) is read. The device the next row belongs to."""
    m = _CELLS.match(ln.text)
    if m is None:
        return current if ln.text.strip().startswith("+") else None
    left, right = m.group(1).strip(), m.group(2).strip()
    if left == "Device ID":
        return right if right.isdigit() else None
    name = metric(left)
    if name not in _METRICS:
        return current
    owner = current if current is not None else device
    if owner is None:
        return None  # a headless row with no command line naming its device: not read
    out.claimed.add(ln.no)
    _kind(out, STATS)
    _put(out.devices.setdefault(owner, _Device(STATS)), name, right)
    return owner


def _dump_row(out: Telemetry, header: list[str], ln: Line) -> None:
    cells = [c.strip() for c in ln.text.split(",")]
    if len(cells) < 2 or not cells[1].isdigit():
        return  # a row the paste cut after its timestamp
    out.claimed.add(ln.no)
    got = out.devices.setdefault(cells[1], _Device(DUMP))
    for name, cell in zip(header[2:], cells[2:], strict=False):
        _put(got, name, cell)


def _put(got: _Device, name: str, cell: str) -> None:
    """A metric's cell on its device: a counter kept (the largest of several samples or tiles), the core
    temperature's hottest reading; an empty or N/A cell is a metric not read, not a zero."""
    values = [float(v) for _, v in _TILE.findall(cell) if number(v) is not None] or (
        [v] if (v := number(cell.split(";")[0])) is not None else [])
    if name in COUNTERS:
        key = COUNTERS[name]
        if key == "Throttle Reason":
            if cell and cell.upper() != "N/A":
                got.counters[key] = cell[:80]
        elif values:
            old = number(got.counters.get(key))
            got.counters[key] = str(int(max(values + ([old] if old is not None else []))))
    elif name in _TEMPERATURE and values and -50 <= max(values) <= 200:
        got.temperature = max(values + ([got.temperature] if got.temperature is not None else []))


def _json(lines: list[Line], out: Telemetry) -> None:
    """``xpu-smi stats -d N -j``: ``{"device_id": N, "device_level": [{"metrics_type": "XPUM_STATS_…", "value": v}],
    "tile_level": [{"tile_id": t, "data_list": […]}]}``; a device's counter is the largest its levels give."""
    if not any("XPUM_STATS_" in ln.text for ln in lines):
        return
    first = next((i for i, ln in enumerate(lines) if ln.text.lstrip().startswith("{")
                  or ln.text.strip() == "[" or ln.text.lstrip().startswith("[{")), None)
    last = max((i for i, ln in enumerate(lines) if ln.text.rstrip().endswith(("}", "]"))), default=None)
    if first is None or last is None or last < first:
        return
    try:
        doc = json.loads("\n".join(ln.text for ln in lines[first:last + 1]))
    except ValueError:
        return
    for item in doc if isinstance(doc, list) else [doc]:
        if not isinstance(item, dict) or "device_id" not in item:
            continue
        got = out.devices.setdefault(str(item["device_id"]), _Device(STATS))
        levels = [item.get("device_level") or []] + [t.get("data_list") or [] for t in item.get("tile_level") or []
                                                     if isinstance(t, dict)]
        for entry in (e for level in levels if isinstance(level, list) for e in level if isinstance(e, dict)):
            name = str(entry.get("metrics_type", "")).removeprefix("XPUM_STATS_").removeprefix("RAS_ERROR_CAT_")
            _put(got, name.replace("_", " ").lower().replace("memory temperature", "gpu memory temperature"),
                 str(entry.get("value", "")))
    if out.devices:
        out.claimed |= {ln.no for ln in lines[first:last + 1]}
        _kind(out, STATS)
