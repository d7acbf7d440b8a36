"""Captured copy matrices judged against their design and their peers: nvbandwidth's
device-to-device and host/device tests and TransferBench's GPU->GPU tables (p2p, a2a).

Against the design (doctor/copy_expect.py): where --expect, a module listing beside the benchmark
or its own device lines name the modules, each cell gets the figure the performance model gives that
copy on that design, and a cell below DESIGN_LOW of it is a finding (every cell of a table below it:
one finding for the table, the design or the path is not what was assumed).

A capture carries no design figure for a pair, but the other pairs of the same table are a
yardstick (validate/peers.py's rule: the pairs of one class agree). Only a table whose pairs agree
among themselves is one class: a table with a wide spread (several link classes, a small
transfer size, PCIe switches and sockets) says nothing about one pair, and doctor says so. A pair
that measured 0 GB/s moved nothing: named link_down whatever its peers; off-diagonal cells without
a figure (N/A, cut) are listed in the verdict, and a table with none readable is "can't tell"."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from statistics import median
from typing import NamedTuple

from gpuvet.checks.model import EvidenceMap
from gpuvet.doctor.capture_errors import STAGED_FASTER
from gpuvet.doctor.copy_expect import CopyDesign, CopyTest, Priced, copy_test, design_for
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import MEDIUM, Outcome, clear, confirmed, unknown
from gpuvet.doctor.p2p_gain import no_gain
from gpuvet.errors import GpuvetError
from gpuvet.knowledge import threshold
from gpuvet.node.model import Node
from gpuvet.node.vendor_tools import HOST_COPY_FIX, PAIR_COPY_DEAD_FIX, PAIR_COPY_FIX, PCIE_PAIR_FIX

PEER_LOW = threshold("peer_fail_below_pct") / 100  # of the peers' median, as validate's peers_* checks fail
# of the design's figure: the knowledge base's bound for a copy far below its design, the one validate's
# default rules fail p2p_*, h2d* and d2h* by and live pairs are judged by (one fact, one threshold)
DESIGN_LOW = threshold("pair_far_below_pct") / 100
# issue 46 (R12B): a host copy (bandwidthTest H2D/D2H) is a degraded link only below what a link one step down
# gives (x8 of x16, or one generation lower: half the design) plus a margin; between this and DESIGN_LOW its
# shortfall is the host side's (NUMA placement, an IOMMU, a VM's pass-through), said, not a link finding
HOST_STEP_LOW = 0.60
PEER_SPREAD = 0.10  # median absolute deviation over the median: wider, the table holds several classes
MIN_PAIRS = 3  # fewer pairs are no peer group (validate/peers.py: 3 members)
SHOWN = 8  # pairs listed by name in a note; the rest counted
MAX_NAMED = 64  # findings named per table (a 4,096-wide table of slow pairs would be millions); the rest counted
MAX_PRICED = 1_024  # cells priced per table (one flow solve each): a 32-module table; the rest not priced


def pair_tables(matrices: dict[str, list[list[float | None]]]) -> dict[str, list[list[float | None]]]:
    """The tables of module-to-module copies: nvbandwidth device_to_device_*, TransferBench GPU->GPU, the CUDA
    sample p2pBandwidthLatencyTest's P2P=Enabled matrices, rocm-bandwidth-test's GPU->GPU tables, a copy kernel's
    (memcpyKernel) GPU-by-GPU matrices."""
    return {name: m for name, m in matrices.items()
            if name.startswith("device_to_device") or (name.startswith("TransferBench") and "GPU->GPU" in name)
            or (name.startswith("p2pBandwidthLatencyTest") and "P2P=Enabled" in name)
            or (name.startswith("rocm-bandwidth-test") and name.endswith("GPU->GPU")) or name.startswith("memcpyKernel")}


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


@dataclass
class _Verdicts:
    """What the tables said, gathered over them: findings, what was read, what could not be told."""

    source: str
    found: list[Finding] = field(default_factory=list)
    cited: list[Cited] = field(default_factory=list)
    unsure: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    named: set[tuple[str, int, int]] = field(default_factory=set)  # (table, row, column) already a finding
    dead: int = 0
    slow: int = 0
    below_design: int = 0
    priced: int = 0  # tables with a design figure
    no_design: str | None = None  # why no table could be priced
    unnamed: int = 0  # past MAX_NAMED in a table: counted, not named
    host_side: int = 0  # host copy cells between HOST_STEP_LOW and DESIGN_LOW of their design: the host's, said
    runs_low: int = 0  # runs far below the same module's best run of the same test
    host_links: set[int] = field(default_factory=set)  # modules whose one-way host copies fell below their peers
    buses: dict[int, str] = field(default_factory=dict)  # device index -> the bus id the benchmark's own lines give


def captured_pairs(ev: Evidence) -> Outcome:
    """Each captured copy table against the design of its modules (where the captures or --expect name
    them), and each pair table against its peers: a pair that measured 0 is named link_down, a pair below
    DESIGN_LOW of its design or PEER_LOW of its peers' median link_degraded; pairs without a figure are
    listed, never taken for clear."""
    gained_nothing = no_gain(ev.captures.nvbandwidth, STAGED_FASTER)  # one finding of captured_errors, not pairs
    tables = {n: m for n, m in pair_tables(ev.captures.nvbandwidth).items() if n not in gained_nothing}
    priced = {name: m for name, m in ev.captures.nvbandwidth.items()
              if copy_test(name) is not None and name not in gained_nothing}
    hosts = host_tables(ev.captures.nvbandwidth)
    if not tables and not priced and not hosts:
        return unknown("no pair measurements")
    v = _Verdicts(ev.capture_source("nvbandwidth", "TransferBench", "p2pBandwidthLatencyTest", "bandwidthTest",
                                    "busGrind", "hipBusBandwidth", "rocm-bandwidth-test")  # FX68B: its tables too
                       or "captured copy benchmark")
    v.buses = {d.index: d.bus_id for d in ev.captures.nvb_devices if d.bus_id}
    if priced:
        denied = {frozenset((i, j)) for _, _, i, j, _ in ev.captures.p2p_denied}
        _against_design(priced, design_for(ev.declared, _captured_node(ev), ev.captures.nvb_devices), v, denied)
    for name, matrix in tables.items():
        _against_peers(name, matrix, v)
    for name in sorted(hosts, key=lambda n: "bidirectional" in n):  # one-way first: a slow link is said there
        _hosts_against_peers(name, hosts[name], v)
    _runs_against_each_other(ev.captures.nvbandwidth, v)
    return _verdict(v)


def host_tables(matrices: dict[str, list[list[float | None]]]) -> dict[str, list[list[float | None]]]:
    """The tables of host<->module copies run one module at a time (a row per host side, a column per
    module): nvbandwidth's and bandwidthTest's host tables, busGrind's; its 'concurrent' ones share the
    host's links by design and are no peer group."""
    return {name: m for name, m in matrices.items() if "concurrent" not in name and (
        (name.startswith("busGrind ") and " host_" in name) or ((t := copy_test(name)) is not None and t.host))}


def _hosts_against_peers(name: str, matrix: list[list[float | None]], v: _Verdicts) -> None:
    """Each module's host copies against the other modules' in the same row (validate's peers rule): one-way
    copies far below them are that module's link (link_degraded host<->GPU n); two-way copies far below them
    while its one-way ones kept up are the shared path upstream of it or the host's side (host_copy_slow)."""
    both = "bidirectional" in name
    for r, row in enumerate(matrix):
        cells = [(j, x) for j, x in enumerate(row) if x is not None and x > 0]
        if len(cells) < MIN_PAIRS:
            continue
        middle = median(x for _, x in cells)
        if median(abs(x - middle) for _, x in cells) / middle > PEER_SPREAD:
            v.unsure.append(f"{name}: the modules' host copies disagree among themselves (several paths or "
                            "classes): no module has peers to be judged by")
            continue
        slow = [(j, x) for j, x in cells if x < PEER_LOW * middle and (name, r, j) not in v.named]
        v.slow += len(slow)
        v.found += [_host_slow(name, j, x, middle, len(cells) - 1, both, j in v.host_links, v.source)
                    for j, x in slow[:MAX_NAMED]]
        v.host_links |= {j for j, _ in slow} if not both else set()
        low = min(x for _, x in cells)
        v.cited.append(Cited(v.source, f"{name}: lowest module / peers' median",
                             f"{low:.2f} / {middle:.2f} GB/s ({100 * low / middle:.0f} %)", where=f"{len(cells)} modules"))


def _host_slow(name: str, j: int, x: float, middle: float, peers: int, both: bool, link_said: bool,
               source: str) -> Finding:
    said: EvidenceMap = {"test": name, "measured_gbps": x, "peers_median_gbps": round(middle, 2),
                         "pct_of_peers": round(100 * x / middle, 1), "peers": peers, "source": source}
    if both and not link_said:  # its one-way copies kept up with its peers (or were not run)
        return finding("host_copy_slow", MEDIUM, module=f"GPU {j}", carried=said, detail=(
            f"GPU {j}'s two-way host copies reach {x:g} GB/s, {100 * x / middle:.0f} % of its peers' "
            f"{middle:.1f} GB/s, while its one-way copies were not below theirs: the path it shares upstream (a "
            "PCIe switch, the root port) or the host memory side, not the module's own link"))
    return finding("link_degraded", MEDIUM, between=("host", f"GPU {j}"), carried=said)


_RUN = re.compile(r"^(.*) run (\d+)$")


def _runs_against_each_other(matrices: dict[str, list[list[float | None]]], v: _Verdicts) -> None:
    """The same host copy test run again on the same module in one capture (bandwidthTest under two numactl
    bindings): the module and its link reached its best run's figure, so a run far below it was held back on
    the host's side, most often the process's NUMA placement (numa_misplaced on that module, once)."""
    runs: dict[tuple[str, int], list[tuple[str, float]]] = {}
    for name, matrix in matrices.items():
        base = m.group(1) if (m := _RUN.match(name)) else name
        for j, x in enumerate(matrix[0] if len(matrix) == 1 else []):
            if x is not None and x > 0 and (t := copy_test(base)) is not None and t.host:
                runs.setdefault((base, j), []).append((name, x))
    low: dict[int, list[str]] = {}
    for (base, j), got in runs.items():
        if len(got) < 2:
            continue
        best_name, best = max(got, key=lambda r: r[1])
        low.setdefault(j, []).extend(f"{name}: {x:.2f} GB/s, {100 * x / best:.0f} % of '{best_name}' ({best:.2f})"
                                     for name, x in got if x < PEER_LOW * best)
        v.cited.append(Cited(v.source, f"{base}: runs on GPU {j}", ", ".join(f"{x:.2f}" for _, x in got) + " GB/s",
                             where=f"{len(got)} runs"))
    v.runs_low += sum(len(said) for said in low.values())
    v.found += [finding("numa_misplaced", MEDIUM, module=f"GPU {j}", runs=list(said), source=v.source, detail=(
        f"{len(said)} run(s) far below the figure the same module reached in another run of this capture: the "
        "module and its link can do more; the host's side of those runs (most often the process's NUMA placement) "
        "held them back")) for j, said in sorted(low.items()) if said]


def _captured_node(ev: Evidence) -> Node | None:
    """The node the captures list, if any (a module list or topology beside the benchmark)."""
    try:
        return ev.node
    except GpuvetError:
        return None


def _against_peers(name: str, matrix: list[list[float | None]], v: _Verdicts) -> None:
    table = _cells(matrix)
    if table.blank:
        v.unread.append(_blank_text(name, table))
        v.cited.append(Cited(v.source, f"{name}: pairs without a figure (N/A, cut or unreadable)",
                             ", ".join(table.shown) + (" …" if table.blank > len(table.shown) else ""),
                             where=f"{table.blank} pairs"))
    dead = [(i, j) for i, j, x in table.pairs if x == 0]
    measured = [(i, j, x) for i, j, x in table.pairs if x > 0]  # the yardstick: pairs that moved data
    middle = median(x for _, _, x in measured) if len(measured) >= MIN_PAIRS else None
    v.found += [finding("link_down", MEDIUM, between=(f"GPU {i}", f"GPU {j}"), fix=PAIR_COPY_DEAD_FIX, test=name,
                        cell=f"row GPU {i}, column GPU {j}", measured_gbps=0.0,
                        peers_median_gbps=round(middle, 2) if middle else None,
                        pct_of_peers=0.0 if middle else None, peers=len(measured), source=v.source)
                for i, j in dead[:MAX_NAMED]]
    v.dead += len(dead)
    v.unnamed += max(0, len(dead) - MAX_NAMED)
    if dead:
        v.cited.append(Cited(v.source, f"{name}: pairs that measured 0 GB/s", str(len(dead)),
                             where=", ".join(f"GPU {i}->GPU {j}" for i, j in dead[:SHOWN]) +
                             (" …" if len(dead) > SHOWN else "")))
    if middle is None:
        v.unsure.append(f"{name}: {len(measured)} pair(s), too few to be each other's peers")
        return
    spread = median(abs(x - middle) for _, _, x in measured) / middle
    if spread > PEER_SPREAD:
        v.unsure.append(f"{name}: the pairs disagree among themselves (median deviation {100 * spread:.0f} % of "
                        f"the median {middle:.1f} GB/s): several link classes or a small transfer size, so no pair "
                        "has peers to be judged by (give the topology, or run the pairs of one class)")
        return
    slow = [(i, j, x) for i, j, x in measured if x < PEER_LOW * middle]
    v.slow += len(slow)
    v.found += [finding("link_degraded", MEDIUM, between=(f"GPU {i}", f"GPU {j}"), fix=PAIR_COPY_FIX, test=name,
                        measured_gbps=x, peers_median_gbps=round(middle, 2),
                        pct_of_peers=round(100 * x / middle, 1), peers=len(measured) - 1, source=v.source)
                for i, j, x in slow[:MAX_NAMED] if (name, i, j) not in v.named]
    v.unnamed += max(0, len(slow) - MAX_NAMED)
    low = min(x for _, _, x in measured)
    v.cited.append(Cited(v.source, f"{name}: lowest pair{' that moved data' if dead else ''} / peers' median",
                         f"{low:.2f} / {middle:.2f} GB/s ({100 * low / middle:.0f} %)", where=f"{len(measured)} pairs"))


def _against_design(tables: dict[str, list[list[float | None]]], design: CopyDesign | str, v: _Verdicts,
                    denied: set[frozenset[int]] | None = None) -> None:
    """Each cell that moved data against what the design gives it; below DESIGN_LOW a finding. A pair the log
    says cannot reach its peer copies through host memory (not priced as a peer copy)."""
    if isinstance(design, str):
        v.no_design = f"can't tell against the design: {design}"
        return
    for name, matrix in tables.items():
        test = copy_test(name)
        if test is None or _not_priced(name, test, design, matrix, denied or set(), v):
            continue
        cells = [(i, j, x, p) for i, j, x in _moved(matrix)[:MAX_PRICED] if (p := design.price(test, i, j))
                 and (test.host is not None or frozenset((i, j)) not in (denied or set()))]
        if not cells:
            v.unsure.append(f"{name}: no cell the design prices ({design.said}: its modules do not match the table's)")
            continue
        v.priced += 1
        low = HOST_STEP_LOW if test.host is not None else DESIGN_LOW
        slow = [c for c in cells if c[2] < low * c[3].gbps]
        v.host_side += sum(1 for c in cells if test.host is not None and low * c[3].gbps <= c[2] < DESIGN_LOW * c[3].gbps)
        v.below_design += len(slow)
        pcie = test.host is None and design.over_pcie()  # both ways of one PCIe pair slow: its path, not one link
        if slow and len(slow) == len(cells) and len(cells) >= (2 if pcie else MIN_PAIRS):  # host tables too
            v.found.append(_whole_table(name, test, cells, v, PCIE_PAIR_FIX if pcie else None))
        else:
            fix = (PCIE_PAIR_FIX if design.over_pcie() else PAIR_COPY_FIX) if test.host is None else None
            v.found += [finding("link_degraded", MEDIUM, between=_ends(test, i, j), fix=fix, test=name,
                                measured_gbps=x, expected_gbps=round(p.gbps, 1), pct_of_design=round(100 * x / p.gbps, 1),
                                basis=_sentence(test, i, j, x, p), source=v.source) for i, j, x, p in slow[:MAX_NAMED]]
            v.named |= {(name, i, j) for i, j, _, _ in slow[:MAX_NAMED]}
            v.unnamed += max(0, len(slow) - MAX_NAMED)
        i, j, x, p = min(cells, key=lambda c: c[2] / c[3].gbps)
        v.cited.append(Cited(v.source, f"{name}: lowest cell against the design", _sentence(test, i, j, x, p),
                             where=f"{len(cells)} cells priced"))


def _not_priced(name: str, test: CopyTest, design: CopyDesign, matrix: list[list[float | None]],
                denied: set[frozenset[int]], v: _Verdicts) -> bool:
    """Whether a table is left unpriced, said once: pairs the log says cannot access each other (their
    P2P=Enabled cells are the sample's fallback, copies staged through host memory), a GeForce card's
    two-way copies (NVIDIA publishes no duplex copy figure for them)."""
    geforce = design.p2p_off_models()
    if test.both_ways and geforce:
        v.unsure.append(f"{name}: not priced: {', '.join(geforce)} is a GeForce card, whose copies both ways at "
                        "once have no published figure")
        return True
    pairs = {frozenset((i, j)) for i, row in enumerate(matrix) for j in range(len(row)) if i != j}
    staged = pairs & denied if test.host is None else set()
    if staged:
        driver = (f"; the driver turns peer-to-peer off on {', '.join(geforce)} (GeForce, since the RTX 4090): "
                  "equal to the host-staged rate is the design, not a fault") if geforce else ""
        v.unsure.append(f"{name}: {len(staged)} pair(s) the log says cannot access each other (CANNOT Access "
                        f"Peer): their cells are copies staged through host memory, not priced as peer copies{driver}")
    return bool(staged) and staged == pairs


def _moved(matrix: list[list[float | None]]) -> list[tuple[int, int, float]]:
    """Cells with a figure above 0 (a 0 is link_down's, a blank is unread), the diagonal left out."""
    return [(i, j, x) for i, row in enumerate(matrix) for j, x in enumerate(row) if x is not None and x > 0
            and (i != j or len(matrix) == 1)]


def _ends(test: CopyTest, i: int, j: int) -> tuple[str, str]:
    return ("host", f"GPU {j}") if test.host == "to" else (f"GPU {j}", "host") if test.host == "from" \
        else (f"GPU {i}", f"GPU {j}")


def _sentence(test: CopyTest, i: int, j: int, x: float, p: Priced) -> str:
    """'GPU 0→GPU 3 at 120 GB/s is 33 % of the ~323 GB/s the design gives one way (18 NVLink links × …)'."""
    a, b = _ends(test, i, j)
    return (f"{a}→{b} at {x:g} GB/s is {100 * x / p.gbps:.0f} % of the ~{p.gbps:.0f} GB/s the design gives "
            f"{test.direction()} ({p.basis})")


def _whole_table(name: str, test: CopyTest, cells: list[tuple[int, int, float, Priced]], v: _Verdicts,
                 pcie_fix: str | None = None) -> Finding:
    """Every cell of a table far below its design: one finding for the table, not one per pair; a host
    table's cause is on the host's side (NUMA placement, the IOMMU, SM copies, the PCIe root), not a link; a
    PCIe pair's, the path its peer traffic takes (ACS, the IOMMU, the root complex: ``pcie_fix``), named
    by the pair where the table holds one."""
    i, j, x, p = min(cells, key=lambda c: c[2] / c[3].gbps)
    mid = median(c[2] for c in cells)
    cause, fix = ("topology_misidentified", pcie_fix) if test.host is None else ("host_copy_slow", HOST_COPY_FIX)
    one = len({frozenset(c[:2]) for c in cells}) == 1 and test.host is None
    a, b = sorted((i, j))
    buses = f"{v.buses[a]} <-> {v.buses[b]}" if one and a in v.buses and b in v.buses else None  # as NCCL's pairs
    return finding(cause, MEDIUM, module=buses, fix=fix, test=name, cells=len(cells), median_gbps=round(mid, 2),
                   between=(f"GPU {a}", f"GPU {b}") if one else None,
                   expected_gbps=round(p.gbps, 1), pct_of_design=round(100 * mid / p.gbps, 1),
                   basis=_sentence(test, i, j, x, p), source=v.source)


def _verdict(v: _Verdicts) -> Outcome:
    also = f"; {'; '.join(v.unread)}" if v.unread else ""
    if v.found:
        also = f"; {v.no_design}{also}" if v.no_design else also
        parts = ([f"{v.dead} pair(s) measured 0 GB/s"] if v.dead else []) + \
            ([f"{v.below_design} cell(s) below {100 * DESIGN_LOW:.0f} % of their design"] if v.below_design else []) + \
            ([f"{v.slow} pair(s) below {100 * PEER_LOW:.0f} % of their peers"] if v.slow else []) + \
            ([f"{v.runs_low} run(s) below {100 * PEER_LOW:.0f} % of the same module's best run"] if v.runs_low else [])
        named = f" ({MAX_NAMED} per table named)" if v.unnamed else ""
        return confirmed(f"{' and '.join(parts)} in the captured tables{named}{also}", *v.found, cited=tuple(v.cited))
    judged = any(c.field.endswith(("peers' median", "against the design")) for c in v.cited)
    if not judged:
        why = v.unsure + ([v.no_design] if v.no_design else [])
        head = f"{why[0]}; {v.no_design}" if v.no_design and why[0] != v.no_design else why[0]  # the design: said
        rest = len(why) - (2 if head != why[0] else 1)
        return unknown(head + (f" (and {rest} more alike)" if rest > 0 else "") + also)
    host = (f" but {v.host_side} host copy cell(s) below it, above the {100 * HOST_STEP_LOW:.0f} % a link one step "
            "down gives at most: the host side (NUMA, an IOMMU, a VM), not a degraded link") if v.host_side else ""
    said = ([f"every priced cell within {100 * DESIGN_LOW:.0f} % of its design{host}"] if v.priced else []) + \
        ([f"every captured pair within {100 * PEER_LOW:.0f} % of its peers"]
         if any(c.field.endswith("peers' median") for c in v.cited) else [])
    why = [v.no_design] if v.no_design else []
    return clear("; ".join(said + why) + also, *v.cited)
