"""The module ledger's rows (logbook/schema.py: sightings, findings, events with their node,
validate's per-module checks): written and read here, so that the SQL stays in logbook/.
A damaged row is skipped with a warning, as the rest of the logbook reads."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from pydantic import JsonValue, ValidationError

from gpuvet.checks.model import Check
from gpuvet.logbook.db import Db, SqlValue
from gpuvet.logbook.records import FindingRow, LedgerEvent, Sighting

Warn = Callable[[str], None]


def write_sightings(db: Db, rows: Sequence[Sighting]) -> None:
    if not rows:
        return
    with db.tx() as tx:
        tx.many("INSERT INTO sightings(run_id, time_utc, node, slot, uuid, serial, bus_id, model) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [(r.run_id, r.time_utc, r.node, r.slot, r.uuid, r.serial, r.bus_id, r.model) for r in rows])


def write_findings(db: Db, rows: Sequence[FindingRow]) -> None:
    if not rows:
        return
    with db.tx() as tx:
        tx.many("INSERT INTO findings(run_id, seq, time_utc, node, slot, uuid, serial, source, fault, status, "
                "message, token, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [(r.run_id, r.seq, r.time_utc, r.node, r.slot, r.uuid, r.serial, r.source, r.fault, r.status,
                  r.message, r.token, json.dumps(r.data)) for r in rows])


def _since(column: str, since_utc: str | None) -> tuple[str, list[SqlValue]]:
    return (f" WHERE {column} >= ?", [since_utc]) if since_utc else ("", [])


def read_sightings(db: Db, since_utc: str | None) -> list[Sighting]:
    where, args = _since("time_utc", since_utc)
    rows = db.query("SELECT run_id, time_utc, node, slot, uuid, serial, bus_id, model FROM sightings" + where
                    + " ORDER BY time_utc, node, slot", args)
    return [Sighting(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), _text(r[5]), _text(r[6]), _text(r[7]))
            for r in rows]


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def read_findings(db: Db, since_utc: str | None, warn: Warn) -> list[FindingRow]:
    where, args = _since("time_utc", since_utc)
    out = []
    for r in db.query("SELECT run_id, seq, time_utc, node, slot, uuid, serial, source, fault, status, message, "
                      "token, data FROM findings" + where + " ORDER BY time_utc, run_id, seq", args):
        data = json_object(r[12])
        if data is None:
            warn(f"run {r[0]}: finding #{r[1]} is damaged (its data is not a JSON object); skipped")
            continue
        text = [None if v is None else str(v) for v in r]
        out.append(FindingRow(str(r[0]), int(r[1]), str(r[2]), str(r[3]), text[4], text[5], text[6], str(r[7]),
                              str(r[8]), str(r[9]), str(r[10]), text[11], data))
    return out


def read_events(db: Db, since_utc: str | None, warn: Warn) -> list[LedgerEvent]:
    """Events with their node (the run's where an older gpuvet wrote none); lifecycle rows
    (layer, aborted) and validate's roots and actions (kept beside its events, lists) are a run's
    own, not a module's, and are left out."""
    where, args = _since("e.time_utc", since_utc)
    where += (" AND" if where else " WHERE") + " e.kind NOT IN ('layer', 'aborted', 'roots', 'actions')"
    out = []
    for r in db.query("SELECT e.run_id, e.time_utc, COALESCE(e.node, r.node), e.kind, e.message, e.module, e.uuid, "
                      "e.severity, e.data FROM events e JOIN runs r ON r.run_id = e.run_id" + where
                      + f" ORDER BY e.time_utc, e.{db.dialect.events_order}", args):
        data = json_object(r[8]) if r[8] else {}
        if data is None:
            warn(f"run {r[0]}: event {r[3]!r} at {r[1]} is damaged (its data is not JSON); skipped")
            continue
        text = [None if v is None else str(v) for v in r]
        out.append(LedgerEvent(str(r[0]), str(r[1]), text[2], str(r[3]), str(r[4]), text[5], text[6], text[7], data))
    return out


def read_module_checks(db: Db, since_utc: str | None, warn: Warn) -> list[tuple[str, Check]]:
    """Validate's checks that name one module (a benchmark figure against its design)."""
    where, args = _since("r.started_utc", since_utc)
    where += (" AND" if where else " WHERE") + " r.kind = 'validate' AND r.status = 'complete'"
    out = []
    for run_id, seq, data in db.query("SELECT c.run_id, c.seq, c.data FROM checks c JOIN runs r ON r.run_id = "
                                      "c.run_id" + where + " ORDER BY r.started_utc, c.seq", args):
        obj = json_object(data)
        try:
            check = Check.model_validate(obj) if obj is not None else None
        except ValidationError:
            check = None
        if check is None:
            warn(f"run {run_id}: check #{seq} is damaged (not a check's JSON object); skipped")
        elif check.module:
            out.append((str(run_id), check))
    return out


def json_list(text: object) -> list[JsonValue] | None:
    """The JSON list in ``text``, or None when it is damaged (not JSON, or not a list)."""
    value = _json(text)
    return value if isinstance(value, list) else None


def json_object(text: object) -> dict[str, JsonValue] | None:
    """The JSON object in ``text``, or None when it is damaged (not JSON, or not an object): the
    logbook's one reader of the JSON it keeps in a column."""
    value = _json(text)
    return value if isinstance(value, dict) else None


def _json(text: object) -> JsonValue | None:
    if not isinstance(text, (str, bytes)):
        return None
    try:
        value: JsonValue = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    return value
