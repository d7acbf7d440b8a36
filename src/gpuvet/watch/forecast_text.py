"""Every sentence the thermal forecast says to a person, in one place: why a module has no
forecast, why a trend is or is not believed, how an inlet was formed, and the words of its
events. The forecaster decides with numbers and codes; these turn them into the ``reason``,
``confidence`` and event messages that the logbook, ``--json`` and the renderers carry."""

from __future__ import annotations

import math
from collections.abc import Sequence

from gpuvet.watch.forecast_decide import ForecastStatus, Lack
from gpuvet.watch.forecast_fit import Forecast
from gpuvet.watch.forecast_settings import HOUR, SETTLE_TOL

NO_TEMPERATURE = "no temperature readings (no temperature.gpu column, or every cell of it empty)"
READ_INLET = "inlet/coolant reading"
WITHDRAWN = "the temperature trend no longer points at the slowdown point"
STATE_REASONS = {"warned": "overheat_forecast raised", "withdrawn": "warned, then the trend reversed or stepped down"}


def no_power(unpowered: int) -> str:
    """A module read with temperatures and never a power reading."""
    return f"no power readings ({unpowered} samples with a temperature, none with power.draw)"


def lack_reason(lack: Lack, min_hours: int, min_util: float, max_power_cv: float, fix: str = "") -> str:
    """Why a module has no forecast, with the thresholds it fell short of (``fix``: how the user
    gives the slowdown point the catalog and the data lack)."""
    if lack.kind == "no_temperature":
        # a slowdown point would not help: there is no temperature to forecast (a log without temperature.gpu)
        return NO_TEMPERATURE + ": the forecast needs each module's temperature and power"
    if lack.kind == "no_slowdown":
        return "no slowdown temperature for its model (not in the catalog, not in the data)" + (f": {fix}" if fix else "")
    if lack.kind == "no_power":
        return no_power(int(lack.seen)) + ": the forecast needs each module's power"
    if lack.kind == "short_recording":
        return f"too short a history: {lack.seen:.1f} h recorded, needs {min_hours} h"
    if lack.kind == "no_steady":
        return (f"no steady-load windows: none of {int(lack.seen)} windows had utilisation >= {min_util:.0%} with "
                f"power steady within {max_power_cv:.0%} and settled (within {SETTLE_TOL:.0%} of the window before)")
    if lack.kind == "no_inlet":
        return ("no inlet/coolant reading and fewer than two other modules of the same model under steady load at the "
                "same time to estimate one")
    if lack.kind == "short_trend":
        return (f"too short a history: {int(lack.seen)} h of steady-load windows"
                + (" since the last step change" if lack.since_step else "") + f", needs {min_hours} h")
    return "no trend"


def state_reason(state: str, f: Forecast, significant: bool) -> str:
    """Why a module with a trend is warned, withdrawn or only watched."""
    if state in STATE_REASONS:
        return STATE_REASONS[state]
    if significant:
        return f"trend {f.slope_per_day:+.5f} °C/W per day; no crossing within the horizon"
    if f.slope_high < 0:  # the whole interval below zero: falling, not "includes zero" (review finding)
        return f"trend {f.slope_per_day:+.5f} °C/W per day; falling (cooling): no forecast of a crossing"
    return (f"trend {f.slope_per_day:+.5f} °C/W per day; "
            "not significant (its interval includes zero, or less rise than needed so far): no forecast")


def confidence(f: Forecast, alpha: float, min_rise_c: float) -> str:
    """Why the trend is (or is not) believed, in words."""
    rise = f.slope_low * f.span_days * f.power_w
    interval = (f"the slope's {alpha:.0%} interval [{f.slope_low:+.5f}, {f.slope_high:+.5f}] °C/W per day "
                f"from {f.hours} hourly values over {f.span_days:.1f} d")
    if f.slope_high < 0:  # every slope the interval allows is falling: the module is cooling
        return interval + " is below zero: cooling, no forecast of a crossing"
    if f.slope_low <= 0:
        return interval + " includes zero"
    return interval + (f" excludes zero; at least {rise:.1f} °C of rise at {f.power_w:.0f} W already "
                       f"(needs {min_rise_c:g} °C)")


def inlet_how(used: int, warned: int, model: str | None, r: float) -> str:
    """How an estimated inlet was formed, counting the modules it really rests on."""
    return (f"no inlet/coolant reading: estimated from the node's {used} other {model or 'same-model'} "
            f"modules at once (T − {r:.4f} °C/W × their own power, less their usual offset; median)"
            + (f"; {warned} warned module(s) left out" if warned else ""))


def _hours(t: float | None, now: float) -> str:
    if t is None or math.isinf(t):
        return "never"
    return f"{(t - now) / HOUR:.0f} h"


def overheat(f: Forecast, slowdown_c: float, now: float, why: str) -> str:
    """The warning: when, at what load and inlet, on what R and trend, and why it is believed."""
    return (f"at {f.power_w:.0f} W over a {f.inlet_c:.1f} °C inlet it reaches "
            f"{slowdown_c:.1f} °C in about {_hours(f.crossing, now)} (between "
            f"{_hours(f.earliest, now)} and {_hours(f.latest, now)}): R {f.r_now:.4f} °C/W now, "
            f"rising {f.slope_per_day:+.5f} °C/W per day ({why})")


def stepped(jump: float, noise: float, at_load_c: float, held_h: int, withdrawn: bool) -> str:
    """A level step that restarts the trend, and what it likely was."""
    return (f"thermal resistance stepped {'down' if jump < 0 else 'up'} by {abs(jump):.4f} °C/W "
            f"({at_load_c:.1f} °C at load, "
            + (f"{abs(jump) / noise:.0f}× the hour-to-hour noise" if noise > 0 else "above a noiseless hour")
            + f", held for {held_h} h: maintenance, re-seating, a fan change?): the trend restarts "
            "from here" + ("; the earlier overheating forecast is withdrawn" if withdrawn else ""))


def fixes_of(statuses: Sequence[ForecastStatus]) -> str:
    """What the summary's count of modules without enough data adds, as their reasons end: the
    fix the user can give (``--slowdown-c C``) and for how many, e.g. `` (2 of them: give …)``."""
    insufficient = [f for f in statuses if f.state == "insufficient"]
    fixes: dict[str, int] = {}
    for f in insufficient:
        if f.fix:
            fixes[f.fix] = fixes.get(f.fix, 0) + 1
    if not fixes:
        return ""
    return " (" + "; ".join(f"{'all' if n == len(insufficient) > 1 else n} of them: {fix}"
                            if len(insufficient) > 1 else fix for fix, n in fixes.items()) + ")"
