"""The thermal forecast's windows as data: samples summed per module into fixed windows (one at
a time, or a node's blocks at once in numpy, to the same bits), each closed window turned into a
``WindowStat`` (its means, whether the module was loaded and steady, its peak through the thermal
lag), and the hourly tier's means for a load that never holds still. No fit and no judgement:
``gpuvet.watch.forecast`` takes the closed windows from here."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuvet.backends.readings import Sample
from gpuvet.checks.blocks import ModuleBlock, Placed
from gpuvet.watch.events import Event
from gpuvet.watch.forecast_settings import HOUR, LAG_S, SETTLE_TOL, THERMAL_BITS

FloatArray = npt.NDArray[np.float64]
_Carried = tuple[dict[str, float], dict[str, tuple[int, float]]]  # a module's highest mean power; its last window, power


class _Window:
    """Running sums of one module's samples in one window (no per-sample lists: a replay feeds
    millions of samples)."""

    __slots__ = ("n", "temp", "power", "power_sq", "util", "n_util", "ref", "n_ref", "hot", "peak")

    def __init__(self) -> None:
        self.n = self.n_util = self.n_ref = 0
        self.temp = self.power = self.power_sq = self.util = self.ref = self.peak = 0.0
        self.hot = False  # thermally throttled at some point: the temperature is held, R means nothing


@dataclass(frozen=True, init=False)
class WindowStat:
    """One module's closed window (or hour): when it ended, its mean temperature and power, and
    whether R means something in it."""

    t: float
    temp: float
    power: float
    ref: float | None  # inlet/coolant, where the source has it
    steady: bool  # usable: busy, power steady and settled, not throttled: R means something
    model: str | None = None
    loaded: bool = False  # busy and not throttled, though perhaps not steady (an inference load): the hourly tier
    peak: float | None = None  # the highest power through the thermal lag (``LAG_S``): what a minute-long peak heats

    def __init__(self, t: float, temp: float, power: float, ref: float | None, steady: bool, model: str | None = None,
                 loaded: bool = False, peak: float | None = None) -> None:
        # one update of its fields, not a guarded setattr each (what frozen's own __init__ does): a
        # month's replay makes 35,000 of these, a fifth of a microsecond each instead of a whole one
        self.__dict__.update(t=t, temp=temp, power=power, ref=ref, steady=steady, model=model, loaded=loaded,
                             peak=peak)


class WindowBook:
    """One node's open windows and what carries from one window to the next (the power through the
    thermal lag, each module's peak and last power); ``closed`` takes each closed window's stats
    and returns its events (the forecaster's fit)."""

    def __init__(self, window_s: float, min_util: float, max_power_cv: float, min_window_samples: int,
                 models: dict[str, str], closed: Callable[[dict[str, WindowStat]], list[Event]]) -> None:
        self.window_s, self.min_util, self.max_power_cv = window_s, min_util, max_power_cv
        self.min_window_samples, self.models, self._closed = min_window_samples, models, closed
        self._windows: dict[int, dict[str, _Window]] = {}
        self._lowest: float = math.inf  # the earliest window still open
        self._peak_w: dict[str, float] = {}
        self._previous: dict[str, tuple[int, float]] = {}  # module -> (window index, mean power)
        self._lagged: dict[str, tuple[float, float]] = {}  # module -> (time, power through the thermal lag)
        self.unpowered: dict[str, int] = {}  # module -> samples with a temperature but no power reading
        self.uuids: dict[str, str] = {}

    def observe(self, s: Sample) -> list[Event]:
        """Samples as they come; closes windows as time passes. Returns events."""
        temp, power = s.temp_c, s.power_w
        if temp is None or power is None:
            if temp is not None:
                self.unpowered[s.module] = self.unpowered.get(s.module, 0) + 1
            return []
        module = s.module
        if module not in self.uuids:
            self.uuids[module] = s.uuid
        index = int(s.t // self.window_s)
        windows = self._windows.get(index)
        if windows is None:
            windows = self._windows[index] = {}
            self._lowest = min(self._lowest, index)
        w = windows.get(module)
        if w is None:
            w = windows[module] = _Window()
        w.n += 1
        w.temp += temp
        w.power += power
        w.power_sq += power * power
        # the power through a first-order lag: an inference load's minute-long peaks heat the module
        # about this much, where a window's mean averages them away
        last = self._lagged.get(module)
        lagged = power if last is None else \
            last[1] + (power - last[1]) * -math.expm1(-max(s.t - last[0], 0.0) / LAG_S)
        self._lagged[module] = (s.t, lagged)
        if lagged > w.peak:
            w.peak = lagged
        if s.util is not None:
            w.util += s.util
            w.n_util += 1
        if s.ambient_c is not None:
            w.ref += s.ambient_c
            w.n_ref += 1
        if s.throttle & THERMAL_BITS:
            w.hot = True
        if self._lowest >= index:
            return []
        out: list[Event] = []
        for old in sorted(i for i in self._windows if i < index):
            out += self._close(old)
        self._lowest = index
        return out

    def observe_blocks(self, blocks: Sequence[ModuleBlock], slot: int = 600) -> list[Placed] | None:
        """The node's samples a module at a time (``ModuleBlock``, stream positions in ``rows``), summed
        into their windows in numpy; windows close where the first sample of a later one comes, as
        ``observe`` closes them, and their events are placed there. None (nothing read) when a
        sample goes back before a window still open, or a module comes in two blocks (two files of
        one node): the caller feeds those one by one, as a window is summed from one block a module."""
        if len({b.module for b in blocks}) < len(blocks):  # before _valid carries any block's lag
            return None
        parts = [p for p in (self._valid(b) for b in blocks) if p is not None]
        if not parts:
            self._count_unpowered(blocks)
            return []
        cols = [np.concatenate(c) for c in zip(*(p[1:] for p in parts), strict=True)]
        rows, index = cols[0].astype(np.int64), cols[1].astype(np.int64)
        if self._windows and int(index.min()) < max(self._windows):
            return None
        self._count_unpowered(blocks)
        for p in parts:
            self.uuids.setdefault(p[0].module, p[0].uuid)
        who = np.concatenate([np.full(len(p[1]), k, dtype=np.int64) for k, p in enumerate(parts)])
        # by window, module, row: the modules are in order and each module's rows ascend, so a stable sort by window
        ascending = all(len(p[1]) < 2 or bool((np.diff(p[1]) > 0).all()) for p in parts)
        order = np.argsort(index, kind="stable") if ascending else np.lexsort((rows, who, index))
        rows, index, who = rows[order], index[order], who[order]
        temp, power, util, ref, hot, lagged = (c[order] for c in cols[2:])
        starts = np.flatnonzero(np.concatenate(([True], (index[1:] != index[:-1]) | (who[1:] != who[:-1]))))
        names = [p[0].module for p in parts]
        # what the windows still open hold (none where none is: a replay's one feed of its month)
        held = [self._windows.get(i, {}).get(names[k]) for i, k in zip(index[starts].tolist(), who[starts].tolist(),
                                                                          strict=True)] if self._windows else []
        slots = _slots(starts, len(rows))
        sums = [_running(x, slots, [0.0 if w is None else getattr(w, a) for w in held] or 0.0)
                for x, a in ((temp, "temp"), (power, "power"), (power * power, "power_sq"),
                             (np.nan_to_num(util), "util"), (np.nan_to_num(ref), "ref"))]
        counts = [np.add.reduceat(x, starts) for x in (np.ones(len(rows), dtype=np.int64), ~np.isnan(util),
                                                       ~np.isnan(ref), hot)]
        first = np.minimum.reduceat(rows, starts)
        peak = np.maximum.reduceat(lagged, starts)
        at = np.lexsort((first, index[starts]))  # by window, then first row (unique): as sorting the triples
        # no window open before and one block a module (a replay's feed): each window closes here at once
        if not held and len(set(names)) == len(names) and np.isfinite(sums[1]).all():
            return self._add_fresh(index[starts][at], first[at], who[starts][at], [x[at] for x in sums],
                                   [x[at] for x in counts], peak[at], names, slot)
        groups = list(zip(index[starts][at].tolist(), first[at].tolist(), at.tolist(), strict=True))
        return self._add_groups(groups, names, who[starts].tolist(), sums, counts, peak, slot)

    def _add_groups(self, groups: list[tuple[int, int, int]], names: list[str], who: list[int],
                    sums: list[FloatArray], counts: list[npt.NDArray[np.int64]], peak: FloatArray,
                    slot: int) -> list[Placed]:
        """Each window's module sums in stream order; older windows closed at a later one's first sample."""
        out: list[Placed] = []
        temp, power, power_sq, util, ref = (x.tolist() for x in sums)
        n, n_util, n_ref, hot = (x.tolist() for x in counts)
        peaks = peak.tolist()
        open_windows = self._windows
        for index, row, g in groups:
            windows = open_windows.get(index)
            if windows is None:
                older = sorted(i for i in open_windows if i < index)
                for k, e in enumerate(e for old in older for e in self._close(old)):
                    out.append((row, slot + k, e))
                windows = open_windows[index] = {}
            m = names[who[g]]
            w = windows.get(m)
            if w is None:
                w = windows[m] = _Window()
            w.n += n[g]
            w.temp = temp[g]
            w.power = power[g]
            w.power_sq = power_sq[g]
            w.util = util[g]
            w.n_util += n_util[g]
            w.ref = ref[g]
            w.n_ref += n_ref[g]
            w.hot = w.hot or hot[g] > 0
            if peaks[g] > w.peak:
                w.peak = peaks[g]
        if groups:
            self._lowest = min(self._windows)
        return out

    def _add_fresh(self, index: npt.NDArray[np.int64], first: npt.NDArray[np.int64], who: npt.NDArray[np.int64],
                   sums: list[FloatArray], counts: list[npt.NDArray[np.int64]], peak: FloatArray, names: list[str],
                   slot: int) -> list[Placed]:
        """``_add_groups`` where no window was open before the feed (a replay's one feed of its
        month): the groups (by window, then first row) of every window but the last close here,
        their figures found for all at once (``_fresh_stats``, as ``_stats`` finds them one by
        one) and each window's events placed at the next one's first sample; the last stays open."""
        cut = int(np.searchsorted(index, index[-1]))  # the groups of the windows closed here
        modules = [names[k] for k in who.tolist()]
        out: list[Placed] = []
        if cut:
            stats = _fresh_stats(self, (self._peak_w, self._previous), index[:cut], who[:cut],
                                 [x[:cut] for x in sums], [x[:cut] for x in counts], peak[:cut], modules[:cut])
            ends = np.flatnonzero(np.diff(index[:cut + 1])).tolist()  # each closed window's last group
            low = 0
            for high, row in zip(ends, first[np.add(ends, 1)].tolist(), strict=True):
                window = dict(zip(modules[low:high + 1], stats[low:high + 1], strict=True))
                low = high + 1
                out += [(row, slot + k, e) for k, e in enumerate(self._closed(window))]
        self._windows[int(index[-1])] = _opened(modules[cut:], [x[cut:] for x in sums], [x[cut:] for x in counts],
                                                peak[cut:])
        self._lowest = min(self._windows)
        return out

    def _count_unpowered(self, blocks: Sequence[ModuleBlock]) -> None:
        for b in blocks:
            n = int((~np.isnan(b.array("temp")) & np.isnan(b.array("power"))).sum())
            if n:
                self.unpowered[b.module] = self.unpowered.get(b.module, 0) + n

    def _valid(self, b: ModuleBlock) -> tuple[ModuleBlock, FloatArray, FloatArray, FloatArray, FloatArray,
                                             FloatArray, FloatArray, FloatArray, FloatArray] | None:
        """A block's samples with a temperature and a power reading: rows, window, temp, power, util,
        inlet, thermally throttled, and the power through the thermal lag (carried between blocks)."""
        if not len(b):
            return None
        temp, power = b.array("temp"), b.array("power")
        ok = ~np.isnan(temp) & ~np.isnan(power)
        if not ok.any():
            return None
        t = b.array("t")[ok]  # the array a block made from columns holds (no list made an array again)
        power = power[ok]
        util = b.array("util")[ok]
        ref = b.array("ambient")[ok] if b.ambient is not None else np.full(len(t), np.nan)
        hot = (np.asarray(b.throttle, dtype=np.int64)[ok] & THERMAL_BITS) != 0
        return (b, b.array("rows")[ok], t // self.window_s, temp[ok], power, util, ref,
                hot.astype(np.float64), self._lag(b.module, t, power))

    def _lag(self, module: str, t: FloatArray, power: FloatArray) -> FloatArray:
        """The power through a first-order lag (``LAG_S``), sample by sample as ``observe`` takes it."""
        gain = -np.expm1(-np.maximum(np.diff(t, prepend=t[0]), 0.0) / LAG_S)
        last = self._lagged.get(module)
        if last is not None:
            gain[0] = -math.expm1(-max(float(t[0]) - last[0], 0.0) / LAG_S)
        values = power.tolist()
        level = values[0] if last is None else last[1] + (values[0] - last[1]) * float(gain[0])
        if len(gain) > 1 and bool((gain[1:] == gain[1]).all()):  # samples evenly spaced: one gain
            a = float(gain[1])
            out = [level, *[level := level + (p - level) * a for p in values[1:]]]
        else:
            out = [level, *[level := level + (p - level) * a for p, a in zip(values[1:], gain[1:].tolist(),
                                                                             strict=True)]]
        self._lagged[module] = (float(t[-1]), out[-1])
        return np.asarray(out)

    def flush(self) -> list[Event]:
        """Close the windows still open (end of a replay)."""
        out: list[Event] = []
        for index in sorted(self._windows):
            out += self._close(index)
        self._lowest = math.inf
        return out

    def _close(self, index: int) -> list[Event]:
        return self._closed(self._stats(index))

    def _stats(self, index: int) -> dict[str, WindowStat]:
        """The window's figures for each module, and whether it is usable (loaded, steady)."""
        windows = self._windows.pop(index)
        t = (index + 1) * self.window_s
        stats: dict[str, WindowStat] = {}
        peaks, previous, models = self._peak_w, self._previous, self.models
        min_util, min_samples, max_cv = self.min_util, self.min_window_samples, self.max_power_cv
        # a window of half an hour or more is mostly past any lag of minutes: settled by its length
        long = self.window_s >= HOUR / 2
        for module, w in windows.items():
            n = w.n
            power = w.power / n
            var = w.power_sq / n - power * power
            var = 0.0 if 0.0 > var else var  # max(var, 0.0) spelt out (as each max below): a call per module-window
            spread = math.sqrt(var) / power if power > 0 else 1.0
            peak = peaks.get(module, 0.0)
            peak = peaks[module] = power if power > peak else peak
            busy = w.util / w.n_util >= min_util if w.n_util else power >= 0.5 * peak
            before = previous.get(module)
            previous[module] = (index, power)
            settled = long or (
                before is not None and before[0] == index - 1 and abs(before[1] - power) <= SETTLE_TOL * power)
            loaded = busy and not w.hot and n >= min_samples and power >= 0.3 * peak
            steady = loaded and settled and spread <= max_cv
            stats[module] = WindowStat(t, w.temp / n, power, w.ref / w.n_ref if w.n_ref else None, steady,
                                       models.get(module), loaded, w.peak)
        return stats


def _opened(modules: list[str], sums: list[FloatArray], counts: list[npt.NDArray[np.int64]],
            peak: FloatArray) -> dict[str, _Window]:
    """The window left open after a fresh feed, its modules' running sums as ``observe`` holds them."""
    windows: dict[str, _Window] = {}
    for g, module in enumerate(modules):
        w = windows[module] = _Window()
        w.n, w.n_util, w.n_ref = int(counts[0][g]), int(counts[1][g]), int(counts[2][g])
        w.temp, w.power, w.power_sq, w.util, w.ref = (float(x[g]) for x in sums)
        w.hot = bool(counts[3][g] > 0)
        w.peak = max(float(peak[g]), 0.0)
    return windows


def _fresh_stats(book: WindowBook, carried: _Carried, index: npt.NDArray[np.int64], who: npt.NDArray[np.int64],
                 sums: list[FloatArray], counts: list[npt.NDArray[np.int64]], lagged: FloatArray,
                 modules: list[str]) -> list[WindowStat]:
    """``WindowBook._stats`` of ``book``'s groups of windows in order (every module's windows
    ascending), the same figures element by element (the same operations in the same order, so
    the same bits)."""
    temp, power, power_sq, util, ref = sums
    n, n_util, n_ref, hot = counts
    mean = power / n
    var = power_sq / n - mean * mean
    var = np.where(0.0 > var, 0.0, var)
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = np.where(mean > 0, np.sqrt(var) / mean, 1.0)
        busy_util = util / n_util >= book.min_util
        refs = (ref / n_ref).tolist()
    peak, before, gap = _carried(carried, index, who, mean, modules)
    busy = np.where(n_util > 0, busy_util, mean >= 0.5 * peak)
    settled = book.window_s >= HOUR / 2 or gap & (np.abs(before - mean) <= SETTLE_TOL * mean)
    loaded = busy & (hot == 0) & (n >= book.min_window_samples) & (mean >= 0.3 * peak)
    steady = loaded & settled & (spread <= book.max_power_cv)
    models, size = book.models, book.window_s
    return [WindowStat((i + 1) * size, t, p, r if c else None, s, models.get(m), ld, k if k > 0.0 else 0.0)
            for i, t, p, r, c, s, m, ld, k in zip(index.tolist(), (temp / n).tolist(), mean.tolist(), refs,
                                                  n_ref.tolist(), steady.tolist(), modules, loaded.tolist(),
                                                  lagged.tolist(), strict=True)]


def _carried(carried: _Carried, index: npt.NDArray[np.int64], who: npt.NDArray[np.int64], power: FloatArray,
             modules: list[str]) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    """What ``_stats`` carries from a module's window to its next, for groups in window order:
    the module's highest mean power so far (its own included), the power of its window before
    and whether that window was the one just before. Updates ``carried`` (each module's highest
    mean power and its last window's index and power)."""
    peaks, previous = carried
    order = np.argsort(who, kind="stable")  # each module's windows together, ascending
    ends = [*np.flatnonzero(np.diff(who[order])).tolist(), len(who) - 1]
    peak, before = np.empty(len(who)), np.zeros(len(who))
    before_index = np.full(len(who), -2, dtype=np.int64)
    at, ranked, low = index[order], power[order], 0
    for high in ends:
        m = modules[int(order[low])]
        peak[low:high + 1] = np.maximum.accumulate(np.append(peaks.get(m, 0.0), ranked[low:high + 1]))[1:]
        last = previous.get(m)
        if last is not None:
            before_index[low], before[low] = last
        before_index[low + 1:high + 1], before[low + 1:high + 1] = at[low:high], ranked[low:high]
        peaks[m], previous[m] = float(peak[high]), (int(at[high]), float(ranked[high]))
        low = high + 1
    back = np.empty_like(order)
    back[order] = np.arange(len(order))
    return peak[back], before[back], before_index[back] == index - 1


@dataclass(frozen=True)
class HourMeans:
    """One closed hour of the hourly tier: each module's means over the hour's loaded windows
    (those loaded for most of it), and of them the ones that never held a steady window."""

    hour: int
    means: dict[str, WindowStat]
    unsteady: dict[str, WindowStat]


class HourlyTier:
    """The hourly tier, for a load that never holds still (inference): a module busy most of an
    hour without one steady window gets one R from the hour's means. Over an hour the lag after
    load changes is a small share of the mean (τ of minutes against 60), where a 10-minute window
    would be all lag. Sums the windows of the current hour; closes the previous one."""

    def __init__(self, window_s: float, models: dict[str, str]) -> None:
        self.window_s, self.models = window_s, models
        self._hour: int | None = None  # the hour being summed
        self._acc: dict[str, list[float]] = {}  # module -> [loaded windows, steady windows, Σ T, Σ P, Σ inlet, n inlet]

    def add(self, stats: dict[str, WindowStat]) -> HourMeans | None:
        """One aligned window of every module; the previous hour's means when this one starts it."""
        if self.window_s * 4 > HOUR:
            return None  # coarse windows: an hour holds too few of them
        hour = int(next(iter(stats.values())).t // HOUR)
        out = None
        if self._hour is not None and hour != self._hour:
            out = self._close(self._hour)
        self._hour = hour
        acc = self._acc
        for m, x in stats.items():
            if not (x.loaded or x.steady):
                continue
            a = acc.get(m)
            if a is None:
                a = acc[m] = [0.0] * 6
            a[0] += 1
            a[1] += x.steady
            a[2] += x.temp
            a[3] += x.power
            if x.ref is not None:
                a[4] += x.ref
                a[5] += 1
        return out

    def _close(self, hour: int) -> HourMeans | None:
        acc, self._acc = self._acc, {}
        need = max(3, int(0.8 * HOUR / self.window_s))
        t = hour * HOUR + HOUR / 2
        means = {m: WindowStat(t, a[2] / a[0], a[3] / a[0], a[4] / a[5] if a[5] else None, True, self.models.get(m))
                 for m, a in acc.items() if a[0] >= need}
        if not means:
            return None
        return HourMeans(hour, means, {m: x for m, x in means.items() if acc[m][1] == 0})


def _slots(starts: npt.NDArray[np.intp], n: int) -> tuple[int, int, npt.NDArray[np.intp]]:
    """Where each of ``n`` values sits in ``_running``'s grid (a row a group, its held sum first):
    groups, width and flat places, found once for the five sums of a feed."""
    sizes = np.diff(np.append(starts, n))
    width = int(sizes.max()) + 1
    group = np.repeat(np.arange(len(starts)), sizes)
    return len(starts), width, group * width + (np.arange(n) - starts[group] + 1)


def _running(values: FloatArray, slots: tuple[int, int, npt.NDArray[np.intp]],
             held: list[float] | float) -> FloatArray:
    """Each group's sum taken left to right after what its window held, as ``observe`` adds sample
    by sample (numpy's own sum pairs terms: the last bit would differ, and a pinned result with it)."""
    groups, width, places = slots
    grid = np.zeros(groups * width)
    grid[::width] = held
    grid[places] = values
    table = grid.reshape(groups, width)
    total = table[:, 0].copy()
    for k in range(1, width):  # a column at a time: each group's sum in its own order (what cumsum's last is)
        total += table[:, k]
    return total
