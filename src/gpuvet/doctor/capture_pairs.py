"""Captured module-to-module copy matrices judged against their peers: nvbandwidth's
device-to-device tests and TransferBench's GPU->GPU tables (p2p, a2a).

A capture carries no design figure for a pair, but the other pairs of the same table are a
yardstick (validate/peers.py's rule: the pairs of one class agree). Only a table whose pairs agree
among themselves is one class: a table with a wide spread (several link classes, a small
transfer size, PCIe switches and sockets) says nothing about one pair, and doctor says so. A pair
that measured 0 GB/s moved nothing: named link_down whatever its peers; off-diagonal cells without
a figure (N/A, cut) are listed in the verdict, and a table with none readable is "can't tell"."""

from __future__ import annotations

from statistics import median
from typing import NamedTuple

from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import MEDIUM, Outcome, clear, confirmed, unknown

PEER_LOW = 0.75  # of the peers' median: validate/peers.py's FAIL_BELOW (jobs do not import each other)
PEER_SPREAD = 0.10  # median absolute deviation over the median: wider, the table holds several classes
MIN_PAIRS = 3  # fewer pairs are no peer group (validate/peers.py: 3 members)
FIX = ("run that pair alone again (TransferBench or nvbandwidth, the pair's source and destination); if it stays "
       "below its peers, check the link between the two (amd-smi xgmi / nvidia-smi nvlink -s -e, lspci LnkSta) and "
       "the route the runtime takes (amd-smi topology / nvidia-smi topo -m)")
FIX_DEAD = ("the copy between the two moved nothing: run that pair alone again (TransferBench or nvbandwidth); if it "
            "stays at 0, check the link between them (amd-smi xgmi / nvidia-smi nvlink -s, lspci LnkSta), peer access "
            "(amd-smi topology / nvidia-smi topo -p2p r) and the kernel log at that time")
SHOWN = 8  # pairs listed by name in a note; the rest counted
MAX_NAMED = 64  # findings named per table (a 4,096-wide table of slow pairs would be millions); the rest counted


def pair_tables(matrices: dict[str, list[list[float | None]]]) -> dict[str, list[list[float | None]]]:
    """The tables of module-to-module copies: nvbandwidth device_to_device_*, TransferBench GPU->GPU."""
    return {name: m for name, m in matrices.items()
            if name.startswith("device_to_device") or (name.startswith("TransferBench") and "GPU->GPU" in name)}


class _Table(NamedTuple):
    """One table's off-diagonal cells: the pairs with a figure (0 included), and those without one."""

    pairs: list[tuple[int, int, float]]
    blank: int  # off-diagonal cells without a figure (N/A, cut or unreadable)
    shown: list[str]  # the first SHOWN of them, 'GPU i->GPU j'


def _cells(matrix: list[list[float | None]]) -> _Table:
    """Off-diagonal cells (the diagonal is a module's copy to itself): a measured 0 is a pair that moved
    nothing, kept; a cell without a figure is counted (row.count: a 4,096-wide table stays quick)."""
    pairs = [(i, j, v) for i, row in enumerate(matrix) for j, v in enumerate(row) if i != j and v is not None]
    blank = 0
    shown: list[str] = []
    for i, row in enumerate(matrix):
        empty = row.count(None) - (1 if i < len(row) and row[i] is None else 0)
        blank += empty
        if empty and len(shown) < SHOWN:
            shown += [f"GPU {i}->GPU {j}" for j, v in enumerate(row) if v is None and i != j][:SHOWN - len(shown)]
    return _Table(pairs, blank, shown)


def _blank_text(name: str, t: _Table) -> str:
    more = f" and {t.blank - len(t.shown)} more" if t.blank > len(t.shown) else ""
    return f"{name}: can't read {t.blank} pair(s) (N/A, cut or unreadable): {', '.join(t.shown)}{more}"


def captured_pairs(ev: Evidence) -> Outcome:
    """Each captured pair table: a pair that measured 0 is named link_down, a pair below PEER_LOW of its
    peers' median link_degraded; pairs without a figure are listed, never taken for clear."""
    tables = pair_tables(ev.captures.nvbandwidth)
    if not tables:
        return unknown("no pair measurements")
    source = ev.capture_source("nvbandwidth", "TransferBench") or "captured copy benchmark"
    found: list[Finding] = []
    cited: list[Cited] = []
    unsure: list[str] = []
    unread: list[str] = []
    dead_n = slow_n = 0
    for name, matrix in tables.items():
        table = _cells(matrix)
        if table.blank:
            unread.append(_blank_text(name, table))
            cited.append(Cited(source, f"{name}: pairs without a figure (N/A, cut or unreadable)",
                               ", ".join(table.shown) + (" …" if table.blank > len(table.shown) else ""),
                               where=f"{table.blank} pairs"))
        dead = [(i, j) for i, j, v in table.pairs if v == 0]
        measured = [(i, j, v) for i, j, v in table.pairs if v > 0]  # the yardstick: pairs that moved data
        middle = median(v for _, _, v in measured) if len(measured) >= MIN_PAIRS else None
        found += [finding("link_down", MEDIUM, between=(f"GPU {i}", f"GPU {j}"), fix=FIX_DEAD, test=name,
                          cell=f"row GPU {i}, column GPU {j}", measured_gbps=0.0,
                          peers_median_gbps=round(middle, 2) if middle else None,
                          pct_of_peers=0.0 if middle else None, peers=len(measured), source=source)
                  for i, j in dead[:MAX_NAMED]]
        dead_n += len(dead)
        if dead:
            cited.append(Cited(source, f"{name}: pairs that measured 0 GB/s", str(len(dead)),
                               where=", ".join(f"GPU {i}->GPU {j}" for i, j in dead[:SHOWN]) +
                               (" …" if len(dead) > SHOWN else "")))
        if middle is None:
            unsure.append(f"{name}: {len(measured)} pair(s), too few to be each other's peers")
            continue
        spread = median(abs(v - middle) for _, _, v in measured) / middle
        if spread > PEER_SPREAD:
            unsure.append(f"{name}: the pairs disagree among themselves (median deviation {100 * spread:.0f} % of "
                          f"the median {middle:.1f} GB/s): several link classes or a small transfer size, so no pair "
                          "has peers to be judged by (give the topology, or run the pairs of one class)")
            continue
        slow = [(i, j, v) for i, j, v in measured if v < PEER_LOW * middle]
        slow_n += len(slow)
        found += [finding("link_degraded", MEDIUM, between=(f"GPU {i}", f"GPU {j}"), fix=FIX, test=name,
                          measured_gbps=v, peers_median_gbps=round(middle, 2),
                          pct_of_peers=round(100 * v / middle, 1), peers=len(measured) - 1, source=source)
                  for i, j, v in slow[:MAX_NAMED]]
        low = min(v for _, _, v in measured)
        cited.append(Cited(source, f"{name}: lowest pair{' that moved data' if dead else ''} / peers' median",
                           f"{low:.2f} / {middle:.2f} GB/s ({100 * low / middle:.0f} %)", where=f"{len(measured)} pairs"))
    also = f"; {'; '.join(unread)}" if unread else ""
    if found:
        parts = ([f"{dead_n} pair(s) measured 0 GB/s"] if dead_n else []) + \
            ([f"{slow_n} pair(s) below {100 * PEER_LOW:.0f} % of their peers"] if slow_n else [])
        named = f" ({MAX_NAMED} per table named)" if dead_n + slow_n > len(found) else ""
        return confirmed(f"{' and '.join(parts)} in the captured tables{named}{also}", *found, cited=tuple(cited))
    if not any(c.field.endswith("peers' median") for c in cited):
        return unknown(unsure[0] + (f" (and {len(unsure) - 1} more table(s) alike)" if len(unsure) > 1 else "") + also)
    return clear(f"every captured pair within {100 * PEER_LOW:.0f} % of its peers{also}", *cited)
