"""When will a module reach its slowdown temperature at its usual load?

The model separates the module from its surroundings: T = inlet + R·P, with R the module's own
thermal resistance (°C/W) and P its own power, above an inlet the node's modules share. The inlet
is the inlet/coolant reading where the source has one. Otherwise it is estimated from all the
node's modules of the same model at once, per window: each module's temperature less its own
R·P (a common R fitted across the modules from how their powers differ at the same moment) less
its usual offset, and the median of the others (leave-one-out). So a job's power step moves
T by R·ΔP and the inlet estimate not at all, and a node-wide inlet drift moves every module's
temperature and the inlet estimate alike: neither reads as a change of R. A peer's temperature
is never taken for the ambient.

Only settled windows count (busy, power steady within the window and within ``SETTLE_TOL`` of
the window before, no thermal throttling), so the first-order lag after a load change is over;
windows of ten minutes average whole-degree printouts into tenths. Hourly medians of R get a
Theil–Sen trend with its confidence interval; the crossing is when R reaches (slowdown − warm
inlet) / heavy load. The heavy load is the 95th percentile of the usable windows' powers and
of every busy window's peak through a two-minute lag (``LAG_S``): an inference load reaches its
slowdown first at a peak of minutes that a window's mean averages away. An
``overheat_forecast`` is raised when the interval excludes zero, the rise is already worth
``min_rise_c`` at load, and the predicted crossing (the central slope) is within the horizon
plus a margin; it is withdrawn if the trend reverses or a step down
(maintenance) restarts it. Every event and status says why: R now, its trend and interval,
the inlet estimate and how it was formed, the power it extrapolates at, the span of data.

The margin (48 h by default) makes the warning land at least ``horizon`` ahead despite forecast
error (a node's inlet may still rise; the first crossing comes in the hottest window): the
measured lead times and false-alarm rates are in docs/watch.md (benchmarks/forecast_replay.py,
benchmarks/forecast_eval.py)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuvet.backends.readings import Sample
from gpuvet.checks.blocks import ModuleBlock, Placed
from gpuvet.watch import forecast_text as text
from gpuvet.watch.events import Event, Severity
from gpuvet.watch.forecast_decide import Evidence, ForecastStatus, Lack, decide, lack_of, significant, state_of
from gpuvet.watch.forecast_fit import (
    CommonFit,
    Forecast,
    Step,
    find_step,
    fit_common,
    heavy_load,
    learn_offsets,
    leave_one_out,
    stepped_alike,
    theil_sen,
    trend,
    warm_inlet,
)
from gpuvet.watch.forecast_settings import (
    COMMON_R_TAU_S,
    HOUR,
    LAG_S,
    OFFSET_TAU_S,
    SETTLE_TOL,
    STEP_HOURS,
    THERMAL_BITS,
    ForecastSettings,
)
from gpuvet.watch.forecast_text import fixes_of

__all__ = ["HOUR", "Forecast", "ForecastSettings", "ForecastStatus", "ThermalForecaster", "WindowStat", "decide",
           "fixes_of", "theil_sen"]

FloatArray = npt.NDArray[np.float64]


class _Window:
    """Running sums of one module's samples in one window (no per-sample lists: a replay feeds
    millions of samples)."""

    __slots__ = ("n", "temp", "power", "power_sq", "util", "n_util", "ref", "n_ref", "hot", "peak")

    def __init__(self) -> None:
        self.n = self.n_util = self.n_ref = 0
        self.temp = self.power = self.power_sq = self.util = self.ref = self.peak = 0.0
        self.hot = False  # thermally throttled at some point: the temperature is held, R means nothing


@dataclass(frozen=True)
class WindowStat:
    t: float
    temp: float
    power: float
    ref: float | None  # inlet/coolant, where the source has it
    steady: bool  # usable: busy, power steady and settled, not throttled: R means something
    model: str | None = None
    loaded: bool = False  # busy and not throttled, though perhaps not steady (an inference load): the hourly tier
    peak: float | None = None  # the highest power through the thermal lag (``LAG_S``): what a minute-long peak heats


@dataclass
class _History:
    hours: list[float] = field(default_factory=list)  # hour index
    r: list[float] = field(default_factory=list)  # median R of that hour, less ``base``
    base: float = 0.0  # the node's common R the inlet estimate rests on (0 with an inlet reading)
    pending: dict[int, list[float]] = field(default_factory=dict)
    powers: list[float] = field(default_factory=list)
    refs: list[float] = field(default_factory=list)  # the inlet (read or estimated) of each usable window
    loaded: list[float] = field(default_factory=list)  # the lagged peak power of each busy window, steady or not
    bases: list[float] = field(default_factory=list)  # the common R each entry of ``refs`` was estimated with
    warned: bool = False
    withdrawn: bool = False  # warned once, then withdrawn (trend reversed, or a step down)
    windows: int = 0  # windows seen
    usable: int = 0  # of which busy and steady enough
    no_reference: int = 0  # usable, but no inlet reading and too few modules of its model to estimate one
    reference: str = ""  # how the inlet of the last R was formed
    resets: int = 0


class ThermalForecaster:
    """One node's modules. The inlet is read, or estimated jointly from the node's modules of the
    same model; mixed models never share a fit."""

    def __init__(self, slowdown_c: dict[str, float], horizon_s: float = 72 * HOUR, margin_s: float = 48 * HOUR,
                 window_s: float = 600.0, history_s: float = 4 * 86400.0, min_hours: int = 24, alpha: float = 0.90,
                 evaluate_every_s: float = 2 * HOUR, min_util: float = 0.35, max_power_cv: float = 0.15,
                 min_window_samples: int = 3, models: dict[str, str] | None = None,
                 settings: ForecastSettings | None = None) -> None:
        self.slowdown_c = slowdown_c
        self.settings = settings or ForecastSettings(alpha=alpha, margin_s=margin_s)
        self.horizon_s, self.window_s, self.history_s = horizon_s, window_s, history_s
        self.min_hours, self.evaluate_every_s = min_hours, evaluate_every_s
        self.min_util, self.max_power_cv, self.min_window_samples = min_util, max_power_cv, min_window_samples
        self.models = models or {}
        # how the user gives a slowdown point the catalog and the data lack (the replay: --slowdown-c), named
        # in the status of every module missing one
        self.slowdown_fix = ""
        self.tap: list[dict[str, WindowStat]] | None = None  # set to a list to keep every window (a backtest's sweep)
        self.on_evaluate: Callable[[str, float], None] | None = None  # a backtest's judges, instead of _evaluate
        self._windows: dict[int, dict[str, _Window]] = {}
        self._lowest: float = math.inf  # the earliest window still open
        self._hist: dict[str, _History] = defaultdict(_History)
        self._last_eval: dict[str, float] = {}
        self._peak_w: dict[str, float] = {}
        self._previous: dict[str, tuple[int, float]] = {}  # module -> (window index, mean power)
        self._lagged: dict[str, tuple[float, float]] = {}  # module -> (time, power through the thermal lag)
        self._unpowered: dict[str, int] = {}  # module -> samples with a temperature but no power reading
        self._offset: dict[str, float] = {}  # °C of T − R·P over the other modules', learnt slowly
        self._groups: dict[str | None, CommonFit] = defaultdict(CommonFit)
        self._hour: int | None = None  # the hour the hourly tier is summing
        self._acc: dict[str, list[float]] = {}  # module -> [loaded windows, steady windows, Σ T, Σ P, Σ inlet, n inlet]
        self.uuids: dict[str, str] = {}

    @property
    def alpha(self) -> float:
        return self.settings.alpha

    @property
    def margin_s(self) -> float:
        return self.settings.margin_s

    # --- feeding -----------------------------------------------------------------------
    def observe(self, s: Sample) -> list[Event]:
        """Samples as they come; closes windows as time passes. Returns events."""
        temp, power = s.temp_c, s.power_w
        if temp is None or power is None:
            if temp is not None:
                self._unpowered[s.module] = self._unpowered.get(s.module, 0) + 1
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
        # the power through a first-order lag: an inference load's minute-long peaks heat the module
        # about this much, where a window's mean averages them away
        last = self._lagged.get(module)
        lagged = power if last is None else \
            last[1] + (power - last[1]) * -math.expm1(-max(s.t - last[0], 0.0) / LAG_S)
        self._lagged[module] = (s.t, lagged)
        if lagged > w.peak:
            w.peak = lagged
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

    def observe_blocks(self, blocks: Sequence[ModuleBlock], slot: int = 600) -> list[Placed] | None:
        """The node's samples a module at a time (``ModuleBlock``, stream positions in ``rows``), summed
        into their windows in numpy; windows close where the first sample of a later one comes, as
        ``observe`` closes them, and their events are placed there. None (nothing read) when a
        sample goes back before a window still open: the caller feeds those one by one."""
        parts = [p for p in (self._valid(b) for b in blocks) if p is not None]
        if not parts:
            self._count_unpowered(blocks)
            return []
        cols = [np.concatenate(c) for c in zip(*(p[1:] for p in parts), strict=True)]
        rows, index = cols[0].astype(np.int64), cols[1].astype(np.int64)
        if self._windows and int(index.min()) < max(self._windows):
            return None
        self._count_unpowered(blocks)
        for p in parts:
            self.uuids.setdefault(p[0].module, p[0].uuid)
        who = np.concatenate([np.full(len(p[1]), k, dtype=np.int64) for k, p in enumerate(parts)])
        order = np.lexsort((rows, who, index))
        rows, index, who = rows[order], index[order], who[order]
        temp, power, util, ref, hot, lagged = (c[order] for c in cols[2:])
        starts = np.flatnonzero(np.concatenate(([True], (index[1:] != index[:-1]) | (who[1:] != who[:-1]))))
        names = [p[0].module for p in parts]
        held = [self._windows.get(i, {}).get(names[k]) for i, k in zip(index[starts].tolist(), who[starts].tolist(),
                                                                          strict=True)]
        sums = [_running(x, starts, [0.0 if w is None else getattr(w, a) for w in held])
                for x, a in ((temp, "temp"), (power, "power"), (power * power, "power_sq"),
                             (np.nan_to_num(util), "util"), (np.nan_to_num(ref), "ref"))]
        counts = [np.add.reduceat(x, starts) for x in (np.ones(len(rows), dtype=np.int64), ~np.isnan(util),
                                                       ~np.isnan(ref), hot)]
        first = np.minimum.reduceat(rows, starts)
        peak = np.maximum.reduceat(lagged, starts)
        groups = sorted(zip(index[starts].tolist(), first.tolist(), range(len(starts)), strict=True))
        return self._add_groups(groups, names, who[starts].tolist(), sums, counts, peak, slot)

    def _add_groups(self, groups: list[tuple[int, int, int]], names: list[str], who: list[int],
                    sums: list[FloatArray], counts: list[npt.NDArray[np.int64]], peak: FloatArray,
                    slot: int) -> list[Placed]:
        """Each window's module sums in stream order; older windows closed at a later one's first sample."""
        out: list[Placed] = []
        temp, power, power_sq, util, ref = (x.tolist() for x in sums)
        n, n_util, n_ref, hot = (x.tolist() for x in counts)
        peaks = peak.tolist()
        for index, row, g in groups:
            windows = self._windows.get(index)
            if windows is None:
                older = sorted(i for i in self._windows if i < index)
                for k, e in enumerate(e for old in older for e in self._close(old)):
                    out.append((row, slot + k, e))
                windows = self._windows[index] = {}
            m = names[who[g]]
            w = windows.get(m)
            if w is None:
                w = windows[m] = _Window()
            w.n += n[g]
            w.temp = temp[g]
            w.power = power[g]
            w.power_sq = power_sq[g]
            w.util = util[g]
            w.n_util += n_util[g]
            w.ref = ref[g]
            w.n_ref += n_ref[g]
            w.hot = w.hot or hot[g] > 0
            w.peak = max(w.peak, peaks[g])
        if groups:
            self._lowest = min(self._windows)
        return out

    def _count_unpowered(self, blocks: Sequence[ModuleBlock]) -> None:
        for b in blocks:
            n = int((~np.isnan(b.array("temp")) & np.isnan(b.array("power"))).sum())
            if n:
                self._unpowered[b.module] = self._unpowered.get(b.module, 0) + n

    def _valid(self, b: ModuleBlock) -> tuple[ModuleBlock, FloatArray, FloatArray, FloatArray, FloatArray,
                                             FloatArray, FloatArray, FloatArray, FloatArray] | None:
        """A block's samples with a temperature and a power reading: rows, window, temp, power, util,
        inlet, thermally throttled, and the power through the thermal lag (carried between blocks)."""
        if not len(b):
            return None
        temp, power = b.array("temp"), b.array("power")
        ok = ~np.isnan(temp) & ~np.isnan(power)
        if not ok.any():
            return None
        t = np.asarray(b.t, dtype=np.float64)[ok]
        power = power[ok]
        util = b.array("util")[ok]
        ref = b.array("ambient")[ok] if b.ambient is not None else np.full(len(t), np.nan)
        hot = (np.asarray(b.throttle, dtype=np.int64)[ok] & THERMAL_BITS) != 0
        return (b, np.asarray(b.rows, dtype=np.float64)[ok], t // self.window_s, temp[ok], power, util, ref,
                hot.astype(np.float64), self._lag(b.module, t, power))

    def _lag(self, module: str, t: FloatArray, power: FloatArray) -> FloatArray:
        """The power through a first-order lag (``LAG_S``), sample by sample as ``observe`` takes it."""
        gain = -np.expm1(-np.maximum(np.diff(t, prepend=t[0]), 0.0) / LAG_S)
        last = self._lagged.get(module)
        if last is not None:
            gain[0] = -math.expm1(-max(float(t[0]) - last[0], 0.0) / LAG_S)
        out = power.tolist()
        level = out[0] if last is None else last[1] + (out[0] - last[1]) * float(gain[0])
        out[0] = level
        for i, (p, a) in enumerate(zip(out[1:], gain[1:].tolist(), strict=True), 1):
            level = out[i] = level + (p - level) * a
        self._lagged[module] = (float(t[-1]), level)
        return np.asarray(out)

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
            before = self._previous.get(module)
            self._previous[module] = (index, power)
            # a window of half an hour or more is mostly past any lag of minutes: settled by its length
            settled = self.window_s >= HOUR / 2 or (
                before is not None and before[0] == index - 1 and abs(before[1] - power) <= SETTLE_TOL * power)
            loaded = busy and not w.hot and n >= self.min_window_samples and power >= 0.3 * peak
            steady = loaded and settled and spread <= self.max_power_cv
            stats[module] = WindowStat(t, w.temp / n, power, w.ref / w.n_ref if w.n_ref else None, steady,
                                       self.models.get(module), loaded, w.peak)
        if self.tap is not None:
            self.tap.append(stats)
        return self.observe_windows(stats)

    def observe_windows(self, stats: dict[str, WindowStat]) -> list[Event]:
        """One aligned window for each module (all at the same time)."""
        if not stats:
            return []
        out: list[Event] = self._hourly(stats)
        inlets = self._inlets(stats)
        for module, w in stats.items():
            h = self._hist[module]
            h.windows += 1
            if w.loaded or w.steady:
                h.loaded.append(w.power if w.peak is None else max(w.peak, w.power))
                del h.loaded[:-1000]
            if not w.steady:
                continue
            h.usable += 1
            inlet = inlets.get(module)
            if inlet is None:
                h.no_reference += 1
                continue
            self._record(module, w, inlet, w.t, out)
        self._learn(stats, self.window_s)
        return out

    def _record(self, module: str, w: WindowStat, inlet: tuple[float, str, float], now: float,
                out: list[Event]) -> None:
        """One R value for its hour; hours before ``now``'s are closed (step check), then the
        trend is judged every ``evaluate_every_s``."""
        h = self._hist[module]
        ref, h.reference, h.base = inlet
        h.pending.setdefault(int(w.t // HOUR), []).append((w.temp - ref) / w.power - h.base)
        h.powers.append(w.power)
        h.refs.append(ref)
        h.bases.append(h.base)
        del h.powers[:-1000], h.refs[:-1000], h.bases[:-1000]
        done = [k for k in h.pending if k < int(now // HOUR)]
        for k in sorted(done):
            h.hours.append(float(k))
            h.r.append(statistics.median(h.pending.pop(k)))
            reset = self._step(module, h, now)
            if reset:
                out.append(reset)
        keep = int(self.history_s // HOUR)
        del h.hours[:-keep], h.r[:-keep]
        if now - self._last_eval.get(module, -1e18) >= self.evaluate_every_s:
            self._last_eval[module] = now
            if self.on_evaluate is not None:
                self.on_evaluate(module, now)
                return
            event = self._evaluate(module, now)
            if event:
                out.append(event)

    def _hourly(self, stats: dict[str, WindowStat]) -> list[Event]:
        """The hourly tier, for a load that never holds still (inference): a module busy most of
        an hour without one steady window gets one R from the hour's means, against an inlet
        estimated from the hour's means of the node's modules. Over an hour the lag after load
        changes is a small share of the mean (τ of minutes against 60), where a 10-minute window
        would be all lag. Sums the windows of the current hour; closes the previous one."""
        if self.window_s * 4 > HOUR:
            return []  # coarse windows: an hour holds too few of them
        hour = int(next(iter(stats.values())).t // HOUR)
        out: list[Event] = []
        if self._hour is not None and hour != self._hour:
            out = self._close_hour(self._hour)
        self._hour = hour
        for m, x in stats.items():
            if not (x.loaded or x.steady):
                continue
            a = self._acc.setdefault(m, [0.0] * 6)
            a[0] += 1
            a[1] += x.steady
            a[2] += x.temp
            a[3] += x.power
            if x.ref is not None:
                a[4] += x.ref
                a[5] += 1
        return out

    def _close_hour(self, hour: int) -> list[Event]:
        acc, self._acc = self._acc, {}
        need = max(3, int(0.8 * HOUR / self.window_s))
        t = hour * HOUR + HOUR / 2
        means = {m: WindowStat(t, a[2] / a[0], a[3] / a[0], a[4] / a[5] if a[5] else None, True, self.models.get(m))
                 for m, a in acc.items() if a[0] >= need}
        if not means:
            return []
        out: list[Event] = []
        inlets = self._inlets(means)
        unsteady = {m: x for m, x in means.items() if acc[m][1] == 0}
        for m, x in unsteady.items():
            inlet = inlets.get(m)
            if inlet is not None:
                self._hist[m].usable += 1
                self._record(m, x, inlet, (hour + 1) * HOUR, out)
        if len(unsteady) >= 3:
            self._learn(unsteady, HOUR)
        return out

    def _members(self, stats: dict[str, WindowStat]) -> dict[str | None, list[str]]:
        """The usable modules without an inlet reading, by model: the ones an inlet is estimated from."""
        groups: dict[str | None, list[str]] = defaultdict(list)
        for m, x in stats.items():
            if x.steady and x.ref is None and x.power > 0:
                groups[x.model].append(m)
        return groups

    def _inlets(self, stats: dict[str, WindowStat]) -> dict[str, tuple[float, str, float]]:
        """Each usable module's inlet in this window and how it was formed: the reading, or the
        median over the other modules of its model of T − R·P − their usual offset (R: the
        common fit; the offset: each module's own R and sensor differences, learnt over days).
        A module's own temperature never enters its own inlet, nor does a warned module's (its
        creep would leak into the others); none with fewer than two others at the start.
        The third figure is the common R the estimate rests on (0 with a reading): the trend is
        fitted to each module's R less it, so the common R's own wobble cancels."""
        out = {m: (x.ref, text.READ_INLET, 0.0) for m, x in stats.items() if x.steady and x.ref is not None}
        offsets = self._offset
        for model, members in self._members(stats).items():
            if len(members) < 3:
                continue
            r = self._groups[model].r
            bases = [stats[m].temp - r * stats[m].power - offsets.get(m, 0.0) for m in members]
            trusted = [not self._hist[m].warned for m in members]  # a creeping module is nobody's inlet
            for m, inlet in zip(members, leave_one_out(bases, trusted), strict=True):
                if inlet is not None:
                    out[m] = (inlet[0], text.inlet_how(inlet[1], len(members) - 1 - inlet[1], model, r), r)
        return out

    def _learn(self, stats: dict[str, WindowStat], span_s: float) -> None:
        """The common R from how the modules' powers and temperatures differ in the same window
        (the inlet is the same for all: it cancels), and each module's usual offset of T − R·P
        over the others. A creeping module is one of many in the fit and one outlier to the
        median; a peer that drops out moves the others' inlet by noise, not by its offset."""
        decay_r = math.exp(-span_s / COMMON_R_TAU_S)
        rate = min(span_s / OFFSET_TAU_S, 1.0)
        offsets = self._offset
        for model, members in self._members(stats).items():
            if len(members) < 3:
                continue
            g = self._groups[model]
            sums = fit_common(g.sxy, g.sxx, [stats[m].power for m in members],
                              [stats[m].temp - offsets.get(m, 0.0) for m in members], decay_r)
            if sums is not None:
                g.sxy, g.sxx = sums
                g.windows += 1
            r = g.r
            learnt = learn_offsets([stats[m].temp - r * stats[m].power for m in members],
                                   [offsets.get(m) for m in members], rate)
            offsets.update(zip(members, learnt, strict=True))

    def _step(self, module: str, h: _History, now: float) -> Event | None:
        """A level step in R (``forecast_fit.find_step``) restarts the trend from the step, unless
        the other modules of its model stepped alike (their inlet estimate moved, not it)."""
        step = find_step(h.hours, h.r, h.powers, self.settings.step_min_c)
        if step is None or self._shared(module, step):
            return None
        k = STEP_HOURS
        del h.hours[:-k], h.r[:-k]
        h.resets += 1
        jump, noise = step.jump, step.noise
        withdrawn = h.warned and jump < 0
        if withdrawn:
            h.warned, h.withdrawn = False, True
        return Event("overheat_forecast_withdrawn" if withdrawn else "forecast_reset", Severity.INFO, module, now,
                     text.stepped(jump, noise, abs(jump) * statistics.median(h.powers[-200:]), k, withdrawn),
                     {"step_c_per_w": jump, "noise_c_per_w": noise, "reference": h.reference, "trend_reset": True},
                     uuid=self.uuids.get(module))

    def _shared(self, module: str, step: Step) -> bool:
        """Whether the other modules of ``module``'s model without an inlet reading stepped alike
        (``forecast_fit.stepped_alike``); never with an inlet reading: nothing shared to move."""
        if self._hist[module].base == 0.0:
            return False
        model = self.models.get(module)
        return stepped_alike(((h.hours, h.r) for m, h in self._hist.items()
                              if m != module and self.models.get(m) == model and h.base != 0.0), step)

    def missing(self, module: str) -> str | None:
        """What ``module``'s readings lack for the forecast, which takes a sample only with a
        temperature and a power reading together; None when it has had such samples."""
        if module in self.uuids or (module in self._hist and self._hist[module].windows):
            return None
        if self._unpowered.get(module):
            return text.no_power(self._unpowered[module])
        return text.NO_TEMPERATURE

    def status(self, module: str, now: float) -> ForecastStatus:
        """What the forecast knows of ``module`` and what it rests on, or what it needed and did
        not get."""
        h = self._hist.get(module, _History())
        hours = len(h.r)
        lack = lack_of(Evidence(self.missing(module) is None, self._unpowered.get(module, 0), module in self.slowdown_c,
                                h.windows, h.usable, h.no_reference, hours, h.resets,
                                h.windows * self.window_s / HOUR), self.min_hours)
        f = None if lack else self.forecast(module, now)
        if f is None:
            fix = self.slowdown_fix if lack and lack.kind == "no_slowdown" else ""
            return ForecastStatus(module, "insufficient", text.lack_reason(lack or Lack("no_trend"), self.min_hours,
                                                                           self.min_util, self.max_power_cv, fix),
                                  h.reference, hours, fix=fix)
        sure = significant(f, self.settings.min_rise_c)
        state = state_of(h.warned, h.withdrawn)
        return ForecastStatus(module, state, text.state_reason(state, f, sure), h.reference, hours, f.r_now,
                              f.slope_per_day, (f.slope_low, f.slope_high), f.inlet_c, f.power_w, f.span_days,
                              f.crossing if sure else None, self._confidence(f))

    def _confidence(self, f: Forecast) -> str:
        return text.confidence(f, self.alpha, self.settings.min_rise_c)

    # --- judging -----------------------------------------------------------------------
    def forecast(self, module: str, now: float, alpha: float | None = None) -> Forecast | None:
        """The trend over the whole history, or over the last two days when that predicts an
        earlier crossing, at a heavy job's power on a warm day (``forecast_fit.trend``).
        ``alpha``: the interval's confidence, when not the settings' (a backtest's sweep)."""
        h = self._hist.get(module)
        if h is None or len(h.r) < self.min_hours or module not in self.slowdown_c:
            return None
        return trend(module, h.hours, h.r, h.base, now, self.slowdown_c[module], heavy_load(h.powers, h.loaded),
                     warm_inlet(h.refs, h.bases, h.powers, h.base), self.alpha if alpha is None else alpha)

    def _evaluate(self, module: str, now: float) -> Event | None:
        f = self.forecast(module, now)
        h = self._hist[module]
        if f is None:
            return None
        action = decide(f, h.warned, self.settings, self.horizon_s, now)
        if action == "raise":
            assert f.crossing is not None
            h.warned, h.withdrawn = True, False
            return Event("overheat_forecast", Severity.WARN, module, now,
                         text.overheat(f, self.slowdown_c[module], now, self._confidence(f)),
                         {"slope_c_per_w_per_day": f.slope_per_day, "slope_interval": [f.slope_low, f.slope_high],
                          "r_now": f.r_now, "r_crit": f.r_crit, "earliest": f.earliest, "latest": f.latest,
                          "reference": h.reference, "reference_c": h.refs[-1] if h.refs else None,
                          "inlet_c": f.inlet_c, "power_w": f.power_w, "span_days": f.span_days,
                          "confidence": self._confidence(f), "hours": len(h.r)},
                         predicted_crossing=f.crossing if f.crossing is not None else f.earliest,
                         uuid=self.uuids.get(module))
        if action == "withdraw":
            h.warned, h.withdrawn = False, True
            return Event("overheat_forecast_withdrawn", Severity.INFO, module, now,
                         text.WITHDRAWN,
                         {"slope_c_per_w_per_day": f.slope_per_day, "slope_interval": [f.slope_low, f.slope_high],
                          "reference": h.reference},
                         uuid=self.uuids.get(module))
        return None


def _running(values: FloatArray, starts: npt.NDArray[np.intp], held: list[float]) -> FloatArray:
    """Each group's sum taken left to right after what its window held, as ``observe`` adds sample
    by sample (numpy's own sum pairs terms: the last bit would differ, and a pinned result with it)."""
    sizes = np.diff(np.append(starts, len(values)))
    grid = np.zeros((len(starts), int(sizes.max()) + 1))
    grid[:, 0] = held
    group = np.repeat(np.arange(len(starts)), sizes)
    grid[group, np.arange(len(values)) - starts[group] + 1] = values
    return np.cumsum(grid, axis=1)[:, -1]
