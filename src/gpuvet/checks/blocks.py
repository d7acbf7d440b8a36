"""Samples of one module as columns (``ModuleBlock``), and the detectors fed a block at a time.

A month of one-minute logs is 345,600 samples: a ``Sample`` and six method calls each cost more
than reading the file. A block skips, per detector, the samples that cannot change anything
(no throttle bit, no clock switch, no link fields) in a few numpy operations, and leaves the
detector in exactly the state sample-by-sample feeding would; where a block holds something a
detector must judge, that detector is fed the block's samples one by one, as before. Events come
back with the stream position of the sample that raised them, so a caller can emit them in the
order per-sample feeding did."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from gpuvet.backends.readings import Counts, ModuleColumns, Sample
from gpuvet.checks.detectors import (
    THROTTLE_MASK,
    ClockFlappingDetector,
    Detector,
    EccDetector,
    NvlinkDetector,
    PcieLinkDetector,
    ThrottleDetector,
    XidDetector,
    _FlapWindow,
)
from gpuvet.checks.events import Event

FloatArray = npt.NDArray[np.float64]
T = TypeVar("T")
Placed = tuple[int, int, Event]  # (stream position of the sample, order within it, event)


@dataclass
class ModuleBlock(ModuleColumns):
    """One module's samples in time order, column by column (``backends.readings.ModuleColumns``),
    with what the detectors read of them: a column as an array, one sample."""

    def __len__(self) -> int:
        return len(self.t)

    def array(self, name: str) -> FloatArray:
        """A float column as an array, None as NaN (made once per block)."""
        a = self.arrays.get(name)
        if a is None:
            values = getattr(self, name)
            a = self.arrays[name] = np.array([np.nan if v is None else v for v in values], dtype=np.float64) \
                if None in values else np.asarray(values, dtype=np.float64)
        return a

    def sample(self, i: int) -> Sample:
        """The ``i``-th sample, made only for a detector that must judge it."""
        pcie = self.pcie or ((None,) * len(self.t),) * 4
        link = self.nvlink or ((None,) * len(self.t),) * 3
        return Sample(self.t[i], self.module, self.uuid, self.temp[i], self.power[i], self.sm[i], self.mem[i],
                      self.util[i], self.throttle[i], None if self.ambient is None else self.ambient[i],
                      ecc_corrected=None if self.ecc_corrected is None else self.ecc_corrected[i],
                      ecc_uncorrected=None if self.ecc_uncorrected is None else self.ecc_uncorrected[i],
                      pcie_gen=pcie[0][i], pcie_gen_max=pcie[1][i], pcie_width=pcie[2][i], pcie_width_max=pcie[3][i],
                      nvlink_up=link[0][i], nvlink_expected=link[1][i], nvlink_errors=link[2][i],
                      xids=() if self.xids is None else self.xids[i],
                      pcie_replays=None if self.pcie_replays is None else self.pcie_replays[i],
                      nvlink_down=None if self.nvlink_down is None else self.nvlink_down[i])


def one_by_one(d: Detector, b: ModuleBlock, start: int = 0) -> list[Placed]:
    """The block's samples from ``start`` through the detector's own ``observe``."""
    out: list[Placed] = []
    for i in range(start, len(b)):
        for k, e in enumerate(d.observe(b.sample(i))):
            out.append((b.rows[i], k, e))
    return out


_FIELDS = ("t", "temp_c", "power_w", "sm_clock_mhz", "mem_clock_mhz", "util", "throttle", "ambient_c", "ecc_corrected",
           "ecc_uncorrected", "pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max", "pcie_replays", "nvlink_up",
           "nvlink_expected", "nvlink_errors", "xids", "nvlink_down")


def _some(column: list[T]) -> list[T] | None:
    return column if any(v is not None for v in column) else None


def from_samples(samples: Sequence[Sample], rows: Sequence[int]) -> ModuleBlock:
    """One module's samples (in time order) as a block; ``rows``: their stream positions. The
    fields are read in one pass and turned into columns by ``zip``, not one pass per field."""
    s0 = samples[0]
    c = [list(col) for col in zip(*map(attrgetter(*_FIELDS), samples), strict=True)]
    pcie = (c[10], c[11], c[12], c[13])
    link = (c[15], c[16], c[17])
    return ModuleBlock(s0.module, s0.uuid, c[0], list(rows), c[1], c[2], c[3], c[4], c[5], c[6], _some(c[7]),
                       _some(c[8]), _some(c[9]), pcie if any(_some(x) for x in pcie) else None, _some(c[14]),
                       link if any(_some(x) for x in link) else None, c[18] if any(c[18]) else None, _some(c[19]))


def observe_block(d: Detector, b: ModuleBlock) -> list[Placed]:
    """``d`` fed every sample of ``b``, skipping what cannot raise an event or move its state."""
    if not len(b):
        return []
    fast = _FAST.get(type(d))
    if fast is not None and fast(d, b):
        return []
    return one_by_one(d, b)


def _throttle(d: Detector, b: ModuleBlock) -> bool:
    """No throttle bit under load in the block: the run restarts and the clean count grows."""
    assert isinstance(d, ThrottleDetector)
    if _any_bits(b.throttle, THROTTLE_MASK) or b.module in d._open:
        return False  # an open episode closes with an event: one by one
    m, n = b.module, len(b)
    d._run[m] = 0
    d._clean[m] = d._clean.get(m, 0) + n
    if d._clean[m] >= d.clear_samples:
        d._active.discard(m)
    return True


def _any_bits(values: list[int], mask: int) -> bool:
    """Whether any value has a bit of ``mask``: in numpy where every value fits 64 bits, else value by value."""
    try:
        words = np.asarray(values, dtype=np.uint64)
    except (OverflowError, TypeError, ValueError):
        return any(bits & mask for bits in values)
    return bool((words & np.uint64(mask)).any())


def _flapping(d: Detector, b: ModuleBlock) -> bool:
    """No clock switch in the block, none counted before, no episode open: no event can come, and the window
    ends as per-sample feeding leaves it (the busy run since the last idle or unreadable sample)."""
    assert isinstance(d, ClockFlappingDetector)
    w = d._win.get(b.module)
    if (w is not None and (w.switches[0] or w.switches[1])) or b.module in getattr(d, "_open", ()):
        return False  # switches counted, or an open episode a steady window would clear: one by one
    mem, sm, util, power = b.array("mem"), b.array("sm"), b.array("util"), b.array("power")
    with np.errstate(invalid="ignore"):
        live = (np.nan_to_num(util) >= 0.8) & ~np.isnan(mem) & ~np.isnan(sm) & ~np.isnan(power)
        both = live[1:] & live[:-1]
        step = d.step
        if (both & (np.abs(np.diff(mem)) > step * np.maximum(mem[1:], mem[:-1]))).any() or \
                (both & (np.abs(np.diff(sm)) > step * np.maximum(sm[1:], sm[:-1]))).any():
            return False
        idle = np.flatnonzero(~live)
    first = int(idle[-1]) + 1 if len(idle) else 0
    if w is not None and w.last is not None and live[0]:
        mem0, sm0 = w.last
        if abs(mem[0] - mem0) > d.step * max(mem0, mem[0]) or abs(sm[0] - sm0) > d.step * max(sm0, sm[0]):
            return False
    if len(idle) or w is None:
        w = d._win[b.module] = _FlapWindow(deque(maxlen=d.window))
    fed = len(b) - first
    if fed:
        flags = len(w.flags) + fed - (w.last is None)
        w.flags = deque([(0, 0)] * min(flags, d.window - 1))
        w.powers.extend(power[first:].tolist())
        w.last = (float(mem[-1]), float(sm[-1]))
    return True


def _pcie(d: Detector, b: ModuleBlock) -> bool:
    """Replays never faster than the bound and no link below its maximum under load: no event, and
    the state moves as per-sample feeding moves it (the last replay reading, the link not down)."""
    assert isinstance(d, PcieLinkDetector)
    replays = None
    if b.pcie_replays is not None and any(v is not None for v in b.pcie_replays):
        replays = _counter(d._replays.get(b.module), b.t, b.pcie_replays, d.replays_per_hour)
        if replays is None:
            return False
    judged = False
    for gen, gen_max, width, width_max, util in zip(*b.pcie, b.util, strict=True) if b.pcie is not None else ():
        if gen is None or width is None or gen_max is None or width_max is None or (util or 0) < 0.3:
            continue
        if gen < gen_max or width < width_max:
            return False  # below its maximum under load: judged one by one
        judged = True
    if replays is not None:
        d._replays[b.module] = replays
    if judged:
        d._down.discard(b.module)
    return True


def _nvlink(d: Detector, b: ModuleBlock) -> bool:
    """Every link read up at speed, no episode open, errors never faster than the bound: no event,
    and the state moves as per-sample feeding moves it."""
    assert isinstance(d, NvlinkDetector)
    if b.nvlink is None:
        return True
    if any(module == b.module for module, _ in d._open):
        return False  # an open episode closes with an event: one by one
    up, expected, errors = b.nvlink
    judged = False
    for u, x, down in zip(up, expected, b.nvlink_down or [None] * len(b), strict=True):
        if u is None or not x:
            continue
        if (down or 0) > 0 or x - u - (down or 0) > 0:
            return False
        judged = True
    last = None
    if any(v is not None for v in errors):
        last = _counter(d._errors.get(b.module), b.t, errors, d.errors_per_hour)
        if last is None:
            return False
    if last is not None:
        d._errors[b.module] = last
    if judged:
        d._down.discard(b.module)
    return True


def _counter(prev: tuple[float, int] | None, t: list[float], values: Counts,
             per_hour: float) -> tuple[float, int] | None:
    """The last (time, count) of a cumulative counter read now and then (None: not read), where it
    never rises faster than ``per_hour`` between readings, judged pair by pair as the detectors do
    (a count that went down was reset: counted from zero); None where it does, or is too large to
    judge exactly in numpy."""
    keep = [i for i, v in enumerate(values) if v is not None]
    got = [values[i] for i in keep]
    if max(abs(v) for v in got if v is not None) >= 2 ** 53 or (prev is not None and abs(prev[1]) >= 2 ** 53):
        return None
    times = np.asarray([t[i] for i in keep], dtype=np.float64)
    counts = np.asarray(got, dtype=np.int64)
    if prev is not None:
        times, counts = np.concatenate(([prev[0]], times)), np.concatenate(([prev[1]], counts))
    gap = np.diff(times)
    step = np.where(counts[1:] >= counts[:-1], counts[1:] - counts[:-1], counts[1:])
    later = gap > 0
    if (step[later] / gap[later] * 3600 > per_hour).any():
        return None
    return t[keep[-1]], int(counts[-1])


def _xid(d: Detector, b: ModuleBlock) -> bool:
    assert isinstance(d, XidDetector)
    return b.xids is None or not any(b.xids)


def _ecc(d: Detector, b: ModuleBlock) -> bool:
    """Counters that never step back, no uncorrectable count and no bucket closing at the event's
    floor: the hourly buckets are summed in numpy and closed as per-sample feeding closes them."""
    assert isinstance(d, EccDetector)
    if b.ecc_corrected is None:
        return True
    if b.module in d._open:
        return False  # an open ecc_rising closes with an event: one by one
    read = _read(b.ecc_corrected)  # the detector skips the others; None: every sample was read
    if read is not None and not read:
        return True
    uncorrected = b.ecc_uncorrected
    if uncorrected is not None and any(uncorrected if read is None else (uncorrected[i] for i in read)):
        return False  # an uncorrectable count: one by one
    if read is None:
        counts, times = np.asarray(b.ecc_corrected, dtype=np.int64), np.asarray(b.t, dtype=np.float64)
    else:
        counts = np.asarray([b.ecc_corrected[i] for i in read], dtype=np.int64)
        times = np.asarray(b.t, dtype=np.float64)[read]
    m, prev = b.module, d._prev.get(b.module)
    if (np.diff(counts) < 0).any() or (prev is not None and (counts[0] < prev[0] or prev[1])):
        return False
    start = 0 if prev is not None else 1
    if start >= len(counts):
        d._prev[m] = (int(counts[-1]), 0)
        return True
    delta = np.diff(counts) if prev is None else np.diff(np.concatenate(([prev[0]], counts)))
    index = (times[start:] // d.bucket_s).astype(np.int64)
    current, count = d._bucket.get(m, (int(index[0]), 0.0))
    cuts = np.flatnonzero(np.diff(np.concatenate(([current], index))) != 0)
    bounds = np.concatenate(([0], cuts, [len(delta)]))
    total = np.concatenate(([0], np.cumsum(delta)))
    sums = total[bounds[1:]] - total[bounds[:-1]]  # whole numbers: exact in any order
    closing = [count + float(sums[0])] + [float(x) for x in sums[1:-1]] if len(cuts) else []
    if any(c * 3600 / d.bucket_s >= d.min_per_hour for c in closing):
        return False  # a bucket closes at a rate worth judging: one by one
    rates = d._rates.setdefault(m, deque(maxlen=d.history)) if closing else None
    for c in closing:
        assert rates is not None
        rates.append(c * 3600 / d.bucket_s)
    if len(cuts):
        current, count = int(index[cuts[-1]]), 0.0
    d._bucket[m] = (current, count + float(sums[-1]))
    d._prev[m] = (int(counts[-1]), 0)
    return True


def _read(values: Counts) -> list[int] | None:
    """The positions of the values read (not None), or None when every one was (no list made)."""
    return [i for i, v in enumerate(values) if v is not None] if None in values else None


_FAST = {ThrottleDetector: _throttle, ClockFlappingDetector: _flapping, PcieLinkDetector: _pcie,
         NvlinkDetector: _nvlink, XidDetector: _xid, EccDetector: _ecc}


def block_fed(d: object) -> bool:
    """Whether ``d`` is a detector whose blocks ``skips`` may judge (its state is per module)."""
    return type(d) in _FAST


def skips(d: Detector, b: ModuleBlock) -> bool:
    """True when ``d`` took the whole block at once (nothing to raise); False when the caller must
    feed it the block's samples one by one (``d``'s state then untouched)."""
    return bool(len(b)) and _FAST[type(d)](d, b)


def observe_all(detectors: Sequence[Detector], blocks: Sequence[ModuleBlock]) -> list[Placed]:
    """Every detector over every block; events keyed for per-sample order (position, detector, order)."""
    out: list[tuple[int, int, int, Event]] = []
    for slot, d in enumerate(detectors):
        for b in blocks:
            out += [(row, slot, k, e) for row, k, e in observe_block(d, b)]
    out.sort(key=lambda x: (x[0], x[1], x[2]))
    return [(row, slot * 10_000 + k, e) for row, slot, k, e in out]
