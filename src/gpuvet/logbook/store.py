"""The logbook: every run, its envelope, checks and events, in one SQLite file or a shared
PostgreSQL database. The only code in gpuvet that speaks SQL (the queries are here once; db.py
holds what the two dialects spell differently).

Durability: every write in a transaction (SQLite: WAL journal and a busy timeout so that two
gpuvet processes can write at once). A run is inserted as ``running`` with its process id and
start time; its checks land in one transaction with the ``complete`` status, so a run is never
half-written. A ``running`` run of this host whose process is gone (killed, crashed, machine
rebooted) is marked ``aborted`` the next time the logbook is opened.

Reading never crashes on a damaged row: it is skipped, with a warning naming it (logged on
``gpuvet.logbook`` and kept in ``Logbook.warnings``).
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import psutil
from pydantic import ValidationError

from gpuvet.checks.model import Check
from gpuvet.errors import GpuvetError
from gpuvet.logbook import ledger_rows, schema
from gpuvet.logbook.base import utc_now
from gpuvet.logbook.db import Db, LogbookError, LogbookFull, Row, SqlValue
from gpuvet.logbook.document import DOCUMENT_VERSION, Environment, RunDocument
from gpuvet.logbook.event_rows import EventRows
from gpuvet.logbook.location import connect, default_path, locate
from gpuvet.logbook.records import FindingRow, LedgerRows, RunRow, SampleRow, Sighting
from gpuvet.logbook.samples import SampleWriter
from gpuvet.logbook.telemetry_rows import TelemetryRows

SCHEMA_VERSION = schema.SCHEMA_VERSION
__all__ = ["SCHEMA_VERSION", "Logbook", "LogbookError", "LogbookFull", "RunRow", "SampleRow", "default_path",
           "utc_now"]

_R = TypeVar("_R", Check, Environment)
_RUN_COLUMNS = "run_id, kind, status, verdict, started_utc, ended_utc, host, simulated, node, envelope"


def _require_file(path: str | Path | None) -> None:
    """A logbook the user named (``--logbook``, ``GPUVET_LOGBOOK``) must be there; the default
    one may not be yet (a fresh machine has simply kept nothing)."""
    given = path is not None and str(path) != ""
    if not given and not os.environ.get("GPUVET_LOGBOOK"):
        return
    where = locate(path)
    if isinstance(where, Path) and not where.exists():
        raise LogbookError("no logbook here (nothing has been kept at this path)",
                           where=str(where) if given else f"GPUVET_LOGBOOK={where}",
                           fix="check the path (or GPUVET_LOGBOOK); validate and watch create "
                               "the logbook they keep runs in.")


class Logbook(EventRows, TelemetryRows):
    """Open (creating if new) the logbook at ``path``: a file, a ``postgresql://`` URL, or None
    for ``GPUVET_LOGBOOK`` / ``$GPUVET_HOME/logbook.db``. Raises LogbookError (a GpuvetError)
    for anything that is not a usable gpuvet logbook, having written nothing to it.
    ``existing=True`` (commands that only read it) makes a missing file an error instead of a
    new, empty logbook: a mistyped path then says so rather than "no runs"."""

    def __init__(self, path: str | Path | None = None, existing: bool = False) -> None:
        if existing:
            _require_file(path)
        self._db: Db = connect(path)
        self.path: str | Path = getattr(self._db, "path", self._db.where)
        self.warnings: list[str] = []
        try:
            schema.verify(self._db)
            self._db.prepare()
            if schema.needs_update(self._db):
                schema.create(self._db)
            self._mark_orphans()
        except BaseException:
            self._db.close()
            raise
        self._samples = SampleWriter(self._db)

    @property
    def db(self) -> object:
        """The DB-API connection underneath (tests and one-off inspection only)."""
        return self._db.raw

    @property
    def backend(self) -> str:
        return self._db.dialect.name

    def _mark_orphans(self) -> None:
        """Runs left ``running`` by a process of this host that no longer exists become ``aborted``."""
        rows = self._db.query("SELECT run_id, pid, pid_started FROM runs WHERE status = 'running' AND host = ?",
                              (socket.gethostname(),))
        gone = [run_id for run_id, pid, started in rows if not _alive(pid, started)]
        if not gone:
            return
        try:
            with self._db.tx() as tx:
                for run_id in gone:
                    tx.run("UPDATE runs SET status = 'aborted', ended_utc = ? WHERE run_id = ? AND status = 'running'",
                           (utc_now(), run_id))
                    tx.run("INSERT INTO events(run_id, time_utc, kind, message) VALUES (?, ?, 'aborted', ?)",
                           (run_id, utc_now(), "the process ended before the run completed"))
        except LogbookFull:  # a full disk must not stop anyone reading what is kept
            self._warn(f"no room to mark {len(gone)} ended run(s) aborted ({', '.join(gone[:3])}); left as running")

    # --- writing -----------------------------------------------------------------------
    def begin(self, kind: str, envelope: Mapping[str, object], simulated: bool, node: str | None,
              at_utc: str | None = None) -> str:
        """A new ``running`` run. The envelope must read back as the run document's environment
        (pydantic's ValidationError names the field otherwise), so what is kept can be handed back.
        ``at_utc``: when it began, where not now (a simulated fleet's weeks)."""
        Environment.model_validate(envelope)
        started = datetime.fromisoformat(at_utc) if at_utc else datetime.now(UTC)
        run_id = f"{started:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
        me = psutil.Process()
        with self._db.tx() as tx:
            tx.run("INSERT INTO runs(run_id, kind, status, started_utc, host, pid, pid_started, simulated, node, "
                   "envelope) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                   (run_id, kind, at_utc or utc_now(), socket.gethostname(), me.pid, me.create_time(), int(simulated), node,
                    json.dumps(envelope)))
        return run_id

    def finish(self, run_id: str, verdict: str, checks: Sequence[Check | Mapping[str, object]],
               envelope: Mapping[str, object] | None = None, at_utc: str | None = None,
               roots: Sequence[Mapping[str, object]] | None = None) -> None:
        """Checks and the complete status in one transaction: all of it or none. A check that is
        not a run document's check is refused (pydantic's ValidationError names the field)."""
        rows = []
        for i, c in enumerate(checks):  # a mapping is kept as written (its keys in its order) once it reads back
            record = c if isinstance(c, Check) else Check.model_validate(c)
            rows.append((run_id, i, record.layer, record.name, record.verdict.value,
                         json.dumps(record.to_json() if isinstance(c, Check) else c)))
        with self._db.tx() as tx:
            if rows:
                tx.many("INSERT INTO checks(run_id, seq, layer, name, verdict, data) VALUES (?, ?, ?, ?, ?, ?)", rows)
            if envelope is not None:
                Environment.model_validate(envelope)
                tx.run("UPDATE runs SET envelope = ? WHERE run_id = ?", (json.dumps(envelope), run_id))
            if roots is not None:  # kept beside the run's events (a row of kind 'roots'): `log show` gives them back
                tx.run("INSERT INTO events(run_id, time_utc, kind, message, data) VALUES (?, ?, 'roots', ?, ?)",
                       (run_id, at_utc or utc_now(), f"{len(roots)} root cause(s)", json.dumps(list(roots))))
            tx.run("UPDATE runs SET status = 'complete', verdict = ?, ended_utc = ? WHERE run_id = ?",
                   (verdict, at_utc or utc_now(), run_id))

    def abort(self, run_id: str, why: str) -> None:
        """Mark a run aborted. On a full disk this is left undone (the run is marked aborted by the
        next gpuvet that opens the logbook, once this process has ended)."""
        try:
            with self._db.tx() as tx:
                tx.run("UPDATE runs SET status = 'aborted', ended_utc = ? WHERE run_id = ? AND status = 'running'",
                       (utc_now(), run_id))
                tx.run("INSERT INTO events(run_id, time_utc, kind, message) VALUES (?, ?, 'aborted', ?)",
                       (run_id, utc_now(), why))
        except LogbookFull:
            self._warn(f"run {run_id}: no room to mark it aborted; the next gpuvet to open the logbook will")

    # --- the module ledger -------------------------------------------------------------
    def sight(self, rows: Sequence[Sighting]) -> None:
        """The modules a run saw, each in its slot (a module's places over time)."""
        ledger_rows.write_sightings(self._db, rows)

    def add_findings(self, rows: Sequence[FindingRow]) -> None:
        ledger_rows.write_findings(self._db, rows)

    def ledger_rows(self, since_utc: str | None = None, *, checks: bool = True) -> LedgerRows:
        """Every run, sighting, finding, event and per-module check (since ``since_utc``). A module's
        step needs no benchmark figures (``checks=False``): reading every check of a busy logbook's
        window cost seconds per run."""
        db, warn = self._db, self._warn
        runs = [r for r in self.runs() if not since_utc or r.started_utc >= since_utc]
        figures = ledger_rows.read_module_checks(db, since_utc, warn) if checks else []
        return LedgerRows(runs, ledger_rows.read_sightings(db, since_utc), ledger_rows.read_findings(db, since_utc, warn),
                          ledger_rows.read_events(db, since_utc, warn), figures)

    # --- reading -----------------------------------------------------------------------
    def runs(self, limit: int | None = None) -> list[RunRow]:
        sql = f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY started_utc DESC, {self._db.dialect.runs_key} DESC"
        rows = self._db.query(sql + (" LIMIT ?" if limit else ""), (int(limit),) if limit else ())
        return [run for run in map(self._run_row, rows) if run is not None]

    def run(self, run_id: str) -> RunRow:
        """A run by its id, or by a unique prefix of one (matched literally: ``_`` and ``%`` are
        characters of the id, not patterns)."""
        if not run_id.strip():
            raise GpuvetError("an empty run id", where="RUN", fix="use `gpuvet log list` to see the run ids.")
        prefix = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._db.query(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ? OR run_id LIKE ? ESCAPE '\\' "
                              "ORDER BY started_utc DESC", (run_id, prefix))
        exact = [r for r in rows if r[0] == run_id]
        if exact or len(rows) == 1:
            found = self._run_row((exact or rows)[0])
            if found is None:
                raise LogbookError(f"run {rows[0][0]} is damaged in the logbook (its envelope is not JSON)",
                                   where=self._db.where, fix="the other runs are intact; pick another run.")
            return found
        recent = ", ".join(r.run_id for r in self.runs(limit=5)) or "(none yet)"
        what = f"run id prefix {run_id!r} matches {len(rows)} runs" if rows else f"no run {run_id!r} in {self.path}"
        raise GpuvetError(what, where="RUN", fix=f"use `gpuvet log list`; the latest are: {recent}.")

    def latest_runs(self, kind: str = "validate", since_utc: str | None = None) -> list[RunRow]:
        """The newest complete run of each (host, node) of this kind, newest first: what a fleet
        merge reads from a shared logbook."""
        sql = f"SELECT {_RUN_COLUMNS} FROM runs WHERE kind = ? AND status = 'complete'"
        args: list[SqlValue] = [kind]
        if since_utc:
            sql += " AND started_utc >= ?"
            args.append(since_utc)
        seen: set[tuple[str, str | None]] = set()
        out = []
        order = f" ORDER BY started_utc DESC, {self._db.dialect.runs_key} DESC"  # within one second: the later kept
        for run in map(self._run_row, self._db.query(sql + order, args)):
            if run is not None and (run.host, run.node) not in seen:
                seen.add((run.host, run.node))
                out.append(run)
        return out

    def document(self, run: RunRow) -> RunDocument:
        """A kept run as the run document `validate --json` prints (what report, compare and fleet read)."""
        try:
            return RunDocument.model_validate({
                "schema_version": run.envelope.json_schema_version or DOCUMENT_VERSION, "run_id": run.run_id,
                "simulated": run.simulated, "verdict": run.verdict, "status": run.status, "level": run.envelope.level,
                "environment": run.envelope, "checks": self.checks(run.run_id), "events": self.events(run.run_id),
                "notes": [], **self._kept(run.run_id, "roots"), **self._kept(run.run_id, "actions")})
        except ValidationError:
            raise LogbookError(f"run {run.run_id} is damaged in the logbook (its verdict {str(run.verdict)[:20]!r} or "
                               f"status {run.status[:20]!r} is not one gpuvet writes)", where=self._db.where,
                               fix="the other runs are intact; pick another run.") from None

    def checks(self, run_id: str) -> list[Check]:
        """A run's checks in the order they were judged; a damaged one is skipped with a warning."""
        out = []
        for seq, data in self._db.query("SELECT seq, data FROM checks WHERE run_id = ? ORDER BY seq", (run_id,)):
            check = _record(Check, data)
            if check is None:
                self._warn(f"run {run_id}: check #{seq} is damaged (not a check's JSON object); skipped")
                continue
            out.append(check)
        return out

    def integrity(self) -> str:
        return self._db.integrity()

    def close(self) -> None:
        self._db.close()

    def _run_row(self, r: Row) -> RunRow | None:
        envelope = _record(Environment, r[9])
        if envelope is None:
            self._warn(f"run {r[0]} is damaged (its envelope is not a JSON object); skipped")
            return None
        text = [None if v is None else str(v) for v in r[:9]]
        return RunRow(str(r[0]), str(text[1]), str(text[2]), text[3], str(text[4]), text[5], str(text[6]),
                      bool(r[7]), text[8], envelope)


def _record(kind: type[_R], text: object) -> _R | None:
    """The record kept as JSON in ``text``, or None when it is damaged (not JSON, not an object,
    or a field of the wrong type)."""
    data = ledger_rows.json_object(text)
    if data is None:
        return None
    try:
        return kind.model_validate(data)
    except ValidationError:
        return None


def _alive(pid: int, started: float) -> bool:
    """The process that began the run still exists (same pid and the same start time)."""
    try:
        return bool(abs(psutil.Process(int(pid)).create_time() - float(started)) < 1.0)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError, TypeError):
        return False
