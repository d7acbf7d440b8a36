"""The simulated node has one thermal and power model: `watch`, `bench efficiency` and the
engine's telemetry agree on the temperature of the same load at the same cap; the efficiency
curve is smooth (the clock falls continuously as the cap drops); one-time faults fire once."""

import statistics

import numpy as np
import pytest

from gpuvet.backends.power_control import SimPowerControl
from gpuvet.backends.sim.telemetry import SimTelemetry
from gpuvet.bench.context import BenchContext
from gpuvet.bench.efficiency import EfficiencyOptions, run
from gpuvet.bench.timing import QUICK
from gpuvet.node.power_model import PowerModel
from gpuvet.node.thermal import ThermalModel, throttle_level, throttle_levels
from tests.conftest import declared


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path / "home"))


def _sweep(backend, module, caps):
    engine = backend.engine()
    curves = run(BenchContext(engine, QUICK), SimPowerControl(engine), EfficiencyOptions(modules=(module,), caps=caps))
    return curves[0].points


def _busy_at_start(preset="hgx-h200-8"):
    """A module the seeded schedule keeps busy through the first ten minutes (schedules do not
    depend on the faults, so a healthy node tells which)."""
    tel = SimTelemetry(declared(preset), [], seed=0)
    busy = None
    for t in range(0, 600, 60):
        now = {s.module for s in tel.sample(float(t), slow=False) if s.util}
        busy = now if busy is None else busy & now
    assert busy, "no module busy through the first ten minutes"
    return sorted(busy)[0]


def test_watch_and_bench_efficiency_show_the_same_temperature_for_the_same_load_and_cap(faulty):
    module = _busy_at_start()
    cap = 600.0  # below what a busy module draws (88-97 % of 700 W): the cap holds in watch too
    backend = faulty("hgx-h200-8", [{"kind": "power_cap_low", "module": module, "watts": cap}])
    point = _sweep(backend, module, (cap,))[0]
    tel = backend.telemetry()
    samples = [s for t in range(60, 600, 20) for s in tel.sample(float(t), slow=False) if s.module == module]
    assert all(s.power_w == pytest.approx(cap, rel=1e-6) and s.throttle & 0x4 for s in samples)
    watch_c = statistics.median(s.temp_c for s in samples)
    assert point.power_w == pytest.approx(cap, rel=0.01)
    assert point.temp_c == pytest.approx(watch_c, abs=1.0)  # noise (0.15 °C) and ten minutes of coolant drift
    # and health reads the same node: held by its power cap, not by heat
    mask = next(h.clock_event_mask for h in backend.health().modules if h.id == module)
    assert mask & 0x4 and not mask & 0x60


def test_bench_efficiency_temperature_rises_with_the_cap_and_the_curve_is_smooth(faulty):
    backend = faulty("hgx-h200-8", [])
    points = _sweep(backend, "gpu2", tuple(float(c) for c in range(200, 701, 50)))
    temps = [p.temp_c for p in points]
    tflops = [p.tflops for p in points]
    assert all(b > a for a, b in zip(temps, temps[1:], strict=False))  # ~1.2 °C per 50 W, noise 0.15 °C
    r = 12.4 / 530  # the seed's thermal resistance, ±5 % per module
    assert temps[-1] - temps[0] == pytest.approx(r * 500, rel=0.15)
    assert all(b > a for a, b in zip(tflops, tflops[1:], strict=False))  # more watts, more work
    assert max(b / a for a, b in zip(tflops, tflops[1:], strict=False)) < 1.3  # no cliff (was 9x at 200→250 W)
    assert tflops[0] > 0.4 * tflops[-1]


def test_the_clock_falls_continuously_as_the_cap_drops():
    model = PowerModel(700.0)
    caps = np.arange(50.0, 701.0, 1.0)
    speed = np.array([model.speed(c) for c in caps])
    assert np.all(np.diff(speed) >= 0)
    assert np.max(speed[1:] / speed[:-1]) < 1.08  # no step anywhere, even below the allowed range
    allowed = speed[caps >= 200]
    assert np.max(allowed[1:] / allowed[:-1]) < 1.01
    assert speed[-1] == 1.0 and model.speed(None) == 1.0 and model.speed(900.0) == 1.0
    # the power drawn is the cap wherever the firmware can hold it
    assert all(model.power(c) == pytest.approx(c) for c in (200.0, 350.0, 699.0))


def test_the_vectorised_throttle_steps_match_the_scalar_rule():
    model = ThermalModel()
    temps = np.arange(80.0, 100.0, 0.25)
    for level in (0, 1, 2):
        got = throttle_levels(temps, np.full(temps.shape, level), np.full(temps.shape, model.first_point_c))
        assert got.tolist() == [throttle_level(float(t), level, model) for t in temps]


def test_a_one_time_xid_fires_once_not_again_on_the_replacement(faulty):
    backend = faulty("hgx-h200-8", [{"kind": "xid", "module": "gpu3", "code": 79, "at": "30m"},
                                    {"kind": "module_lost", "module": "gpu3", "at": "1h"},
                                    {"kind": "module_added", "module": "gpu3", "at": "2h"}])
    tel = backend.telemetry()
    fired = [(s.t, s.uuid, s.xids) for t in range(0, 3 * 3600, 60) for s in tel.sample(float(t), slow=t % 300 == 0)
             if s.xids]
    assert fired == [(1800.0, "GPU-sim-hgx-h200-8-gpu3", (79,))]
    replacement = [s for s in tel.sample(3 * 3600.0, slow=True) if s.module == "gpu3"][0]
    assert replacement.uuid.endswith("-r1") and replacement.ecc_corrected is not None and replacement.xids == ()


def test_watch_reports_the_xid_once_though_the_replacement_is_admitted(faulty):
    from gpuvet.watch.loop import WatchConfig, Watcher

    sim = faulty("hgx-h200-8", [{"kind": "xid", "module": "gpu3", "code": 13, "at": "30m"},
                                {"kind": "module_lost", "module": "gpu3", "at": "1h"},
                                {"kind": "module_added", "module": "gpu3", "at": "2h"}])
    result = Watcher(sim, WatchConfig(interval_s=60, duration_s=3 * 3600, speedup=None), None).run()
    assert ("module_ready", "gpu3") in {(e.kind, e.module) for e in result.events}
    assert [(e.kind, e.module, e.time) for e in result.events if e.kind == "xid"] == [("xid", "gpu3", 1800.0)]
