"""Replay recorded telemetry through the detectors and the overheating forecast, as fast as the
machine allows, with the recorded times.

Each node gets its own forecaster and its own time line: nodes' clocks may disagree (skew),
so windows and peers are never formed across nodes, and samples are ordered per node."""

from __future__ import annotations

import math
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuvet.backends.readings import Sample
from gpuvet.checks.blocks import ModuleBlock, Placed, from_samples, observe_all
from gpuvet.errors import GpuvetError
from gpuvet.node.catalog import find_model
from gpuvet.node.vendor_tools import GIVE
from gpuvet.report.jsonable import to_jsonable
from gpuvet.watch import bounds
from gpuvet.watch.backtest import Backtest, Outcome, backtest, check_outcomes
from gpuvet.watch.columns import Columns, floats
from gpuvet.watch.detectors import Detector, default_detectors
from gpuvet.watch.events import Event, Severity, event_roots, root_of
from gpuvet.watch.forecast import ForecastStatus, ThermalForecaster
from gpuvet.watch.recording import ModuleMeta, Recording

if TYPE_CHECKING:  # a replay with --no-log never loads the logbook
    from gpuvet.logbook.store import Logbook, SampleRow

BATCH = 100_000
INTERVAL_ROWS = 20_000  # the stream's first rows give its sampling interval (the median gap of one module's)


@dataclass(frozen=True)
class ReplayConfig:
    horizon_s: float = 72 * 3600.0
    slowdown_c: float | None = None  # for models neither the catalog nor the data knows
    outcomes: tuple[Outcome, ...] | None = None  # --backtest: what really happened, to score the forecast against


@dataclass
class ReplayResult:
    run_id: str | None
    source: str
    relative_time: bool
    samples: int
    first_t: float | None
    last_t: float | None
    wall_s: float
    modules: list[ModuleMeta]
    events: list[Event]
    forecast: list[ForecastStatus]
    notes: list[str] = field(default_factory=list)
    backtest: Backtest | None = None

    @property
    def samples_per_s(self) -> float:
        return self.samples / self.wall_s if self.wall_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        root = root_of(self.events)
        return {
            "simulated": False, "replay": True, "run_id": self.run_id, "source": self.source,
            "relative_time": self.relative_time, "samples": self.samples, "first": self._when(self.first_t),
            "last": self._when(self.last_t), "wall_s": round(self.wall_s, 3),
            "samples_per_s": round(self.samples_per_s), "notes": self.notes,
            "modules": [{"module": m.name, "node": m.node, "uuid": m.uuid, "model": m.model, "bus_id": m.bus_id}
                        for m in self.modules],
            "roots": [r.to_json(self.events) for r in event_roots(self.events)],  # issue 42: before the events
            "forecast": [self.forecast_json(f) for f in self.forecast],
            "events": [self.event_json(e) | ({"root": root[i]} if i in root else {}) for i, e in enumerate(self.events)],
            **({"backtest": self.backtest.to_json()} if self.backtest is not None else {}),
        }

    def forecast_json(self, f: ForecastStatus) -> dict[str, Any]:
        """A module's forecast state and what it rests on, with the crossing's UTC time."""
        return {**f.to_json(), "predicted_crossing_utc": self._when(f.crossing)}

    def event_json(self, e: Event) -> dict[str, Any]:
        from gpuvet.watch.loop import event_json  # the live loop's imports (sinks, exporter) only with events

        out = event_json(e)
        out["time_utc"] = self._when(e.time)
        if e.predicted_crossing is not None:
            out["predicted_crossing_utc"] = self._when(e.predicted_crossing)
        return out

    def _when(self, t: float | None) -> str | None:
        if t is None or self.relative_time:
            return None
        return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def slowdown_of(meta: ModuleMeta, fallback: float | None) -> float | None:
    """The data's own figure, else the catalog's for the model, else the user's."""
    if meta.slowdown_c:
        return meta.slowdown_c
    model = find_model(meta.model) if meta.model else None
    if model is not None and model.slowdown_c:
        return float(model.slowdown_c)
    return fallback


def interval_of(samples: Sequence[Sample]) -> float:
    """The median spacing of one module's samples: the sampling interval of the log."""
    if not samples:
        return 60.0
    first = samples[0].module
    return _median_gap([s.t for s in samples[:INTERVAL_ROWS] if s.module == first])


def interval_of_blocks(blocks: Sequence[ModuleBlock]) -> float:
    """``interval_of`` the node's stream, given as blocks (the first block holds its first sample)."""
    if not blocks:
        return 60.0
    return _median_gap([t for t, row in zip(blocks[0].t, blocks[0].rows, strict=True) if row < INTERVAL_ROWS])


def _median_gap(times: list[float]) -> float:
    gaps = [b - a for a, b in zip(times, times[1:], strict=False) if b > a]
    return statistics.median(gaps) if gaps else 60.0


# what a module without a slowdown point needs, in its forecast status and the summary's count
SLOWDOWN_FIX = f"give --slowdown-c C (°C; {GIVE['slowdown_temp']})"


def forecaster_for(modules: Sequence[ModuleMeta], samples: Sequence[Sample], cfg: ReplayConfig,
                   interval_s: float | None = None) -> ThermalForecaster:
    interval = interval_of(samples) if interval_s is None else interval_s
    slowdown = {m.name: s for m in modules if (s := slowdown_of(m, cfg.slowdown_c)) is not None}
    fc = ThermalForecaster(slowdown, horizon_s=cfg.horizon_s, window_s=max(600.0, 3 * interval),
                           models={m.name: m.model or "" for m in modules})
    fc.slowdown_fix = SLOWDOWN_FIX
    return fc


@dataclass
class _Sink:
    """Where replayed samples and events go: the logbook (if any) and the caller."""

    book: Logbook | None
    run_id: str | None
    on_event: Callable[[Event], None] | None
    events: list[Event] = field(default_factory=list)
    rows: list[SampleRow] = field(default_factory=list)
    keys: dict[str, int] = field(default_factory=dict)

    def event(self, e: Event) -> None:
        self.events.append(e)
        if self.on_event:
            self.on_event(e)

    def sample(self, s: Sample, meta: ModuleMeta) -> None:
        if self.book is None or self.run_id is None:
            return
        key = self._key(s.module, s.uuid, meta)
        self.rows.append((key, s.t, s.temp_c, s.power_w, s.sm_clock_mhz, s.mem_clock_mhz, s.util, s.throttle))
        if len(self.rows) >= BATCH:
            self.flush()

    def blocks(self, blocks: Sequence[ModuleBlock], modules: dict[str, ModuleMeta]) -> None:
        """``sample`` of every sample of a node's ``blocks``, in stream order, from their columns."""
        if self.book is None or self.run_id is None:
            return
        keys = [self._key(b.module, b.uuid, modules[b.module]) for b in blocks]
        order = np.argsort(np.concatenate([np.asarray(b.rows, dtype=np.int64) for b in blocks]), kind="stable")
        key = np.concatenate([np.full(len(b), k, dtype=np.int64) for k, b in zip(keys, blocks, strict=True)])
        t = np.concatenate([np.asarray(b.t, dtype=np.float64) for b in blocks])
        temp, power, sm, mem, util = (floats(np.concatenate([b.array(name) for b in blocks])[order])
                                      for name in ("temp", "power", "sm", "mem", "util"))
        throttle = np.concatenate([np.asarray(b.throttle, dtype=np.int64) for b in blocks])[order].tolist()
        rows: list[SampleRow] = list(zip(key[order].tolist(), t[order].tolist(), temp, power, sm, mem, util, throttle,
                                         strict=True))
        for start in range(0, len(rows), BATCH):
            self.rows += rows[start:start + BATCH]
            if len(self.rows) >= BATCH:
                self.flush()

    def _key(self, module: str, uuid: str, meta: ModuleMeta) -> int:
        key = self.keys.get(module)
        if key is None:
            assert self.book is not None
            key = self.keys[module] = self.book.module_key(uuid, module, meta.bus_id, meta.model)
        return key

    def flush(self) -> None:
        if self.book is not None and self.run_id is not None and self.rows:
            self.book.add_samples(self.book.run_key(self.run_id), self.rows)
        self.rows = []


@dataclass
class _Node:
    forecaster: ThermalForecaster
    detectors: list[Detector]
    last: dict[str, float] = field(default_factory=dict)  # module -> time of its last sample


class Replayer:
    """Feeds recordings, in one go or chunk after chunk (``--follow``), keeping each node's
    detector and forecaster state between feeds."""

    def __init__(self, cfg: ReplayConfig | None = None, book: Logbook | None = None,
                 on_event: Callable[[Event], None] | None = None) -> None:
        self.cfg = cfg or ReplayConfig()
        self.book = book
        self.on_event = on_event
        self.nodes: dict[str, _Node] = {}
        self._metas: dict[str, list[ModuleMeta]] = {}
        self.modules: dict[str, ModuleMeta] = {}
        self.sink: _Sink | None = None
        self.samples = 0
        self.first_t: float | None = None
        self.last_t: float | None = None
        self.wall_s = 0.0
        self.notes: list[str] = []
        self.source = ""
        self.relative = False

    def begin(self, source: str, nodes: Sequence[str], envelope: dict[str, Any] | None = None) -> None:
        run_id = None
        if self.book is not None:
            run_id = self.book.begin("watch", {"kind": "watch", "replay": True, "source": source, **(envelope or {})},
                                     False, nodes[0] if len(nodes) == 1 else f"{len(nodes)} nodes (replay)")
        self.sink = _Sink(self.book, run_id, self.on_event)
        self.source = source

    def feed(self, rec: Recording) -> None:
        """Replay ``rec``'s samples (each node in time order). Its times are checked before the
        first is written: a NaN time once failed half-way through writing a run to the logbook."""
        span, recorded = _span(rec)
        self._check(rec, span, recorded)
        if self.sink is None:
            self.begin(rec.source, sorted({m.node for m in rec.modules.values()}))
        started = time.perf_counter()
        self.modules.update(rec.modules)
        self.notes += [n for n in [*rec.notes, *shared_uuids(self.modules.values())] if n not in self.notes]
        self.relative = self.relative or rec.relative_time
        self._metas = {}  # node -> its modules, once per feed (a filter per node was quadratic in nodes)
        for m in self.modules.values():
            self._metas.setdefault(m.node, []).append(m)
        try:
            if rec.only_columns and not {rec.modules[c.module].node for c in rec.columns} & set(self.nodes):
                self._feed_columns(rec)
            else:
                per_node: dict[str, list[Sample]] = defaultdict(list)
                for s in rec.samples:
                    per_node[rec.modules[s.module].node].append(s)
                for node, samples in sorted(per_node.items()):
                    samples.sort(key=attrgetter("t"))
                    self._feed_node(node, samples)
        except BaseException as exc:
            self._abort(exc)
            raise
        if span is not None:
            lo, hi = span
            self.first_t = lo if self.first_t is None else min(self.first_t, lo)
            self.last_t = hi if self.last_t is None else max(self.last_t, hi)
        self.wall_s += time.perf_counter() - started

    def _feed_node(self, node: str, samples: list[Sample]) -> None:
        assert self.sink is not None
        state = self.nodes.get(node)
        if state is None:
            metas = sorted(self._metas.get(node, ()), key=attrgetter("name"))
            state = self.nodes[node] = _Node(forecaster_for(metas, samples, self.cfg), default_detectors())
            if self.cfg.outcomes is not None:
                state.forecaster.tap = []  # the backtest re-runs the forecaster over these windows
        sink, last, modules = self.sink, state.last, self.modules
        kept: dict[str, tuple[list[Sample], list[int]]] = {}
        row = 0
        for s in samples:
            if last.get(s.module, -1e300) >= s.t:  # the same reading twice (overlapping logs, a restart)
                continue
            last[s.module] = s.t
            sink.sample(s, modules[s.module])
            got = kept.get(s.module)
            if got is None:
                got = kept[s.module] = ([], [])
            got[0].append(s)
            got[1].append(row)
            row += 1
        self.samples += row
        sink.flush()
        blocks = [from_samples(ss, rows) for ss, rows in kept.values()]
        for _, _, e in _in_order(state, blocks):
            sink.event(e)

    def _feed_columns(self, rec: Recording) -> None:
        """``_feed_node`` for each node of a recording held as columns: the same stream (time
        order, ties in the order read), blocks, logbook rows and events, without a ``Sample``."""
        per_node: dict[str, list[Columns]] = defaultdict(list)
        for c in rec.columns:
            per_node[rec.modules[c.module].node].append(c)
        for node, cols in sorted(per_node.items()):
            blocks = node_blocks(cols)
            metas = sorted(self._metas.get(node, ()), key=attrgetter("name"))
            state = self.nodes[node] = _Node(forecaster_for(metas, (), self.cfg, interval_of_blocks(blocks)),
                                             default_detectors())
            if self.cfg.outcomes is not None:
                state.forecaster.tap = []
            state.last.update((b.module, b.t[-1]) for b in blocks)
            self.samples += sum(len(b) for b in blocks)
            assert self.sink is not None
            self.sink.blocks(blocks, self.modules)
            self.sink.flush()
            for _, _, e in _in_order(state, blocks):
                self.sink.event(e)

    def _check(self, rec: Recording, span: tuple[float, float] | None, recorded: bool) -> None:
        """Raises GpuvetError for a time no reader should have let through (``recorded``: every time
        of ``rec`` one; ``span``: their least and greatest, None without any), or for times counted
        from the start after recorded times (or the reverse) in one replay."""
        if span is not None and not recorded:
            bad = next(t for t in rec.times() if not 0 <= t <= bounds.LATEST_T)
            raise GpuvetError(f"time {bad!r} is not a recorded time", where=rec.source,
                              fix="check the source's timestamps (Unix seconds from 1970 to 2100).")
        if self.samples and span is not None and rec.relative_time != self.relative:
            raise GpuvetError("samples without recorded times after samples with them (or the reverse)",
                              where=rec.source, fix="replay sources with and without timestamps in two runs.")

    def _abort(self, exc: BaseException) -> None:
        if self.sink is not None:
            self.sink.flush()
            if self.book is not None and self.sink.run_id is not None:
                self.book.abort(self.sink.run_id, f"{type(exc).__name__}: {exc}")

    def finish(self) -> ReplayResult:
        """Close the open windows, log the events with their recorded times, and sum up."""
        if self.sink is None:
            self.begin(self.source or "nothing", [])
        assert self.sink is not None
        statuses: list[ForecastStatus] = []
        for _node, state in sorted(self.nodes.items()):
            for e in state.forecaster.flush():
                self.sink.event(e)
            end = max(state.last.values(), default=0.0)
            statuses += [state.forecaster.status(m, end) for m in sorted(state.last)]
        events = sorted(self.sink.events, key=attrgetter("time"))
        _log_events(self.book, self.sink.run_id, events, self.relative)
        scored = None
        if self.cfg.outcomes is not None:
            scored = backtest([n.forecaster for _, n in sorted(self.nodes.items())], events, self.cfg.outcomes,
                              self.cfg.horizon_s, replayed={m.name: m.uuid for m in self.modules.values()})
        return ReplayResult(self.sink.run_id, self.source, self.relative, self.samples, self.first_t, self.last_t,
                            self.wall_s, sorted(self.modules.values(), key=attrgetter("name")), events, statuses,
                            list(self.notes), scored)


def _span(rec: Recording) -> tuple[tuple[float, float] | None, bool]:
    """The least and greatest of ``rec``'s times (None without any), and whether every one is a
    recorded time (finite, 1970 to 2100); a recording held as columns is measured in numpy."""
    if rec.only_columns:
        t = np.concatenate([c.t for c in rec.columns])
        if len(t) and bool(((t >= 0) & (t <= bounds.LATEST_T)).all()):
            return (float(t.min()), float(t.max())), True
    times = rec.times()
    if not times:
        return None, True
    lo, hi = min(times), max(times)
    return (lo, hi), math.isfinite(sum(times)) and lo >= 0 and hi <= bounds.LATEST_T


def _in_order(state: _Node, blocks: list[ModuleBlock]) -> list[Placed]:
    """The detectors' and the forecaster's events over the node's blocks, in the order feeding the
    samples one by one raised them (by stream position, then detector, forecaster last)."""
    placed = observe_all(state.detectors, blocks)
    windows = state.forecaster.observe_blocks(blocks, slot=len(state.detectors) * 10_000)
    if windows is None:  # a sample before a window still open: the forecaster one sample at a time
        stream = sorted((b.rows[i], b, i) for b in blocks for i in range(len(b)))
        windows = [(row, len(state.detectors) * 10_000 + k, e) for row, b, i in stream
                   for k, e in enumerate(state.forecaster.observe(b.sample(i)))]
    placed += windows
    placed.sort(key=lambda x: (x[0], x[1]))
    return placed


def node_blocks(cols: Sequence[Columns]) -> list[ModuleBlock]:
    """A node's modules as blocks over its stream: every sample by time, ties in the order read
    (a stable sort of the samples by time), each block in the order of its first sample."""
    t = np.concatenate([c.t for c in cols])
    rows = np.empty(len(t), dtype=np.int64)
    rows[np.lexsort((np.concatenate([c.seq for c in cols]), t))] = np.arange(len(t))
    cuts = np.cumsum([0, *(len(c) for c in cols)])
    made = []
    for m, c in enumerate(cols):
        order = np.lexsort((c.seq, c.t))
        placed = rows[cuts[m]:cuts[m + 1]][order]
        made.append((int(placed[0]), m, order, placed))
    return [cols[m].block(order, placed) for _, m, order, placed in sorted(made, key=lambda x: x[0])]


def shared_uuids(modules: Iterable[ModuleMeta]) -> list[str]:
    """A note for each UUID that more than one module carries (index 0 and index 1 of a log with one
    UUID): a UUID names one board, so a copied line, an edited log or a renumbering after a reboot
    is behind it. The modules are kept apart, as the log names them, and the note says so."""
    by_uuid: dict[str, list[ModuleMeta]] = defaultdict(list)
    for m in modules:
        if not m.uuid.startswith(m.node + "/"):  # node/gpuN stands in for a UUID the source lacks
            by_uuid[m.uuid].append(m)
    notes = []
    for uuid, metas in sorted(by_uuid.items()):
        if len(metas) < 2:
            continue
        names = sorted(m.name for m in metas)
        indices = " and ".join(n.rpartition("/")[2].removeprefix("gpu") for n in names[:4])
        notes.append(f"UUID {uuid} is on {len(names)} modules, indices {indices} ({', '.join(names[:4])}"
                     + (f" and {len(names) - 4} more" if len(names) > 4 else "") + "): one board has one UUID, so "
                     "the log was copied or edited, or the driver renumbered its boards; kept apart as the log "
                     "names them, each with its own history")
    return notes


def replay(rec: Recording, cfg: ReplayConfig | None = None, book: Logbook | None = None,
           on_event: Callable[[Event], None] | None = None, envelope: dict[str, Any] | None = None) -> ReplayResult:
    """Run the detectors and the forecast over ``rec``; events and samples go to ``book``."""
    r = Replayer(cfg, book, on_event)
    check_outcomes(r.cfg.outcomes or (), rec, r.cfg.horizon_s)
    r.begin(rec.source, sorted({m.node for m in rec.modules.values()}), envelope)
    r.feed(rec)
    return r.finish()


def _log_events(book: Logbook | None, run_id: str | None, events: list[Event], relative: bool) -> None:
    """Events with their recorded time: ``sim_time`` holds it (Unix seconds) and the data its UTC
    form; the logbook's own ``time_utc`` column is when the replay wrote it."""
    if book is None or run_id is None:
        return
    for e in events:
        data = {**to_jsonable(e.evidence), "replayed": True}
        if e.predicted_crossing is not None:
            data["predicted_crossing"] = e.predicted_crossing
        if not relative:
            data["recorded_utc"] = datetime.fromtimestamp(e.time, UTC).isoformat(timespec="seconds")
        book.event(run_id, e.kind, e.message, e.module, e.uuid, e.time, e.severity.value, data)
    worst = max((e.severity for e in events), key=lambda s: list(Severity).index(s), default=Severity.INFO)
    book.finish(run_id, {"info": "pass", "warn": "warn", "critical": "fail"}[worst.value], [])
