"""Issue 43: doctor's telemetry window (no sinks, as fast as it runs) hands its observers a run of
ticks at a time, detectors as blocks (a block with nothing to judge skipped at once). The events,
their order and what the trend model learnt must be those of feeding every sample as it came."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.backends.sim.backend import SimBackend
from gpuvet.checks import window
from gpuvet.checks.detectors import default_detectors
from gpuvet.checks.window import TelemetryWindow, WindowConfig
from gpuvet.watch.trend import thermal_trend

FAULTS = """base: hgx-h200-8
faults:
  - {kind: thermal_creep, module: gpu2, c_per_watt_per_day: 0.02, start: 0h}
  - {kind: link_degraded, between: [gpu0, pcisw0], factor: 0.5, at: 3h}
  - {kind: link_down, between: [gpu6, nvswitch0], at: 5h}
  - {kind: ecc_rising, module: gpu1, at: 2h, per_hour: 40}
  - {kind: xid, module: gpu3, code: 48, at: 4h}
  - {kind: xid, module: gpu5, code: 79, at: 9h}
  - {kind: mem_clock_flapping, module: gpu3, at: 6h}
  - {kind: power_cap_low, module: gpu4, watts: 300}
  - {kind: module_lost, module: gpu7, at: 7h}
  - {kind: module_added, module: gpu7, at: 8h}
"""


def _run(spec: Path, chunked: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[object, ...]:
    source = SimBackend.from_ref(str(spec)).telemetry()
    trend = thermal_trend(source.slowdown_c(), 60.0)
    with monkeypatch.context() as m:
        if not chunked:
            m.setattr(window, "_Chunk", lambda: None)  # every sample to every observer as it comes
        result = TelemetryWindow(source, WindowConfig(60.0, 300.0, 10 * 3600.0, None),
                                 [*default_detectors(), trend]).run()
    events = [(e.kind, e.module, e.time, e.message, e.uuid, repr(e.evidence)) for e in result.events]
    fits = [trend.fit(module, result.end_t) for module in trend.modules()]
    return events, result.samples, fits


@pytest.mark.parametrize("chunk", [window.CHUNK_SAMPLES, 37])
def test_a_window_fed_in_chunks_raises_what_sample_by_sample_feeding_raises(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    spec = tmp_path / "faulty.yaml"
    spec.write_text(FAULTS)
    monkeypatch.setattr(window, "CHUNK_SAMPLES", chunk)  # 37: chunk ends fall inside ticks and episodes
    chunked = _run(spec, True, monkeypatch)
    plain = _run(spec, False, monkeypatch)
    kinds = {e[0] for e in plain[0]}  # type: ignore[attr-defined]
    assert {"xid", "ecc_rising", "link_degraded", "link_down", "module_lost", "module_added"} <= kinds, kinds
    assert chunked == plain
