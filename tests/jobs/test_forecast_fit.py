"""The forecast's arithmetic (``gpuvet.watch.forecast_fit``) on small hand-checked arrays, and its
decision (``forecast_decide``) on hand-built forecasts: each rule alone, without a replay, so a
change to one shows which rule moved."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gpuvet.watch.forecast_decide import Evidence, Lack, decide, lack_of
from gpuvet.watch.forecast_fit import (
    CommonFit,
    Forecast,
    Step,
    find_step,
    fit_common,
    fit_trend,
    heavy_load,
    learn_offsets,
    leave_one_out,
    p95,
    stepped_alike,
    theil_sen,
    trend,
    warm_inlet,
)
from gpuvet.watch.forecast_settings import ForecastSettings

DAY = 86400.0


def test_p95_is_the_nearest_rank():
    assert p95([3.0, 1.0, 2.0]) == 3.0  # rank int(2.85) = 2 of the sorted three
    assert p95([float(v) for v in range(100)]) == 95.0
    assert p95([7.0]) == 7.0


def test_theil_sen_of_three_points_by_hand():
    """Pairwise slopes 1, 1.5, 2: the median 1.5; intercept median(y) − 1.5·median(x) = 1 − 1.5;
    with three points the 90 % interval reaches the smallest and the largest slope."""
    slope, intercept, low, high = theil_sen(np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 3.0]), 0.90)
    assert (slope, intercept, low, high) == (1.5, -0.5, 1.0, 2.0)


def test_theil_sen_of_a_straight_line_is_its_slope_with_no_width():
    x = np.arange(6, dtype=float)
    assert theil_sen(x, 0.5 + 2.0 * x, 0.90) == (2.0, 0.5, 2.0, 2.0)


def test_theil_sen_with_tied_values_by_hand():
    """y 0, 1, 1, 2: pairwise slopes 0, ½, ½, ⅔, 1, 1, the median (½ + ⅔)/2 = 7/12; the tie
    narrows the variance to (4·3·13 − 2·1·9)/18, still wide enough for the interval [0, 1]."""
    slope, intercept, low, high = theil_sen(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.0, 1.0, 1.0, 2.0]), 0.90)
    assert slope == pytest.approx(7 / 12) and intercept == pytest.approx(1 - 7 / 12 * 1.5)
    assert (low, high) == (0.0, 1.0)


def test_heavy_load_takes_the_lagged_peaks_of_busy_windows():
    assert heavy_load([500.0] * 10, []) == 500.0
    assert heavy_load([500.0] * 10, [450.0, 700.0]) == 700.0  # a minute-long peak heats more than the mean
    assert heavy_load([400.0] * 200 + [600.0] * 144, []) == 600.0  # the last day's load counts in full


def test_warm_inlet_moves_estimates_onto_todays_common_r():
    assert warm_inlet([20.0, 25.0], [0.0, 0.0], [500.0, 500.0], 0.0) == 25.0  # read inlets: as they are
    # estimated with R 0.04 where today's is 0.05: lower by 0.01 °C/W × 500 W
    assert warm_inlet([20.0], [0.04], [500.0], 0.05) == pytest.approx(15.0)


def test_fit_trend_crosses_where_the_line_reaches_the_critical_r():
    """R 0.01, 0.02, 0.03 on days 0-2: 0.01 °C/W a day; 0.02 short of 0.05 is two days ahead."""
    f = fit_trend("g0", [0.0, 24.0, 48.0], [0.01, 0.02, 0.03], 0.02, 2 * DAY, 0.05, 600.0, 30.0, 0.90)
    assert f.slope_per_day == pytest.approx(0.01) and f.slope_low == pytest.approx(0.01)
    assert f.r_now == pytest.approx(0.05) and f.r_crit == pytest.approx(0.07)  # both with the base added back
    assert f.crossing == pytest.approx(4 * DAY) and f.earliest == pytest.approx(4 * DAY)
    assert (f.span_days, f.power_w, f.inlet_c, f.hours) == (2.0, 600.0, 30.0, 3)


def test_fit_trend_without_a_rise_never_crosses():
    f = fit_trend("g0", [0.0, 1.0, 2.0], [0.03, 0.03, 0.03], 0.0, DAY, 0.05, 600.0, 30.0, 0.90)
    assert f.crossing is None and f.earliest is None and f.latest is None


def test_trend_prefers_the_recent_creep_when_it_crosses_first():
    """Flat for 52 hours, then 0.001 °C/W an hour: the last 48 hours predict the earlier crossing."""
    hours = [float(h) for h in range(100)]
    r = [0.02 + 0.001 * max(h - 51, 0) for h in range(100)]
    f = trend("g0", hours, r, 0.0, 100 * 3600.0, 90.0, 600.0, 30.0, 0.90)
    assert f.hours == 48 and f.slope_per_day == pytest.approx(0.024)
    whole = trend("g0", hours[:71], r[:71], 0.0, 71 * 3600.0, 90.0, 600.0, 30.0, 0.90)
    assert whole.hours == 71  # under 72 hourly values: no recent trend to prefer


def _day_then(after: list[float], level: float = 0.03) -> tuple[list[float], list[float]]:
    """A day of R at ``level`` with ±0.0001 of noise, then ``after``."""
    r = [level + (0.0001 if k % 2 else -0.0001) for k in range(24)] + after
    return [float(h) for h in range(len(r))], r


def test_a_step_down_held_for_six_hours_is_a_step():
    hours, r = _day_then([0.02] * 6)
    step = find_step(hours, r, [500.0] * 30, 2.5)
    assert step is not None and step.jump == pytest.approx(-0.01, abs=2e-4)
    assert (step.since, step.split) == (0.0, 24.0) and 0 < step.noise < 0.001


def test_what_is_not_a_step():
    hours, r = _day_then([0.02] * 5)
    assert find_step(hours, r, [500.0] * 29, 2.5) is None  # not yet held for six hours
    hours, r = _day_then([0.026] * 6)
    assert find_step(hours, r, [500.0] * 30, 2.5) is None  # 0.004 °C/W × 500 W = 2 °C: under 2.5 °C at load
    hours, r = _day_then([0.031 + 0.003 * k for k in range(6)])
    assert find_step(hours, r, [500.0] * 30, 2.5) is None  # still moving: a ramp, not a step
    rising = [0.02 + 0.0005 * k for k in range(24)] + [0.04] * 6
    assert find_step([float(h) for h in range(30)], rising, [500.0] * 30, 2.5) is None  # up on a rising day


def test_a_step_the_others_shared_is_their_inlet_moving():
    step = Step(jump=-0.01, noise=0.0002, since=0.0, split=24.0)
    stepped = _day_then([0.02] * 6)
    flat = _day_then([0.03] * 6)
    assert stepped_alike([stepped, stepped], step)
    assert not stepped_alike([flat, flat], step)
    assert not stepped_alike([], step)  # nobody to compare with: the module's own step
    assert not stepped_alike([_day_then([0.02] * 2)], step)  # too few hours after the split to judge


def test_fit_common_adds_one_window_about_its_means():
    """Powers 400/500/600 W at 50/55/60 °C: Σ(p−p̄)(t−t̄) = 1000, Σ(p−p̄)² = 20000, R 0.05; half the
    old sums decay toward the prior (0.05 °C/W × 2000 W², 2000 W²)."""
    prior = CommonFit()
    assert fit_common(prior.sxy, prior.sxx, [400.0, 500.0, 600.0], [50.0, 55.0, 60.0], 1.0) == (1100.0, 22000.0)
    assert fit_common(prior.sxy, prior.sxx, [400.0, 500.0, 600.0], [50.0, 55.0, 60.0], 0.5) == (1100.0, 22000.0)
    sums = fit_common(0.0, 1.0, [400.0, 500.0, 600.0], [50.0, 55.0, 60.0], 1.0)
    assert sums is not None and sums[0] / sums[1] == pytest.approx(1000 / 20001)


def test_fit_common_leaves_a_module_far_off_the_line_out():
    prior = CommonFit()
    # the fourth module 20 °C above the others' line: left out, the sums are the three's
    assert fit_common(prior.sxy, prior.sxx, [400.0, 500.0, 600.0, 500.0], [50.0, 55.0, 60.0, 75.0], 1.0) == \
        (1100.0, 22000.0)
    # of three, one 30 °C off the others' line: two are too few to fit, the window adds nothing
    assert fit_common(prior.sxy, prior.sxx, [400.0, 500.0, 600.0], [50.0, 55.0, 90.0], 1.0) is None


def test_leave_one_out_never_uses_a_modules_own_or_a_warned_ones_temperature():
    assert leave_one_out([10.0, 20.0, 30.0], [True, True, True]) == [(25.0, 2), (20.0, 2), (15.0, 2)]
    assert leave_one_out([10.0, 20.0, 30.0], [True, True, False]) == [(20.0, 1), (10.0, 1), (15.0, 2)]
    assert leave_one_out([10.0, 20.0, 30.0], [True, False, False]) == [None, (10.0, 1), (10.0, 1)]


def test_learn_offsets_moves_each_offset_part_way_to_the_window():
    assert learn_offsets([10.0, 12.0, 14.0], [None, None, None], 0.5) == [-2.0, 0.0, 2.0]  # first: as seen
    # known offsets 0: the common level is the median 12, deviations −2, 0, 5, half the way there
    assert learn_offsets([10.0, 12.0, 17.0], [0.0, 0.0, 0.0], 0.5) == [-1.0, 0.0, 2.5]
    # two known offsets are too few: the median of the bases themselves
    assert learn_offsets([10.0, 12.0, 17.0], [4.0, 4.0, None], 1.0) == [-2.0, 0.0, 5.0]


# --- the decision (gpuvet.watch.forecast_decide): codes and numbers, no words ---
def _forecast(low: float, high: float, crossing: float | None, span_days: float = 2.0) -> Forecast:
    return Forecast("g0", (low + high) / 2, low, high, 0.05, 0.07, crossing, crossing, None, span_days, 500.0, 30.0, 48)


def test_decide_raises_a_significant_rise_crossing_within_horizon_and_margin():
    settings = ForecastSettings(margin_s=48 * 3600.0)  # 90 %, a 48 h margin, 1 °C already seen
    near = _forecast(0.001, 0.003, 100 * 3600.0)  # 0.001 °C/W/day × 2 d × 500 W = 1 °C seen; 100 h < 72 + 48 h
    assert decide(near, False, settings, 72 * 3600.0, 0.0) == "raise"
    assert decide(near, True, settings, 72 * 3600.0, 0.0) is None  # already warned: nothing new
    assert decide(_forecast(0.001, 0.003, 130 * 3600.0), False, settings, 72 * 3600.0, 0.0) is None  # too far
    assert decide(_forecast(0.0009, 0.003, 100 * 3600.0), False, settings, 72 * 3600.0, 0.0) is None  # 0.9 °C seen
    assert decide(_forecast(-0.001, 0.003, 100 * 3600.0), False, settings, 72 * 3600.0, 0.0) is None  # spans zero


def test_decide_withdraws_a_warning_whose_trend_turned():
    settings = ForecastSettings(margin_s=48 * 3600.0)
    assert decide(_forecast(-0.003, -0.001, None), True, settings, 72 * 3600.0, 0.0) == "withdraw"
    assert decide(_forecast(0.001, 0.003, 300 * 3600.0), True, settings, 72 * 3600.0, 0.0) == "withdraw"  # > 2 × 120 h
    assert decide(_forecast(0.001, 0.003, 200 * 3600.0), True, settings, 72 * 3600.0, 0.0) is None


def test_lack_of_names_the_first_thing_missing():
    enough = Evidence(sampled=True, unpowered=0, slowdown=True, windows=200, usable=150, no_reference=0, hours=30,
                      resets=0, recorded_h=33.3)
    assert lack_of(enough, 24) is None
    assert lack_of(replace(enough, sampled=False, slowdown=False), 24) == Lack("no_temperature")
    assert lack_of(replace(enough, slowdown=False), 24) == Lack("no_slowdown")
    assert lack_of(replace(enough, sampled=False, unpowered=40, windows=0), 24) == Lack("no_power", 40)
    assert lack_of(replace(enough, recorded_h=12.0), 24) == Lack("short_recording", 12.0)
    assert lack_of(replace(enough, usable=0), 24) == Lack("no_steady", 200)
    assert lack_of(replace(enough, no_reference=150), 24) == Lack("no_inlet")
    assert lack_of(replace(enough, hours=10, resets=1), 24) == Lack("short_trend", 10, True)


def test_leave_one_out_with_ties_and_an_even_count_of_others():
    """Each median read off the sorted trusted bases without the module's own value, a tie taken once."""
    assert leave_one_out([5.0, 5.0, 1.0, 9.0], [True] * 4) == [(5.0, 3), (5.0, 3), (5.0, 3), (5.0, 3)]
    assert leave_one_out([4.0, 1.0, 3.0, 2.0, 8.0], [True, True, True, True, False]) == \
        [(2.0, 3), (3.0, 3), (2.0, 3), (3.0, 3), (2.5, 4)]
    assert leave_one_out([7.0], [True]) == [None]


def test_leave_one_out_is_the_median_of_the_others_exactly():
    """Against the plain definition on a node's worth of awkward floats, NaN and signed zeros
    included: the same value to the bit and the same count."""
    import math
    import statistics

    rng = np.random.default_rng(43)
    for case in range(300):
        n = int(rng.integers(1, 10))
        bases = [float(v) for v in rng.normal(20.0, 3.0, n).round(int(rng.integers(0, 4)))]
        if case % 50 == 0:
            bases[0] = math.nan
        if case % 37 == 0:
            bases[-1] = -0.0
        trusted = [bool(v) for v in rng.random(n) < 0.8]
        others = [[b for k, (b, ok) in enumerate(zip(bases, trusted, strict=True)) if ok and k != i] for i in range(n)]
        plain = [(statistics.median(o), len(o)) if o else None for o in others]
        got = leave_one_out(bases, trusted)
        assert [None if g is None else (math.copysign(1.0, g[0]), g[1]) for g in got] == \
            [None if p is None else (math.copysign(1.0, p[0]), p[1]) for p in plain]
        assert [None if g is None or g[0] != g[0] else g for g in got] == \
            [None if p is None or p[0] != p[0] else p for p in plain]


def test_find_step_takes_the_usual_load_only_past_the_noise():
    """A jump inside the noise is no step whatever the load (no median of powers needed, so an
    empty power history is not read); past the noise the load's floor still judges it."""
    hours, r = _day_then([0.0301] * 6)
    assert find_step(hours, r, [], 2.5) is None
    hours, r = _day_then([0.02] * 6)
    assert find_step(hours, r, [50.0] * 30, 2.5) is None  # 0.01 °C/W × 50 W = 0.5 °C: under the floor
    assert find_step(hours, r, [500.0] * 30, 2.5) is not None
