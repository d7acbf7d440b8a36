"""Typed benchmark results. One record per figure; a figure that could not be produced is a
record too (``skipped`` with the reason, ``failed`` with the error), never a missing row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict, Unpack

from gpuvet.backends.readings import TelemetrySummary
from gpuvet.bench.timing import Timing, summarize

Detail = dict[str, Any]  # per-benchmark figures beside the value (op, ranks, set, digest, …), JSON-ready


class Where(TypedDict, total=False):
    """What a figure is about: the optional fields of ``BenchResult`` a benchmark passes along."""

    module: str | None
    between: tuple[str, str] | None
    dtype: str | None
    size_bytes: int | None
    detail: Detail


class Status(StrEnum):
    OK = "ok"
    SKIPPED = "skipped"
    FAILED = "failed"
    UNRELIABLE = "unreliable"  # measured, but beyond a physical bound: the measurement is not to be trusted


@dataclass(frozen=True)
class FigureStats:
    """Statistics of a figure across samples, in the figure's own unit."""

    n: int
    median: float
    q1: float
    q3: float
    iqr: float
    min: float
    max: float
    cv: float
    ops_per_sample: int
    seconds_per_op_median: float


def rate_stats(timing: Timing, work_per_op: float) -> FigureStats:
    """Turn seconds per operation into a rate (work/s) and summarise the rates."""
    rates = summarize([work_per_op / s for s in timing.per_op_s])
    return FigureStats(rates.n, rates.median, rates.q1, rates.q3, rates.iqr, rates.min, rates.max, rates.cv,
                       timing.ops_per_sample, timing.stats.median)


@dataclass(frozen=True)
class BenchResult:
    benchmark: str
    metric: str
    value: float | None
    unit: str
    status: Status
    simulated: bool
    module: str | None = None
    between: tuple[str, str] | None = None
    dtype: str | None = None
    size_bytes: int | None = None
    peak: float | None = None
    pct_of_peak: float | None = None
    median: float | None = None
    cv: float | None = None
    stats: FigureStats | None = None
    correct: bool | None = None
    reason: str | None = None  # why skipped / failed
    detail: Detail = field(default_factory=dict)
    telemetry: dict[str, TelemetrySummary] = field(default_factory=dict)

    @classmethod
    def measured(cls, benchmark: str, metric: str, unit: str, stats: FigureStats, *, simulated: bool,
                 peak: float | None = None, peak_basis: str | None = None, **where: Unpack[Where]) -> BenchResult:
        pct = 100.0 * stats.median / peak if peak else None
        status, reason = Status.OK, None
        if pct is not None and pct > 100.0:
            status = Status.UNRELIABLE
            reason = f"{pct:.0f} % of the theoretical peak ({peak:.4g} {unit}), which no hardware exceeds: "
            basis = (peak_basis or "").removeprefix("computed: ") if (peak_basis or "").startswith("computed:") else ""
            if "current frequency" in basis:  # a VM that exposes no maximum clock
                reason += (f"the peak rests on the clock the machine reports now ({basis}), and the CPU runs "
                           f"faster than that; the {unit} are measured, the % of peak is not meaningful here")
            else:
                reason += ("the timing or the peak's basis (clock, instruction set) is wrong"
                           + (f" ({basis})" if basis else "") + "; re-run on a quiet machine")
        return cls(benchmark, metric, stats.median, unit, status, simulated, peak=peak, pct_of_peak=pct,
                   median=stats.median, cv=stats.cv, stats=stats, reason=reason, **where)

    @classmethod
    def ratio_at_most_one(cls, benchmark: str, metric: str, ratio: float, *, simulated: bool, spread: float,
                          **where: Unpack[Where]) -> BenchResult:
        """A ratio that cannot exceed 1 physically (all at once vs the sum of each alone): above 1
        by more than the figures' own spread, it is flagged, not reported as ok."""
        tolerance = max(0.02, 2 * spread)
        status, reason = Status.OK, None
        if ratio > 1 + tolerance:
            status = Status.UNRELIABLE
            reason = (f"ratio {ratio:.2f} > 1: transfers at once cannot together beat the sum of each alone; "
                      "one of the figures was disturbed (other load, clock changes) — re-run on a quiet machine")
        return cls(benchmark, metric, ratio, "ratio", status, simulated, median=ratio, reason=reason, **where)

    @classmethod
    def skipped(cls, benchmark: str, metric: str, unit: str, reason: str, *, simulated: bool,
                **where: Unpack[Where]) -> BenchResult:
        return cls(benchmark, metric, None, unit, Status.SKIPPED, simulated, reason=reason, **where)

    @classmethod
    def failed(cls, benchmark: str, metric: str, unit: str, error: str, *, simulated: bool,
               **where: Unpack[Where]) -> BenchResult:
        return cls(benchmark, metric, None, unit, Status.FAILED, simulated, reason=error, **where)


@dataclass(frozen=True)
class Environment:
    """Where the figures were taken: enough to tell two runs apart."""

    backend: str
    device: str
    node: str
    gpuvet_version: str
    torch_version: str | None = None
    cuda_version: str | None = None
    driver_version: str | None = None
    collective_backend: str | None = None
    cpu_threads: int | None = None  # threads a CPU engine ran with (chosen from affinity and load)
    host_busy: bool | None = None
    host_load: str | None = None  # what other processes used while it ran, in words


@dataclass(frozen=True)
class BenchReport:
    benchmark: str
    simulated: bool
    environment: Environment
    results: Sequence[BenchResult]
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(r.status is not Status.FAILED and r.correct is not False for r in self.results)
