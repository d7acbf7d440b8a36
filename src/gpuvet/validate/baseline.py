"""Baselines: per-check reference figures built from good runs of one node type, and the
comparison of a new run against them.

Robust by construction: the reference is a median, and runs that break the rule against it
(more than ``tolerance`` worse) are excluded and the median taken again, until nothing
changes — one bad run among good ones does not move the baseline."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gpuvet.checks.model import Check, Verdict
from gpuvet.errors import GpuvetError
from gpuvet.files import Input, as_text, read_input, write_atomic
from gpuvet.validate.direction import lower_is_better

BASELINE_SCHEMA = 1
MAX_BASELINE_BYTES = 64 * 2**20  # a baseline holds a few figures per check: kilobytes, not tens of MiB


@dataclass(frozen=True)
class BaselineMetric:
    value: float
    unit: str | None
    runs: list[str]
    excluded: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Baseline:
    node_type: str
    created_utc: str
    runs: list[str]
    metrics: dict[str, BaselineMetric]
    schema: int = BASELINE_SCHEMA
    tolerance: float = 0.05


def robust_reference(values: dict[str, float], lower_better: bool, tolerance: float) -> tuple[float, list[str]]:
    """Median after iteratively excluding runs worse than the median by more than ``tolerance``.
    Returns (reference, excluded run ids)."""
    kept = dict(values)
    while True:
        ref = statistics.median(kept.values())
        worse = {run for run, v in kept.items()
                 if (v > ref * (1 + tolerance) if lower_better else v < ref * (1 - tolerance))}
        if not worse or len(worse) == len(kept):
            return ref, sorted(set(values) - set(kept))
        for run in worse:
            del kept[run]


def make_baseline(runs: Sequence[tuple[str, str, Sequence[Check]]], created_utc: str,
                  tolerance: float = 0.05) -> Baseline:
    """From (run_id, node_type, checks) of good runs of one node type."""
    if not runs:
        raise GpuvetError("no runs given", where="baseline make", fix="name one or more run ids (gpuvet log list).")
    types = {t for _, t, _ in runs}
    if len(types) > 1:
        raise GpuvetError(f"the runs are of different node types: {', '.join(sorted(types))}", where="baseline make",
                          fix="build one baseline per node type.")
    by_key: dict[str, dict[str, float]] = {}
    units: dict[str, str | None] = {}
    for run_id, _, checks in runs:
        for c in checks:
            value = c.number
            if c.verdict is Verdict.SKIP or value is None:
                continue
            by_key.setdefault(c.key, {})[run_id] = value
            units[c.key] = c.unit
    metrics = {}
    for key, values in by_key.items():
        ref, excluded = robust_reference(values, lower_is_better(key.split("/")[1]), tolerance)
        metrics[key] = BaselineMetric(ref, units[key], sorted(values), excluded)
    return Baseline(types.pop(), created_utc, [r for r, _, _ in runs], metrics, tolerance=tolerance)


def save_baseline(baseline: Baseline, path: Path) -> None:
    write_atomic(path, json.dumps(asdict(baseline), indent=1), where=str(path))


_FIX_MAKE = "make one with gpuvet baseline make RUN… -o FILE"
_BASELINE = Input(not_file=", not a regular file", fix=_FIX_MAKE, max_bytes=MAX_BASELINE_BYTES,
                  too_big=lambda size, where: GpuvetError(f"{size:,} bytes: larger than any baseline (at most "
                                                          f"{MAX_BASELINE_BYTES:,} bytes are read)", where=where,
                                                          fix=_FIX_MAKE))


def load_baseline(path: str | Path) -> Baseline:
    p = Path(path)
    where = str(p)
    if not p.is_file():
        raise GpuvetError(f"no baseline file {p}", where="--baseline", fix="make one: gpuvet baseline make RUN… -o FILE")
    try:
        data = json.loads(as_text(read_input(p, where, _BASELINE), newlines=False))
        metrics = {k: BaselineMetric(**v) for k, v in data.pop("metrics").items()}
        baseline = Baseline(metrics=metrics, **data)
    except (ValueError, TypeError, KeyError) as exc:
        raise GpuvetError(f"not a gpuvet baseline ({exc})", where=where,
                          fix="make one with gpuvet baseline make RUN… -o FILE") from None
    if baseline.schema > BASELINE_SCHEMA:
        raise GpuvetError(f"baseline schema {baseline.schema} is newer than this gpuvet", where=where,
                          fix="upgrade gpuvet.")
    return baseline


def apply_baseline(checks: list[Check], baseline: Baseline, node_type: str) -> list[Check]:
    """Each check with ``pct_of_baseline`` (for lower-is-better checks: reference ÷ value, so
    under 100 % always means worse). Raises for a baseline of another node type."""
    if baseline.node_type != node_type:
        raise GpuvetError(f"the baseline is for {baseline.node_type}, this node is {node_type}", where="--baseline",
                          fix="use a baseline made from runs on this node type, or make one.")
    out = []
    for c in checks:
        ref = baseline.metrics.get(c.key)
        if ref is None or not isinstance(c.value, (int, float)) or isinstance(c.value, bool) or not c.value:
            out.append(c)
            continue
        pct = 100 * ref.value / c.value if lower_is_better(c.name) else 100 * c.value / ref.value
        out.append(c.but(pct_of_baseline=pct, evidence=c.evidence.plus({"baseline": ref.value})))
    return out
