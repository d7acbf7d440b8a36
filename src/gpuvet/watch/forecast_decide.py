"""What the thermal forecast concludes for one module, apart from how it fitted and how it says
it: the one rule that raises or withdraws a warning (shared with a backtest's sweep), what a
module lacked when it has no forecast, and the state it is in (warned, withdrawn, watching,
insufficient). Codes and numbers only; ``forecast_text`` words them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpuvet.watch.forecast_fit import Forecast
from gpuvet.watch.forecast_settings import ForecastSettings


def decide(f: Forecast, warned: bool, settings: ForecastSettings, horizon_s: float, now: float) -> str | None:
    """The one rule, for the forecaster and a backtest's sweep alike: "raise" when the rise is
    significant (the interval excludes zero), already worth ``min_rise_c`` at load and the
    crossing is within the horizon plus the margin; "withdraw" a warning whose trend no longer
    points at the slowdown point; else None."""
    shown_c = f.slope_low * f.span_days * f.power_w
    rising = f.slope_low > 0 and f.earliest is not None and shown_c >= settings.min_rise_c
    if rising and not warned and f.crossing is not None and f.crossing - now <= horizon_s + settings.margin_s:
        return "raise"
    if warned and (f.slope_high <= 0 or f.earliest is None or f.earliest - now > 2 * (horizon_s + settings.margin_s)):
        return "withdraw"
    return None


@dataclass(frozen=True)
class Evidence:
    """What one module's history holds, as the decision reads it."""

    sampled: bool  # it had samples with a temperature and a power reading together
    unpowered: int  # samples with a temperature and no power reading
    slowdown: bool  # its slowdown temperature is known (catalog, data or the user)
    windows: int  # windows seen
    usable: int  # of which busy and steady enough
    no_reference: int  # usable, but without an inlet reading or an estimate
    hours: int  # hourly values of R in the trend
    resets: int  # level steps that restarted the trend
    recorded_h: float  # hours of windows recorded


LackKind = Literal["no_temperature", "no_slowdown", "no_power", "short_recording", "no_steady", "no_inlet",
                   "short_trend", "no_trend"]


@dataclass(frozen=True)
class Lack:
    """Why a module has no forecast. ``kind``: no_temperature, no_slowdown, no_power,
    short_recording, no_steady, no_inlet, short_trend or no_trend; ``seen``: how much it had
    (samples without power, hours recorded, windows, hourly values); ``since_step``: the short
    trend was cut by a level step."""

    kind: LackKind
    seen: float = 0.0
    since_step: bool = False


def lack_of(e: Evidence, min_hours: int) -> Lack | None:
    """The first thing the module lacks, in the order a user would supply it; None when it has
    enough for a trend."""
    if not e.sampled and not e.unpowered:
        return Lack("no_temperature")  # a slowdown point would not help: there is no temperature to forecast
    if not e.slowdown:
        return Lack("no_slowdown")
    if not e.windows and e.unpowered:
        return Lack("no_power", e.unpowered)
    if e.recorded_h < min_hours:
        return Lack("short_recording", e.recorded_h)
    if e.windows and not e.usable:
        return Lack("no_steady", e.windows)
    if e.usable and e.no_reference == e.usable:
        return Lack("no_inlet")
    if e.hours < min_hours:
        return Lack("short_trend", e.hours, e.resets > 0)
    return None


def significant(f: Forecast, min_rise_c: float) -> bool:
    """The trend is believed: its interval excludes zero and the rise at load is already worth
    ``min_rise_c``."""
    return f.slope_low > 0 and f.slope_low * f.span_days * f.power_w >= min_rise_c


def state_of(warned: bool, withdrawn: bool) -> str:
    """The state of a module with a trend."""
    return "warned" if warned else "withdrawn" if withdrawn else "watching"


@dataclass(frozen=True)
class ForecastStatus:
    """Where the forecast stands for one module, what it rests on, and what it lacked if it has
    none. ``state``: warned, withdrawn (warned, then the trend reversed or was reset), watching
    (a trend, no crossing in sight), insufficient (``reason`` says what was missing)."""

    module: str
    state: str
    reason: str
    reference: str  # how the inlet was formed
    hours: int
    r_now: float | None = None  # °C/W
    slope_per_day: float | None = None
    slope_interval: tuple[float, float] | None = None
    inlet_c: float | None = None  # the warm inlet it extrapolates at
    power_w: float | None = None  # the heavy load it extrapolates at
    span_days: float | None = None
    crossing: float | None = None  # only while the trend's interval excludes zero
    confidence: str = ""
    fix: str = ""  # insufficient for a want the user can supply (a slowdown point): what to give, as the reason ends

    def to_json(self) -> dict[str, object]:
        """The state and what it rests on (R, its trend and interval, the inlet and how it was
        formed, the power and span it extrapolates from, why it is believed)."""
        return {"module": self.module, "state": self.state, "reason": self.reason, "reference": self.reference,
                "hours": self.hours, "r_now_c_per_w": self.r_now, "slope_c_per_w_per_day": self.slope_per_day,
                "slope_interval": list(self.slope_interval) if self.slope_interval else None,
                "inlet_c": self.inlet_c, "power_w": self.power_w, "span_days": self.span_days,
                "predicted_crossing": self.crossing, "confidence": self.confidence,
                **({"fix": self.fix} if self.fix else {})}
