"""Huawei Ascend's ``npu-smi info -t topo``: a matrix like ``nvidia-smi topo -m`` whose cells say
how two NPUs connect: HCCS (the module-to-module fabric), HCCS_SW (through an HCCS switch), SIO
(the two dies of one package), or a PCIe relation (PIX, PXB, PHB, NODE, SYS), then a CPU Affinity
column and a legend. The cell words are those of CANN's aclrtGetDevicesTopo.

The matrix is kept as printed in the FabricTable of the listing (the capture backend turns it into
links). A row naming a device the header lacks ends the matrix; a cell no npu-smi prints is left
out and noted; two halves that disagree keep the first and say so.
"""

from __future__ import annotations

import re

from gpuvet.captures.records import FabricTable, ListedParse
from gpuvet.captures.text import Line

SOURCE = "npu-smi info -t topo"
MAX_DEVICES = 4096
_DEVICE = re.compile(r"NPU\d{1,4}|Phy-ID\d{1,4}")
_AFFINITY = {"CPU", "Affinity", "NUMA"}
CELLS = frozenset({"HCCS", "HCCS_SW", "SIO", "PIX", "PXB", "PHB", "NODE", "SYS", "PIB", "NA"})
_LEGEND = re.compile(r"^\s*(Legend:\s*$|(X|SYS|PHB|PIX|PXB|PIB|NODE|HCCS|HCCS_SW|SIO|NA)\s+= )")


def _header(text: str) -> list[str] | None:
    """The device names of a header line (NPU0 … then CPU Affinity), or None when it is no header."""
    tokens = text.split()
    devices = [t for t in tokens if _DEVICE.fullmatch(t)]
    if len(devices) < 2 or len(devices) > MAX_DEVICES:
        return None
    if any(t not in _AFFINITY and not _DEVICE.fullmatch(t) for t in tokens):
        return None
    return devices if tokens[:len(devices)] == devices else None


def parse(lines: list[Line], out: ListedParse) -> None:
    """Every topo matrix in the lines, into ``out.fabric`` (the first table found names the devices)."""
    i = 0
    while i < len(lines):
        devices = _header(lines[i].text)
        if devices is None:
            i += 1
            continue
        out.claimed.add(lines[i].no)
        out.fabric = out.fabric or FabricTable(SOURCE)
        fabric = out.fabric
        i = _rows(lines, i + 1, devices, fabric, out)
        fabric.devices += [d for d in devices if d not in fabric.devices]
        if SOURCE not in out.kinds:
            out.kinds.append(SOURCE)
    if out.fabric is not None and out.fabric.source == SOURCE:
        out.claimed |= {ln.no for ln in lines if _LEGEND.match(ln.text)}


def _rows(lines: list[Line], i: int, devices: list[str], fabric: FabricTable, out: ListedParse) -> int:
    """The rows after a header; returns the index after the last one."""
    odd: list[str] = []
    while i < len(lines):
        tokens = lines[i].text.split()
        if not tokens or tokens[0] not in devices:
            break
        out.claimed.add(lines[i].no)
        for other, cell in zip(devices, tokens[1:1 + len(devices)], strict=False):
            if other == tokens[0] or cell == "X":
                continue
            if cell not in CELLS:
                odd.append(cell)
                continue
            _cell(fabric, frozenset((tokens[0], other)), cell, out.notes)
        i += 1
    if odd:
        out.notes.append(f"{SOURCE}: {len(odd)} cell(s) no npu-smi prints (first: {odd[0][:20]!r}): left out")
    return i


def _cell(fabric: FabricTable, pair: frozenset[str], cell: str, notes: list[str]) -> None:
    if cell == "NA":  # npu-smi's "unknown relationship": nothing said about the pair
        return
    seen = fabric.link_type.get(pair)
    if seen is not None and seen != cell:
        notes.append(f"{SOURCE}: the matrix disagrees with itself for {' and '.join(sorted(pair))} ({seen} one way, "
                     f"{cell} the other): the first kept")
        return
    fabric.link_type[pair] = cell
