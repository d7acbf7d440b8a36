"""The thermal forecast's arithmetic as pure functions on numbers and arrays, so each rule is
tested on a handful of hand-checked values rather than through a replay: the Theil–Sen trend of
the hourly R with its interval, the heavy load and warm inlet it extrapolates at, the level-step
rule that restarts a trend, the cross-module common R and the leave-one-out inlet estimate.
The forecaster (``gpuvet.watch.forecast``) keeps the state and calls these; the order of every
sum here is the forecaster's, so a pinned result does not move by a bit."""

from __future__ import annotations

import math
import statistics
from bisect import bisect_left, insort
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from gpuvet.watch.forecast_settings import PRIOR_R, PRIOR_WEIGHT_W2, RECENT_HOURS, STEP_HOURS, STEP_NOISE


@dataclass
class Forecast:
    module: str
    slope_per_day: float
    slope_low: float
    slope_high: float
    r_now: float
    r_crit: float
    crossing: float | None  # seconds since start (central estimate)
    earliest: float | None
    latest: float | None
    span_days: float = 0.0  # of the history the trend was fitted on
    power_w: float = 0.0  # the heavy load it extrapolates at (95th percentile)
    inlet_c: float = 0.0  # the warm inlet it extrapolates at (95th percentile)
    hours: int = 0  # hourly values in the fit


_PAIRS: dict[int, tuple[np.ndarray, np.ndarray]] = {}

# scipy.special.ndtri((1 - alpha) / 2) for the levels the forecast and the backtest's sweep use, as
# scipy gives them: importing scipy.special cost watch and doctor 0.2-0.4 s at startup
_Z_OF_ALPHA = {0.8: -1.2815515655446004, 0.9: -1.6448536269514729, 0.95: -1.959963984540054}


def p95(values: Sequence[float]) -> float:
    """The 95th percentile by nearest rank (numpy's percentile costs more than the sort here)."""
    ordered = sorted(values)
    return ordered[min(int(0.95 * len(ordered)), len(ordered) - 1)]


def _z(alpha: float) -> float:
    """The normal quantile at (1 - alpha) / 2; scipy only for a level the table lacks."""
    z = _Z_OF_ALPHA.get(alpha)
    if z is None:
        from scipy.special import ndtri

        z = _Z_OF_ALPHA[alpha] = float(ndtri((1 - alpha) / 2))
    return z


def theil_sen(x: np.ndarray, y: np.ndarray, alpha: float) -> tuple[float, float, float, float]:
    """Slope, intercept and the slope's ``alpha`` confidence interval (Sen 1968), as
    scipy.stats.theilslopes computes them for distinct x, without its per-call overhead (the
    forecast fits every module every two hours of a replay): the ranks it needs come from one
    partition of the pairwise slopes at those ranks (2-7x faster than sorting them all, from
    a day's 276 slopes to a month's 258,840; the same values at the same ranks)."""
    return _theil_sen(x, y, pair_slopes(x, y)[0], alpha)


def pair_slopes(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, bool]:
    """The slopes of every pair of points with distinct x, pair (i, j) for i < j in row order,
    and whether that is every pair: then the pairs among the last k points are its last
    k(k-1)/2 slopes (``trend``'s recent fit takes them instead of making them again)."""
    n = len(x)
    pairs = _PAIRS.get(n)
    if pairs is None:
        pairs = _PAIRS[n] = np.triu_indices(n, 1)
    i, j = pairs
    dx = x[j] - x[i]
    dy = y[j] - y[i]
    every = bool(dx.all())
    return (dy / dx if every else dy[dx != 0] / dx[dx != 0]), every


def _theil_sen(x: np.ndarray, y: np.ndarray, slopes: np.ndarray, alpha: float) -> tuple[float, float, float, float]:
    """``theil_sen`` of the pairs' ``slopes`` (``pair_slopes``; a new array, partitioned here in place)."""
    n = len(x)
    m = len(slopes)
    ys = np.sort(y)
    tie_term = 0.0
    if (ys[1:] == ys[:-1]).any():
        _, counts = np.unique(ys, return_counts=True)
        ties = counts[counts > 1]
        tie_term = float(np.sum(ties * (ties - 1) * (2 * ties + 5)))
    spread = _z(alpha) * math.sqrt((n * (n - 1) * (2 * n + 5) - tie_term) / 18.0)
    upper = min(round((m - spread) / 2), m - 1)  # round half to even, as np.round
    lower = max(round((m + spread) / 2) - 1, 0)
    part = slopes  # partitioned in place (a copy cost as much again): each rank read below holds its sorted value
    part.partition(sorted({lower, upper, (m - 1) // 2, m // 2}))
    slope = float(part[m // 2] if m % 2 else (part[m // 2 - 1] + part[m // 2]) / 2)
    y_median = float(ys[n // 2] if n % 2 else (ys[n // 2 - 1] + ys[n // 2]) / 2)
    intercept = y_median - slope * _median_x(x)
    return slope, intercept, float(part[lower]), float(part[upper])


def _median_x(x: np.ndarray) -> float:
    """``np.median(x)``, read straight off ``x`` when it is in order (the hours always are): the
    same middle values and the same mean of two, without np.median's overhead."""
    n = len(x)
    if n and bool((x[1:] >= x[:-1]).all()):
        return float(x[n // 2] if n % 2 else (x[n // 2 - 1] + x[n // 2]) / 2)
    return float(np.median(x))


def heavy_load(powers: Sequence[float], loaded: Sequence[float]) -> float:
    """The power a heavy job reaches: the 95th percentile of the usable windows' powers, of the
    last day's alone (a load that rose lately counts at once), and of every busy window's peak
    through the thermal lag (an inference load's minute-long peak, not its mean, slows it first)."""
    return max(p95(powers), p95(powers[-144:]), p95(loaded) if loaded else 0.0)


def heavy_load_ranked(powers: Ranked, last_day: Ranked, loaded: Ranked) -> float:
    """``heavy_load`` of histories kept in order as they came (``Ranked``): the same three ranks."""
    return max(powers.p95(), last_day.p95(), loaded.p95() if len(loaded) else 0.0)


def warm_inlet(refs: Sequence[float] | np.ndarray, bases: Sequence[float] | np.ndarray, powers: Sequence[float] | np.ndarray,
               base: float) -> float:
    """A warm day's inlet: the 95th percentile of the inlets, and of the last day's. Estimated
    inlets are first moved onto today's common R ``base``: one estimated with R' is lower by
    (R − R')·P, and mixing bases would move the crossing by that much at load."""
    now = np.asarray(refs, dtype=np.float64) if base == 0.0 else \
        np.asarray(refs) + (np.asarray(bases) - base) * np.asarray(powers)  # same rounding
    return max(p95_of(now), p95_of(now[-144:]))


def p95_of(values: np.ndarray) -> float:
    """``p95`` of an array: the same element by nearest rank, selected rather than sorted."""
    k = min(int(0.95 * len(values)), len(values) - 1)
    return float(np.partition(values, k)[k])


class Tail:
    """The last ``size`` values as one numpy array, written in place (``warm_inlet`` reads three of
    these at every evaluation; making arrays of lists again each time cost more than the rest)."""

    __slots__ = ("size", "buf", "end")

    def __init__(self, size: int) -> None:
        self.size, self.end = size, 0
        self.buf = np.empty(2 * size)

    def add(self, value: float) -> None:
        if self.end == len(self.buf):
            self.buf[:self.size - 1] = self.buf[self.end - self.size + 1:self.end]
            self.end = self.size - 1
        self.buf[self.end] = value
        self.end += 1

    def view(self) -> np.ndarray:
        return self.buf[max(self.end - self.size, 0):self.end]


class Ranked:
    """The last ``size`` values in arrival order and the same values in order, kept as they come,
    so ``p95`` of a sliding history is read, not sorted, at every evaluation."""

    __slots__ = ("size", "values", "ordered")

    def __init__(self, size: int) -> None:
        self.size = size
        self.values: deque[float] = deque()
        self.ordered: list[float] = []

    def add(self, value: float) -> None:
        values, ordered = self.values, self.ordered
        values.append(value)
        insort(ordered, value)
        if len(values) > self.size:
            del ordered[bisect_left(ordered, values.popleft())]

    def __len__(self) -> int:
        return len(self.ordered)

    def p95(self) -> float:
        """``p95(self.values)``: the nearest rank of the kept order."""
        ordered = self.ordered
        return ordered[min(int(0.95 * len(ordered)), len(ordered) - 1)]


def fit_trend(module: str, hours: Sequence[float], r: Sequence[float], base: float, now: float, r_crit: float,
              power: float, inlet: float, alpha: float) -> Forecast:
    """The Theil–Sen line through the hourly R (less ``base``, as is ``r_crit``) and when it
    reaches ``r_crit``: the central slope gives the crossing, the interval's ends the range."""
    days, values = np.asarray(hours) / 24.0, np.asarray(r)
    return _fit(module, (days, values, pair_slopes(days, values)[0]), hours, base, now, r_crit, power, inlet, alpha)


def _fit(module: str, points: tuple[np.ndarray, np.ndarray, np.ndarray], hours: Sequence[float], base: float,
         now: float, r_crit: float, power: float, inlet: float, alpha: float) -> Forecast:
    """``fit_trend`` of arrays already made: the days, the R values and their pairs' slopes
    (``trend`` makes them once for both of its fits)."""
    slope, intercept, low, high = _theil_sen(*points, alpha)
    r_now = intercept + slope * now / 86400.0  # both less base until the Forecast is made

    def at(rate: float) -> float | None:
        if rate <= 0:
            return None
        return float(now + max(r_crit - r_now, 0.0) / rate * 86400.0)

    return Forecast(module, float(slope), float(low), float(high), float(r_now + base), float(r_crit + base),
                    at(slope), at(high), at(low), (hours[-1] - hours[0]) / 24.0, power, inlet, len(hours))


def trend(module: str, hours: Sequence[float], r: Sequence[float], base: float, now: float, slowdown_c: float,
          power: float, inlet: float, alpha: float) -> Forecast:
    """The trend over the whole history, or over the last ``RECENT_HOURS`` when that predicts an
    earlier crossing (a creep that began inside the history is steeper than the average). The
    arrays are made once: the recent fit's are the last values of the whole's (the same numbers),
    and its pairs' slopes the whole's last ones where the whole has every pair."""
    r_crit = (slowdown_c - inlet) / power - base
    days, values = np.asarray(hours) / 24.0, np.asarray(r)
    k = RECENT_HOURS
    slopes, every = pair_slopes(days, values)
    recent_points = None
    if len(r) >= k + 24:
        tail = slopes[len(slopes) - k * (k - 1) // 2:].copy() if every else pair_slopes(days[-k:], values[-k:])[0]
        recent_points = (days[-k:], values[-k:], tail)
    whole = _fit(module, (days, values, slopes), hours, base, now, r_crit, power, inlet, alpha)
    recent = _fit(module, recent_points, hours[-k:], base, now, r_crit, power, inlet, alpha) \
        if recent_points is not None else None
    if recent is not None and recent.slope_low > 0 and recent.earliest is not None and (
            whole.earliest is None or recent.earliest < whole.earliest):
        return recent
    return whole


@dataclass(frozen=True)
class Step:
    """A level step in R found by ``find_step``: its size and the hour-to-hour noise it stands
    clear of (°C/W), the first hour of the day before it and its own first hour."""

    jump: float
    noise: float
    since: float
    split: float


def _median(values: Iterable[float]) -> float:
    """``statistics.median`` without its call overhead (the step rule takes eight a closed hour,
    the inlet's fit three a window): the same sort, the same middle value or mean of the two."""
    data = sorted(values)
    n = len(data)
    if not n:
        return statistics.median(data)  # its error
    return data[n // 2] if n % 2 else (data[n // 2 - 1] + data[n // 2]) / 2


def _line(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, float, float]:
    """The line through the medians of the day's two halves (cheap, robust; the step rule runs
    every hour): x1, y1, the slope and the rise y2 − y1."""
    x1, x2 = _median(x[:12]), _median(x[12:24])
    y1, y2 = _median(y[:12]), _median(y[12:24])
    slope = (y2 - y1) / (x2 - x1) if x2 > x1 else 0.0
    return x1, y1, slope, y2 - y1


def find_step(hours: Sequence[float], r: Sequence[float], powers: Sequence[float], step_min_c: float) -> Step | None:
    """A level step in R (a re-seated module, new thermal paste, a fixed fan): the last
    ``STEP_HOURS`` all sit on one side of the line fitted to the day before them, by more than
    ``STEP_NOISE`` times the hour-to-hour noise and more than ``step_min_c`` at the usual load
    (the median of ``powers``' last 200, taken only when the noise test passes); a creep moves
    along its line and is not a step."""
    k = STEP_HOURS
    if len(r) < 24 + k:
        return None
    x, y = hours[-24 - k:], r[-24 - k:]
    x1, y1, slope, rise = _line(x, y)
    residual = [b - (y1 + slope * (a - x1)) for a, b in zip(x, y, strict=True)]
    noise = 1.4826 * _median([abs(b - a) for a, b in zip(residual[:23], residual[1:24], strict=True)]) / math.sqrt(2)
    after = residual[24:]
    jump = _median(after)
    if abs(jump) <= STEP_NOISE * noise:
        return None  # within the noise, whatever the floor (max(noise bound, floor) is at least the bound)
    floor = step_min_c / _median(powers[-200:])
    if abs(jump) <= max(STEP_NOISE * noise, floor) or any(v * jump <= 0 or abs(v) < 0.5 * abs(jump) for v in after):
        return None
    if abs(_median(after[k // 2:]) - _median(after[:k // 2])) > 0.35 * abs(jump):
        return None  # still moving after the supposed step: a ramp (creep, drift), not a step
    if jump > 0 and rise > 0.5 * noise:
        return None  # up on top of a rising day: the creep going on, never a reason to forget it
    return Step(jump, noise, x[0], x[24])


def stepped_alike(others: Iterable[tuple[Sequence[float], Sequence[float]]], step: Step) -> bool:
    """Whether most of the other modules' hourly R (``(hours, r)`` each) stepped the same way at
    the same hour, by at least half as much: maintenance changes one module, while a shift of the
    estimated inlet (a creeping peer dropping out at its throttle point) moves the others together."""
    moved = seen = 0
    for hours, r in others:
        pre = [(a, b) for a, b in zip(hours, r, strict=True) if step.since <= a < step.split]
        post = [b for a, b in zip(hours, r, strict=True) if a >= step.split]
        if len(pre) < 12 or len(post) < 3:
            continue
        half = len(pre) // 2
        x1, x2 = statistics.median(a for a, _ in pre[:half]), statistics.median(a for a, _ in pre[half:])
        y1, y2 = statistics.median(b for _, b in pre[:half]), statistics.median(b for _, b in pre[half:])
        slope = (y2 - y1) / (x2 - x1) if x2 > x1 else 0.0
        shift = statistics.median(b - (y1 + slope * (a - x1)) for a, b in zip(
            [a for a in hours if a >= step.split], post, strict=True))
        seen += 1
        moved += shift * step.jump > 0 and abs(shift) >= 0.5 * abs(step.jump)
    return seen > 0 and moved >= max(1, seen // 2)


@dataclass
class CommonFit:
    """The cross-module fit of one model on one node: sums of power and temperature about their
    window means, forgetting slowly, give the common R without knowing the inlet."""

    sxy: float = PRIOR_R * PRIOR_WEIGHT_W2
    sxx: float = PRIOR_WEIGHT_W2
    windows: int = 0

    @property
    def r(self) -> float:
        return self.sxy / self.sxx


def fit_common(sxy: float, sxx: float, powers: Sequence[float], temps: Sequence[float],
               decay: float) -> tuple[float, float] | None:
    """The sums after one more window: temperatures (less each module's usual offset) against
    power, about the window's means (the inlet cancels), the old sums decayed toward the prior.
    Modules far off the current line (a creeping one ahead of its learnt offset, one just back
    from maintenance) are left out, so one module cannot tilt every other module's inlet; None
    when fewer than three remain."""
    r = sxy / sxx
    p_mean, t_mean = sum(powers) / len(powers), sum(temps) / len(temps)
    resid = [t - t_mean - r * (p - p_mean) for p, t in zip(powers, temps, strict=True)]
    centre = _median(resid)
    spread = _median([abs(x - centre) for x in resid])
    limit = max(4 * 1.4826 * spread, 1.0)
    if all(abs(x - centre) <= limit for x in resid):
        kept_p, kept_t = list(powers), list(temps)
    else:
        kept_p = [p for p, x in zip(powers, resid, strict=True) if abs(x - centre) <= limit]
        kept_t = [t for t, x in zip(temps, resid, strict=True) if abs(x - centre) <= limit]
    n = len(kept_p)
    if n < 3:
        return None
    p_mean, t_mean = sum(kept_p) / n, sum(kept_t) / n  # the same sums, in the same order, as over pairs
    return (decay * sxy + sum([(p - p_mean) * (t - t_mean) for p, t in zip(kept_p, kept_t, strict=True)])
            + (1 - decay) * PRIOR_R * PRIOR_WEIGHT_W2,
            decay * sxx + sum([(p - p_mean) ** 2 for p in kept_p]) + (1 - decay) * PRIOR_WEIGHT_W2)


def leave_one_out(bases: Sequence[float], trusted: Sequence[bool]) -> list[tuple[float, int] | None]:
    """Each module's inlet estimate from the others' ``bases`` (T − R·P less their usual offset):
    the median over the trusted others (a warned module is nobody's inlet), and how many it rests
    on; None where no trusted other is left. The trusted bases are sorted once a window and each
    module's median read off them without its own value (the same middle values)."""
    kept = sorted(bases) if all(trusted) and len(trusted) == len(bases) else \
        sorted(b for b, ok in zip(bases, trusted, strict=True) if ok)
    if 0.0 in kept or any(map(math.isnan, kept)):  # a zero (±0 tie) or NaN (no order): sorted one by one
        return [_median_of_others(bases, trusted, i) for i in range(len(bases))]
    out: list[tuple[float, int] | None] = []
    for b, ok in zip(bases, trusted, strict=True):
        n = len(kept) - ok
        if not n:
            out.append(None)
            continue
        skip = bisect_left(kept, b) if ok else n + 1  # the own value's place, which the others lack
        mid = n // 2
        high = kept[mid + (mid >= skip)]
        out.append((high if n % 2 else (kept[mid - 1 + (mid - 1 >= skip)] + high) / 2, n))
    return out


def _median_of_others(bases: Sequence[float], trusted: Sequence[bool], i: int) -> tuple[float, int] | None:
    others = [b for k, (b, ok) in enumerate(zip(bases, trusted, strict=True)) if ok and k != i]
    return (statistics.median(others), len(others)) if others else None


def learn_offsets(bases: Sequence[float], old: Sequence[float | None], rate: float) -> list[float]:
    """Each module's usual offset of T − R·P (``bases``) over the others', moved ``rate`` of the
    way to this window's: the common level is the median of the bases less their known offsets
    when three are known, else of the bases themselves."""
    known = [b - o for b, o in zip(bases, old, strict=True) if o is not None]
    common = _median(known) if len(known) >= 3 else _median(bases)
    out = []
    for b, o in zip(bases, old, strict=True):
        deviation = b - common
        out.append(deviation if o is None else o + rate * (deviation - o))
    return out
