"""Huawei Ascend's ``npu-smi info -t topo``: a matrix like ``nvidia-smi topo -m`` whose cells say
how two NPUs connect: HCCS (the module-to-module fabric), HCCS_SW (through an HCCS switch), SIO
(the two dies of one package), or a PCIe relation (PIX, PXB, PHB, NODE, SYS), then a CPU Affinity
column and a legend. The cell words are those of CANN's aclrtGetDevicesTopo.

The matrix is kept as printed in the FabricTable of the listing (the capture backend turns it into
links). A row naming a device the header lacks ends the matrix; a cell no npu-smi prints is left
out and noted; two halves that disagree keep the first and say so. An NA cell (the legend's
"Unknown relationship") is kept as NA: nothing is said about that pair, and the backend can't tell
it. A header naming a device twice, or more than MAX_DEVICES devices, is refused (CaptureError);
header devices without a row, or rows with fewer cells than the header, are noted as a cut matrix.
"""

from __future__ import annotations

import re
from collections import Counter

from gpuvet.captures.records import FabricTable, ListedParse
from gpuvet.captures.text import Line
from gpuvet.errors import CaptureError

SOURCE = "npu-smi info -t topo"
MAX_DEVICES = 256  # an Atlas 900 SuperPoD node shows 16 NPUs; 256 is far above any one node's matrix
_FIX = "give `npu-smi info -t topo` of one node as it printed it; do not edit the matrix."
_DEVICE = re.compile(r"NPU\d{1,4}|Phy-ID\d{1,4}")
_AFFINITY = {"CPU", "Affinity", "NUMA"}
_FIRST = re.compile(r"\s*(?:NPU|Phy-ID)\d{1,4}\s")  # a header starts with a device
CELLS = frozenset({"HCCS", "HCCS_SW", "SIO", "PIX", "PXB", "PHB", "NODE", "SYS", "PIB", "NA"})
_LEGEND = re.compile(r"^\s*(Legend:\s*$|(X|SYS|PHB|PIX|PXB|PIB|NODE|HCCS|HCCS_SW|SIO|NA)\s+= )")


def _header(text: str) -> list[str] | None:
    """The device names of a header line (NPU0 … then CPU Affinity), or None when it is no header."""
    if _FIRST.match(text) is None:  # before splitting: a 60 MB line of words was split for nothing (1 GB)
        return None
    tokens = text.split()
    devices = [t for t in tokens if _DEVICE.fullmatch(t)]
    if len(devices) < 2:
        return None
    if any(t not in _AFFINITY and not _DEVICE.fullmatch(t) for t in tokens):
        return None
    return devices if tokens[:len(devices)] == devices else None


def parse(lines: list[Line], out: ListedParse) -> None:
    """Every topo matrix in the lines, into ``out.fabric`` (the first table found names the devices)."""
    i = 0
    rows: set[str] = set()  # the devices that have a row, over every matrix in the lines
    short: list[str] = []  # rows with fewer cells than their header
    while i < len(lines):
        devices = _header(lines[i].text)
        if devices is None:
            i += 1
            continue
        _check_header(devices, lines[i].no)
        out.claimed.add(lines[i].no)
        out.fabric = out.fabric or FabricTable(SOURCE)
        fabric = out.fabric
        i = _rows(lines, i + 1, devices, fabric, out, rows, short)
        seen = set(fabric.devices)
        fabric.devices += [d for d in devices if d not in seen]
        if len(fabric.devices) > MAX_DEVICES:
            raise CaptureError(f"{SOURCE}: the matrices name {len(fabric.devices)} NPUs (at most {MAX_DEVICES})",
                               where=f"line {lines[i - 1].no}", fix=_FIX)
        if SOURCE not in out.kinds:
            out.kinds.append(SOURCE)
    if out.fabric is not None and out.fabric.source == SOURCE:
        out.claimed |= {ln.no for ln in lines if _LEGEND.match(ln.text)}
        _cut(out.fabric, rows, short, out.notes)


def _check_header(devices: list[str], no: int) -> None:
    """A header naming a device twice would put two modules on one name; more than MAX_DEVICES is no node."""
    if len(devices) > MAX_DEVICES:
        raise CaptureError(f"{SOURCE}: {len(devices)} NPUs in the matrix header (at most {MAX_DEVICES}; one node "
                           "shows 8 or 16)", where=f"line {no}", fix=_FIX)
    dupes = sorted(d for d, n in Counter(devices).items() if n > 1)
    if dupes:
        raise CaptureError(f"{SOURCE}: the matrix header names {', '.join(dupes[:5])} more than once",
                           where=f"line {no}", fix=_FIX)


def _cut(fabric: FabricTable, rows: set[str], short: list[str], notes: list[str]) -> None:
    """Say where the matrix is cut: its pairs there are not shown, and the backend can't tell them."""
    missing = [d for d in fabric.devices if d not in rows]
    if missing:
        notes.append(f"{SOURCE}: the matrix is cut: {len(missing)} NPU(s) named in the header have no row "
                     f"({', '.join(missing[:8])}{', …' if len(missing) > 8 else ''}); pairs no row shows are "
                     "not known, not guessed")
    if short:
        notes.append(f"{SOURCE}: the matrix is cut: {len(short)} row(s) with fewer cells than the header "
                     f"({', '.join(short[:4])}{', …' if len(short) > 4 else ''}); pairs no cell shows are not known")


def _rows(lines: list[Line], i: int, devices: list[str], fabric: FabricTable, out: ListedParse,
          rows: set[str], short: list[str]) -> int:
    """The rows after a header; returns the index after the last one."""
    odd: list[str] = []
    names = set(devices)
    while i < len(lines):
        tokens = lines[i].text.split()
        if not tokens or tokens[0] not in names:
            break
        out.claimed.add(lines[i].no)
        rows.add(tokens[0])
        cells = tokens[1:1 + len(devices)]
        if len(cells) < len(devices):
            short.append(f"{tokens[0]} ({len(cells)} of {len(devices)})")
        for other, cell in zip(devices, cells, strict=False):
            if other == tokens[0] or cell == "X":
                continue
            if cell not in CELLS:
                odd.append(cell)  # unreadable: the pair stays unknown unless its other cell says
                continue
            _cell(fabric, frozenset((tokens[0], other)), cell, out.notes)
        i += 1
    if odd:
        out.notes.append(f"{SOURCE}: {len(odd)} cell(s) no npu-smi prints (first: {odd[0][:20]!r}): left out")
    return i


def _cell(fabric: FabricTable, pair: frozenset[str], cell: str, notes: list[str]) -> None:
    """NA (npu-smi's "Unknown relationship") is kept as NA: the pair is shown, its relation not known."""
    seen = fabric.link_type.get(pair)
    if seen is not None and seen != cell:
        notes.append(f"{SOURCE}: the matrix disagrees with itself for {' and '.join(sorted(pair))} ({seen} one way, "
                     f"{cell} the other): the first kept")
        return
    fabric.link_type[pair] = cell
