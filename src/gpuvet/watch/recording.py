"""Recorded telemetry, whatever file or server it came from: modules with their node, model and
slowdown point, and their samples at the recorded (Unix) times. Readers fill a ``Recording``;
the replay runs the same detectors and forecast over it as a live watch would.

Series-shaped sources (Prometheus) arrive one metric at a time; ``SeriesMerger`` joins the
readings of one module at one timestamp into a ``Sample``."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from gpuvet.backends.readings import Sample
from gpuvet.node.bus import bus_key
from gpuvet.watch.columns import Columns, samples_of, times_of

MAX_SAMPLES = 50_000_000  # a bound on what one replay holds in memory (about 5 GB)



@dataclass
class ModuleMeta:
    """What the source says about one module. ``name`` is node-qualified ("node3/gpu5")."""

    name: str
    node: str
    uuid: str
    model: str | None = None
    bus_id: str | None = None
    slowdown_c: float | None = None  # where the source reports it (DCGM_FI_DEV_SLOWDOWN_TEMP)


@dataclass
class Recording:
    """Modules and their samples (``t`` in Unix seconds). ``relative_time``: the source had no
    timestamps, so ``t`` counts seconds from its first sample at the assumed interval."""

    source: str  # format, e.g. "nvidia-smi --query-gpu csv"
    modules: dict[str, ModuleMeta] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    relative_time: bool = False
    # samples a reader kept as arrays (``Columns``), made into ``samples`` only when asked for
    columns: list[Columns] = field(default_factory=list)
    _samples: list[Sample] = field(default_factory=list, repr=False)

    @property
    def samples(self) -> list[Sample]:
        """Every sample in the order read (those held as columns made into samples here, once)."""
        if self.columns:
            self._samples = [*self._samples, *samples_of(self.columns)]
            self.columns = []
        return self._samples

    @samples.setter
    def samples(self, value: list[Sample]) -> None:
        self.columns, self._samples = [], value

    @property
    def only_columns(self) -> bool:
        """Whether every sample is still held as columns (none made into a ``Sample`` yet)."""
        return bool(self.columns) and not self._samples

    def times(self) -> list[float]:
        """Every sample's time in the order read, without making samples of columns."""
        return [s.t for s in self._samples] + times_of(self.columns)

    def module(self, node: str, key: str, uuid: str | None = None, model: str | None = None,
               bus_id: str | None = None) -> ModuleMeta:
        """The module ``key`` (an index, bus id or UUID) on ``node``; made on first sight."""
        label = key if key.startswith(("gpu", "GPU-")) else f"gpu{key}"
        name = f"{node}/{label}"
        meta = self.modules.get(name)
        if meta is not None and _another_board(meta, uuid, bus_id):
            # an index is the driver's order, not a board: a job moved to another card (a shared
            # machine, a replaced module) gets its own history, so one card's trend is not another's
            name = f"{name}@{bus_key(bus_id) if bus_id else uuid}"
            meta = self.modules.get(name)
            if meta is None:
                self.notes.append(f"{node}/{label} names another board from here on ("
                                  + (f"bus {bus_key(bus_id)}" if bus_id else f"UUID {uuid}")
                                  + f"): read as its own module {name}")
        if meta is None:
            meta = self.modules[name] = ModuleMeta(name, node, uuid or f"{node}/{label}", model, bus_id)
        else:
            if uuid and meta.uuid == name:
                meta.uuid = uuid
            meta.model = meta.model or model
            meta.bus_id = meta.bus_id or bus_id
        return meta

    def merge(self, other: Recording) -> None:
        for name, meta in other.modules.items():
            self.modules.setdefault(name, meta)
        if not self._samples and not other._samples:  # columns stay columns, read after these
            offset = sum(len(c) for c in self.columns)
            self.columns += [c.shifted(offset) for c in other.columns]
        else:
            self.samples.extend(other.samples)
        self.notes.extend(n for n in other.notes if n not in self.notes)
        self.relative_time = self.relative_time or other.relative_time


def _another_board(meta: ModuleMeta, uuid: str | None, bus_id: str | None) -> bool:
    """Whether a row's UUID or bus id says it is not the board first seen under its index."""
    if uuid and meta.uuid != meta.name and uuid != meta.uuid:
        return True
    return bool(bus_id and meta.bus_id and bus_key(bus_id) != bus_key(meta.bus_id))


@dataclass
class _Point:
    values: dict[str, float] = field(default_factory=dict)
    throttle: int = 0
    xid: int | None = None


class SeriesMerger:
    """Readings of one field of one module at one time, joined into samples. Throttle bits from
    per-reason series are OR-ed; an Xid gauge (the last Xid seen) becomes an Xid when it changes."""

    def __init__(self) -> None:
        self._points: dict[str, dict[float, _Point]] = defaultdict(dict)
        self.count = 0

    def _at(self, module: str, t: float) -> _Point:
        p = self._points[module].get(t)
        if p is None:
            p = self._points[module][t] = _Point()
            self.count += 1
        return p

    def add(self, module: str, t: float, name: str, value: float) -> None:
        self._at(module, t).values[name] = value

    def add_throttle(self, module: str, t: float, bits: int) -> None:
        self._at(module, t).throttle |= bits

    def add_xid(self, module: str, t: float, code: int) -> None:
        self._at(module, t).xid = code

    def into(self, rec: Recording) -> None:
        """Append the merged samples to ``rec`` (whose modules are already known)."""
        for module, points in self._points.items():
            uuid = rec.modules[module].uuid
            last_xid = 0
            for t in sorted(points):
                p = points[t]
                xids: tuple[int, ...] = ()
                if p.xid is not None:
                    if p.xid and p.xid != last_xid:
                        xids = (p.xid,)
                    last_xid = p.xid
                rec.samples.append(_sample(t, module, uuid, p.values, p.throttle, xids))
        self._points.clear()


def _sample(t: float, module: str, uuid: str, v: dict[str, float], throttle: int, xids: tuple[int, ...]) -> Sample:
    def i(name: str) -> int | None:
        x = v.get(name)
        return None if x is None else int(x)

    return Sample(t, module, uuid, v.get("temp_c"), v.get("power_w"), v.get("sm_clock_mhz"), v.get("mem_clock_mhz"),
                  v.get("util"), throttle, v.get("ambient_c"), ecc_corrected=i("ecc_corrected"),
                  ecc_uncorrected=i("ecc_uncorrected"), pcie_gen=i("pcie_gen"), pcie_gen_max=i("pcie_gen_max"),
                  pcie_width=i("pcie_width"), pcie_width_max=i("pcie_width_max"), nvlink_up=i("nvlink_up"),
                  nvlink_errors=i("nvlink_errors"), xids=xids, pcie_replays=i("pcie_replays"))
