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
STEP_HOURS = 6  # hours either side of a level step (maintenance) that resets the trend
PAIRS_FOR_SLOPE = 20  # module pairs at different loads before the node's dT/dP is trusted


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
    ref: float | None  # inlet/coolant, where the source has it
    steady: bool  # usable: busy enough and power steady enough for R to mean something
    model: str | None = None


@dataclass
class _History:
    hours: list[float] = field(default_factory=list)  # hour index
    r: list[float] = field(default_factory=list)  # median R of that hour
    pending: dict[int, list[float]] = field(default_factory=dict)
    powers: list[float] = field(default_factory=list)
    refs: list[float] = field(default_factory=list)
    warned: bool = False
    windows: int = 0  # windows seen
    usable: int = 0  # of which busy and steady enough
    no_reference: int = 0  # usable, but no inlet reading and too few comparable peers
    reference: str = ""  # what the last R was measured against
    resets: int = 0


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


@dataclass(frozen=True)
class ForecastStatus:
    """Where the forecast stands for one module, and what it lacked if it has none."""

    module: str
    state: str  # "warned", "watching" (a trend, no crossing in sight), "insufficient"
    reason: str
    reference: str
    hours: int


class ThermalForecaster:
    """One node's modules. Peers are the other modules of the same model in the same window,
    so a node-wide inlet rise cancels and mixed models never compare against each other."""

    def __init__(self, slowdown_c: dict[str, float], horizon_s: float = 72 * HOUR, margin_s: float = 24 * HOUR,
                 window_s: float = 600.0, history_s: float = 4 * 86400.0, min_hours: int = 24, alpha: float = 0.90,
                 evaluate_every_s: float = 2 * HOUR, min_util: float = 0.35, max_power_cv: float = 0.15,
                 min_window_samples: int = 3, models: dict[str, str] | None = None) -> None:
        self.slowdown_c = slowdown_c
        self.horizon_s, self.margin_s, self.window_s, self.history_s = horizon_s, margin_s, window_s, history_s
        self.min_hours, self.alpha, self.evaluate_every_s = min_hours, alpha, evaluate_every_s
        self.min_util, self.max_power_cv, self.min_window_samples = min_util, max_power_cv, min_window_samples
        self.models = models or {}
        self._windows: dict[int, dict[str, _Window]] = defaultdict(dict)
        self._hist: dict[str, _History] = defaultdict(_History)
        self._last_eval: dict[str, float] = {}
        self._peak_w: dict[str, float] = {}
        self._pair_slopes: dict[str, list[float]] = defaultdict(list)
        self._slope: dict[str, float] = {}
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
        if s.util is not None:
            w.utils.append(s.util)
        if s.ambient_c is not None:
            w.refs.append(s.ambient_c)
        out: list[Event] = []
        for old in [i for i in self._windows if i < index]:
            out += self._close(old)
        return out

    def flush(self) -> list[Event]:
        """Close the windows still open (end of a replay)."""
        out: list[Event] = []
        for index in sorted(self._windows):
            out += self._close(index)
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
            peak = self._peak_w[module] = max(self._peak_w.get(module, 0.0), power)
            busy = statistics.fmean(w.utils) >= self.min_util if w.utils else power >= 0.5 * peak
            steady = (busy and spread <= self.max_power_cv and len(w.powers) >= self.min_window_samples
                      and power >= 0.3 * peak)
            stats[module] = WindowStat(t, statistics.fmean(w.temps), power,
                                       statistics.fmean(w.refs) if w.refs else None, steady,
                                       self.models.get(module))
        return self.observe_windows(stats)

    def observe_windows(self, stats: dict[str, WindowStat]) -> list[Event]:
        """One aligned window for each module (all at the same time)."""
        if not stats:
            return []
        self._learn_slope(stats)
        out: list[Event] = []
        for module, w in stats.items():
            h = self._hist[module]
            h.windows += 1
            if not w.steady:
                continue
            h.usable += 1
            ref = w.ref
            if ref is not None:
                h.reference = "inlet/coolant reading"
            else:  # no inlet sensor: the peers at this module's load are the reference
                ref = self._peer_reference(module, w, stats)
                if ref is None:
                    h.no_reference += 1
                    continue
            h.pending.setdefault(int(w.t // HOUR), []).append((w.temp - ref) / w.power)
            h.powers.append(w.power)
            h.refs.append(ref)
            del h.powers[:-1000], h.refs[:-1000]
            done = [k for k in h.pending if k < int(w.t // HOUR)]
            for k in sorted(done):
                h.hours.append(float(k))
                h.r.append(statistics.median(h.pending.pop(k)))
                reset = self._step(module, h, w.t)
                if reset:
                    out.append(reset)
            keep = int(self.history_s // HOUR)
            del h.hours[:-keep], h.r[:-keep]
            if w.t - self._last_eval.get(module, -1e18) >= self.evaluate_every_s:
                self._last_eval[module] = w.t
                event = self._evaluate(module, w.t)
                if event:
                    out.append(event)
        return out

    def _learn_slope(self, stats: dict[str, WindowStat]) -> None:
        """dT/dP of each model on this node, from pairs of modules at clearly different loads in
        the same window (inlet and fixed offsets cancel in the difference)."""
        busy = [(m, w) for m, w in stats.items() if w.steady]
        for i, (m1, a) in enumerate(busy):
            for m2, b in busy[i + 1:]:
                if a.model != b.model or abs(a.power - b.power) < 0.15 * max(a.power, b.power):
                    continue
                key = a.model or ""
                slopes = self._pair_slopes[key]
                slopes.append((a.temp - b.temp) / (a.power - b.power))
                if len(slopes) >= PAIRS_FOR_SLOPE and len(slopes) % 10 == 0:
                    del slopes[:-2000]
                    self._slope[key] = statistics.median(slopes)

    def _peer_reference(self, module: str, w: WindowStat, stats: dict[str, WindowStat]) -> float | None:
        """Median temperature of the same-model peers, each moved to this module's power along
        the node's dT/dP; None with fewer than two peers or, before dT/dP is known, peers at
        other loads."""
        peers = [x for m, x in stats.items() if m != module and x.steady and x.model == w.model]
        if len(peers) < 2:
            return None
        slope = self._slope.get(w.model or "")
        if slope is None:
            peers = [x for x in peers if abs(x.power - w.power) <= 0.15 * max(x.power, w.power)]
            if len(peers) < 2:
                return None
            slope = 0.0
        self._hist[module].reference = (f"median of {len(peers)} peers of the same model on the node"
                                        + (", moved to this module's load" if slope else ""))
        return statistics.median(x.temp + slope * (w.power - x.power) for x in peers)

    def _step(self, module: str, h: _History, now: float) -> Event | None:
        """A level step in R between the last STEP_HOURS and the ones before (a re-seated
        module, new thermal paste, a fixed fan) restarts the trend from the step."""
        k = STEP_HOURS
        if len(h.r) < 4 * k:
            return None
        before, after = h.r[-2 * k:-k], h.r[-k:]
        diffs = np.diff(np.asarray(h.r[:-k]))
        drift = float(np.median(diffs)) * k if len(diffs) else 0.0  # what the trend alone moves in k hours
        jump = statistics.median(after) - statistics.median(before) - drift
        noise = 1.4826 * float(np.median(np.abs(diffs))) / math.sqrt(2) if len(diffs) else 0.0
        level = statistics.median(h.r[:-k])
        if abs(jump) <= max(6 * noise, 0.02 * abs(level) + 1e-4):
            return None
        inside = [abs(b - a) for a, b in zip(h.r[-k - 2:-k + 1], h.r[-k - 1:-k + 2], strict=False)]
        if max(inside, default=0.0) < 0.5 * abs(jump):  # gradual: that is a trend, not a step
            return None
        del h.hours[:-k], h.r[:-k]
        h.resets += 1
        withdrawn = h.warned and jump < 0
        if withdrawn:
            h.warned = False
        return Event("forecast_reset", Severity.INFO, module, now,
                     f"thermal resistance stepped {'down' if jump < 0 else 'up'} by {abs(jump):.4f} °C/W "
                     "(maintenance, re-seating, a fan change?): the trend restarts from here"
                     + ("; the earlier overheating forecast is withdrawn" if withdrawn else ""),
                     {"step_c_per_w": jump, "noise_c_per_w": noise, "reference": h.reference},
                     uuid=self.uuids.get(module))

    def status(self, module: str, now: float) -> ForecastStatus:
        """What the forecast knows of ``module``, or what it needed and did not get."""
        h = self._hist.get(module, _History())
        hours = len(h.r)
        if module not in self.slowdown_c:
            return ForecastStatus(module, "insufficient", "no slowdown temperature for its model (not in the catalog, "
                                  "not in the data)", h.reference, hours)
        recorded_h = h.windows * self.window_s / HOUR
        if recorded_h < self.min_hours:
            return ForecastStatus(module, "insufficient", f"too short a history: {recorded_h:.1f} h recorded, needs "
                                  f"{self.min_hours} h", h.reference, hours)
        if h.windows and not h.usable:
            return ForecastStatus(module, "insufficient", f"no steady-load windows: none of {h.windows} windows had "
                                  f"utilisation >= {self.min_util:.0%} with power steady within "
                                  f"{self.max_power_cv:.0%}", h.reference, hours)
        if h.usable and h.no_reference == h.usable:
            return ForecastStatus(module, "insufficient", "no inlet/coolant reading and fewer than two peers of the "
                                  "same model under comparable load at the same time", h.reference, hours)
        if hours < self.min_hours:
            return ForecastStatus(module, "insufficient", f"too short a history: {hours} h of steady-load windows"
                                  + (" since the last step change" if h.resets else "")
                                  + f", needs {self.min_hours} h", h.reference, hours)
        if h.warned:
            return ForecastStatus(module, "warned", "overheat_forecast raised", h.reference, hours)
        f = self.forecast(module, now)
        trend = f"trend {f.slope_per_day:+.5f} °C/W per day" if f else "no trend"
        return ForecastStatus(module, "watching", f"{trend}; no crossing within the horizon", h.reference, hours)

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
                          "r_now": f.r_now, "r_crit": f.r_crit, "earliest": f.earliest, "latest": f.latest,
                          "reference": h.reference, "reference_c": h.refs[-1] if h.refs else None,
                          "hours": len(h.r)},
                         predicted_crossing=f.crossing if f.crossing is not None else f.earliest,
                         uuid=self.uuids.get(module))
        if h.warned and (f.slope_high <= 0 or f.earliest is None or f.earliest - now > 2 * (self.horizon_s + self.margin_s)):
            h.warned = False
            return Event("overheat_forecast_withdrawn", Severity.INFO, module, now,
                         "the temperature trend no longer points at the slowdown point",
                         {"slope_c_per_w_per_day": f.slope_per_day, "reference": h.reference},
                         uuid=self.uuids.get(module))
        return None


def _hours(t: float | None, now: float) -> str:
    if t is None or math.isinf(t):
        return "never"
    return f"{(t - now) / HOUR:.0f} h"
