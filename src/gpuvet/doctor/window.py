"""doctor's telemetry window as the checks read it: the detectors' events at once, and the thermal
trend model fed only when a check asks for it (issue 43: a window gathers for the checks that need it).
The trend model's share of the samples is held as arrays until then."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from gpuvet.backends.readings import Sample
from gpuvet.checks.blocks import FloatArray, ModuleBlock, Placed
from gpuvet.checks.events import Event
from gpuvet.checks.window import TrendModel


def _kept(b: ModuleBlock, name: str) -> list[float | None] | FloatArray:
    """A column as an array (a quarter of a list's memory; the block's own where it made one), or as
    it is where it holds a None."""
    values: list[float | None] = getattr(b, name)
    return values if None in values else b.array(name)


def _listed(values: list[float | None] | FloatArray) -> list[float | None]:
    return values if isinstance(values, list) else values.tolist()


@dataclass(frozen=True)
class _Held:
    """One module's run of ticks as the thermal trend model reads it (``ModuleBlock``'s columns)."""

    module: str
    uuid: str
    t: FloatArray
    rows: npt.NDArray[np.int64]
    throttle: npt.NDArray[np.int64]
    floats: tuple[list[float | None] | FloatArray, ...]  # temp, power, sm, mem, util
    ambient: list[float | None] | FloatArray | None

    @classmethod
    def of(cls, b: ModuleBlock) -> _Held:
        return cls(b.module, b.uuid, np.asarray(b.t, dtype=np.float64), np.asarray(b.rows, dtype=np.int64),
                   np.asarray(b.throttle, dtype=np.int64), tuple(_kept(b, c) for c in ("temp", "power", "sm", "mem",
                                                                                      "util")),
                   None if b.ambient is None else _kept(b, "ambient"))

    def block(self) -> ModuleBlock:
        """The block again, its float columns' arrays already made (the trend reads them as arrays)."""
        temp, power, sm, mem, util = (_listed(c) for c in self.floats)
        named = zip(("temp", "power", "sm", "mem", "util", "ambient"), (*self.floats, self.ambient), strict=True)
        arrays = {name: c for name, c in named if isinstance(c, np.ndarray)}
        return ModuleBlock(self.module, self.uuid, self.t.tolist(), self.rows.tolist(), temp, power, sm, mem, util,
                           self.throttle.tolist(), None if self.ambient is None else _listed(self.ambient),
                           _arrays=arrays)


def _inlet_read(run: tuple[int, list[_Held]] | Sample) -> bool:
    """Whether every sample of a held run carries an inlet/coolant reading."""
    if isinstance(run, Sample):
        return run.ambient_c is not None and not math.isnan(run.ambient_c)
    return all(isinstance(h.ambient, np.ndarray) and not np.isnan(h.ambient).any() for h in run[1])


class HeldForTrend:
    """The window's samples as the thermal trend model reads them, held until a check asks for the
    trend (thermal_trend): a triage that stops before it, or a symptom whose playbook lacks it, never
    pays for the fit (issue 43). Fed later in the order the window took them, so the fit is the one
    feeding it as they came gives; doctor reads its fits, never its events."""

    def __init__(self, make: Callable[[], TrendModel]) -> None:
        self.make = make
        self.runs: list[tuple[int, list[_Held]] | Sample] = []

    def observe(self, s: Sample) -> list[Event]:
        self.runs.append(s)
        return []

    def observe_blocks(self, blocks: Sequence[ModuleBlock], slot: int) -> list[Placed]:
        """A run of ticks as blocks: the columns the trend reads, held as arrays."""
        self.runs.append((slot, [_Held.of(b) for b in blocks]))
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
            blocks = [h.block() for h in run[1]]
            if many is None or many(blocks, run[0]) is None:  # it wants them one by one, in stream order
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
