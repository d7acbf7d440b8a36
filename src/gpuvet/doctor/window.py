"""doctor's telemetry window as the checks read it: the detectors' events at once, and the thermal
trend model fed only when a check asks for it (issue 43: a window gathers for the checks that need it).
The trend model's share of the samples is held until then."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from gpuvet.backends.readings import Sample
from gpuvet.checks.events import Event

if TYPE_CHECKING:  # the blocks load numpy: imported where a window holds blocks, never by doctor reading a file
    from gpuvet.checks.blocks import ModuleBlock, Placed
    from gpuvet.checks.window import TrendModel

_TREND_READS = ("temp", "power", "util")  # the float columns the forecaster reads as arrays (and ambient)


def _for_trend(b: ModuleBlock) -> ModuleBlock:
    """The block's columns the trend model reads (the lists the window made anyway, not copies)
    with their arrays, without the detectors' other cached arrays."""
    from gpuvet.checks.blocks import ModuleBlock

    names = (*_TREND_READS, "ambient") if b.ambient is not None else _TREND_READS
    return ModuleBlock(b.module, b.uuid, b.t, b.rows, b.temp, b.power, b.sm, b.mem, b.util, b.throttle, b.ambient,
                       arrays={name: b.array(name) for name in names})


def _inlet_read(run: tuple[int, list[ModuleBlock]] | Sample) -> bool:
    """Whether every sample of a held run carries an inlet/coolant reading."""
    if isinstance(run, Sample):
        return run.ambient_c is not None and not math.isnan(run.ambient_c)
    import numpy as np

    return all(b.ambient is not None and not np.isnan(b.array("ambient")).any() for b in run[1])


class HeldForTrend:
    """The window's samples as the thermal trend model reads them, held until a check asks for the
    trend (thermal_trend): a symptom whose playbook lacks it, or a playbook that ends at a critical
    cause before it, never pays for the fit (issue 43). Fed later in the order the window took them, so the fit is the one
    feeding it as they came gives; doctor reads its fits, never its events."""

    def __init__(self, make: Callable[[], TrendModel]) -> None:
        self.make = make
        self.runs: list[tuple[int, list[ModuleBlock]] | Sample] = []

    def observe(self, s: Sample) -> list[Event]:
        self.runs.append(s)
        return []

    def observe_blocks(self, blocks: Sequence[ModuleBlock], slot: int) -> list[Placed]:
        """A run of ticks as blocks: the columns the trend reads, held."""
        self.runs.append((slot, [_for_trend(b) for b in blocks]))
        return []

    def fed(self) -> TrendModel:
        trend = self.make()
        fits_only = getattr(trend, "fits_only", None)  # the checks read fits, not warnings
        if fits_only is not None and self.runs and all(_inlet_read(run) for run in self.runs):
            fits_only()  # with every inlet read, judging whether to warn changes no fit: left out
        many = getattr(trend, "observe_blocks", None)  # a trend model that sums blocks itself
        for run in self.runs:
            if isinstance(run, Sample):
                trend.observe(run)
                continue
            slot, blocks = run
            if many is None or many(blocks, slot) is None:  # it wants them one by one, in stream order
                for _, k, i in sorted((b.rows[i], k, i) for k, b in enumerate(blocks) for i in range(len(b))):
                    trend.observe(blocks[k].sample(i))
        self.runs = []
        return trend


@dataclass
class Window:
    events: list[Event]
    held: HeldForTrend | None  # what the trend model reads, until a check asks for it
    duration_s: float
    interval_s: float = 0.0  # between samples
    modules: int = 0  # sampled at the start

    @cached_property
    def trend(self) -> TrendModel | None:
        """The thermal trend model, fed the window's samples the first time a check reads it."""
        return self.held.fed() if self.held is not None else None
