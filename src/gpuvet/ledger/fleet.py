"""Fleet figures from the ledger, defined as the published reliability studies define them
(docs/ledger.md gives the sources): repeat offenders ("lemons"), and per node group the mean
time between findings (node-hours observed / fault occurrences, as Meta's RSC study computes
MTTF), the share of observed time a node was drainable, and occurrences by the interruption
classes of Llama 3's taxonomy."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from gpuvet.ledger.build import Ledger
from gpuvet.ledger.ladders import Ladders
from gpuvet.ledger.model import ModuleHistory
from gpuvet.logbook.records import RunRow


@dataclass(frozen=True)
class Lemon:
    id: str
    model: str | None
    where: str
    occurrences: int
    faults: dict[str, int]
    simulated: bool = False


def is_simulated(h: ModuleHistory, ledger: Ledger) -> bool:
    """Every run that saw the module or reported on it was simulated: a model's module, not one
    of the fleet."""
    runs = [ledger.runs[r] for r in dict.fromkeys([*h.runs, *(x.run_id for x in h.reports)]) if r in ledger.runs]
    return bool(runs) and all(r.simulated for r in runs)


def real_only(ledger: Ledger) -> Ledger:
    """The ledger without simulated runs and modules: simulated time is no node-hour of the fleet."""
    return Ledger([h for h in ledger.modules if not is_simulated(h, ledger)], ledger.unattributed,
                  {k: r for k, r in ledger.runs.items() if not r.simulated})


@dataclass
class GroupFigures:
    group: str  # the module model the node holds
    nodes: int
    node_hours: float
    occurrences: int
    mtbf_hours: float | None  # None: no finding in the observed time
    drainable_share: float | None  # None: no health or watch verdict to judge by
    categories: dict[str, int] = field(default_factory=dict)


def lemons(ledger: Ledger, least: int = 2) -> list[Lemon]:
    out = [Lemon(h.id, h.model, h.where, len(h.occurrences), dict(Counter(o.fault for o in h.occurrences)),
                 is_simulated(h, ledger))
           for h in ledger.modules if len(h.occurrences) >= least]
    return sorted(out, key=lambda m: (-m.occurrences, m.id))


def groups(ledger: Ledger, ladders: Ladders) -> list[GroupFigures]:
    node_group = _node_groups(ledger)
    spans = _spans(ledger.runs.values())
    out = []
    for group in sorted(set(node_group.values())):
        nodes = sorted(n for n, g in node_group.items() if g == group)
        hours = sum(spans.get(n, (0.0, 0.0))[1] - spans.get(n, (0.0, 0.0))[0] for n in nodes) / 3600
        occ = [o for h in ledger.modules for o in h.occurrences if o.node in nodes]
        cats = Counter(ladders.ladder(o.fault).category for o in occ)
        share = _drainable(ledger.runs.values(), nodes)
        out.append(GroupFigures(group, len(nodes), round(hours, 3), len(occ),
                                round(hours / len(occ), 3) if occ and hours > 0 else None, share, dict(cats)))
    return out


def _node_groups(ledger: Ledger) -> dict[str, str]:
    models: dict[str, Counter[str]] = defaultdict(Counter)
    for h in ledger.modules:
        for p in h.places:
            models[p.node][h.model or "unknown"] += 1
    return {node: c.most_common(1)[0][0] for node, c in models.items()}


def _t(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def _spans(runs: Iterable[RunRow]) -> dict[str, tuple[float, float]]:
    """Each node's observed time: from its first run's start to its last run's end."""
    out: dict[str, tuple[float, float]] = {}
    for r in runs:
        if not r.node:
            continue
        a, b = _t(r.started_utc), _t(r.ended_utc or r.started_utc)
        lo, hi = out.get(r.node, (a, b))
        out[r.node] = (min(lo, a), max(hi, b))
    return out


def _drainable(runs: Iterable[RunRow], nodes: list[str]) -> float | None:
    """Time from a health or watch run that failed to the node's next run that passed, over the
    node's observed time (the last state holds to the last run)."""
    total = bad = 0.0
    kept = [r for r in runs if r.kind in ("health", "watch") and r.verdict]
    for node in nodes:
        mine = sorted((r for r in kept if r.node == node), key=lambda r: r.started_utc)
        for a, b in zip(mine, mine[1:], strict=False):
            span = _t(b.started_utc) - _t(a.started_utc)
            total += span
            bad += span if a.verdict == "fail" else 0.0
    return round(bad / total, 4) if total > 0 else None
