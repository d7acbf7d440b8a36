"""Telemetry in the logbook: raw samples with their one-minute roll-ups, written fast (one
prepared insert per batch with the run key a literal, so rows go in as the caller built them;
the roll-ups computed from the rows in hand, not read back) and kept as far as the disk allows."""

from __future__ import annotations

from collections.abc import Sequence

from gpuvet.logbook.db import Args, Db, LogbookFull
from gpuvet.logbook.records import SampleRow, SeriesRow
from gpuvet.logbook.rollup import minutes, upsert_sql

SMALLEST_CHUNK = 64  # on a full disk, halve the batch down to this many rows before giving up


class SampleWriter:
    def __init__(self, db: Db) -> None:
        self.db = db
        self.upsert = upsert_sql(db.dialect)

    def add(self, run_key: int, rows: Sequence[SampleRow]) -> None:
        if not rows:
            return
        try:
            self._write(run_key, rows)
        except LogbookFull as full:
            kept = self._fit(run_key, rows)
            raise LogbookFull(f"{full.what}: kept {kept} of the {len(rows)} samples of this batch, and every "
                              "sample written before it", where=full.where, fix=full.fix) from None

    def _write(self, run_key: int, rows: Sequence[SampleRow]) -> None:
        with self.db.tx() as tx:
            tx.many(self.db.dialect.insert_samples(run_key), rows)
            tx.many(self.upsert, minutes(run_key, rows))

    def _fit(self, run_key: int, rows: Sequence[SampleRow]) -> int:
        """Write the longest leading part of ``rows`` that fits, in halves; how many rows that was."""
        try:
            self._write(run_key, rows)
            return len(rows)
        except LogbookFull:
            if len(rows) <= SMALLEST_CHUNK:
                return 0
        half = len(rows) // 2
        kept = self._fit(run_key, rows[:half])
        return kept if kept < half else half + self._fit(run_key, rows[half:])

    def series(self, run_key: int, mkey: int, t0: float, t1: float, step_s: float, raw: bool) -> list[SeriesRow]:
        d = self.db.dialect
        if step_s >= 60 and not raw:
            per = max(int(step_s // 60), 1)
            sql = ("SELECT (minute / ?) * ? * 60, SUM(temp_mean * n) / SUM(n), MAX(temp_max), "
                   "SUM(power_mean * n) / SUM(n), SUM(util_mean * n) / SUM(n), MIN(sm_min), MAX(throttle) "
                   "FROM samples_1m WHERE run_key = ? AND mkey = ? AND minute >= ? AND minute <= ? "
                   "GROUP BY 1 ORDER BY 1")
            args: Args = (per, per, run_key, mkey, int(t0 // 60), int(t1 // 60))
        else:
            sql = (f"SELECT {d.floor_div('t', '?')} * ?, AVG(temp), MAX(temp), AVG(power), AVG(util), MIN(sm), "
                   "MAX(throttle) FROM samples WHERE run_key = ? AND mkey = ? AND t >= ? AND t <= ? "
                   "GROUP BY 1 ORDER BY 1")
            args = (step_s, step_s, run_key, mkey, t0, t1)
        return [tuple(float(v) if v is not None else v for v in r) for r in self.db.query(sql, args)]
