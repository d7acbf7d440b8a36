"""The one timing policy: warm-up, calibration, sampling, statistics."""

import pytest

from gpuvet.bench.records import rate_stats
from gpuvet.bench.timing import TimingPlan, measure, summarize


def test_summary_statistics_by_hand():
    s = summarize([1.0, 2.0, 3.0, 4.0, 10.0])
    assert (s.n, s.median, s.min, s.max) == (5, 3.0, 1.0, 10.0)
    assert (s.q1, s.q3, s.iqr) == (2.0, 4.0, 2.0)
    assert s.mean == 4.0
    assert s.cv == pytest.approx(3.5355 / 4.0, rel=1e-3)  # sample std of the five / mean


def test_single_sample_has_no_spread():
    s = summarize([0.5])
    assert s.cv == 0 and s.iqr == 0 and s.median == 0.5


class FakeWorkload:
    """Each operation takes ``per_op`` seconds of a fake clock; records how it was driven."""

    def __init__(self, per_op: float) -> None:
        self.per_op, self.calls = per_op, []

    def timed(self, repeats: int) -> float:
        self.calls.append(repeats)
        return self.per_op * repeats

    def close(self) -> None:
        pass


def test_measure_warms_up_then_calibrates_ops_per_sample():
    w = FakeWorkload(per_op=1e-4)
    t = measure(w, TimingPlan(warmup=2, min_samples=5, max_samples=5, min_sample_s=0.01, budget_s=100))
    assert w.calls[:2] == [1, 1]  # warm-up runs one operation each
    assert t.ops_per_sample == 100  # 10 ms per sample / 0.1 ms per operation
    assert w.calls[2:] == [100] * 5
    assert t.stats.median == pytest.approx(1e-4) and t.stats.n == 5


def test_measure_stops_at_the_budget_but_keeps_the_minimum():
    w = FakeWorkload(per_op=1.0)  # one second each: the budget of 2 s runs out at once
    t = measure(w, TimingPlan(warmup=1, min_samples=3, max_samples=30, min_sample_s=0.001, budget_s=2))
    assert t.stats.n == 3


def test_a_broken_timer_is_an_error_not_a_figure():
    with pytest.raises(RuntimeError, match="non-positive"):
        measure(FakeWorkload(per_op=0.0), TimingPlan(warmup=1, min_samples=1, max_samples=1))


def test_rates_are_summarised_in_their_own_unit():
    w = FakeWorkload(per_op=0.5)
    t = measure(w, TimingPlan(warmup=1, min_samples=3, max_samples=3, min_sample_s=0.1, budget_s=100))
    stats = rate_stats(t, work_per_op=10.0)  # 10 units in 0.5 s
    assert stats.median == pytest.approx(20.0) and stats.seconds_per_op_median == pytest.approx(0.5)


def test_plan_rejects_nonsense():
    with pytest.raises(ValueError):
        TimingPlan(min_samples=5, max_samples=2)


def test_the_spread_is_statistics_stdev_to_within_an_ulp_or_two():
    """summarize computes the sample standard deviation in floats (statistics.stdev goes through
    Fractions, too slow for the thousands of timings a simulated validate summarises)."""
    import random
    import statistics

    rng = random.Random(5)
    for _ in range(500):
        xs = [rng.lognormvariate(-5, rng.choice([1e-4, 0.1, 1.0])) for _ in range(rng.randint(2, 30))]
        got = summarize(xs).cv * statistics.fmean(xs)
        assert got == pytest.approx(statistics.stdev(xs), rel=1e-14)
    assert summarize([2.0, 2.0, 2.0]).cv == 0.0
