"""When will a module reach its slowdown temperature at its usual load?

Thermal resistance R = (T − reference) / P is estimated over steady-load windows only (busy,
power steady), so load and coolant changes do not masquerade as ageing. The reference is the
inlet/coolant temperature where the source has it, otherwise the median of the peers'
temperatures in the same window (R is then the excess over the peers). Hourly medians of R
get a Theil–Sen trend with its confidence interval; the crossing is when R reaches
(slowdown − warm reference) / typical power. An ``overheat_forecast`` is raised when the
earliest plausible crossing (the upper slope bound) is within the horizon and the rise is
significant (the lower slope bound above zero); it is withdrawn if the trend reverses.

The alarm fires when the earliest crossing is within the horizon plus a margin (24 h by
default), so that despite forecast error it lands at least ``horizon`` ahead: the measured
lead times are in docs/watch.md (benchmarks/forecast_eval.py)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import theilslopes

from gpuvet.backends.readings import Sample
from gpuvet.watch.events import Event, Severity

HOUR = 3600.0


@dataclass
class _Window:
    temps: list[float] = field(default_factory=list)
    powers: list[float] = field(default_factory=list)
    refs: list[float] = field(default_factory=list)
    utils: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class WindowStat:
    t: float
    temp: float
    power: float
    ref: float | None
    steady: bool


@dataclass
class _History:
    hours: list[float] = field(default_factory=list)  # hour index
    r: list[float] = field(default_factory=list)  # median R of that hour
    pending: dict[int, list[float]] = field(default_factory=dict)
    powers: list[float] = field(default_factory=list)
    refs: list[float] = field(default_factory=list)
    warned: bool = False


@dataclass
class Forecast:
    module: str
    slope_per_day: float
    slope_low: float
    slope_high: float
    r_now: float
    r_crit: float
    crossing: float | None  # seconds since start (central estimate)
    earliest: float | None
    latest: float | None


class ThermalForecaster:
    def __init__(self, slowdown_c: dict[str, float], horizon_s: float = 72 * HOUR, margin_s: float = 24 * HOUR,
                 window_s: float = 600.0, history_s: float = 4 * 86400.0, min_hours: int = 24, alpha: float = 0.90,
                 evaluate_every_s: float = 2 * HOUR) -> None:
        self.slowdown_c = slowdown_c
        self.horizon_s, self.margin_s, self.window_s, self.history_s = horizon_s, margin_s, window_s, history_s
        self.min_hours, self.alpha, self.evaluate_every_s = min_hours, alpha, evaluate_every_s
        self._windows: dict[int, dict[str, _Window]] = defaultdict(dict)
        self._hist: dict[str, _History] = defaultdict(_History)
        self._last_eval: dict[str, float] = {}
        self.uuids: dict[str, str] = {}

    # --- feeding -----------------------------------------------------------------------
    def observe(self, s: Sample) -> list[Event]:
        """Samples as they come; closes windows as time passes. Returns events."""
        if s.temp_c is None or s.power_w is None:
            return []
        self.uuids[s.module] = s.uuid
        index = int(s.t // self.window_s)
        w = self._windows[index].setdefault(s.module, _Window())
        w.temps.append(s.temp_c)
        w.powers.append(s.power_w)
        w.utils.append(s.util or 0.0)
        if s.ambient_c is not None:
            w.refs.append(s.ambient_c)
        out: list[Event] = []
        for old in [i for i in self._windows if i < index]:
            out += self._close(old)
        return out

    def _close(self, index: int) -> list[Event]:
        windows = self._windows.pop(index)
        t = (index + 1) * self.window_s
        stats = {}
        for module, w in windows.items():
            if not w.powers:
                continue
            power = statistics.fmean(w.powers)
            spread = statistics.pstdev(w.powers) / power if power > 0 else 1.0
            steady = min(w.utils) >= 0.8 and spread <= 0.05 and len(w.powers) >= 3
            stats[module] = WindowStat(t, statistics.fmean(w.temps), power,
                                       statistics.fmean(w.refs) if w.refs else None, steady)
        return self.observe_windows(stats)

    def observe_windows(self, stats: dict[str, WindowStat]) -> list[Event]:
        """One aligned window for each module (all at the same time)."""
        if not stats:
            return []
        out: list[Event] = []
        for module, w in stats.items():
            if not w.steady:
                continue
            ref = w.ref
            if ref is None:  # no inlet sensor: the peers are the reference
                peers = [x.temp for m, x in stats.items() if m != module and x.steady]
                if not peers:
                    continue
                ref = statistics.median(peers)
            h = self._hist[module]
            h.pending.setdefault(int(w.t // HOUR), []).append((w.temp - ref) / w.power)
            h.powers.append(w.power)
            h.refs.append(ref)
            del h.powers[:-1000], h.refs[:-1000]
            done = [k for k in h.pending if k < int(w.t // HOUR)]
            for k in sorted(done):
                h.hours.append(float(k))
                h.r.append(statistics.median(h.pending.pop(k)))
            keep = int(self.history_s // HOUR)
            del h.hours[:-keep], h.r[:-keep]
            if w.t - self._last_eval.get(module, -1e18) >= self.evaluate_every_s:
                self._last_eval[module] = w.t
                event = self._evaluate(module, w.t)
                if event:
                    out.append(event)
        return out

    # --- judging -----------------------------------------------------------------------
    def forecast(self, module: str, now: float) -> Forecast | None:
        h = self._hist.get(module)
        if h is None or len(h.r) < self.min_hours or module not in self.slowdown_c:
            return None
        days = np.asarray(h.hours) / 24.0
        slope, intercept, low, high = theilslopes(np.asarray(h.r), days, alpha=self.alpha)
        r_now = intercept + slope * now / 86400.0
        power = float(np.percentile(h.powers, 95))  # a heavy job on a warm day: when the crossing comes first
        ref = float(np.percentile(h.refs, 95))
        r_crit = (self.slowdown_c[module] - ref) / power

        def at(rate: float) -> float | None:
            if rate <= 0:
                return None
            return float(now + max(r_crit - r_now, 0.0) / rate * 86400.0)

        return Forecast(module, float(slope), float(low), float(high), float(r_now), float(r_crit),
                        at(slope), at(high), at(low))

    def _evaluate(self, module: str, now: float) -> Event | None:
        f = self.forecast(module, now)
        h = self._hist[module]
        if f is None:
            return None
        rising = f.slope_low > 0 and f.earliest is not None
        if rising and not h.warned and f.earliest is not None and f.earliest - now <= self.horizon_s + self.margin_s:
            h.warned = True
            return Event("overheat_forecast", Severity.WARN, module, now,
                         f"at its usual load it reaches {self.slowdown_c[module]:.1f} °C in about "
                         f"{_hours(f.crossing, now)} (between {_hours(f.earliest, now)} and {_hours(f.latest, now)})",
                         {"slope_c_per_w_per_day": f.slope_per_day, "slope_interval": [f.slope_low, f.slope_high],
                          "r_now": f.r_now, "r_crit": f.r_crit, "earliest": f.earliest, "latest": f.latest},
                         predicted_crossing=f.crossing if f.crossing is not None else f.earliest,
                         uuid=self.uuids.get(module))
        if h.warned and (f.slope_high <= 0 or f.earliest is None or f.earliest - now > 2 * (self.horizon_s + self.margin_s)):
            h.warned = False
            return Event("overheat_forecast_withdrawn", Severity.INFO, module, now,
                         "the temperature trend no longer points at the slowdown point",
                         {"slope_c_per_w_per_day": f.slope_per_day}, uuid=self.uuids.get(module))
        return None


def _hours(t: float | None, now: float) -> str:
    if t is None or math.isinf(t):
        return "never"
    return f"{(t - now) / HOUR:.0f} h"
