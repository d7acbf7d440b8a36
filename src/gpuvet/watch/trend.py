"""The thermal forecaster as a trend model (``gpuvet.checks.window.TrendModel``): what doctor
reads of it, given to doctor by the face that runs it, so doctor never imports watch."""

from __future__ import annotations

import math
from collections.abc import Sequence

from gpuvet.backends.readings import Sample
from gpuvet.checks.blocks import ModuleBlock, Placed
from gpuvet.checks.events import Event
from gpuvet.checks.window import TrendFit
from gpuvet.watch.forecast import ThermalForecaster

WINDOW_S = 600.0  # the forecaster's window: ten minutes of samples
WINDOW_SAMPLES = 3  # at least this many samples in a window (a coarser log gets whole-hour windows)


class ForecastTrend:
    def __init__(self, forecaster: ThermalForecaster) -> None:
        self.forecaster = forecaster

    def observe(self, s: Sample) -> list[Event]:
        return self.forecaster.observe(s)

    def observe_blocks(self, blocks: Sequence[ModuleBlock], slot: int) -> list[Placed] | None:
        """A window's run of ticks as blocks (``TelemetryWindow``): summed in numpy; None when
        they must come one by one (``ThermalForecaster.observe_blocks``)."""
        return self.forecaster.observe_blocks(blocks, slot)

    def fits_only(self) -> None:
        """The caller reads fits, never warnings, of samples that all carry an inlet reading (doctor,
        issue 43): whether to warn is judged every two hours, and a warning changes a later fit only
        by keeping the warned module out of its peers' estimated inlet, which a read inlet never is.
        So the judging is left out, and every fit is the one it would be."""
        self.forecaster.on_evaluate = _not_judged

    def modules(self) -> list[str]:
        return sorted(self.forecaster.slowdown_c)

    def fit(self, module: str, now: float) -> TrendFit | None:
        f = self.forecaster.forecast(module, now)
        if f is None:
            return None
        return TrendFit(f.slope_per_day, f.slope_low, f.crossing, f.earliest, self.forecaster.last_power(module))


def _not_judged(module: str, now: float) -> None:
    """No warning judged (``ForecastTrend.fits_only``)."""


def thermal_trend(slowdown_c: dict[str, float], interval_s: float = 60.0) -> ForecastTrend:
    """The forecaster `watch` runs, with its default horizon; on samples coarser than its
    10-minute windows allow (a big simulated node), windows of at least three samples."""
    least = WINDOW_SAMPLES * interval_s
    window_s = WINDOW_S if least <= WINDOW_S else math.ceil(least / 3600.0) * 3600.0
    return ForecastTrend(ThermalForecaster(slowdown_c, window_s=window_s))
