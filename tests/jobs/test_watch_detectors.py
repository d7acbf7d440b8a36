"""Each detector fires on a simulated trace that has its fault and stays quiet on healthy
traces; counter resets and missing samples cause no event."""

import numpy as np
import pytest

from gpuvet.backends.readings import Sample
from gpuvet.backends.sim.telemetry import SimTelemetry
from gpuvet.checks.detectors import (
    ClockFlappingDetector,
    EccDetector,
    NvlinkDetector,
    PcieLinkDetector,
    ThrottleDetector,
    XidDetector,
    default_detectors,
    run_all,
)
from gpuvet.node.build import build_node
from gpuvet.node.spec import load_spec
from gpuvet.watch.forecast import ThermalForecaster, WindowStat


def hgx_with(faults, seed=0):
    spec, where = load_spec("hgx-h200-8")
    declared = build_node(spec, where)
    from pydantic import TypeAdapter

    from gpuvet.node.spec import FaultSpec

    parsed = [TypeAdapter(FaultSpec).validate_python(f) for f in faults]
    return SimTelemetry(declared, parsed, seed=seed)


def trace(tel, hours, every_s=10.0, slow_every_s=30.0):
    """A tick every ``every_s``, the slow fields every ``slow_every_s``: sampled in the simulator's
    blocks, the samples one by one sampling gives (tests/node/test_sim_blocks.py holds them equal),
    at a seventh of the CPU."""
    times, slows, last_slow = [], [], -1e9
    for t in np.arange(0, hours * 3600, every_s):
        slow = t - last_slow >= slow_every_s
        if slow:
            last_slow = t
        times.append(float(t))
        slows.append(slow)
    samples, i = [], 0
    while i < len(times):
        block = tel.sample_block(times[i:], slows[i:])
        for j in range(len(block.times)):
            samples += block.samples(j)
        i += len(block.times)
    return samples


@pytest.fixture(scope="module")
def healthy_trace():
    return trace(hgx_with([]), hours=24)


def kinds(events):
    return {(e.kind, e.module) for e in events}


def test_a_healthy_day_raises_nothing(healthy_trace):
    assert run_all(default_detectors(), healthy_trace) == []


def test_throttle_fires_when_a_module_runs_into_its_thermal_limit():
    tel = hgx_with([{"kind": "thermal_creep", "module": "gpu2", "c_per_watt_per_day": 0.05}])
    events = run_all([ThrottleDetector()], trace(tel, hours=12))
    assert kinds(events) - {("cleared", "gpu2")} == {("throttle", "gpu2")}
    opened = [e.kind for e in events]  # each episode opens once and may close (issue 42: events with a life)
    assert all(a != b for a, b in zip(opened, opened[1:], strict=False)) and opened[0] == "throttle"
    assert "sw_thermal_slowdown" in events[0].evidence["reasons"] and events[0].evidence["temp_c"] > 80


def test_clock_flapping_under_load_fires_and_idle_changes_do_not():
    tel = hgx_with([{"kind": "mem_clock_flapping", "module": "gpu4"}])
    events = run_all([ClockFlappingDetector()], trace(tel, hours=6))
    assert kinds(events) == {("clock_flapping", "gpu4")}
    assert events[0].evidence["clock"] == "memory"


def test_pcie_below_max_under_load_fires_but_the_idle_downshift_does_not(healthy_trace):
    assert run_all([PcieLinkDetector()], healthy_trace) == []  # idle modules sit at gen1 here
    tel = hgx_with([{"kind": "link_degraded", "between": ["gpu0", "pcisw0"], "factor": 0.5, "at": "1h"}])
    events = run_all([PcieLinkDetector()], trace(tel, hours=4))
    assert kinds(events) == {("link_degraded", "gpu0")}
    assert events[0].time >= 3600 and events[0].evidence["link"] == "pcie"


def test_nvlink_down_at_a_time_fires_once():
    tel = hgx_with([{"kind": "link_down", "between": ["gpu6", "nvswitch0"], "at": "2h"}])
    events = run_all([NvlinkDetector()], trace(tel, hours=4))
    assert [(e.kind, e.module, e.severity.value) for e in events] == [("link_down", "gpu6", "critical")]
    assert events[0].time >= 7200 and events[0].evidence["up"] < events[0].evidence["expected"]


def test_nvlink_error_counter_rising_fires_and_a_reset_does_not():
    d = NvlinkDetector(errors_per_hour=100)
    base = dict(module="gpu0", uuid="u", temp_c=60, power_w=500, sm_clock_mhz=1980, mem_clock_mhz=3201, util=1.0)
    quiet = [Sample(t=t, nvlink_errors=5 + t // 3600, **base) for t in range(0, 36000, 600)]
    reset = [Sample(t=36000 + t, nvlink_errors=t // 3600, **base) for t in range(0, 7200, 600)]
    assert run_all([d], quiet + reset) == []
    burst = [Sample(t=50000 + t, nvlink_errors=1000 * t, **base) for t in range(0, 3)]
    assert {e.kind for e in run_all([d], burst)} == {"nvlink_errors"}


def test_ecc_rising_fires_on_the_right_module():
    tel = hgx_with([{"kind": "ecc_rising", "module": "gpu1", "at": "6h", "per_hour": 40}])
    events = run_all([EccDetector()], trace(tel, hours=12, every_s=30))
    assert kinds(events) == {("ecc_rising", "gpu1")}
    assert events[0].time >= 6 * 3600


def _ecc(t, corrected, uncorrected=0):
    return Sample(t=t, module="gpu0", uuid="u", temp_c=None, power_w=None, sm_clock_mhz=None, mem_clock_mhz=None,
                  util=None, ecc_corrected=corrected, ecc_uncorrected=uncorrected)


def test_ecc_counter_reset_and_missing_samples_raise_nothing():
    samples, count = [], 0
    for t in range(0, 48 * 3600, 300):
        count += 1 if t % 1800 == 0 else 0  # a steady 2 per hour
        if t == 20 * 3600:
            count = 0  # the driver reloaded: volatile counters start again
        samples.append(_ecc(t, count) if t % 3600 != 1500 else _ecc(t, None))  # and some samples lack the field
    assert run_all([EccDetector()], samples) == []


def test_uncorrectable_ecc_is_critical():
    events = run_all([EccDetector()], [_ecc(0, 0, 0), _ecc(30, 0, 2)])
    assert [(e.kind, e.severity.value) for e in events] == [("ecc_uncorrectable", "critical")]


def test_xid_events_carry_the_code_and_fatal_ones_are_critical():
    tel = hgx_with([{"kind": "xid", "module": "gpu2", "code": 79, "at": "30m"},
                    {"kind": "xid", "module": "gpu5", "code": 13, "at": "1h"}])
    events = run_all([XidDetector()], trace(tel, hours=2))
    assert [(e.module, e.evidence["code"], e.severity.value) for e in events] == [
        ("gpu2", 79, "critical"), ("gpu5", 13, "warn")]


def _windows(tel, days, creeping=None):
    """Aligned 10-minute steady-load windows, as watch builds them from samples."""
    times = np.arange(0.0, days * 86400.0, 60.0)
    traces = {m.id: tel.series(m.id, times) for m in tel.declared.modules}
    per = 10
    n = len(times) // per
    out = []
    for w in range(n):
        sl = slice(w * per, (w + 1) * per)
        stats = {}
        for m, tr in traces.items():
            p = tr["power_w"][sl]
            stats[m] = WindowStat((w + 1) * 600.0, float(tr["temp_c"][sl].mean()), float(p.mean()),
                                  float(tr["reference_c"][sl].mean()),
                                  bool(tr["util"][sl].min() >= 0.8 and p.std() / p.mean() <= 0.05))
        out.append(stats)
    return out, traces


def test_forecast_warns_a_creeping_module_ahead_and_not_its_healthy_peers():
    tel = hgx_with([{"kind": "thermal_creep", "module": "gpu5", "c_per_watt_per_day": 0.002}], seed=3)
    windows, traces = _windows(tel, days=16)
    fc = ThermalForecaster({m.id: tel.thermal_model(m.id).first_point_c for m in tel.declared.modules})
    events = [e for w in windows for e in fc.observe_windows(w)]
    warnings = [e for e in events if e.kind == "overheat_forecast"]
    assert [e.module for e in warnings] == ["gpu5"]
    hot = np.flatnonzero(traces["gpu5"]["temp_c"] >= 89.2)
    crossing = float(traces["gpu5"]["t"][hot[0]])
    lead_h = (crossing - warnings[0].time) / 3600
    assert lead_h >= 60  # warned days ahead, not when it is already hot
    assert abs(warnings[0].predicted_crossing - crossing) / 3600 < 72  # and the prediction is in the right place
    assert warnings[0].evidence["slope_interval"][0] > 0


def test_forecast_is_withdrawn_when_the_trend_reverses():
    fc = ThermalForecaster({"m": 89.2}, evaluate_every_s=3600)
    events = []
    for hour in range(24 * 12):
        r = 0.023 + 0.002 * min(hour, 120) / 24 - 0.004 * max(hour - 120, 0) / 24
        t = (hour + 1) * 3600.0
        for k in range(6):
            events += fc.observe_windows({"m": WindowStat(t - 3000 + k * 600, 62.4 + r * 650, 650.0, 62.4, True)})
    assert [e.kind for e in events] == ["overheat_forecast", "overheat_forecast_withdrawn"]


def test_forecast_without_an_inlet_sensor_uses_the_peers():
    fc = ThermalForecaster({f"g{i}": 89.2 for i in range(4)}, evaluate_every_s=3600)
    events = []
    for hour in range(24 * 10):
        t = (hour + 1) * 3600.0
        stats = {f"g{i}": WindowStat(t, 78.0 + (0.05 * hour if i == 2 else 0.0), 650.0, None, True) for i in range(4)}
        events += fc.observe_windows(stats)
    assert {e.module for e in events if e.kind == "overheat_forecast"} == {"g2"}
