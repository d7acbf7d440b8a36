"""A telemetry window: sample a backend's modules every interval over a span, follow modules
leaving and joining, and run the detectors (and a trend model) over every sample. `watch` runs
one until stopped and keeps what it sees through its sinks; doctor runs a short one for
evidence. Time is the source's: wall seconds on a real node, simulated seconds on a simulated
one."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, cast

from gpuvet.backends.readings import ModuleIdentity, Sample
from gpuvet.backends.telemetry import TelemetrySource
from gpuvet.checks.detectors import Detector
from gpuvet.checks.events import Event
from gpuvet.checks.presence import ModuleState, Presence

if TYPE_CHECKING:  # benchmarking a module that appears is imported only where one does (issue 43); the blocks
    # load numpy: imported where samples are judged, never by doctor reading a file
    from gpuvet.backends.readings import ModuleColumns
    from gpuvet.checks.admission import Admission
    from gpuvet.checks.blocks import ModuleBlock, Placed


@dataclass(frozen=True)
class WindowConfig:
    interval_s: float = 1.0
    slow_every_s: float = 30.0
    duration_s: float | None = None  # None: until stopped
    speedup: float | None = 1.0  # simulated seconds per wall second; None: as fast as possible


SIM_WINDOW_S = 4 * 86400.0  # a simulated clock runs days in a second: long enough for a thermal trend
SIM_WINDOW_INTERVAL_S = 60.0
SIM_WINDOW_SLOW_EVERY_S = 300.0  # counters, link states: a 5-minute grain is plenty over 4 days
SIM_WINDOW_MAX_SAMPLES = 150_000  # module samples in one simulated window: bounds doctor on a big node
SIM_WINDOW_INTERVALS_S = (60.0, 120.0, 180.0, 240.0, 300.0, 360.0, 450.0, 600.0, 720.0, 900.0, 1200.0, 1800.0,
                          3600.0)  # each divides an hour, so hourly trend points stay aligned
LIVE_WINDOW_S = 10.0  # a real clock: a short look
LIVE_WINDOW_INTERVAL_S = 0.5


def sim_interval(modules: int, span_s: float) -> float:
    """The finest sampling interval (one minute for a node of usual size) at which ``modules``
    over ``span_s`` stay within ``SIM_WINDOW_MAX_SAMPLES`` samples: a 576-module domain is
    sampled every 30 min rather than 3.3 million times. The coarsest, an hour, bounds it."""
    for interval in SIM_WINDOW_INTERVALS_S:
        if modules * (span_s // interval + 1) <= SIM_WINDOW_MAX_SAMPLES:
            return interval
    return SIM_WINDOW_INTERVALS_S[-1]


def evidence_window(source: TelemetrySource, span_s: float | None = None) -> WindowConfig:
    """A window to gather evidence in: days of a simulated clock as fast as it runs (sampled
    more coarsely on a node too big to sample every minute), seconds of a real one in real
    time. ``span_s`` overrides the span."""
    if source.simulated:
        span = span_s if span_s is not None else SIM_WINDOW_S
        interval = sim_interval(len(source.present(0.0)), span)
        return WindowConfig(interval, max(SIM_WINDOW_SLOW_EVERY_S, interval), span, None)
    return WindowConfig(LIVE_WINDOW_INTERVAL_S, max(LIVE_WINDOW_INTERVAL_S, 30.0),
                        span_s if span_s is not None else LIVE_WINDOW_S, 1.0)


class Observer(Protocol):
    """A detector or a trend model: reads each sample, returns the events it raises."""

    def observe(self, s: Sample) -> list[Event]: ...


class Sink(Protocol):
    """Where what the window sees goes as it happens (a logbook, a metrics endpoint, a screen)."""

    def event(self, e: Event) -> None: ...

    def listed(self, known: dict[str, ModuleIdentity]) -> None:
        """The modules present after a slow tick."""

    def samples(self, t: float, samples: Sequence[Sample], slow: bool, cost_per_module: float) -> None: ...


@dataclass(frozen=True)
class TrendFit:
    """A module's thermal trend at comparable load, as doctor reads it."""

    slope_per_day: float  # of the thermal resistance, °C/W per day
    slope_low: float  # lower confidence bound: above zero when the rise is significant
    crossing: float | None  # seconds since the start when it reaches its slowdown temperature
    earliest: float | None
    load_power_w: float  # the module's usual power: slope × power is °C per day at load


class TrendModel(Observer, Protocol):
    """A thermal forecaster seen through what doctor asks of it."""

    def modules(self) -> list[str]: ...

    def fit(self, module: str, now: float) -> TrendFit | None: ...


@dataclass
class WindowResult:
    end_t: float  # time of the tick after the last one taken
    samples: int
    sampler_seconds_per_module: float
    events: list[Event]
    modules: dict[str, ModuleState]  # uuid -> every module seen, lost ones included


class Pacer:
    """Keeps the source's time at ``speedup`` × wall time; None runs as fast as it can."""

    def __init__(self, speedup: float | None) -> None:
        self.speedup = speedup
        self.wall0 = time.monotonic()

    def wait_for(self, t: float) -> None:
        if self.speedup is not None:
            delay = self.wall0 + t / self.speedup - time.monotonic()
            if delay > 0:
                time.sleep(delay)


@dataclass
class _Cost:
    """What reading the source costs per module sample (the sampler's own load)."""

    seconds: float = 0.0
    n: int = 0

    @property
    def per_module(self) -> float:
        return self.seconds / self.n if self.n else 0.0


@dataclass
class TelemetryWindow:
    source: TelemetrySource
    config: WindowConfig = field(default_factory=WindowConfig)
    observers: Sequence[Observer] = ()
    sinks: Sequence[Sink] = ()
    admit: Callable[[str], Admission] | None = None
    stop: Callable[[], bool] = lambda: False

    def run(self) -> WindowResult:
        cfg = self.config
        presence = Presence(self.admit)
        events: list[Event] = []
        cost = _Cost()
        pacer = Pacer(cfg.speedup)
        total, t, last_slow = 0, 0.0, -1e18
        blocks = self._takes_blocks()
        # with no one to watch it happen (doctor's evidence), the observers take a run of ticks at a time
        chunk = _Chunk() if not self.sinks and cfg.speedup is None and not blocks else None
        while not self.stop() and (cfg.duration_s is None or t <= cfg.duration_s):
            if blocks and presence.settled({i.uuid for i in self.source.present(t)}):
                t, last_slow, n = self._block(t, last_slow, presence, events, cost)
                total += n
                continue
            slow = t - last_slow >= cfg.slow_every_s
            if slow:
                last_slow = t
                self._emit(events, presence.listed(t, self.source.present(t)), chunk)
                for sink in self.sinks:
                    sink.listed(dict(presence.known))
            samples = self._sample(t, slow, cost)
            self._emit(events, presence.answered(t, {s.uuid for s in samples}), chunk)
            if chunk is not None:
                chunk.add(samples)
                if chunk.n >= CHUNK_SAMPLES:
                    self._emit(events, chunk.observe(self.observers))
            for s in samples if chunk is None else ():
                for observer in self.observers:
                    new = observer.observe(s)
                    if new:  # usually none: the hot path of a big node's window
                        self._emit(events, new)
            total += len(samples)
            for sink in self.sinks:
                sink.samples(t, samples, slow, cost.per_module)
            t += cfg.interval_s
            pacer.wait_for(t)
        if chunk is not None:
            self._emit(events, chunk.observe(self.observers))
        return WindowResult(t, total, cost.per_module, events, presence.states)

    def _takes_blocks(self) -> bool:
        """A source that samples runs of ticks at once (the simulated node), run as fast as it
        goes, to sinks that take blocks (issue 43)."""
        return self.config.speedup is None and hasattr(self.source, "sample_block") and \
            all(getattr(sink, "takes_blocks", False) for sink in self.sinks)

    def _block(self, t: float, last_slow: float, presence: Presence, events: list[Event],
               cost: _Cost) -> tuple[float, float, int]:
        """Ticks from ``t`` while nobody comes or goes, sampled and observed at once; each tick's
        events in the order tick-by-tick sampling raises them. Returns the next tick's time, the
        last slow tick's, and the samples taken."""
        cfg = self.config
        times, slow = _plan(t, last_slow, cfg)
        started = time.perf_counter()
        block = cast(BlockSource, self.source).sample_block(times, slow)
        n, k = len(block.times), len(block.identities)
        if k:
            cost.seconds += time.perf_counter() - started
            cost.n += n * k
        placed = observe_in_order(self.observers, module_blocks(block))
        for sink in self.sinks:
            take = getattr(sink, "samples_block", None)
            if take is not None:
                take(block, cost.per_module)
        at: dict[int, list[Event]] = {}
        for row, _, e in placed:
            at.setdefault(row // k, []).append(e)
        for i in sorted(set(at).union(i for i in range(n) if slow[i])):
            if slow[i]:
                self._emit(events, presence.listed(times[i], block.identities))
                for sink in self.sinks:
                    sink.listed(dict(presence.known))
            self._emit(events, at.get(i, []))
            if slow[i]:
                for sink in self.sinks:
                    sink.samples(times[i], (), True, cost.per_module)
        self._emit(events, presence.answered(times[n - 1], {i.uuid for i in block.identities}))
        slow_times = [x for x, s in zip(times[:n], slow, strict=False) if s]
        return times[n - 1] + cfg.interval_s, slow_times[-1] if slow_times else last_slow, n * k

    def _sample(self, t: float, slow: bool, cost: _Cost) -> list[Sample]:
        started = time.perf_counter()
        samples = self.source.sample(t, slow)
        if samples:
            cost.seconds += time.perf_counter() - started
            cost.n += len(samples)
        return samples

    def _emit(self, events: list[Event], new: list[Event], chunk: _Chunk | None = None) -> None:
        """``new`` events in order; the observers' events of the ticks held in ``chunk`` first."""
        if new and chunk is not None:
            self._emit(events, chunk.observe(self.observers))
        for e in new:
            events.append(e)
            for sink in self.sinks:
                sink.event(e)


CHUNK_SAMPLES = 20_000  # module samples held before the observers take them
BLOCK_TICKS = 2_500  # ticks a source that samples blocks takes at once


class _Chunk:
    """Samples of consecutive ticks, by module, each with its place in the run of ticks (issue 43):
    detectors take them as blocks (``checks.blocks``: a block with nothing to judge is skipped at
    once), any other observer (a trend model) one by one in tick order. The events come back in
    the order feeding every sample to every observer as it came raises them; the window drains
    the chunk before anything else happens (a module comes or goes), so nothing else reorders."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], tuple[list[Sample], list[int]]] = {}
        self.n = 0

    def add(self, samples: Sequence[Sample]) -> None:
        for s in samples:
            got = self.groups.get((s.module, s.uuid))
            if got is None:
                got = self.groups[(s.module, s.uuid)] = ([], [])
            got[0].append(s)
            got[1].append(self.n)
            self.n += 1

    def observe(self, observers: Sequence[Observer]) -> list[Event]:
        if not self.n:
            return []
        from gpuvet.checks.blocks import from_samples

        groups = list(self.groups.values())
        blocks = [from_samples(ss, rows) for ss, rows in groups]
        placed = observe_in_order(observers, blocks, [ss for ss, _ in groups])
        self.groups, self.n = {}, 0
        return [e for _, _, e in placed]


def observe_in_order(observers: Sequence[Observer], blocks: Sequence[ModuleBlock],
                     samples: Sequence[Sequence[Sample]] | None = None) -> list[Placed]:
    """Every observer over the blocks (``samples``: each block's samples where the caller has them;
    made from the block where it does not, only for an observer that must read them one by one),
    placed in the order feeding every sample to every observer as it came raises them."""
    from gpuvet.checks.blocks import block_fed, skips

    placed: list[Placed] = []
    stream: list[tuple[int, Sample]] | None = None

    def each(j: int, b: ModuleBlock) -> Sequence[Sample]:
        return samples[j] if samples is not None else [b.sample(i) for i in range(len(b))]

    for slot, o in enumerate(observers):
        many = getattr(o, "observe_blocks", None)  # a trend model that sums blocks itself
        got: list[Placed] | None = many(blocks, slot * 10_000) if many is not None else None
        if got is not None:
            placed += got
            continue
        if isinstance(o, Detector) and block_fed(o):
            placed += [(row, slot * 10_000 + k, e) for j, b in enumerate(blocks) if not skips(o, b)
                       for s, row in zip(each(j, b), b.rows, strict=True) for k, e in enumerate(o.observe(s))]
            continue
        if stream is None:
            stream = sorted((row, s) for j, b in enumerate(blocks) for s, row in zip(each(j, b), b.rows, strict=True))
        placed += [(row, slot * 10_000 + k, e) for row, s in stream for k, e in enumerate(o.observe(s))]
    placed.sort(key=lambda x: (x[0], x[1]))
    return placed


def _plan(t: float, last_slow: float, cfg: WindowConfig) -> tuple[list[float], list[bool]]:
    """The next ``BLOCK_TICKS`` ticks' times and slow flags, as the tick-by-tick loop steps them."""
    times: list[float] = []
    slow: list[bool] = []
    while len(times) < BLOCK_TICKS and (cfg.duration_s is None or t <= cfg.duration_s):
        is_slow = t - last_slow >= cfg.slow_every_s
        if is_slow:
            last_slow = t
        times.append(t)
        slow.append(is_slow)
        t += cfg.interval_s
    return times, slow


class TickBlock(Protocol):
    """Ticks a source sampled at once while nobody came or went (``backends.sim.ticks.SimBlock``)."""

    @property
    def times(self) -> list[float]: ...

    @property
    def identities(self) -> list[ModuleIdentity]: ...

    @property
    def slow(self) -> list[bool]:
        """Each tick's slow flag: slow fields (ECC, PCIe, NVLink) are read on slow ticks only."""

    @property
    def xids(self) -> dict[int, tuple[int, ...]]:
        """Roster position -> the Xids read on the block's first tick (a source ends a block
        before the next Xid falls due, so no later tick has one)."""

    def samples(self, i: int) -> list[Sample]:
        """Tick ``i`` as the ``Sample``s sampling it alone gives (for a sink that reads few ticks)."""

    def module_columns(self, first_row: int = 0) -> list[ModuleColumns]: ...

    def logbook_columns(self) -> tuple[list[float], list[float], list[float], list[float], list[float],
                                       list[float], list[int]]: ...


def module_blocks(block: TickBlock) -> list[ModuleBlock]:
    """A block's modules as the detectors' ``ModuleBlock``s (stream rows tick-major from 0)."""
    from gpuvet.checks.blocks import ModuleBlock

    return [ModuleBlock(c.module, c.uuid, c.t, c.rows, c.temp, c.power, c.sm, c.mem, c.util, c.throttle, c.ambient,
                        c.ecc_corrected, c.ecc_uncorrected, c.pcie, c.pcie_replays, c.nvlink, c.xids, c.nvlink_down,
                        arrays=c.arrays) for c in block.module_columns()]


class BlockSource(Protocol):
    """A telemetry source that samples runs of ticks at once."""

    def sample_block(self, times: Sequence[float], slow: Sequence[bool]) -> TickBlock: ...
