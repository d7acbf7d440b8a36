"""When will a module reach its slowdown temperature at its usual load?

Thermal resistance R = (T − reference) / P is estimated over steady-load windows only (busy,
power steady), so load and coolant changes do not masquerade as ageing. The reference is the
inlet/coolant temperature where the source has it, otherwise the median of the peers'
temperatures in the same window (R is then the excess over the peers). Hourly medians of R
get a Theil–Sen trend with its confidence interval; the crossing is when R reaches
(slowdown − warm reference) / typical power. An ``overheat_forecast`` is raised when the
predicted crossing (the central slope) is within the horizon plus a margin and the rise is
significant (the lower slope bound above zero); it is withdrawn if the trend reverses.

The margin (48 h by default) is there so that despite forecast error (a node's inlet may
still rise; the first crossing comes in the hottest window, not the typical one) the warning
lands at least ``horizon`` ahead: the measured lead times are in docs/watch.md
(benchmarks/forecast_eval.py, benchmarks/forecast_replay.py).

Without an inlet reading the reference is the same-model peers, each less its own usual offset
over the others (learnt over days), so a peer dropping out or stepping moves nobody else's R."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtri

from gpuvet.backends.readings import Sample
from gpuvet.watch.events import Event, Severity

HOUR = 3600.0
THERMAL_BITS = 0x20 | 0x40  # sw/hw thermal slowdown: the module already reached its slowdown point
STEP_HOURS = 6  # hours either side of a level step (maintenance) that resets the trend
RECENT_HOURS = 48  # the shorter trend, for a creep that started inside the history
STEP_MIN_C = 2.5  # °C at the module's usual load: what new paste or a re-seat changes, above rounding and noise
MIN_RISE_C = 1.0  # a trend must already have moved the temperature at load this much to be believed
PEER_POWER_BAND = 0.15  # peers within 15 % of the module's power are under comparable load
OFFSET_TAU_S = 2 * 86400.0  # how slowly a module's usual offset over its peers is learnt


class _Window:
    """Running sums of one module's samples in one window (no per-sample lists: a replay feeds
    millions of samples)."""

    __slots__ = ("n", "temp", "power", "power_sq", "util", "n_util", "ref", "n_ref", "hot")

    def __init__(self) -> None:
        self.n = self.n_util = self.n_ref = 0
        self.temp = self.power = self.power_sq = self.util = self.ref = 0.0
        self.hot = False  # thermally throttled at some point: the temperature is held, R means nothing


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
    span_days: float = 0.0  # of the history the trend was fitted on


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

    def __init__(self, slowdown_c: dict[str, float], horizon_s: float = 72 * HOUR, margin_s: float = 48 * HOUR,
                 window_s: float = 600.0, history_s: float = 4 * 86400.0, min_hours: int = 24, alpha: float = 0.90,
                 evaluate_every_s: float = 2 * HOUR, min_util: float = 0.35, max_power_cv: float = 0.15,
                 min_window_samples: int = 3, models: dict[str, str] | None = None) -> None:
        self.slowdown_c = slowdown_c
        self.horizon_s, self.margin_s, self.window_s, self.history_s = horizon_s, margin_s, window_s, history_s
        self.min_hours, self.alpha, self.evaluate_every_s = min_hours, alpha, evaluate_every_s
        self.min_util, self.max_power_cv, self.min_window_samples = min_util, max_power_cv, min_window_samples
        self.models = models or {}
        self._windows: dict[int, dict[str, _Window]] = {}
        self._lowest: float = math.inf  # the earliest window still open
        self._hist: dict[str, _History] = defaultdict(_History)
        self._last_eval: dict[str, float] = {}
        self._peak_w: dict[str, float] = {}
        self._offset: dict[str, float] = {}  # °C over the same-model peers, learnt slowly
        self.uuids: dict[str, str] = {}

    # --- feeding -----------------------------------------------------------------------
    def observe(self, s: Sample) -> list[Event]:
        """Samples as they come; closes windows as time passes. Returns events."""
        temp, power = s.temp_c, s.power_w
        if temp is None or power is None:
            return []
        module = s.module
        if module not in self.uuids:
            self.uuids[module] = s.uuid
        index = int(s.t // self.window_s)
        windows = self._windows.get(index)
        if windows is None:
            windows = self._windows[index] = {}
            self._lowest = min(self._lowest, index)
        w = windows.get(module)
        if w is None:
            w = windows[module] = _Window()
        w.n += 1
        w.temp += temp
        w.power += power
        w.power_sq += power * power
        if s.util is not None:
            w.util += s.util
            w.n_util += 1
        if s.ambient_c is not None:
            w.ref += s.ambient_c
            w.n_ref += 1
        if s.throttle & THERMAL_BITS:
            w.hot = True
        if self._lowest >= index:
            return []
        out: list[Event] = []
        for old in sorted(i for i in self._windows if i < index):
            out += self._close(old)
        self._lowest = index
        return out

    def flush(self) -> list[Event]:
        """Close the windows still open (end of a replay)."""
        out: list[Event] = []
        for index in sorted(self._windows):
            out += self._close(index)
        self._lowest = math.inf
        return out

    def _close(self, index: int) -> list[Event]:
        windows = self._windows.pop(index)
        t = (index + 1) * self.window_s
        stats = {}
        for module, w in windows.items():
            n = w.n
            power = w.power / n
            var = max(w.power_sq / n - power * power, 0.0)
            spread = math.sqrt(var) / power if power > 0 else 1.0
            peak = self._peak_w[module] = max(self._peak_w.get(module, 0.0), power)
            busy = w.util / w.n_util >= self.min_util if w.n_util else power >= 0.5 * peak
            steady = (busy and not w.hot and spread <= self.max_power_cv and n >= self.min_window_samples
                      and power >= 0.3 * peak)
            stats[module] = WindowStat(t, w.temp / n, power, w.ref / w.n_ref if w.n_ref else None, steady,
                                       self.models.get(module))
        return self.observe_windows(stats)

    def observe_windows(self, stats: dict[str, WindowStat]) -> list[Event]:
        """One aligned window for each module (all at the same time)."""
        if not stats:
            return []
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
        self._learn_offsets(stats)
        return out

    def _peer_reference(self, module: str, w: WindowStat, stats: dict[str, WindowStat]) -> float | None:
        """Median of the same-model peers under comparable load (power within ``PEER_POWER_BAND``)
        in the same window, each peer's temperature less its usual offset over the others (see
        ``_learn_offsets``); None with fewer than two. No dT/dP is learnt to move peers to this
        module's load: such a slope drifts as modules age, and every drift would shift all
        references at once."""
        band = PEER_POWER_BAND * w.power
        offsets = self._offset
        peers = [x.temp - offsets.get(m, 0.0) for m, x in stats.items()
                 if m != module and x.steady and x.model == w.model and abs(x.power - w.power) <= band]
        if len(peers) < 2:
            return None
        self._hist[module].reference = (f"no inlet/coolant reading: median of the same-model peers on the node at "
                                        f"comparable load, each less its usual offset ({len(peers)} now)")
        return statistics.median(peers)

    def _learn_offsets(self, stats: dict[str, WindowStat]) -> None:
        """Each module's usual excess over its same-model peers, learnt slowly (``OFFSET_TAU_S``).
        Peers enter a reference as temperature less offset, so a peer that drops out (throttled,
        idle) or steps (maintenance) moves the others' reference by noise, not by the gap
        between it and the rest; a creeping peer is one outlier the median ignores."""
        groups: dict[str | None, list[str]] = defaultdict(list)
        for m, x in stats.items():
            if x.steady and x.ref is None:
                groups[x.model].append(m)
        rate = min(self.window_s / OFFSET_TAU_S, 1.0)
        offsets = self._offset
        for members in groups.values():
            if len(members) < 3:
                continue
            known = [stats[m].temp - offsets[m] for m in members if m in offsets]
            common = statistics.median(known) if len(known) >= 3 else statistics.median(stats[m].temp for m in members)
            for m in members:
                deviation = stats[m].temp - common
                old = offsets.get(m)
                offsets[m] = deviation if old is None else old + rate * (deviation - old)

    def _step(self, module: str, h: _History, now: float) -> Event | None:
        """A level step in R (a re-seated module, new thermal paste, a fixed fan) restarts the
        trend from the step. A step: the last STEP_HOURS all sit on one side of the line fitted
        to the day before them, by more than six times the hour-to-hour noise and more than
        STEP_MIN_C at load; a creep moves along its line and is not a step."""
        k = STEP_HOURS
        if len(h.r) < 24 + k:
            return None
        x, y = h.hours[-24 - k:], h.r[-24 - k:]
        # the line through the medians of the day's two halves (cheap, robust; this runs every hour)
        x1, x2 = statistics.median(x[:12]), statistics.median(x[12:24])
        y1, y2 = statistics.median(y[:12]), statistics.median(y[12:24])
        slope = (y2 - y1) / (x2 - x1) if x2 > x1 else 0.0
        residual = [b - (y1 + slope * (a - x1)) for a, b in zip(x, y, strict=True)]
        noise = 1.4826 * statistics.median(abs(b - a) for a, b in zip(residual[:23], residual[1:24], strict=True)) \
            / math.sqrt(2)
        after = residual[24:]
        jump = statistics.median(after)
        floor = STEP_MIN_C / statistics.median(h.powers[-200:])  # a step worth a maintenance note: a degree at load
        if abs(jump) <= max(6 * noise, floor) or any(v * jump <= 0 or abs(v) < 0.5 * abs(jump) for v in after):
            return None
        if abs(statistics.median(after[k // 2:]) - statistics.median(after[:k // 2])) > 0.35 * abs(jump):
            return None  # still moving after the supposed step: a ramp (creep, drift), not a step
        if jump > 0 and y2 - y1 > 0.5 * noise:
            return None  # up on top of a rising day: the creep going on, never a reason to forget it
        del h.hours[:-k], h.r[:-k]
        h.resets += 1
        withdrawn = h.warned and jump < 0
        if withdrawn:
            h.warned = False
        return Event("overheat_forecast_withdrawn" if withdrawn else "forecast_reset", Severity.INFO, module, now,
                     f"thermal resistance stepped {'down' if jump < 0 else 'up'} by {abs(jump):.4f} °C/W "
                     "(maintenance, re-seating, a fan change?): the trend restarts from here"
                     + ("; the earlier overheating forecast is withdrawn" if withdrawn else ""),
                     {"step_c_per_w": jump, "noise_c_per_w": noise, "reference": h.reference, "trend_reset": True},
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
        """The trend over the whole history, or over the last two days when that predicts an
        earlier crossing (a creep that began inside the history is steeper than the average)."""
        h = self._hist.get(module)
        if h is None or len(h.r) < self.min_hours or module not in self.slowdown_c:
            return None
        # a heavy job on a warm day: when the crossing comes first; the last day counts in full, so
        # a node whose inlet or load has risen lately brings the crossing forward at once
        power = max(_p95(h.powers), _p95(h.powers[-144:]))
        ref = max(_p95(h.refs), _p95(h.refs[-144:]))
        r_crit = (self.slowdown_c[module] - ref) / power
        whole = self._fit(module, h, now, 0, r_crit)
        recent = self._fit(module, h, now, RECENT_HOURS, r_crit) if len(h.r) >= RECENT_HOURS + 24 else None
        if recent is not None and recent.slope_low > 0 and recent.earliest is not None and (
                whole.earliest is None or recent.earliest < whole.earliest):
            return recent
        return whole

    def _fit(self, module: str, h: _History, now: float, last_hours: int, r_crit: float) -> Forecast:
        hours = h.hours[-last_hours:] if last_hours else h.hours
        r = h.r[-last_hours:] if last_hours else h.r
        days = np.asarray(hours) / 24.0
        slope, intercept, low, high = theil_sen(days, np.asarray(r), self.alpha)
        r_now = intercept + slope * now / 86400.0

        def at(rate: float) -> float | None:
            if rate <= 0:
                return None
            return float(now + max(r_crit - r_now, 0.0) / rate * 86400.0)

        return Forecast(module, float(slope), float(low), float(high), float(r_now), float(r_crit),
                        at(slope), at(high), at(low), (hours[-1] - hours[0]) / 24.0)

    def _evaluate(self, module: str, now: float) -> Event | None:
        f = self.forecast(module, now)
        h = self._hist[module]
        if f is None:
            return None
        shown_c = f.slope_low * f.span_days * _p95(h.powers)
        rising = f.slope_low > 0 and f.earliest is not None and shown_c >= MIN_RISE_C
        if rising and not h.warned and f.crossing is not None and f.crossing - now <= self.horizon_s + self.margin_s:
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


_PAIRS: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _p95(values: list[float]) -> float:
    """The 95th percentile by nearest rank (numpy's percentile costs more than the sort here)."""
    ordered = sorted(values)
    return ordered[min(int(0.95 * len(ordered)), len(ordered) - 1)]


def theil_sen(x: np.ndarray, y: np.ndarray, alpha: float) -> tuple[float, float, float, float]:
    """Slope, intercept and the slope's ``alpha`` confidence interval (Sen 1968), as
    scipy.stats.theilslopes computes them for distinct x, without its per-call overhead (the
    forecast fits every module every two hours of a replay): the three ranks it needs come from
    one partition of the pairwise slopes, not a sort."""
    n = len(x)
    pairs = _PAIRS.get(n)
    if pairs is None:
        pairs = _PAIRS[n] = np.triu_indices(n, 1)
    i, j = pairs
    dx = x[j] - x[i]
    dy = y[j] - y[i]
    keep = dx != 0
    slopes = dy / dx if keep.all() else dy[keep] / dx[keep]
    m = len(slopes)
    ys = np.sort(y)
    tie_term = 0.0
    if (ys[1:] == ys[:-1]).any():
        _, counts = np.unique(ys, return_counts=True)
        ties = counts[counts > 1]
        tie_term = float(np.sum(ties * (ties - 1) * (2 * ties + 5)))
    var = (n * (n - 1) * (2 * n + 5) - tie_term) / 18.0
    z = float(ndtri((1 - alpha) / 2))
    upper = min(int(np.round((m - z * math.sqrt(var)) / 2)), m - 1)
    lower = max(int(np.round((m + z * math.sqrt(var)) / 2)) - 1, 0)
    part = np.partition(slopes, sorted({lower, upper, m // 2, max(m // 2 - 1, 0)}))
    slope = float(part[m // 2] if m % 2 else (part[m // 2 - 1] + part[m // 2]) / 2)
    y_median = float(ys[n // 2] if n % 2 else (ys[n // 2 - 1] + ys[n // 2]) / 2)
    intercept = y_median - slope * float(np.median(x))
    return slope, intercept, float(part[lower]), float(part[upper])


def _hours(t: float | None, now: float) -> str:
    if t is None or math.isinf(t):
        return "never"
    return f"{(t - now) / HOUR:.0f} h"
