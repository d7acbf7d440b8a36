"""Captured module-to-module copy matrices judged against their peers: nvbandwidth's
device-to-device tests and TransferBench's GPU->GPU tables (p2p, a2a).

A capture carries no design figure for a pair, but the other pairs of the same table are a
yardstick (validate/peers.py's rule: the pairs of one class agree). Only a table whose pairs agree
among themselves is one class: a table with a wide spread (several link classes, a small
transfer size, PCIe switches and sockets) says nothing about one pair, and doctor says so."""

from __future__ import annotations

from statistics import median

from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import MEDIUM, Outcome, clear, confirmed, unknown

PEER_LOW = 0.75  # of the peers' median: validate/peers.py's FAIL_BELOW (jobs do not import each other)
PEER_SPREAD = 0.10  # median absolute deviation over the median: wider, the table holds several classes
MIN_PAIRS = 3  # fewer pairs are no peer group (validate/peers.py: 3 members)
FIX = ("run that pair alone again (TransferBench or nvbandwidth, the pair's source and destination); if it stays "
       "below its peers, check the link between the two (amd-smi xgmi / nvidia-smi nvlink -s -e, lspci LnkSta) and "
       "the route the runtime takes (amd-smi topology / nvidia-smi topo -m)")


def pair_tables(matrices: dict[str, list[list[float | None]]]) -> dict[str, list[list[float | None]]]:
    """The tables of module-to-module copies: nvbandwidth device_to_device_*, TransferBench GPU->GPU."""
    return {name: m for name, m in matrices.items()
            if name.startswith("device_to_device") or (name.startswith("TransferBench") and "GPU->GPU" in name)}


def _pairs(matrix: list[list[float | None]]) -> list[tuple[int, int, float]]:
    """Off-diagonal cells with a figure (the diagonal is a module's copy to itself)."""
    return [(i, j, v) for i, row in enumerate(matrix) for j, v in enumerate(row) if i != j and v is not None and v > 0]


def captured_pairs(ev: Evidence) -> Outcome:
    """Each captured pair table: a pair below PEER_LOW of its peers' median is named."""
    tables = pair_tables(ev.captures.nvbandwidth)
    if not tables:
        return unknown("no pair measurements")
    source = ev.capture_source("nvbandwidth", "TransferBench") or "captured copy benchmark"
    found: list[Finding] = []
    cited: list[Cited] = []
    unsure: list[str] = []
    for name, matrix in tables.items():
        pairs = _pairs(matrix)
        if len(pairs) < MIN_PAIRS:
            unsure.append(f"{name}: {len(pairs)} pair(s), too few to be each other's peers")
            continue
        middle = median(v for _, _, v in pairs)
        spread = median(abs(v - middle) for _, _, v in pairs) / middle
        if spread > PEER_SPREAD:
            unsure.append(f"{name}: the pairs disagree among themselves (median deviation {100 * spread:.0f} % of "
                          f"the median {middle:.1f} GB/s): several link classes or a small transfer size, so no pair "
                          "has peers to be judged by (give the topology, or run the pairs of one class)")
            continue
        slow = [(i, j, v) for i, j, v in pairs if v < PEER_LOW * middle]
        found += [finding("link_degraded", MEDIUM, between=(f"GPU {i}", f"GPU {j}"), fix=FIX, test=name,
                          measured_gbps=v, peers_median_gbps=round(middle, 2),
                          pct_of_peers=round(100 * v / middle, 1), peers=len(pairs) - 1, source=source)
                  for i, j, v in slow]
        low = min(v for _, _, v in pairs)
        cited.append(Cited(source, f"{name}: lowest pair / peers' median",
                           f"{low:.2f} / {middle:.2f} GB/s ({100 * low / middle:.0f} %)", where=f"{len(pairs)} pairs"))
    if found:
        return confirmed(f"{len(found)} pair(s) below {100 * PEER_LOW:.0f} % of their peers in the captured tables",
                         *found, cited=tuple(cited))
    if not cited:
        return unknown(unsure[0] + (f" (and {len(unsure) - 1} more table(s) alike)" if len(unsure) > 1 else ""))
    return clear(f"every captured pair within {100 * PEER_LOW:.0f} % of its peers", *cited)
