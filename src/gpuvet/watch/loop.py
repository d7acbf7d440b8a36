"""The watch loop: a telemetry window (``gpuvet.checks.window``: presence, pacing, detectors)
with the thermal forecast, its events and samples sent to the logbook, the Prometheus endpoint
and the live table.

Time is the source's: wall seconds on a real node, simulated seconds on a simulated one
(``speedup`` sets how many simulated seconds pass per wall second; None runs as fast as it
can)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuvet.backends.base import Backend
from gpuvet.backends.readings import Sample
from gpuvet.backends.telemetry import TelemetrySource
from gpuvet.checks.detectors import Detector, default_detectors
from gpuvet.checks.events import Event
from gpuvet.checks.model import Json
from gpuvet.checks.window import Sink, TelemetryWindow, TickBlock, WindowConfig, WindowResult
from gpuvet.logbook.store import Logbook
from gpuvet.report.jsonable import to_jsonable
from gpuvet.watch.events import event_roots, root_of
from gpuvet.watch.forecast import ForecastStatus, ThermalForecaster
from gpuvet.watch.nic_sink import NicSink
from gpuvet.watch.sinks import CallbackSink, ExportSink, LogbookSink

if TYPE_CHECKING:  # the endpoint and admission are imported where they are used (issue 43)
    from gpuvet.checks.admission import Admission
    from gpuvet.watch.prometheus import ExportState


@dataclass(frozen=True)
class WatchConfig:
    interval_s: float = 1.0
    slow_every_s: float = 30.0
    duration_s: float | None = None  # None: until stopped
    speedup: float | None = 1.0  # simulated seconds per wall second; None: as fast as possible
    horizon_s: float = 72 * 3600.0
    keep_raw_s: float = 8 * 86400.0
    admission: bool = True

    @property
    def window(self) -> WindowConfig:
        return WindowConfig(self.interval_s, self.slow_every_s, self.duration_s, self.speedup)


@dataclass
class WatchResult:
    run_id: str | None
    simulated: bool
    duration_s: float
    samples: int
    sampler_seconds_per_module: float
    events: list[Event]
    modules: dict[str, dict[str, str | None]]  # uuid -> identity and state (ready, quarantined, lost)
    notes: list[str] = field(default_factory=list)
    forecast: list[ForecastStatus] = field(default_factory=list)  # each module's forecast state at the end
    node: str | None = None  # the node watched: every event names it (issue 44)
    stopped_by: str = "duration"  # or "signal": a script must tell a cut-short run from a whole one

    def to_json(self) -> dict[str, Json]:
        """``roots`` first (issue 42): each lost module or downed link with the events it explains,
        which name it in ``root``."""
        root = root_of(self.events)
        return {
            "simulated": self.simulated, "run_id": self.run_id, "duration_s": self.duration_s, "samples": self.samples,
            "sampler_seconds_per_module": self.sampler_seconds_per_module,
            "roots": [r.to_json(self.events) for r in event_roots(self.events)],
            "modules": list(self.modules.values()), "notes": self.notes,
            "events": [event_json(e, self.node) | ({"root": root[i]} if i in root else {})
                       for i, e in enumerate(self.events)],
            "forecast": [to_jsonable(f.to_json()) for f in self.forecast], "stopped_by": self.stopped_by,
        }


def event_json(e: Event, node: str | None = None) -> dict[str, Json]:
    out: dict[str, Json] = {"kind": e.kind, "severity": e.severity.value, "module": e.module, "uuid": e.uuid, "time": e.time,
           "message": e.message, "evidence": to_jsonable(e.evidence)}
    if node is not None:
        out["node"] = node
    if e.predicted_crossing is not None:
        out["predicted_crossing"] = e.predicted_crossing
    return out


@dataclass
class Watcher:
    backend: Backend
    config: WatchConfig = field(default_factory=WatchConfig)
    logbook: Logbook | None = None
    detectors: list[Detector] = field(default_factory=default_detectors)
    export: ExportState | None = None
    on_event: Callable[[Event], None] | None = None
    on_tick: Callable[[float, list[Sample]], None] | None = None
    on_block: Callable[[TickBlock], None] | None = None  # set: runs of ticks sampled at once come here, not to on_tick
    stop_requested: bool = False
    forecaster: ThermalForecaster | None = None  # after run(): its trends

    def run(self) -> WatchResult:
        source = self.backend.telemetry()
        cfg = self.config
        self.forecaster = ThermalForecaster(source.slowdown_c(), horizon_s=cfg.horizon_s)
        book = self._begin(source)
        sinks: list[Sink] = [s for s in (book, ExportSink(self.export, source) if self.export else None) if s]
        sinks.append(CallbackSink(self.on_event, self.on_tick, self.on_block))
        nic = self._nic_sink(sinks)
        window = TelemetryWindow(source, cfg.window, [*self.detectors, self.forecaster], [*sinks, nic],
                                 self._admit if cfg.admission else None, lambda: self.stop_requested)
        try:
            result = window.run()
        except BaseException as exc:
            if book:
                book.abort(exc)
            raise
        result.events = sorted([*result.events, *nic.events], key=lambda e: e.time)  # stable: modules first
        if book:
            book.finish(result.end_t, cfg.keep_raw_s, result.events)
        return self._result(result, book, source.simulated, nic.notes)

    def _nic_sink(self, forward: list[Sink]) -> NicSink:
        """The NICs, sampled on slow ticks beside the modules (their own records and judge)."""
        from gpuvet.checks.nic_watch import NicWatch, declared_nics

        design = self.backend.declared  # the simulated node's spec; None on a live node (no --expect in watch)
        return NicSink(self.backend.nics_at, NicWatch(declared_nics(design)), forward, self.export)

    def _admit(self, module: str) -> Admission:
        from gpuvet.checks.admission import admit  # benchmarks a module: only when one appears (issue 43)

        return admit(self.backend, module)

    def _begin(self, source: TelemetrySource) -> LogbookSink | None:
        if not self.logbook:
            return None
        node = self.backend.node().name
        env: dict[str, object] = {"kind": "watch", "backend": self.backend.name, "simulated": source.simulated,
                                  "node": node, "interval_s": self.config.interval_s, "speedup": self.config.speedup,
                                  "started_wall": time.time()}
        return LogbookSink.begin(self.logbook, env, source.simulated, node, self.export)

    def _result(self, result: WindowResult, book: LogbookSink | None, simulated: bool,
                more: list[str] | None = None) -> WatchResult:
        notes = list(more or [])
        if not result.modules:
            why = self.backend.why_no_modules
            notes.append("No GPU module to watch" + (f" ({why})" if why else "")
                         + "; only host metrics were sampled. Try a simulated node: gpuvet watch --node hgx-h200-8")
        if simulated:
            notes.append("simulated: every sample comes from a model of the node")
        watched = result.end_t - self.config.interval_s
        if self.stop_requested and self.config.duration_s is not None and watched < self.config.duration_s:
            asked = self.config.duration_s
            notes.append(f"stopped early by a signal after {max(watched, 0.0):,.0f} s of the {asked:,.0f} s asked "
                         "for: the run is shorter than --duration")
        modules = {uuid: m.to_json() for uuid, m in result.modules.items()}
        forecast = [self.forecaster.status(m, result.end_t) for m in sorted(self.forecaster.uuids)] \
            if self.forecaster else []
        return WatchResult(book.run_id if book else None, simulated, watched,
                           result.samples, result.sampler_seconds_per_module, result.events, modules, notes, forecast,
                           self.backend.node().name, "signal" if self.stop_requested else "duration")
