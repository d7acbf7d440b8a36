"""topo -m's relations between GPUs said in one line (issue 46, NOTE), as an engineer summarises the matrix before
reading NCCL's choices: which pairs share a PCIe switch (PIX), go through several (PXB) or the host bridge (PHB),
cross host bridges within a NUMA node (NODE) or cross sockets (SYS), which are joined by NVLink (NV#), and which GPUs
each NUMA node holds. A summary of what the matrix says, no judgment: whether a path is right is wiring's."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuvet.captures.topo import TopoMatrix

SHOWN = 6  # pairs named per relation; more are counted
_ORDER = ("NV", "PIX", "PXB", "PHB", "NODE", "SYS")
_SAID = {
    "NV": "NVLink",
    "PIX": "PIX (one PCIe switch)",
    "PXB": "PXB (several PCIe switches)",
    "PHB": "PHB (through a host bridge)",
    "NODE": "NODE (across host bridges, one NUMA node)",
    "SYS": "SYS (across sockets)",
}
_GPU = re.compile(r"GPU(\d+)$")


def notes(topo: TopoMatrix) -> list[str]:
    """One note naming the GPU pairs of each relation and each NUMA node's GPUs; none for fewer than two GPUs."""
    gpus = sorted((d for d in topo.devices if _GPU.match(d)), key=lambda d: int(d[3:]))
    if len(gpus) < 2:
        return []
    by: dict[str, list[str]] = {}
    for i, a in enumerate(gpus):
        for b in gpus[i + 1 :]:
            cell = topo.cells.get(frozenset((a, b)))
            kind = "NV" if cell and cell.startswith("NV") else cell
            if kind in _ORDER:
                by.setdefault(kind, []).append(f"{a}-{b}")
    said = [f"{_SAID[k]} {_pairs(by[k])}" for k in _ORDER if k in by]
    numa: dict[int, list[str]] = {}
    for g in gpus:
        if (n := topo.numa.get(g)) is not None:
            numa.setdefault(n, []).append(g)
    said += [f"NUMA {n}: {_span(gs)}" for n, gs in sorted(numa.items())]
    return [f"topo -m: GPU pairs by relation: {'; '.join(said)}"] if said else []


def _pairs(pairs: list[str]) -> str:
    return ", ".join(pairs) if len(pairs) <= SHOWN else f"{len(pairs)} pairs ({', '.join(pairs[:2])} …)"


def _span(gpus: list[str]) -> str:
    ids = [int(g[3:]) for g in gpus]
    return f"GPU{ids[0]}-GPU{ids[-1]}" if ids == list(range(ids[0], ids[-1] + 1)) and len(ids) > 2 else ", ".join(gpus)
