"""hipBusBandwidth (HIP's bus bandwidth sample, and SHOC's BusSpeedDownload/Readback it came from): one summary
row per test and transfer size, tab-separated: the test (``H2D_Bandwidth_pinned``, ``D2H_Bandwidth_pageable``,
``Bidir_Bandwidth_pinned``; ``…_Time_…`` rows in ms), the size (``+064By``, ``4kB``, ``524288kB``), the unit
and the median, mean, stddev, min and max of the runs. Each test's figure is the median of its largest
transfer, kept as bandwidthTest's are (a one-cell host table per direction and memory kind), so doctor prices
the pinned copies against the design of the module named, as it prices bandwidthTest's and nvbandwidth's."""

from __future__ import annotations

from dataclasses import dataclass

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Line

HIP_BUS = "hipBusBandwidth"
_SIZE = r"\+?(\d{1,9})(By|kB|MB|GB)"
_ROW = lazy(r"^\s*(H2D|D2H|Bidir)_Bandwidth_(pinned|pageable)\s+" + _SIZE + r"\s+GB/sec\s+(\d+(?:\.\d+)?)"
            r"(?:\s+-?\d+(?:\.\d+)?){0,4}\s*$")
_TIME = lazy(r"^\s*(?:H2D|D2H|Bidir)_Time_(?:pinned|pageable)\s+" + _SIZE + r"\s+ms(?:\s+-?\d+(?:\.\d+)?){0,5}\s*$")
# its device line: 'Device:NAME Mem=32.0GB #CUs=120 Freq=1502Mhz  MallocMode=pinned' (the device the run used)
_DEVICE = lazy(r"^\s*Device:\s*(\S.{0,95}?)\s+Mem=[\d.]+GB\b")
_HEAD = lazy(r"^\s*test\s+atts\s+units\s+median\s+mean\s+stddev\s+min\s+max\s*$")
_UNIT = {"By": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}
_KIND = {"H2D": "host_to_device", "D2H": "device_to_host", "Bidir": "host_bidirectional"}
MARKS = ("_Bandwidth_pinned", "_Bandwidth_pageable")  # its tests' names: the rows it reads hold one


@dataclass(frozen=True)
class _Largest:
    size: int  # bytes
    gbps: float  # the runs' median


@dataclass
class HipBus:
    """The tables (name -> one cell, as bandwidthTest's), the device its line names (None where not in the
    capture: the figures are then kept, never priced) and the lines read."""

    tables: dict[str, list[list[float | None]]]
    device: str | None
    claimed: set[int]


def read(lines: list[Line], bound: float) -> HipBus:
    """The runs' figures (a run whose largest transfer is below ``bound`` bytes is named with its size, never
    priced) and the device line's name."""
    largest: dict[tuple[str, str], _Largest] = {}
    claimed: set[int] = set()
    device: str | None = None
    for ln in lines:
        if "Mem=" in ln.text and (d := _DEVICE.match(ln.text)) is not None:
            device = device or d.group(1)
        elif "_Bandwidth_" in ln.text and (m := _ROW.match(ln.text)) is not None:
            key, size = (m.group(1), m.group(2)), int(m.group(3)) * _UNIT[m.group(4)]
            if key not in largest or size >= largest[key].size:
                largest[key] = _Largest(size, float(m.group(5)))
        elif not ("_Time_" in ln.text and _TIME.match(ln.text) or _HEAD.match(ln.text)):
            continue
        claimed.add(ln.no)
    tables: dict[str, list[list[float | None]]] = {}
    for (direction, memory), got in largest.items():
        small = "" if got.size >= bound else f", {got.size} B"
        tables[f"{HIP_BUS} {_KIND[direction]} ({memory}{small})"] = [[got.gbps]]
    return HipBus(tables, device if tables else None, claimed if tables else set())
