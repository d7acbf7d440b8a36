"""Doctor's simulated evidence window on a big node: sampled more coarsely so the samples stay
bounded, stated in doctor's notes, and still naming what is planted. Small nodes keep one
sample a minute."""

import json

import pytest

from gpuvet.backends.select import open_backend
from gpuvet.checks import window
from gpuvet.checks.window import SIM_WINDOW_INTERVALS_S, SIM_WINDOW_S, evidence_window, sim_interval
from gpuvet.cli.app import main
from gpuvet.watch.trend import thermal_trend


def test_a_node_of_usual_size_is_sampled_every_minute() -> None:
    assert sim_interval(8, SIM_WINDOW_S) == 60.0
    assert sim_interval(16, SIM_WINDOW_S) == 60.0
    config = evidence_window(open_backend(sim="mesh-4").telemetry())
    assert config.interval_s == 60.0 and config.slow_every_s == 300.0


@pytest.mark.parametrize("modules", [72, 144, 288, 576, 1024])
def test_a_big_node_gets_the_finest_interval_within_the_bound(modules: int) -> None:
    interval = sim_interval(modules, SIM_WINDOW_S)
    samples = modules * (SIM_WINDOW_S // interval + 1)
    assert samples <= window.SIM_WINDOW_MAX_SAMPLES and 3600.0 % interval == 0
    finer = [i for i in SIM_WINDOW_INTERVALS_S if i < interval]
    assert all(modules * (SIM_WINDOW_S // i + 1) > window.SIM_WINDOW_MAX_SAMPLES for i in finer)


def test_the_forecaster_windows_hold_three_samples_at_any_interval() -> None:
    assert thermal_trend({}, interval_s=60.0).forecaster.window_s == 600.0  # unchanged for usual nodes
    for interval in SIM_WINDOW_INTERVALS_S:
        window_s = thermal_trend({}, interval_s=interval).forecaster.window_s
        assert window_s >= 3 * interval and (window_s <= 3600 and 3600 % window_s == 0 or window_s % 3600 == 0)


def test_coarse_sampling_still_names_a_creeping_module_and_says_so(capsys, tmp_path, monkeypatch) -> None:
    """The bound lowered so mesh-4 is sampled as nvl576 is (every 30 min): the planted thermal
    creep is still found, and the notes say how the window was sampled."""
    monkeypatch.setattr(window, "SIM_WINDOW_MAX_SAMPLES", 4 * 193)
    spec = tmp_path / "creep.yaml"
    spec.write_text("base: mesh-4\nfaults:\n  - {kind: thermal_creep, module: gpu1, c_per_watt_per_day: 0.002}\n")
    code = main(["doctor", "overheating", "--sim", str(spec), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and ("thermal_interface_ageing", "gpu1") in [(f["cause"], f["module"]) for f in report["findings"]]
    assert "telemetry: simulated window sampled every 30 min for 4 modules (every 1 min on smaller nodes)" \
        in report["notes"]


def test_a_node_sampled_every_minute_has_no_sampling_note(capsys) -> None:
    main(["doctor", "overheating", "--sim", "mesh-4", "--json", "--window", "1h"])
    assert not any("sampled every" in note for note in json.loads(capsys.readouterr().out)["notes"])


def test_plain_data_reads_the_same_through_the_fast_path_of_to_jsonable() -> None:
    """Plain types skip the record checks; what they become must not change (an IntFlag is an
    int subclass and still goes the enum way, a NaN is still null, keys are still strings)."""
    from gpuvet.backends.readings import ThrottleReason, Unavailable
    from gpuvet.report.jsonable import to_jsonable

    data = {1: [True, None, "x", float("nan"), 2.5, (3, ThrottleReason.HW_SLOWDOWN)],
            "u": Unavailable("no sensor"), "d": {"k": [{"n": 0}]}}
    assert to_jsonable(data) == {"1": [True, None, "x", None, 2.5, [3, int(ThrottleReason.HW_SLOWDOWN)]],
                                 "u": None, "d": {"k": [{"n": 0}]}}
    assert type(to_jsonable(ThrottleReason.HW_SLOWDOWN)) is int
