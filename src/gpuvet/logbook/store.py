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
"""


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

    def event(self, run_id: str, kind: str, message: str) -> None:
        with self._tx() as cur:
            cur.execute("INSERT INTO events(run_id, time_utc, kind, message) VALUES (?, ?, ?, ?)",
                        (run_id, utc_now(), kind, message))

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


