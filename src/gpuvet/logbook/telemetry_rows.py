"""The logbook's telemetry rows: a run's and a module's keys, raw samples with their one-minute
roll-ups, and how much is kept (watch writes these; replay, report and trend read them)."""

from __future__ import annotations

from collections.abc import Sequence

from gpuvet.logbook.base import LogbookBase, utc_now
from gpuvet.logbook.db import LogbookError
from gpuvet.logbook.records import SampleRow, SeriesRow
from gpuvet.logbook.samples import SampleWriter


class TelemetryRows(LogbookBase):
    """Samples by run and module key; ``_samples`` writes and reads them in batches."""

    _samples: SampleWriter

    def run_key(self, run_id: str) -> int:
        rows = self._db.query(f"SELECT {self._db.dialect.runs_key} FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise LogbookError(f"no run {run_id!r}", where=self._db.where, fix="begin the run first.")
        return int(rows[0][0])

    def module_key(self, uuid: str, module: str, bus_id: str | None, model: str | None) -> int:
        """A module's key by UUID: its history follows it whatever it is called next time."""
        with self._db.tx() as tx:
            tx.run("INSERT INTO modules(uuid, module, bus_id, model, first_seen_utc) VALUES (?, ?, ?, ?, ?) "
                   "ON CONFLICT DO NOTHING", (uuid, module, bus_id, model, utc_now()))
            return int(tx.rows("SELECT mkey FROM modules WHERE uuid = ?", (uuid,))[0][0])

    def add_samples(self, run_key: int, rows: Sequence[SampleRow]) -> None:
        """Raw samples and their one-minute roll-ups. On a full disk, as much of the batch as fits
        is kept (in smaller transactions) before LogbookFull says how much was lost."""
        self._samples.add(run_key, rows)

    def series(self, run_key: int, mkey: int, t0: float, t1: float, step_s: float,
               raw: bool = False) -> list[SeriesRow]:
        """(t, temp mean, temp max, power mean, util mean, sm min, throttle) per ``step_s`` bucket;
        from the one-minute roll-ups when the step is a minute or more (unless ``raw``)."""
        return self._samples.series(run_key, mkey, t0, t1, step_s, raw)

    def prune(self, run_key: int, keep_raw_s: float, now: float) -> int:
        """Drop raw samples older than ``keep_raw_s`` (roll-ups stay). Returns rows removed."""
        with self._db.tx() as tx:
            return tx.run("DELETE FROM samples WHERE run_key = ? AND t < ?", (run_key, now - keep_raw_s))

    def sample_count(self, run_id: str) -> int:
        return int(self._db.query("SELECT COUNT(*) FROM samples WHERE run_key = ?", (self.run_key(run_id),))[0][0])

    def last_sample_time(self, run_id: str) -> float | None:
        value = self._db.query("SELECT MAX(t) FROM samples WHERE run_key = ?", (self.run_key(run_id),))[0][0]
        return None if value is None else float(value)
