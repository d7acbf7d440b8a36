"""p2pBandwidthLatencyTest's P2P=Enabled matrix no faster than its P2P=Disabled one (issue 46): peer access
is not working for any pair measured both ways (the driver stages the copies through host memory, as it does
with P2P off: a GeForce board without P2P, ACS redirecting peer traffic). One finding for the table, not one
degraded link per pair judged against peers that are all as slow."""

from __future__ import annotations

from statistics import median

from gpuvet.doctor.model import Finding, finding
from gpuvet.doctor.outcome import MEDIUM
from gpuvet.knowledge import threshold

Tables = dict[str, list[list[float | None]]]
NO_GAIN = threshold("p2p_no_gain")  # a peer copy within this factor of its staged copy gained nothing from P2P
MIN_PAIRS = 3  # fewer pairs measured both ways say nothing of the table


def both_ways(tables: Tables, name: str) -> list[tuple[float, float]]:
    """(P2P=Enabled, P2P=Disabled) figures of each pair the two matrices both measured."""
    on, off = tables[name], tables.get(name.replace("P2P=Enabled", "P2P=Disabled"))
    if off is None:
        return []
    return [(a, b) for i, row in enumerate(on) for j, a in enumerate(row) if i != j and a is not None
            and i < len(off) and j < len(off[i]) and (b := off[i][j]) is not None and b > 0]


def no_gain(tables: Tables, slower: float) -> dict[str, list[tuple[float, float]]]:
    """The P2P=Enabled tables that gained nothing on any pair, those mostly slower than staged (`slower`,
    their own finding) left out."""
    out: dict[str, list[tuple[float, float]]] = {}
    for name in tables:
        if not name.startswith("p2pBandwidthLatencyTest") or "P2P=Enabled" not in name:
            continue
        pairs = both_ways(tables, name)
        if len(pairs) >= MIN_PAIRS and all(a <= NO_GAIN * b for a, b in pairs) \
                and 2 * sum(a < slower * b for a, b in pairs) <= len(pairs):
            out[name] = pairs
    return out


def not_working(tables: Tables, slower: float) -> list[Finding]:
    """One p2p_disabled finding per table whose peer copies gained nothing over staged ones."""
    return [finding("p2p_disabled", MEDIUM, test=name, pairs=len(pairs),
                    p2p_median_gbps=round(median(a for a, _ in pairs), 2),
                    staged_median_gbps=round(median(b for _, b in pairs), 2),
                    detail=f"P2P=Enabled copies no faster than P2P=Disabled (staged through host memory) on all "
                           f"{len(pairs)} pairs measured both ways: peer access is not working for any pair")
            for name, pairs in no_gain(tables, slower).items()]
