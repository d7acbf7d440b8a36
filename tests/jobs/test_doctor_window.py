"""Issue 43: doctor gathers its telemetry window for the checks that read it. The thermal trend
model's share of the samples is held and fed only when a check asks for the trend (thermal_trend),
and the fit it gives then is the one feeding it as the window ran gives."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gpuvet.backends.select import open_backend
from gpuvet.checks.detectors import default_detectors
from gpuvet.checks.window import TelemetryWindow, TrendModel, evidence_window
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.run import diagnose
from gpuvet.doctor.window import HeldForTrend
from gpuvet.watch.trend import ForecastTrend, thermal_trend

SPAN_S = 30 * 3600.0  # long enough for a fit (the forecaster wants 24 h), short enough for a test
FAULTS = """base: hgx-h200-8
faults:
  - {kind: thermal_creep, module: gpu2, c_per_watt_per_day: 0.02, start: 0h}
  - {kind: module_lost, module: gpu6, at: 5h}
"""


class Counted:
    """The face's trend factory, counting the models made."""

    def __init__(self) -> None:
        self.made = 0

    def __call__(self, slowdown_c: dict[str, float], interval_s: float = 60.0) -> TrendModel:
        self.made += 1
        return thermal_trend(slowdown_c, interval_s)


def _spec(tmp_path: Path) -> str:
    spec = tmp_path / "creep.yaml"
    spec.write_text(FAULTS)
    return str(spec)


def test_the_held_trend_fits_what_feeding_it_as_the_window_ran_fits(tmp_path: Path) -> None:
    backend = open_backend(sim=_spec(tmp_path))
    ev = Evidence(backend, backend.declared, window_s=SPAN_S, trend=thermal_trend)
    assert ev.window is not None and ev.window.trend is not None
    source = open_backend(sim=_spec(tmp_path)).telemetry()
    config = evidence_window(source, SPAN_S)
    direct = thermal_trend(source.slowdown_c(), interval_s=config.interval_s)
    TelemetryWindow(source, config, [*default_detectors(), direct]).run()
    held = ev.window.trend
    assert isinstance(held, ForecastTrend) and held.forecaster.on_evaluate is not None  # inlets read: fits only
    assert direct.forecaster.on_evaluate is None  # judged every two hours, as watch does
    assert held.modules() == direct.modules()
    fits = [(held.fit(m, SPAN_S), direct.fit(m, SPAN_S)) for m in direct.modules()]
    assert all(a == b for a, b in fits)
    assert sum(a is not None for a, _ in fits) >= 6  # every module but the lost one and the throttling one


def test_a_playbook_without_the_trend_check_never_makes_the_trend_model(tmp_path: Path) -> None:
    backend = open_backend(sim=_spec(tmp_path))
    counted = Counted()
    ev = Evidence(backend, backend.declared, window_s=SPAN_S, trend=counted)
    run = diagnose(ev, "module-missing")
    assert {f.module for f in run.findings if f.cause == "module_fell_off_bus"} == {"gpu6"}
    assert counted.made == 0  # the window was gathered (the lost module is seen), the trend never asked for
    triage = diagnose(ev, all_steps=True)  # the same observation read again, thermal_trend among the steps
    assert counted.made == 1
    trend_step = next(s for s in triage.steps if s.check == "thermal_trend")
    assert trend_step.status in ("confirmed", "clear"), trend_step.summary


def test_samples_without_an_inlet_reading_keep_the_warnings_judged() -> None:
    """An estimated inlet leaves a warned module out: there, judging whether to warn can move a fit."""
    source = open_backend(sim="hgx-h200-8").telemetry()
    samples = source.sample(0.0, True)
    made: list[ForecastTrend] = []

    def make() -> ForecastTrend:
        made.append(thermal_trend(source.slowdown_c(), 60.0))
        return made[-1]

    read = HeldForTrend(make)
    for s in samples:
        read.observe(s)
    read.fed()
    estimated = HeldForTrend(make)
    for s in samples:
        estimated.observe(replace(s, ambient_c=None))
    estimated.fed()
    assert made[0].forecaster.on_evaluate is not None and made[1].forecaster.on_evaluate is None
