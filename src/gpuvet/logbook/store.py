"""The logbook: every run, its envelope, checks and events, in one SQLite file. The only code
in gpuvet that speaks SQL.

Durability: WAL journal, a busy timeout so two gpuvet processes can write at once, every
write in a transaction. A run is inserted as ``running`` with its process id and start time;
its checks land in one transaction with the ``complete`` status, so a run is never
half-written. A ``running`` run whose process is gone (killed, crashed, machine rebooted) is
marked ``aborted`` the next time the logbook is opened.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

from gpuvet.errors import GpuvetError

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'aborted')),
    verdict TEXT,
    started_utc TEXT NOT NULL,
    ended_utc TEXT,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    pid_started REAL NOT NULL,
    simulated INTEGER NOT NULL,
    node TEXT,
    envelope TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checks (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    seq INTEGER NOT NULL,
    layer TEXT NOT NULL,
    name TEXT NOT NULL,
    verdict TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    time_utc TEXT NOT NULL,
    kind TEXT NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_started ON runs(started_utc);
CREATE TABLE IF NOT EXISTS modules (
    mkey INTEGER PRIMARY KEY,
    uuid TEXT UNIQUE NOT NULL,
    module TEXT NOT NULL,
    bus_id TEXT,
    model TEXT,
    first_seen_utc TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS samples (
    run_key INTEGER NOT NULL,
    mkey INTEGER NOT NULL,
    t REAL NOT NULL,
    temp REAL, power REAL, sm REAL, mem REAL, util REAL, throttle INTEGER,
    PRIMARY KEY (run_key, mkey, t)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS samples_1m (
    run_key INTEGER NOT NULL,
    mkey INTEGER NOT NULL,
    minute INTEGER NOT NULL,
    n INTEGER NOT NULL,
    temp_mean REAL, temp_max REAL, power_mean REAL, power_max REAL,
    sm_min REAL, sm_max REAL, mem_min REAL, mem_max REAL, util_mean REAL, throttle INTEGER,
    PRIMARY KEY (run_key, mkey, minute)
) WITHOUT ROWID;
"""

# columns added to ``events`` after schema 1 (added in place when an older logbook is opened)
_EVENT_COLUMNS = {"module": "TEXT", "uuid": "TEXT", "sim_time": "REAL", "severity": "TEXT", "data": "TEXT"}

_ROLLUP = """
INSERT INTO samples_1m (run_key, mkey, minute, n, temp_mean, temp_max, power_mean, power_max, sm_min, sm_max,
                        mem_min, mem_max, util_mean, throttle)
SELECT run_key, mkey, CAST(t / 60 AS INTEGER), COUNT(*), AVG(temp), MAX(temp), AVG(power), MAX(power), MIN(sm), MAX(sm),
       MIN(mem), MAX(mem), AVG(util), MAX(throttle)
FROM samples WHERE run_key = ? AND mkey = ? AND t >= ? AND t <= ? GROUP BY mkey, CAST(t / 60 AS INTEGER)
ON CONFLICT (run_key, mkey, minute) DO UPDATE SET
    temp_mean = (temp_mean * n + excluded.temp_mean * excluded.n) / (n + excluded.n),
    power_mean = (power_mean * n + excluded.power_mean * excluded.n) / (n + excluded.n),
    util_mean = (util_mean * n + excluded.util_mean * excluded.n) / (n + excluded.n),
    temp_max = max(temp_max, excluded.temp_max), power_max = max(power_max, excluded.power_max),
    sm_min = min(sm_min, excluded.sm_min), sm_max = max(sm_max, excluded.sm_max),
    mem_min = min(mem_min, excluded.mem_min), mem_max = max(mem_max, excluded.mem_max),
    throttle = max(throttle, excluded.throttle), n = n + excluded.n
"""

SampleRow = tuple[int, float, float | None, float | None, float | None, float | None, float | None, int]


def default_path() -> Path:
    """``$GPUVET_HOME/logbook.db``, else the user's data directory."""
    home = os.environ.get("GPUVET_HOME")
    if home:
        return Path(home) / "logbook.db"
    import platformdirs

    return Path(platformdirs.user_data_dir("gpuvet", appauthor=False)) / "logbook.db"


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RunRow:
    run_id: str
    kind: str
    status: str
    verdict: str | None
    started_utc: str
    ended_utc: str | None
    host: str
    simulated: bool
    node: str | None
    envelope: dict[str, Any]


class Logbook:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_path()
        if self.path.exists() and not self.path.is_file():
            raise GpuvetError(f"{self.path} is not a file", where="--logbook", fix="give a file path for the logbook.")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._check_header()
        try:
            self.db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = NORMAL")
            self._create()
            self._mark_orphans()
        except sqlite3.DatabaseError as exc:
            raise GpuvetError(f"{self.path} is not a usable gpuvet logbook ({exc})", where="--logbook",
                              fix="point --logbook (or GPUVET_HOME) at another file; the file was left as it is.") from None

    def _check_header(self) -> None:
        """Refuse a file that is not SQLite before SQLite touches it (it would not write, but
        say it plainly)."""
        if self.path.is_file() and self.path.stat().st_size > 0:
            with self.path.open("rb") as f:
                if f.read(16) != b"SQLite format 3\x00":
                    raise GpuvetError(f"{self.path} is not a gpuvet logbook (not an SQLite file)", where="--logbook",
                                      fix="point --logbook (or GPUVET_HOME) at another file; this one was left untouched.")

    def _create(self) -> None:
        with self._tx() as cur:
            for statement in _SCHEMA.strip().split(";"):
                if statement.strip():
                    cur.execute(statement)
            have = {r[1] for r in cur.execute("PRAGMA table_info(events)").fetchall()}
            for column, kind in _EVENT_COLUMNS.items():
                if column not in have:
                    cur.execute(f"ALTER TABLE events ADD COLUMN {column} {kind}")
            cur.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            row = cur.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if int(row[0]) > SCHEMA_VERSION:
            raise GpuvetError(f"{self.path} was written by a newer gpuvet (schema {row[0]})", where="--logbook",
                              fix="upgrade gpuvet, or use another logbook file.")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Cursor]:
        cur = self.db.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    def _mark_orphans(self) -> None:
        """Runs left ``running`` by a process that no longer exists become ``aborted``."""
        here = socket.gethostname()
        rows = self.db.execute("SELECT run_id, pid, pid_started FROM runs WHERE status = 'running' AND host = ?",
                               (here,)).fetchall()
        gone = [run_id for run_id, pid, started in rows if not _alive(pid, started)]
        if gone:
            with self._tx() as cur:
                for run_id in gone:
                    cur.execute("UPDATE runs SET status = 'aborted', ended_utc = ? WHERE run_id = ? AND status = 'running'",
                                (utc_now(), run_id))
                    cur.execute("INSERT INTO events(run_id, time_utc, kind, message) VALUES (?, ?, 'aborted', ?)",
                                (run_id, utc_now(), "the process ended before the run completed"))

    # --- writing -----------------------------------------------------------------------
    def begin(self, kind: str, envelope: dict[str, Any], simulated: bool, node: str | None) -> str:
        run_id = f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
        me = psutil.Process()
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO runs(run_id, kind, status, started_utc, host, pid, pid_started, simulated, node, envelope) "
                "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                (run_id, kind, utc_now(), socket.gethostname(), me.pid, me.create_time(), int(simulated), node,
                 json.dumps(envelope)),
            )
        return run_id

    def event(self, run_id: str, kind: str, message: str, module: str | None = None, uuid: str | None = None,
              sim_time: float | None = None, severity: str | None = None, data: dict[str, Any] | None = None) -> None:
        with self._tx() as cur:
            cur.execute("INSERT INTO events(run_id, time_utc, kind, message, module, uuid, sim_time, severity, data) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (run_id, utc_now(), kind, message, module, uuid, sim_time, severity,
                         json.dumps(data) if data is not None else None))

    # --- telemetry ---------------------------------------------------------------------
    def run_key(self, run_id: str) -> int:
        return int(self.db.execute("SELECT rowid FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0])

    def module_key(self, uuid: str, module: str, bus_id: str | None, model: str | None) -> int:
        """A module's key by UUID: its history follows it whatever it is called next time."""
        with self._tx() as cur:
            cur.execute("INSERT OR IGNORE INTO modules(uuid, module, bus_id, model, first_seen_utc) VALUES (?, ?, ?, ?, ?)",
                        (uuid, module, bus_id, model, utc_now()))
            return int(cur.execute("SELECT mkey FROM modules WHERE uuid = ?", (uuid,)).fetchone()[0])

    def add_samples(self, run_key: int, rows: Sequence[SampleRow]) -> None:
        """Raw samples and their one-minute roll-ups, in one transaction."""
        if not rows:
            return
        spans: dict[int, list[float]] = {}
        for r in rows:
            span = spans.get(r[0])
            if span is None:
                spans[r[0]] = [r[1], r[1]]
            elif r[1] < span[0]:
                span[0] = r[1]
            elif r[1] > span[1]:
                span[1] = r[1]
        with self._tx() as cur:
            cur.executemany("INSERT OR REPLACE INTO samples(run_key, mkey, t, temp, power, sm, mem, util, throttle) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [(run_key, *r) for r in rows])
            for mkey, (lo, hi) in spans.items():  # by the primary key: only this batch's rows are read back
                cur.execute(_ROLLUP, (run_key, mkey, lo, hi))

    def series(self, run_key: int, mkey: int, t0: float, t1: float, step_s: float,
               raw: bool = False) -> list[tuple[float, ...]]:
        """(t, temp mean, temp max, power mean, util mean, sm min, throttle) per ``step_s`` bucket;
        from the one-minute roll-ups when the step is a minute or more (unless ``raw``)."""
        if step_s >= 60 and not raw:
            per = max(int(step_s // 60), 1)
            sql = ("SELECT (minute / ?) * ? * 60, SUM(temp_mean * n) / SUM(n), MAX(temp_max), SUM(power_mean * n) / SUM(n), "
                   "SUM(util_mean * n) / SUM(n), MIN(sm_min), MAX(throttle) FROM samples_1m "
                   "WHERE run_key = ? AND mkey = ? AND minute >= ? AND minute <= ? GROUP BY minute / ? ORDER BY 1")
            args: tuple[Any, ...] = (per, per, run_key, mkey, int(t0 // 60), int(t1 // 60), per)
        else:
            sql = ("SELECT CAST(t / ? AS INTEGER) * ?, AVG(temp), MAX(temp), AVG(power), AVG(util), MIN(sm), MAX(throttle) "
                   "FROM samples WHERE run_key = ? AND mkey = ? AND t >= ? AND t <= ? GROUP BY CAST(t / ? AS INTEGER) "
                   "ORDER BY 1")
            args = (step_s, step_s, run_key, mkey, t0, t1, step_s)
        return [tuple(r) for r in self.db.execute(sql, args).fetchall()]

    def prune(self, run_key: int, keep_raw_s: float, now: float) -> int:
        """Drop raw samples older than ``keep_raw_s`` (roll-ups stay). Returns rows removed."""
        with self._tx() as cur:
            cur.execute("DELETE FROM samples WHERE run_key = ? AND t < ?", (run_key, now - keep_raw_s))
            return int(cur.rowcount)

    def sample_count(self, run_id: str) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM samples WHERE run_key = ?", (self.run_key(run_id),)).fetchone()[0])

    def last_sample_time(self, run_id: str) -> float | None:
        row = self.db.execute("SELECT MAX(t) FROM samples WHERE run_key = ?", (self.run_key(run_id),)).fetchone()
        return None if row[0] is None else float(row[0])

    def module_events(self, since_utc: str | None = None, module: str | None = None, kinds: Sequence[str] = (),
                      limit: int = 1000) -> list[dict[str, Any]]:
        sql = ("SELECT run_id, time_utc, kind, message, module, uuid, sim_time, severity, data FROM events "
               "WHERE kind != 'layer'")
        args: list[Any] = []
        if since_utc:
            sql += " AND time_utc >= ?"
            args.append(since_utc)
        if module:
            sql += " AND (module = ? OR uuid = ?)"
            args += [module, module]
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            args += list(kinds)
        sql += " ORDER BY rowid DESC LIMIT ?"
        args.append(limit)
        keys = ("run_id", "time_utc", "kind", "message", "module", "uuid", "time", "severity", "data")
        rows = [dict(zip(keys, r, strict=True)) for r in self.db.execute(sql, args).fetchall()]
        for r in rows:
            r["data"] = json.loads(r["data"]) if r["data"] else {}
        return rows[::-1]

    def finish(self, run_id: str, verdict: str, checks: Sequence[dict[str, Any]],
               envelope: dict[str, Any] | None = None) -> None:
        """Checks and the complete status in one transaction: all of it or none."""
        with self._tx() as cur:
            cur.executemany(
                "INSERT INTO checks(run_id, seq, layer, name, verdict, data) VALUES (?, ?, ?, ?, ?, ?)",
                [(run_id, i, c["layer"], c["name"], c["verdict"], json.dumps(c)) for i, c in enumerate(checks)],
            )
            if envelope is not None:
                cur.execute("UPDATE runs SET envelope = ? WHERE run_id = ?", (json.dumps(envelope), run_id))
            cur.execute("UPDATE runs SET status = 'complete', verdict = ?, ended_utc = ? WHERE run_id = ?",
                        (verdict, utc_now(), run_id))

    def abort(self, run_id: str, why: str) -> None:
        with self._tx() as cur:
            cur.execute("UPDATE runs SET status = 'aborted', ended_utc = ? WHERE run_id = ? AND status = 'running'",
                        (utc_now(), run_id))
            cur.execute("INSERT INTO events(run_id, time_utc, kind, message) VALUES (?, ?, 'aborted', ?)",
                        (run_id, utc_now(), why))

    # --- reading -----------------------------------------------------------------------
    def runs(self, limit: int | None = None) -> list[RunRow]:
        sql = ("SELECT run_id, kind, status, verdict, started_utc, ended_utc, host, simulated, node, envelope "
               "FROM runs ORDER BY started_utc DESC, rowid DESC")
        rows = self.db.execute(sql + (f" LIMIT {int(limit)}" if limit else "")).fetchall()
        return [_row(r) for r in rows]

    def run(self, run_id: str) -> RunRow:
        rows = self.db.execute(
            "SELECT run_id, kind, status, verdict, started_utc, ended_utc, host, simulated, node, envelope "
            "FROM runs WHERE run_id = ? OR run_id LIKE ? ORDER BY started_utc DESC", (run_id, f"{run_id}%")).fetchall()
        exact = [r for r in rows if r[0] == run_id]
        if exact:
            return _row(exact[0])
        if len(rows) == 1:
            return _row(rows[0])
        recent = ", ".join(r.run_id for r in self.runs(limit=5)) or "(none yet)"
        what = f"run id prefix {run_id!r} matches {len(rows)} runs" if rows else f"no run {run_id!r} in {self.path}"
        raise GpuvetError(what, where="RUN", fix=f"use `gpuvet log list`; the latest are: {recent}.")

    def checks(self, run_id: str) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT data FROM checks WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        return [json.loads(r[0]) for r in rows]

    def events(self, run_id: str) -> list[dict[str, str]]:
        rows = self.db.execute("SELECT time_utc, kind, message FROM events WHERE run_id = ? ORDER BY rowid",
                               (run_id,)).fetchall()
        return [{"time_utc": t, "kind": k, "message": m} for t, k, m in rows]

    def integrity(self) -> str:
        return str(self.db.execute("PRAGMA integrity_check").fetchone()[0])

    def close(self) -> None:
        self.db.close()


def _row(r: Sequence[Any]) -> RunRow:
    return RunRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]), r[8], json.loads(r[9]))


def _alive(pid: int, started: float) -> bool:
    """The process that began the run still exists (same pid and the same start time)."""
    try:
        return bool(abs(psutil.Process(pid).create_time() - started) < 1.0)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return False


