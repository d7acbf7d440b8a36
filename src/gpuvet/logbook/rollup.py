"""One-minute roll-ups of a batch of samples, computed from the rows in hand (numpy) rather
than read back from the table: the batch is written once and summarised once, whatever its
order, in either dialect."""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import TYPE_CHECKING

from gpuvet.logbook.db import Dialect
from gpuvet.logbook.records import SampleRow

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

COLUMNS = ("run_key, mkey, minute, n, temp_mean, temp_max, power_mean, power_max, sm_min, sm_max, mem_min, mem_max, "
           "util_mean, throttle")
MinuteRow = tuple[int | float | None, ...]


def upsert_sql(d: Dialect) -> str:
    """Insert a minute, or merge it into the one already there (means weighted by counts)."""
    old = "samples_1m"

    def mean(c: str) -> str:
        return f"{c} = ({old}.{c} * {old}.n + excluded.{c} * excluded.n) / ({old}.n + excluded.n)"

    def pick(c: str, f: str) -> str:
        return f"{c} = {f}({old}.{c}, excluded.{c})"

    sets = [mean("temp_mean"), mean("power_mean"), mean("util_mean"), pick("temp_max", d.greatest),
            pick("power_max", d.greatest), pick("sm_min", d.least), pick("sm_max", d.greatest),
            pick("mem_min", d.least), pick("mem_max", d.greatest), pick("throttle", d.greatest),
            f"n = {old}.n + excluded.n"]
    marks = ", ".join("?" * 14)
    return (f"INSERT INTO samples_1m ({COLUMNS}) VALUES ({marks}) "
            f"ON CONFLICT (run_key, mkey, minute) DO UPDATE SET {', '.join(sets)}")


def _column(rows: Sequence[SampleRow], i: int) -> NDArray[np.float64]:
    import numpy as np

    try:
        return np.fromiter(map(itemgetter(i), rows), dtype=float, count=len(rows))
    except TypeError:  # a None among them: numpy makes it NaN when asked for floats
        return np.array(list(map(itemgetter(i), rows)), dtype=float)


def minutes(run_key: int, rows: Sequence[SampleRow]) -> list[MinuteRow]:
    """(run_key, mkey, minute, n, temp mean/max, power mean/max, sm min/max, mem min/max, util
    mean, throttle max) per module and minute of ``rows``; a statistic of no values is None."""
    import numpy as np

    cols = [_column(rows, i) for i in range(8)]
    mkey = cols[0].astype(np.int64)
    minute = np.floor(cols[1] / 60).astype(np.int64)
    order = np.lexsort((minute, mkey))
    mkey, minute = mkey[order], minute[order]
    start = np.flatnonzero(np.r_[True, (mkey[1:] != mkey[:-1]) | (minute[1:] != minute[:-1])])
    count = np.diff(np.r_[start, len(order)])

    def mean(c: int) -> NDArray[np.float64]:
        v = cols[c][order]
        seen = ~np.isnan(v)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.add.reduceat(np.where(seen, v, 0.0), start) / np.add.reduceat(seen, start)

    def top(c: int) -> NDArray[np.float64]:
        return np.fmax.reduceat(cols[c][order], start)

    def bottom(c: int) -> NDArray[np.float64]:
        return np.fmin.reduceat(cols[c][order], start)

    stats = [mean(2), top(2), mean(3), top(3), bottom(4), top(4), bottom(5), top(5), mean(6), top(7)]
    lists = [[None if x != x else x for x in s.tolist()] for s in stats]  # NaN (no values) -> NULL
    lists[-1] = [None if x is None else int(x) for x in lists[-1]]
    return [(run_key, *head, *tail) for head, tail in zip(
        zip(mkey[start].tolist(), minute[start].tolist(), count.tolist(), strict=True), zip(*lists, strict=True),
        strict=True)]
