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

The margin (96 h by default, chosen from the pooled backtest sweeps: docs/watch.md) makes the
warning land at least ``horizon`` ahead despite forecast
error (a node's inlet may still rise; the first crossing comes in the hottest window): the
measured lead times and false-alarm rates are in docs/watch.md (benchmarks/forecast_replay.py,
benchmarks/forecast_eval.py).

This module is the coordinator and keeps the public API; the parts each have one job:
``forecast_windows`` (samples into windows and hours, as data), ``forecast_inlet`` (the inlet,
read or estimated), ``forecast_fit`` (the arithmetic, pure functions), ``forecast_decide`` (raise,
withdraw, what a module lacks), ``forecast_text`` (every sentence it says) and
``forecast_settings`` (the thresholds)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gpuvet.backends.readings import Sample
from gpuvet.checks.blocks import ModuleBlock, Placed
from gpuvet.watch import forecast_text as text
from gpuvet.watch.events import Event, Severity
from gpuvet.watch.forecast_decide import Evidence, ForecastStatus, Lack, decide, lack_of, significant, state_of
from gpuvet.watch.forecast_fit import (
    Forecast,
    Ranked,
    Step,
    Tail,
    find_step,
    heavy_load_ranked,
    stepped_alike,
    theil_sen,
    trend,
    warm_inlet,
)
from gpuvet.watch.forecast_inlet import Inlet, NodeInlet
from gpuvet.watch.forecast_settings import HOUR, STEP_HOURS, ForecastSettings
from gpuvet.watch.forecast_text import fixes_of
from gpuvet.watch.forecast_windows import HourlyTier, WindowBook, WindowStat

__all__ = ["HOUR", "Forecast", "ForecastSettings", "ForecastStatus", "ThermalForecaster", "WindowStat", "decide",
           "fixes_of", "theil_sen"]

@dataclass
class _History:
    hours: list[float] = field(default_factory=list)  # hour index
    r: list[float] = field(default_factory=list)  # median R of that hour, less ``base``
    base: float = 0.0  # the node's common R the inlet estimate rests on (0 with an inlet reading)
    pending: dict[int, list[float]] = field(default_factory=dict)
    powers: list[float] = field(default_factory=list)
    refs: list[float] = field(default_factory=list)  # the inlet (read or estimated) of each usable window
    loaded: list[float] = field(default_factory=list)  # the lagged peak power of each busy window, steady or not
    # ``powers`` (all 1000 and the last day's 144) and ``loaded`` kept in order too: the heavy load's ranks
    ranked_powers: Ranked = field(default_factory=lambda: Ranked(1000))
    ranked_day: Ranked = field(default_factory=lambda: Ranked(144))
    ranked_loaded: Ranked = field(default_factory=lambda: Ranked(1000))
    # ``refs``, the common R each was estimated with and ``powers`` as arrays, for the warm inlet
    tails: tuple[Tail, Tail, Tail] = field(default_factory=lambda: (Tail(1000), Tail(1000), Tail(1000)))
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

    def __init__(self, slowdown_c: dict[str, float], horizon_s: float = 72 * HOUR, margin_s: float | None = None,
                 window_s: float = 600.0, history_s: float = 4 * 86400.0, min_hours: int = 24, alpha: float = 0.90,
                 evaluate_every_s: float = 2 * HOUR, min_util: float = 0.35, max_power_cv: float = 0.15,
                 min_window_samples: int = 3, models: dict[str, str] | None = None,
                 settings: ForecastSettings | None = None) -> None:
        self.slowdown_c = slowdown_c
        self.settings = settings or ForecastSettings(alpha=alpha, margin_s=ForecastSettings().margin_s if margin_s is None
                                                     else margin_s)
        self.horizon_s, self.window_s, self.history_s = horizon_s, window_s, history_s
        self.min_hours, self.evaluate_every_s = min_hours, evaluate_every_s
        self.min_util, self.max_power_cv, self.min_window_samples = min_util, max_power_cv, min_window_samples
        self.models = models or {}
        # how the user gives a slowdown point the catalog and the data lack (the replay: --slowdown-c), named
        # in the status of every module missing one
        self.slowdown_fix = ""
        self.tap: list[dict[str, WindowStat]] | None = None  # set to a list to keep every window (a backtest's sweep)
        self.on_evaluate: Callable[[str, float], None] | None = None  # a backtest's judges, instead of _evaluate
        self._book = WindowBook(window_s, min_util, max_power_cv, min_window_samples, self.models, self._closed)
        self._hourly_tier = HourlyTier(window_s, self.models)
        self._inlet = NodeInlet()
        self._hist: dict[str, _History] = defaultdict(_History)
        self._last_eval: dict[str, float] = {}
        self.uuids = self._book.uuids  # module -> its UUID, for the modules read with a temperature and a power
        self._unpowered = self._book.unpowered  # module -> samples with a temperature but no power reading

    @property
    def alpha(self) -> float:
        return self.settings.alpha

    @property
    def margin_s(self) -> float:
        return self.settings.margin_s

    # --- feeding -----------------------------------------------------------------------
    def observe(self, s: Sample) -> list[Event]:
        """Samples as they come; closes windows as time passes. Returns events."""
        return self._book.observe(s)

    def observe_blocks(self, blocks: Sequence[ModuleBlock], slot: int = 600) -> list[Placed] | None:
        """The node's samples a module at a time, summed into their windows in numpy
        (``WindowBook.observe_blocks``); None when the caller must feed them one by one."""
        return self._book.observe_blocks(blocks, slot)

    def flush(self) -> list[Event]:
        """Close the windows still open (end of a replay)."""
        return self._book.flush()

    def _closed(self, stats: dict[str, WindowStat]) -> list[Event]:
        if self.tap is not None:
            self.tap.append(stats)
        return self.observe_windows(stats)

    def observe_windows(self, stats: dict[str, WindowStat]) -> list[Event]:
        """One aligned window for each module (all at the same time)."""
        if not stats:
            return []
        out: list[Event] = self._hourly(stats)
        inlets = self._inlet.inlets(stats, self._warned)
        hist = self._hist
        for module, w in stats.items():
            h = hist[module]
            h.windows += 1
            if w.loaded or w.steady:
                peak = w.power if w.peak is None or w.power > w.peak else w.peak  # max(peak, power)
                h.loaded.append(peak)
                h.ranked_loaded.add(peak)
                if len(h.loaded) > 2000:  # trimmed a thousand at a time: only its last is read
                    del h.loaded[:-1000]
            if not w.steady:
                continue
            h.usable += 1
            inlet = inlets.get(module)
            if inlet is None:
                h.no_reference += 1
                continue
            self._record(h, module, w, inlet, w.t, out)
        self._inlet.learn(stats, self.window_s)
        return out

    def _warned(self, module: str) -> bool:
        return self._hist[module].warned

    def _record(self, h: _History, module: str, w: WindowStat, inlet: Inlet, now: float,
                out: list[Event]) -> None:
        """One R value for its hour (``h``: ``module``'s history); hours before ``now``'s are closed
        (step check), then the trend is judged every ``evaluate_every_s``."""
        ref, h.reference, base = inlet
        h.base, power = base, w.power
        pending, hour = h.pending, int(now // HOUR)
        pending.setdefault(int(w.t // HOUR), []).append((w.temp - ref) / power - base)
        h.ranked_powers.add(power)
        h.ranked_day.add(power)
        refs, bases, powers = h.tails
        refs.add(ref)
        bases.add(base)
        powers.add(power)
        kept, refs_kept = h.powers, h.refs
        kept.append(power)
        refs_kept.append(ref)
        if len(kept) > 2000:  # trimmed a thousand at a time: only their last 200 are read
            del kept[:-1000], refs_kept[:-1000]
        done = [k for k in pending if k < hour] if len(pending) > 1 or hour not in pending else []
        if done:  # hours only grow here: trimmed to the history as they close
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
        """The hourly tier (``HourlyTier``): when an hour closes, each module loaded for most of it
        without one steady window gets one R from the hour's means, against an inlet estimated
        from the hour's means of the node's modules."""
        closed = self._hourly_tier.add(stats)
        if closed is None:
            return []
        out: list[Event] = []
        inlets = self._inlet.inlets(closed.means, self._warned)
        for m, x in closed.unsteady.items():
            inlet = inlets.get(m)
            if inlet is not None:
                h = self._hist[m]
                h.usable += 1
                self._record(h, m, x, inlet, (closed.hour + 1) * HOUR, out)
        if len(closed.unsteady) >= 3:
            self._inlet.learn(closed.unsteady, HOUR)
        return out

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

    def last_power(self, module: str) -> float:
        """The power of ``module``'s last usable window (0 before one): what doctor's trend reads."""
        h = self._hist.get(module)
        return h.powers[-1] if h is not None and h.powers else 0.0

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
        heavy = heavy_load_ranked(h.ranked_powers, h.ranked_day, h.ranked_loaded)
        refs, bases, powers = h.tails
        return trend(module, h.hours, h.r, h.base, now, self.slowdown_c[module], heavy,
                     warm_inlet(refs.view(), bases.view(), powers.view(), h.base), self.alpha if alpha is None else alpha)

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
