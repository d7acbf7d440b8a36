"""The logbook's event rows: what happened during a run (a module lost, a limit crossed), and
the lists validate keeps beside them (its root causes, its modules' ladder steps)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from gpuvet.logbook import ledger_rows
from gpuvet.logbook.base import LogbookBase, utc_now
from gpuvet.logbook.db import SqlValue
from gpuvet.logbook.document import EventRecord
from gpuvet.logbook.records import ModuleEvent


class EventRows(LogbookBase):
    """Events written one per transaction and read per run or across runs."""

    def event(self, run_id: str, kind: str, message: str, module: str | None = None, uuid: str | None = None,
              sim_time: float | None = None, severity: str | None = None,
              data: Mapping[str, object] | None = None, node: str | None = None, at_utc: str | None = None) -> None:
        """``node``: where it happened (None: the run's node)."""
        with self._db.tx() as tx:
            tx.run("INSERT INTO events(run_id, time_utc, kind, message, module, uuid, sim_time, severity, data, node) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(?, (SELECT node FROM runs WHERE run_id = ?)))",
                   (run_id, at_utc or utc_now(), kind, message, module, uuid, sim_time, severity,
                    json.dumps(data) if data is not None else None, node, run_id))

    def module_events(self, since_utc: str | None = None, module: str | None = None, kinds: Sequence[str] = (),
                      limit: int = 1000) -> list[ModuleEvent]:
        sql = ("SELECT e.run_id, e.time_utc, e.kind, e.message, e.module, e.uuid, e.sim_time, e.severity, e.data, "
               "COALESCE(e.node, r.node) FROM events e LEFT JOIN runs r ON r.run_id = e.run_id "
               "WHERE e.kind NOT IN ('layer', 'roots', 'actions')")  # validate's lists kept beside its events
        args: list[SqlValue] = []
        if since_utc:
            sql += " AND e.time_utc >= ?"
            args.append(since_utc)
        if module:
            sql += " AND (e.module = ? OR e.uuid = ?)"
            args += [module, module]
        if kinds:
            sql += f" AND e.kind IN ({','.join('?' * len(kinds))})"
            args += list(kinds)
        sql += f" ORDER BY e.{self._db.dialect.events_order} DESC LIMIT ?"
        args.append(int(limit))
        out: list[ModuleEvent] = []
        for r in self._db.query(sql, args)[::-1]:
            data = ledger_rows.json_object(r[8]) if r[8] else {}
            if data is None:
                self._warn(f"run {r[0]}: event {r[2]!r} at {r[1]} is damaged (its data is not JSON); skipped")
                continue
            out.append(ModuleEvent(run_id=str(r[0]), time_utc=str(r[1]), kind=str(r[2]), message=str(r[3]),
                                   module=r[4], uuid=r[5], time=r[6], severity=r[7], data=data,
                                   node=None if r[9] is None else str(r[9])))
        return out

    def _kept(self, run_id: str, kind: str) -> dict[str, object]:
        """The run's root causes (``roots``) or its modules' ladder steps (``actions``) as validate
        printed them, where it kept any (a run kept before they existed has none to give)."""
        rows = self._db.query("SELECT data FROM events WHERE run_id = ? AND kind = ?", (run_id, kind))
        kept = ledger_rows.json_list(rows[-1][0]) if rows else None
        return {kind: kept} if kept is not None else {}

    def keep_actions(self, run_id: str, actions: Sequence[Mapping[str, object]], at_utc: str | None = None) -> None:
        """Each module's ladder step as validate printed it (the module ledger's; `log show` gives them back)."""
        with self._db.tx() as tx:
            tx.run("INSERT INTO events(run_id, time_utc, kind, message, data) VALUES (?, ?, 'actions', ?, ?)",
                   (run_id, at_utc or utc_now(), f"{len(actions)} module step(s)", json.dumps(list(actions))))

    def events(self, run_id: str) -> list[EventRecord]:
        rows = self._db.query("SELECT time_utc, kind, message FROM events WHERE run_id = ? AND kind NOT IN "
                              f"('roots', 'actions') ORDER BY {self._db.dialect.events_order}", (run_id,))
        return [EventRecord(time_utc=str(t), kind=str(k), message=str(m)) for t, k, m in rows]
