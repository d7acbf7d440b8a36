"""``amd-smi monitor``'s table as people paste it: a header of column names (``GPU  POWER  GPU_TEMP
MEM_TEMP  GFX_UTIL  GFX_CLOCK … SINGLE_ECC  DOUBLE_ECC  PCIE_REPLAY  VRAM_USED  VRAM_TOTAL …``; which
columns depend on the release and on -p/-t/-u/-m/-e flags) and one row per GPU, its cells two spaces or
more apart, each a figure with its unit ('741 W', '78 °C', '196592 MB') or N/A. Read by the header's
names, whatever columns a release prints: the GPU index, its temperature, its VRAM total and its
uncorrectable ECC count (DOUBLE_ECC, amd-smi's since the driver loaded, judged as amd-smi metric's)."""

from __future__ import annotations

import re
from collections.abc import Callable

from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line, number, reading

TOOL = "amd-smi monitor"
_KNOWN = frozenset({"POWER", "GPU_TEMP", "HOTSPOT_TEMP", "MEM_TEMP", "GFX_UTIL", "GFX_CLOCK", "MEM_UTIL", "MEM_CLOCK",
                    "SINGLE_ECC", "DOUBLE_ECC", "PCIE_REPLAY", "VRAM_USED", "VRAM_TOTAL", "PCIE_BW", "THROTTLE"})
ECC_COUNT = (0.0, float(2**64 - 1))  # amd-smi's ECC counters are 64-bit
_CELLS = re.compile(r"\s{2,}")
# a header names two of _KNOWN: POWER and THROTTLE, or one of these (every other name holds one); issue 43
MARKERS = ("_TEMP", "_UTIL", "_CLOCK", "_ECC", "PCIE_", "VRAM_", "THROTTLE")


def _count(cell: str | None, line: int, notes: list[str]) -> int | None:
    """DOUBLE_ECC as a count; one no counter holds (infinite, above a 64-bit counter) is corrupt: left unread
    and said, never dropped silently nor judged as a number of errors."""
    value = reading(cell.split(" ")[0] if cell else None, ECC_COUNT, f"{TOOL} line {line}: DOUBLE_ECC", notes)
    return int(value) if value is not None and value == int(value) else None


def read(lines: list[Line], out: ListedParse, mib: Callable[[str | None], float | None]) -> None:
    """Each row under an amd-smi monitor header, as a module (where no other AMD tool listed one)."""
    cols: list[str] = []
    found: list[ListedModule] = []
    for ln in lines:
        cells = _CELLS.split(ln.text.strip())
        if cells and cells[0] == "GPU" and len(_KNOWN.intersection(cells)) >= 2:
            cols = cells
            out.claimed.add(ln.no)
        elif cols and len(cells) == len(cols) and cells[0].isdigit():
            row = dict(zip(cols, cells, strict=True))
            total = row.get("VRAM_TOTAL")
            found.append(ListedModule(f"GPU {cells[0]}", memory_mib=mib(total),
                                      temperature_c=number(row.get("HOTSPOT_TEMP") or row.get("GPU_TEMP")),
                                      ecc_uncorrectable=_count(row.get("DOUBLE_ECC"), ln.no, out.notes), tool=TOOL))
            out.claimed.add(ln.no)
        elif cols and ln.text.strip():
            cols = []
    if found and not out.modules:
        out.modules += found
        out.kinds.append(TOOL)
