"""Ledger schema 2 (meta ``ledger`` = 2): the roots an older validate (before the ledger) kept
as a ``roots`` event become that run's findings, so a repeat after the upgrade counts as one.
Each root on a module (an end of its subject the run's envelope lists) is a finding of that
module under the root's kind, as validate keeps one now (validate/ledger_link.py)."""

from __future__ import annotations

import json

from pydantic import JsonValue

from gpuvet.logbook.db import Tx
from gpuvet.logbook.ledger_rows import json_list, json_object

LEDGER_VERSION = 2
MIGRATED = "kept by an older validate as a root; read as a finding when the logbook was migrated (ledger 2)"
Finding = tuple[str, int, str, str, str, str | None, None, str, str, str, str, None, str]


def roots_as_findings(tx: Tx) -> int:
    """Insert the findings of every validate run that kept roots and no findings; the count."""
    rows = tx.rows("SELECT e.run_id, e.time_utc, e.data, COALESCE(r.node, r.host), r.envelope FROM events e "
                   "JOIN runs r ON r.run_id = e.run_id WHERE e.kind = 'roots' AND r.kind = 'validate' "
                   "AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.run_id = e.run_id)")
    out: list[Finding] = []
    for run_id, time_utc, data, node, envelope in rows:
        out += _findings(str(run_id), str(time_utc), str(node), json_list(data) or [], json_object(envelope) or {})
    if out:
        tx.many("INSERT INTO findings(run_id, seq, time_utc, node, slot, uuid, serial, source, fault, status, "
                "message, token, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", out)
    return len(out)


def _findings(run_id: str, time_utc: str, node: str, roots: list[JsonValue],
              envelope: dict[str, JsonValue]) -> list[Finding]:
    modules = envelope.get("modules")
    uuids = {str(m.get("id")): m.get("uuid") for m in (modules if isinstance(modules, list) else [])
             if isinstance(m, dict)}
    out: list[Finding] = []
    for root in roots:
        if not isinstance(root, dict) or root.get("severity") not in ("critical", "warn"):
            continue
        kind, title, subject = (str(root.get(k, "")) for k in ("kind", "title", "subject"))
        data = json.dumps({"check": kind, "fix": None, "kernel_lines": [], "migrated": MIGRATED,
                           "evidence": [{"root": root.get("key"), "title": title, "explains": root.get("explains")}]})
        status = "fail" if root.get("severity") == "critical" else "warn"
        for slot in [m for m in subject.split("↔") if m in uuids]:
            uuid = uuids[slot]
            out.append((run_id, len(out), time_utc, node, slot, uuid if isinstance(uuid, str) else None, None,
                        "validate", kind, status, title, None, data))
    return out
