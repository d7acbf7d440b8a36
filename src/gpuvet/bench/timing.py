"""How every benchmark is timed, and the statistics every figure carries.

The policy is here, once: warm up, calibrate how many operations one sample holds so a
sample is long enough to time well, take repeated samples within a time budget, summarise
with median, IQR, min, max and coefficient of variation. The mechanism — running an
operation ``k`` times back to back and returning the elapsed seconds with the device
synchronised (CUDA events, a barrier across ranks, a simulated clock) — belongs to the
backend's ``Workload``; buffers rotate inside it so caches do not flatter the result.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class Workload(Protocol):
    def timed(self, repeats: int) -> float:
        """Run the operation ``repeats`` times back to back; seconds for all of them."""
        ...


@dataclass(frozen=True)
class TimingPlan:
    warmup: int = 3
    min_samples: int = 5
    max_samples: int = 30
    min_sample_s: float = 0.01  # a sample holds enough operations to last this long
    budget_s: float = 2.0  # stop taking samples after this (min_samples are always taken)

    def __post_init__(self) -> None:
        if self.min_samples < 1 or self.max_samples < self.min_samples:
            raise ValueError("need 1 <= min_samples <= max_samples")


QUICK = TimingPlan(warmup=1, min_samples=3, max_samples=5, min_sample_s=0.002, budget_s=0.3)


@dataclass(frozen=True)
class Stats:
    """Seconds per operation across samples."""

    n: int
    median: float
    q1: float
    q3: float
    min: float
    max: float
    mean: float
    cv: float  # standard deviation / mean; 0 for a single sample

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1


def _stdev(xs: Sequence[float], mean: float) -> float:
    """Sample standard deviation in floats, to within an ulp or two of ``statistics.stdev``,
    which is exact through Fractions: ~0.1 ms for five samples, and a simulated validate of a
    576-module node summarises ~7,000 timings."""
    return math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (len(xs) - 1))


def summarize(samples: Sequence[float]) -> Stats:
    if not samples:
        raise ValueError("no samples to summarise")
    xs = sorted(samples)
    mean = statistics.fmean(xs)
    if len(xs) >= 2:
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
        cv = _stdev(xs, mean) / mean if mean > 0 else 0.0
    else:
        q1 = q3 = xs[0]
        cv = 0.0
    return Stats(len(xs), statistics.median(xs), q1, q3, xs[0], xs[-1], mean, cv)


@dataclass(frozen=True)
class Timing:
    per_op_s: tuple[float, ...]  # one entry per sample: sample seconds / ops_per_sample
    ops_per_sample: int
    stats: Stats


def measure(workload: Workload, plan: TimingPlan = TimingPlan()) -> Timing:
    """Warm up, calibrate, sample; see the module docstring."""
    first = 0.0
    for _ in range(max(plan.warmup, 1)):
        first = workload.timed(1)  # the last warm-up run estimates one operation
    ops = 1 if first <= 0 else max(1, math.ceil(plan.min_sample_s / first))
    samples: list[float] = []
    started = time.perf_counter()
    spent_sim = 0.0
    while len(samples) < plan.max_samples:
        seconds = workload.timed(ops)
        if seconds <= 0:
            raise RuntimeError("the workload reported a non-positive time; its timer is broken")
        samples.append(seconds / ops)
        spent_sim += seconds
        if len(samples) >= plan.min_samples:
            wall = time.perf_counter() - started
            if max(wall, spent_sim) >= plan.budget_s:  # simulated time counts like real time
                break
    return Timing(tuple(samples), ops, summarize(samples))
