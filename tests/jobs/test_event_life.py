"""Events with a life (issue 42): a condition opens one event, is counted while it goes on and
closes with a ``cleared`` event; three simulated days of a flapping clock are one event, not 65."""

from __future__ import annotations

import json

from gpuvet.backends.readings import Sample
from gpuvet.checks.detectors import ClockFlappingDetector, run_all
from gpuvet.cli.app import main


def _sample(t: float, mem: float) -> Sample:
    return Sample(t, "gpu1", "GPU-1", temp_c=60.0, power_w=600.0, sm_clock_mhz=1980.0, mem_clock_mhz=mem, util=0.95)


def test_a_flapping_clock_opens_one_event_and_closes_it_when_it_holds_steady():
    flapping = [_sample(t, 2600.0 if t % 2 else 1600.0) for t in range(600)]  # 10 min switching every sample
    steady = [_sample(600.0 + t, 2600.0) for t in range(120)]
    events = run_all([ClockFlappingDetector()], flapping + steady)
    assert [e.kind for e in events] == ["clock_flapping", "cleared"]
    opened, cleared = events
    assert cleared.evidence["of"] == "clock_flapping" and cleared.evidence["since"] == opened.time
    assert cleared.evidence["seen"] > 500  # counted while it went on, raised once
    assert cleared.time > 600 and cleared.module == "gpu1"


def test_three_days_of_a_flapping_clock_are_one_event(tmp_path, capsys):
    spec = tmp_path / "flap.yaml"
    spec.write_text("base: hgx-h200-8\nfaults:\n  - {kind: mem_clock_flapping, module: gpu1}\n")
    main(["watch", "--sim", str(spec), "--duration", "3d", "--interval", "60s", "--speedup", "max", "--json",
          "--no-log"])
    events = [e for e in json.loads(capsys.readouterr().out)["events"] if e["module"] == "gpu1"]
    assert [e["kind"] for e in events] == ["clock_flapping"]  # was 65 hourly warnings
    assert all(e.get("node") for e in events)  # every event names its node
