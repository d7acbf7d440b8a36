"""rocm-bandwidth-test's copy matrices (``-a``, ``-A``, the default run): 'Unidirectional copy peak
bandwidth GB/s' and 'Bidirectional copy peak bandwidth GB/s', a D/D header of device indexes, one row
per source device, GB/s or N/A per destination. The device list above them says which index is a CPU
(a NUMA node's host memory) and which a GPU; the cells become the copy tables nvbandwidth's fill, GPUs
numbered in the list's order (the module order inventory gives): GPU->GPU, host->GPU and GPU->host
per direction, so doctor judges them against their design and their peers as it judges nvbandwidth's."""

from __future__ import annotations

import re

from gpuvet.captures.bench import NvbParse
from gpuvet.captures.records import NvbDevice
from gpuvet.captures.rocm_validation import devices, is_cpu
from gpuvet.captures.text import Line

PREFIX = "rocm-bandwidth-test"
_TITLE = re.compile(r"^\s*(Uni|Bi)directional copy peak bandwidth GB/s\s*$")
_HEAD = re.compile(r"^\s*D/D((?:\s+\d{1,4})+)\s*$")
_ROW = re.compile(r"^\s*(\d{1,4})((?:\s+(?:\d+(?:\.\d+)?|N/A))+)\s*$")


def parse(lines: list[Line]) -> NvbParse:
    out = NvbParse()
    if not any("copy peak bandwidth" in ln.text and _TITLE.match(ln.text) for ln in lines):
        return out
    listed = devices(lines)
    gpus = [i for i, name, uuid, _ in listed if not is_cpu(name, uuid)]
    cpus = [i for i, name, uuid, _ in listed if is_cpu(name, uuid)]
    out.devices = [NvbDevice(k, name, None) for k, (_, name, _, _) in
                   enumerate(d for d in listed if not is_cpu(d[1], d[2]))]
    for i, ln in enumerate(lines):
        if "copy peak bandwidth" in ln.text and (t := _TITLE.match(ln.text)) is not None:
            out.claimed.add(ln.no)
            cells = _matrix(lines, i + 1, out)
            _tables(f"{PREFIX} {'unidirectional' if t.group(1) == 'Uni' else 'bidirectional'}", cells, gpus, cpus, out)
    return out


def _matrix(lines: list[Line], start: int, out: NvbParse) -> dict[tuple[int, int], float | None]:
    """The cells under one title: (source index, destination index) -> GB/s, None for N/A."""
    cols: list[int] = []
    cells: dict[tuple[int, int], float | None] = {}
    for ln in lines[start:]:
        s = ln.text.strip()
        if not s:
            continue
        if not cols and (h := _HEAD.match(s)) is not None:
            cols = [int(x) for x in h.group(1).split()]
        elif cols and (r := _ROW.match(s)) is not None:
            for dst, cell in zip(cols, r.group(2).split(), strict=False):
                cells[(int(r.group(1)), dst)] = None if cell == "N/A" else float(cell)
        else:
            break
        out.claimed.add(ln.no)
    return cells


def _tables(base: str, cells: dict[tuple[int, int], float | None], gpus: list[int], cpus: list[int],
            out: NvbParse) -> None:
    """GPU->GPU (square, by GPU order), host->GPU (a row per CPU) and GPU->host (a row per CPU, the GPUs in
    columns, as nvbandwidth's device_to_host prints them)."""
    if not gpus:
        return
    out.matrices[f"{base} GPU->GPU"] = [[cells.get((a, b)) for b in gpus] for a in gpus]
    if cpus:
        out.matrices[f"{base} host->GPU"] = [[cells.get((c, g)) for g in gpus] for c in cpus]
        out.matrices[f"{base} GPU->host"] = [[cells.get((g, c)) for g in gpus] for c in cpus]
