"""Where watch sends what the telemetry window sees: the logbook (samples flushed at least once
per wall second, so a killed watch loses at most the last second), the Prometheus endpoint's
state, and the caller's callbacks (the live table)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from gpuvet.backends.readings import ModuleIdentity, Sample
from gpuvet.backends.telemetry import TelemetrySource
from gpuvet.checks.events import Event, Severity
from gpuvet.checks.window import TickBlock
from gpuvet.ledger.ladders import Ladders, load_ladders
from gpuvet.ledger.record import ModuleStep, module_steps
from gpuvet.logbook.records import Sighting
from gpuvet.logbook.store import Logbook, SampleRow, utc_now
from gpuvet.report.jsonable import to_jsonable

if TYPE_CHECKING:  # the endpoint's module is imported where it is used (issue 43)
    from gpuvet.watch.prometheus import ExportState

FLUSH_WALL_S = 1.0
STEPS_WALL_S = 60.0  # how often the served ladder steps are read again: a step whose window ran out drops
MAX_BUFFER = 200_000
_VERDICT = {Severity.INFO: "pass", Severity.WARN: "warn", Severity.CRITICAL: "fail"}
_RANK = [Severity.INFO, Severity.WARN, Severity.CRITICAL]


@dataclass
class LogbookSink:
    """One watch run in the logbook: its events, its samples (buffered), its verdict."""

    logbook: Logbook
    run_id: str
    run_key: int
    node: str = ""
    ladders: Ladders | None = None  # set: each event of a module says the step of its ladder (the ledger's)
    export: ExportState | None = None  # set: Prometheus serves each module's step (gpuvet_module_ladder_step)
    _stepped: set[str] = field(default_factory=set)  # modules whose history was read for their step
    _served: set[str] = field(default_factory=set)  # the keys of export.steps this run set
    _steps_at: float = field(default_factory=time.monotonic)  # when the served steps were last read
    _sighted: set[tuple[str, str]] = field(default_factory=set)  # (slot, uuid) sightings written
    _known: dict[str, ModuleIdentity] = field(default_factory=dict)
    _mkeys: dict[str, int] = field(default_factory=dict)
    _buffer: list[SampleRow] = field(default_factory=list)
    _last_flush: float = field(default_factory=time.monotonic)
    takes_blocks: ClassVar[bool] = True  # ``samples_block``: a simulated node's runs of ticks (issue 43)

    @classmethod
    def begin(cls, logbook: Logbook, env: dict[str, object], simulated: bool, node: str,
              export: ExportState | None = None) -> LogbookSink:
        run_id = logbook.begin("watch", env, simulated, node)
        return cls(logbook, run_id, logbook.run_key(run_id), node, load_ladders(), export)

    def event(self, e: Event) -> None:
        extra = {"predicted_crossing": e.predicted_crossing} if e.predicted_crossing else {}
        self.logbook.event(self.run_id, e.kind, e.message, e.module, e.uuid, e.time, e.severity.value,
                           {**to_jsonable(e.evidence), **extra}, node=self.node or None)
        if self.ladders and e.uuid and e.severity is not Severity.INFO:
            self.step_note(e)

    def step_note(self, e: Event) -> None:
        """The module's ladder step after this event, kept as an event of its own (``ledger_step``)."""
        found = module_steps(self.logbook, [e.uuid or ""], self.ladders or load_ladders(), utc_now())
        if e.uuid and self.export is not None:
            self._stepped.add(e.uuid)  # read again with the others (refresh_steps)
        for step in found:
            self.logbook.event(self.run_id, "ledger_step", f"{step.step.step}: {step.step.why}", e.module, e.uuid,
                               e.time, "info", step.to_json(), node=self.node or None)
        self._export(found)

    def _export(self, steps: list[ModuleStep], replace: bool = False) -> None:
        """Serve these steps, keyed by UUID (a module without one by its id); ``replace``: the steps
        of every module now, so a step no longer standing (its window ran out) is dropped."""
        if self.export is None:
            return
        from gpuvet.watch.prometheus import LadderStep

        keys = {m.uuid or m.slot: LadderStep(m.serial or "", m.step.fault, m.step.step, m.step.rank) for m in steps}
        with self.export.lock:
            if replace:
                for gone in self._served - set(keys):
                    self.export.steps.pop(gone, None)
                self._served = set()
            self.export.steps.update(keys)
            self._served |= set(keys)

    def refresh_steps(self, now_utc: str | None = None) -> None:
        """Read every listed module's step again (once a minute of wall time while samples come in):
        the gauge then drops or lowers an expired step without waiting for an event."""
        self._steps_at = time.monotonic()
        if self.export is not None and self._stepped:
            self._export(module_steps(self.logbook, sorted(self._stepped), self.ladders or load_ladders(),
                                      now_utc or utc_now()), replace=True)

    def listed(self, known: dict[str, ModuleIdentity]) -> None:
        self._known = known
        now = utc_now()
        # a (slot, module) pair is kept once per run: the ones already written are not sent again
        fresh = [m for m in known.values() if (m.id, m.uuid) not in self._sighted]
        self.logbook.sight([Sighting(self.run_id, now, self.node, m.id, m.uuid, None, m.bus_id, m.model)
                            for m in fresh])
        self._sighted.update((m.id, m.uuid) for m in fresh)
        new = [uuid for uuid in known if uuid not in self._stepped]
        if new and self.export is not None:  # the step each module stands on from its history, served from the start
            self._stepped |= set(new)
            self._export(module_steps(self.logbook, new, self.ladders or load_ladders(), now))

    def samples(self, t: float, samples: Sequence[Sample], slow: bool, cost_per_module: float) -> None:
        for s in samples:
            self._buffer.append((self._key(s.uuid, s.module), s.t, s.temp_c, s.power_w, s.sm_clock_mhz,
                                 s.mem_clock_mhz, s.util, s.throttle))
        self._flush_due()

    def samples_block(self, block: TickBlock, cost_per_module: float) -> None:
        """A run of ticks' samples (``samples`` of each tick in turn), from the block's columns."""
        keys = [self._key(i.uuid, i.id) for i in block.identities]
        self._buffer += zip(keys * len(block.times), *block.logbook_columns(), strict=True)
        self._flush_due()

    def _key(self, uuid: str, module: str) -> int:
        key = self._mkeys.get(uuid)
        if key is None:
            seen = self._known.get(uuid)
            key = self._mkeys[uuid] = self.logbook.module_key(uuid, module, seen.bus_id if seen else None,
                                                              seen.model if seen else None)
        return key

    def _flush_due(self) -> None:
        now = time.monotonic()
        if self.export is not None and now - self._steps_at >= STEPS_WALL_S:
            self.refresh_steps()
        if now - self._last_flush >= FLUSH_WALL_S or len(self._buffer) >= MAX_BUFFER:
            self.flush()
            self._last_flush = now

    def flush(self) -> None:
        pending, self._buffer = self._buffer, []  # taken before writing: a failed write is never retried twice
        if pending:
            self.logbook.add_samples(self.run_key, pending)  # on a full disk: keeps what fits, then says so

    def abort(self, exc: BaseException) -> None:
        self.flush()
        self.logbook.abort(self.run_id, f"{type(exc).__name__}: {exc}")

    def finish(self, end_t: float, keep_raw_s: float, events: Sequence[Event]) -> None:
        self.flush()
        self.logbook.prune(self.run_key, keep_raw_s, end_t)
        worst = max((e.severity for e in events), key=_RANK.index, default=Severity.INFO)
        self.logbook.finish(self.run_id, _VERDICT[worst], [])


@dataclass
class ExportSink:
    """Keeps the Prometheus endpoint's state current (it is read from the HTTP server's thread)."""

    export: ExportState
    source: TelemetrySource
    takes_blocks: ClassVar[bool] = True  # a scrape reads the latest state: ``samples_block`` (issue 43)

    def event(self, e: Event) -> None:
        with self.export.lock:
            key = (e.kind, e.uuid or "")
            self.export.events[key] = self.export.events.get(key, 0) + 1
            if e.kind == "overheat_forecast" and e.uuid and e.predicted_crossing is not None:
                self.export.forecast_s[e.uuid] = max(e.predicted_crossing - e.time, 0.0)
            elif e.kind == "overheat_forecast_withdrawn" and e.uuid:
                self.export.forecast_s.pop(e.uuid, None)
            elif e.kind == "module_lost" and e.uuid:  # its last reading is not a live one: no longer served
                ident = self.export.identities.pop(e.uuid, None)
                if ident is not None:  # kept aside: its events' labels and its last Xid (why it went) remain
                    self.export.lost[e.uuid] = ident
                for per_module in (self.export.latest, self.export.slow, self.export.forecast_s):
                    per_module.pop(e.uuid, None)

    def listed(self, known: dict[str, ModuleIdentity]) -> None:
        with self.export.lock:
            self.export.identities = dict(known)
            for uuid in known:  # back on the bus (hot-plug, reset): served again
                self.export.lost.pop(uuid, None)
            self.export.host = self.source.host()

    def samples(self, t: float, samples: Sequence[Sample], slow: bool, cost_per_module: float) -> None:
        with self.export.lock:
            for s in samples:
                self.export.latest[s.uuid] = s
                if s.xids:
                    self.export.last_xid[s.uuid] = s.xids[-1]
                if slow:
                    self.export.slow[s.uuid] = s
            self.export.sampler_seconds = cost_per_module
            self.export.simulated = self.source.simulated

    def samples_block(self, block: TickBlock, cost_per_module: float) -> None:
        """A run of ticks leaves what ``samples`` of each tick leaves: the last tick's readings,
        the last slow tick's fields, the Xids (read on the first tick only). The counters are the
        samples' own and the events', which come one by one."""
        slow = [i for i, s in enumerate(block.slow) if s]
        for i in sorted(({0} if block.xids else set()) | set(slow[-1:]) | {len(block.times) - 1}):
            self.samples(block.times[i], block.samples(i), block.slow[i], cost_per_module)


@dataclass
class CallbackSink:
    """The caller's hooks: each event as it happens, each tick's samples, and each run of ticks
    sampled at once (where ``on_block`` is set, those ticks reach ``on_tick`` no more)."""

    on_event: Callable[[Event], None] | None = None
    on_tick: Callable[[float, list[Sample]], None] | None = None
    on_block: Callable[[TickBlock], None] | None = None
    _block_end: float = -math.inf  # the last tick handed over in a block

    @property
    def takes_blocks(self) -> bool:
        """Runs of ticks need no hook, or the caller's own (the live table reads a block's latest state)."""
        return self.on_tick is None or self.on_block is not None

    def samples_block(self, block: TickBlock, cost_per_module: float) -> None:
        if self.on_block:
            self._block_end = block.times[-1]
            self.on_block(block)

    def event(self, e: Event) -> None:
        if self.on_event:
            self.on_event(e)

    def listed(self, known: dict[str, ModuleIdentity]) -> None:
        pass

    def samples(self, t: float, samples: Sequence[Sample], slow: bool, cost_per_module: float) -> None:
        if self.on_tick and t > self._block_end:  # a block's slow ticks come again, empty: already handed over
            self.on_tick(t, list(samples))
