"""The thermal forecast's thresholds in one place: what the windows, the fit, the step rule and
the decision are tuned by, so changing a default is one edit (``gpuvet.watch.forecast`` explains
what each stands for)."""

from __future__ import annotations

from dataclasses import dataclass

HOUR = 3600.0
THERMAL_BITS = 0x20 | 0x40  # sw/hw thermal slowdown: the module already reached its slowdown point
STEP_HOURS = 6  # hours either side of a level step (maintenance) that resets the trend
RECENT_HOURS = 48  # the shorter trend, for a creep that started inside the history
STEP_NOISE = 12.0  # a step must stand this many times the hour-to-hour noise clear: statistically beyond doubt
STEP_MIN_C = 2.5  # °C at the module's usual load: what new paste or a re-seat changes, above rounding and noise
MIN_RISE_C = 1.0  # a trend must already have moved the temperature at load this much to be believed
SETTLE_TOL = 0.08  # power within 8 % of the window before: the lag after a load change is over
OFFSET_TAU_S = 2 * 86400.0  # how slowly a module's usual offset over the others is learnt
COMMON_R_TAU_S = 4 * 86400.0  # how slowly the node's common R (the cross-module fit) forgets
PRIOR_R = 0.05  # °C/W: where the common R starts before the modules' powers have differed (weight below)
PRIOR_WEIGHT_W2 = 2000.0  # about one window of 8 modules 16 W apart: the data outweighs it within the hour
LAG_S = 120.0  # the short end of a module's thermal lag ("a few minutes"): the power its temperature follows


@dataclass(frozen=True)
class ForecastSettings:
    """The thresholds a backtest sweeps: how sure (``alpha``), how early (``margin_s`` beyond the
    horizon), how much rise already seen (``min_rise_c``), and what counts as a step."""

    alpha: float = 0.90
    margin_s: float = 96 * HOUR  # from the pooled backtest sweeps (docs/watch.md, benchmarks/forecast_pooled.py)
    min_rise_c: float = MIN_RISE_C
    step_min_c: float = STEP_MIN_C

    def label(self) -> str:
        return (f"alpha {self.alpha:.2f}, margin {self.margin_s / HOUR:.0f} h, min rise {self.min_rise_c:g} °C, "
                f"step {self.step_min_c:g} °C")
