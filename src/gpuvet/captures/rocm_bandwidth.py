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
from gpuvet.captures.text import Line, reading

PREFIX = "rocm-bandwidth-test"
_TITLE = re.compile(r"^\s*(Uni|Bi)directional copy peak bandwidth GB/s\s*$")
_HEAD = re.compile(r"^\s*D/D((?:\s+\d{1,4})+)\s*$")
COPY_GBPS = (0.0, 100_000.0)  # no copy reaches 100 TB/s (HBM3E's device-local copy is a few TB/s)
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
    found: list[tuple[str, dict[tuple[int, int], float | None], set[int]]] = []
    for i, ln in enumerate(lines):
        if "copy peak bandwidth" in ln.text and (t := _TITLE.match(ln.text)) is not None:
            claimed = {ln.no}
            found.append((t.group(1), _matrix(lines, i + 1, claimed, out.notes), claimed))
    if not listed:
        gpus, cpus = _by_diagonal(found, out)
        if not gpus:
            return out
    for kind, cells, claimed in found:
        out.claimed |= claimed
        _tables(f"{PREFIX} {'unidirectional' if kind == 'Uni' else 'bidirectional'}", cells, gpus, cpus, out)
    return out


def _by_diagonal(found: list[tuple[str, dict[tuple[int, int], float | None], set[int]]],
                 out: NvbParse) -> tuple[list[int], list[int]]:
    """Without the `Device:` list, the unidirectional matrix's diagonal tells the kinds apart: a GPU copies
    within its own memory (a number), a CPU's own cell is N/A. No unidirectional matrix: the lines stay
    unread, with a note, rather than claimed and dropped."""
    uni = [cells for kind, cells, _ in found if kind == "Uni"]
    indexes = sorted({i for cells in uni for i, _ in cells})
    gpus = [i for i in indexes if any(cells.get((i, i)) is not None for cells in uni)]
    if not gpus:
        out.notes.append(f"{PREFIX}: copy matrices without the `Device:` list and no unidirectional matrix whose "
                         "diagonal tells GPUs from CPUs: not read (give the whole output, `Device: N, name` lines "
                         "included)")
        return [], []
    out.notes.append(f"{PREFIX}: no `Device:` list; GPUs taken as the indexes with a copy to their own memory "
                     f"({', '.join(map(str, gpus))}), numbered in that order")
    return gpus, [i for i in indexes if i not in gpus]


def _matrix(lines: list[Line], start: int, claimed: set[int], notes: list[str]) -> dict[tuple[int, int], float | None]:
    """The cells under one title: (source index, destination index) -> GB/s, None for N/A. A cell no copy
    reaches (infinite, above COPY_GBPS's bound) is corrupt: left unread (None) and said in ``notes``."""
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
                cells[(int(r.group(1)), dst)] = None if cell == "N/A" else reading(
                    cell, COPY_GBPS, f"{PREFIX} line {ln.no}: the {r.group(1)} -> {dst} copy", notes)
        else:
            break
        claimed.add(ln.no)
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
