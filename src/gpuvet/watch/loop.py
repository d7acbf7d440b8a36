"""The watch loop: sample, store, detect, forecast, follow hot-plug, export.

Time is the source's: wall seconds on a real node, simulated seconds on a simulated one
(``speedup`` sets how many simulated seconds pass per wall second; None runs as fast as it
can). Samples are flushed to the logbook at least once per wall second, so a killed watch
loses at most the last second."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpuvet.backends.base import Backend
from gpuvet.backends.readings import ModuleIdentity, Sample
from gpuvet.checks.admission import admit
from gpuvet.checks.detectors import Detector, default_detectors
from gpuvet.checks.events import Event, Severity
from gpuvet.logbook.store import Logbook, SampleRow
from gpuvet.report.jsonable import to_jsonable
from gpuvet.watch.forecast import ThermalForecaster
from gpuvet.watch.prometheus import ExportState

FLUSH_WALL_S = 1.0
MAX_BUFFER = 200_000
LOST_AFTER_MISSES = 3


@dataclass(frozen=True)
class WatchConfig:
    interval_s: float = 1.0
    slow_every_s: float = 30.0
    duration_s: float | None = None  # None: until stopped
    speedup: float | None = 1.0  # simulated seconds per wall second; None: as fast as possible
    horizon_s: float = 72 * 3600.0
    keep_raw_s: float = 8 * 86400.0
    admission: bool = True


@dataclass
class WatchResult:
    run_id: str | None
    simulated: bool
    duration_s: float
    samples: int
    sampler_seconds_per_module: float
    events: list[Event]
    modules: dict[str, dict[str, Any]]  # uuid -> identity and state (ready, quarantined, lost)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "simulated": self.simulated, "run_id": self.run_id, "duration_s": self.duration_s, "samples": self.samples,
            "sampler_seconds_per_module": self.sampler_seconds_per_module,
            "modules": list(self.modules.values()), "notes": self.notes,
            "events": [event_json(e) for e in self.events],
        }


def event_json(e: Event) -> dict[str, Any]:
    out = {"kind": e.kind, "severity": e.severity.value, "module": e.module, "uuid": e.uuid, "time": e.time,
           "message": e.message, "evidence": to_jsonable(e.evidence)}
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
    stop_requested: bool = False
    forecaster: ThermalForecaster | None = None  # after run(): its trends, for doctor

    def run(self) -> WatchResult:
        source = self.backend.telemetry()
        cfg = self.config
        forecaster = self.forecaster = ThermalForecaster(source.slowdown_c(), horizon_s=cfg.horizon_s)
        events: list[Event] = []
        known: dict[str, ModuleIdentity] = {}  # uuid -> identity of modules seen and not lost
        modules: dict[str, dict[str, Any]] = {}
        misses: dict[str, int] = {}
        run_id = run_key = None
        if self.logbook:
            env = {"kind": "watch", "backend": self.backend.name, "simulated": source.simulated,
                   "node": self.backend.node().name, "interval_s": cfg.interval_s, "speedup": cfg.speedup,
                   "started_wall": time.time()}
            run_id = self.logbook.begin("watch", env, source.simulated, self.backend.node().name)
            run_key = self.logbook.run_key(run_id)
        mkeys: dict[str, int] = {}
        buffer: list[SampleRow] = []
        total = 0
        cost = 0.0
        cost_n = 0
        t = 0.0
        last_slow = -1e18
        wall0 = last_flush = time.monotonic()

        def emit(e: Event) -> None:
            events.append(e)
            if self.logbook and run_id:
                self.logbook.event(run_id, e.kind, e.message, e.module, e.uuid, e.time, e.severity.value,
                                   {**to_jsonable(e.evidence),
                                    **({"predicted_crossing": e.predicted_crossing} if e.predicted_crossing else {})})
            if self.export is not None:
                with self.export.lock:
                    key = (e.kind, e.uuid or "")
                    self.export.events[key] = self.export.events.get(key, 0) + 1
                    if e.kind == "overheat_forecast" and e.uuid and e.predicted_crossing is not None:
                        self.export.forecast_s[e.uuid] = max(e.predicted_crossing - e.time, 0.0)
                    elif e.kind == "overheat_forecast_withdrawn" and e.uuid:
                        self.export.forecast_s.pop(e.uuid, None)
            if self.on_event:
                self.on_event(e)

        def flush() -> None:
            nonlocal buffer
            pending, buffer = buffer, []  # taken before writing: a failed write is never retried twice
            if self.logbook and run_key is not None and pending:
                self.logbook.add_samples(run_key, pending)  # on a full disk: keeps what fits, then says so

        try:
            while not self.stop_requested and (cfg.duration_s is None or t <= cfg.duration_s):
                slow = t - last_slow >= cfg.slow_every_s
                if slow:
                    last_slow = t
                    present = {i.uuid: i for i in source.present(t)}
                    for uuid, ident in present.items():
                        if uuid not in known:
                            known[uuid] = ident
                            first = t == 0.0
                            modules[uuid] = {"id": ident.id, "uuid": uuid, "bus_id": ident.bus_id,
                                             "model": ident.model, "state": "present" if first else "added"}
                            if not first:
                                emit(Event("module_added", Severity.INFO, ident.id, t,
                                           f"{ident.id} ({uuid}) appeared", {"bus_id": ident.bus_id}, uuid=uuid))
                                if cfg.admission:
                                    a = admit(self.backend, ident.id)
                                    modules[uuid]["state"] = "ready" if a.ready else "quarantined"
                                    emit(Event("module_ready" if a.ready else "module_quarantined",
                                               Severity.INFO if a.ready else Severity.WARN, ident.id, t,
                                               a.reason, a.evidence, uuid=uuid))
                    for uuid in [u for u in known if u not in present]:
                        ident = known.pop(uuid)
                        modules[uuid]["state"] = "lost"
                        emit(Event("module_lost", Severity.CRITICAL, ident.id, t,
                                   f"{ident.id} ({uuid}) is gone from the bus; its history stays in the logbook",
                                   {"bus_id": ident.bus_id}, uuid=uuid))
                    if self.export is not None:
                        with self.export.lock:
                            self.export.identities = {u: known[u] for u in known}
                            self.export.host = source.host()
                started = time.perf_counter()
                samples = source.sample(t, slow)
                elapsed = time.perf_counter() - started
                if samples:
                    cost += elapsed
                    cost_n += len(samples)
                answered = {s.uuid for s in samples}
                for uuid in list(known):
                    misses[uuid] = 0 if uuid in answered else misses.get(uuid, 0) + 1
                    if misses[uuid] == LOST_AFTER_MISSES:
                        ident = known.pop(uuid)
                        modules[uuid]["state"] = "lost"
                        emit(Event("module_lost", Severity.CRITICAL, ident.id, t,
                                   f"{ident.id} stopped answering ({LOST_AFTER_MISSES} samples missed)", {}, uuid=uuid))
                for s in samples:
                    if s.uuid not in mkeys and self.logbook:
                        seen = known.get(s.uuid)
                        mkeys[s.uuid] = self.logbook.module_key(s.uuid, s.module, seen.bus_id if seen else None,
                                                                seen.model if seen else None)
                    if self.logbook:
                        buffer.append((mkeys[s.uuid], s.t, s.temp_c, s.power_w, s.sm_clock_mhz, s.mem_clock_mhz,
                                       s.util, s.throttle))
                    for d in self.detectors:
                        for e in d.observe(s):
                            emit(e)
                    for e in forecaster.observe(s):
                        emit(e)
                total += len(samples)
                if self.export is not None:
                    with self.export.lock:
                        for s in samples:
                            self.export.latest[s.uuid] = s
                            if s.xids:
                                self.export.last_xid[s.uuid] = s.xids[-1]
                            if slow:
                                self.export.slow[s.uuid] = s
                        self.export.sampler_seconds = cost / cost_n if cost_n else 0.0
                        self.export.simulated = source.simulated
                if self.on_tick:
                    self.on_tick(t, samples)
                now = time.monotonic()
                if now - last_flush >= FLUSH_WALL_S or len(buffer) >= MAX_BUFFER:
                    flush()
                    last_flush = now
                t += cfg.interval_s
                if cfg.speedup is not None:
                    delay = wall0 + t / cfg.speedup - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
        except BaseException as exc:
            flush()
            if self.logbook and run_id:
                self.logbook.abort(run_id, f"{type(exc).__name__}: {exc}")
            raise
        flush()
        if self.logbook and run_id and run_key is not None:
            self.logbook.prune(run_key, cfg.keep_raw_s, t)
            worst = max((e.severity for e in events), key=lambda s: ["info", "warn", "critical"].index(s.value),
                        default=Severity.INFO)
            verdict = {"info": "pass", "warn": "warn", "critical": "fail"}[worst.value]
            self.logbook.finish(run_id, verdict, [])
        notes = []
        if not modules:
            why = self.backend.why_no_modules
            notes.append("No GPU module to watch" + (f" ({why})" if why else "")
                         + "; only host metrics were sampled. Try a simulated node: gpuvet watch --sim hgx-h200-8")
        if source.simulated:
            notes.append("simulated: every sample comes from a model of the node")
        return WatchResult(run_id, source.simulated, t - cfg.interval_s, total, cost / cost_n if cost_n else 0.0,
                           events, modules, notes)
