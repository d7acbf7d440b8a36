"""The health check's one call into the module ledger: keep the check (its modules and failed
findings) in the logbook when one is given, and say each flagged module's ladder step (from
its history there, else from this check alone). Kept apart so health itself stays a read."""

from __future__ import annotations

import socket

from pydantic import JsonValue

from gpuvet import __version__
from gpuvet.backends.readings import Inventory, Unavailable
from gpuvet.health.model import ModuleId, Status
from gpuvet.health.run import HealthResult
from gpuvet.ledger.ladders import Ladders
from gpuvet.ledger.record import Flagged, Seen, health_rows, module_environment, steps_now
from gpuvet.logbook.store import Logbook, utc_now
from gpuvet.report.jsonable import to_jsonable

_VERDICT = {Status.OK: "pass", Status.FAIL: "fail", Status.UNKNOWN: "warn"}  # a run document's verdicts


def seen_modules(inv: Inventory | None) -> list[Seen]:
    if inv is None:
        return []
    return [Seen(m.id, m.uuid, _text(m.serial), _text(m.bus_id), m.model) for m in inv.modules
            if isinstance(m.uuid, str)]


def _text(value: object) -> str | None:
    return None if isinstance(value, Unavailable) or value is None else str(value)


def flagged(result: HealthResult) -> list[Flagged]:
    out = []
    for f in result.report.failures():
        xids = [x for x in result.xids_seen if (x.module or x.bus_id) == f.module and f"Xid {x.code} " in f.reason]
        lines = [x.text for x in xids] + [str(e.value) for e in f.evidence if f.check == "kernel_messages"]
        evidence: list[JsonValue] = [to_jsonable(e) for e in f.evidence]
        out.append(Flagged(f.check, f.module, f.reason, f.fix, evidence, lines, [x.seq for x in xids]))
    return out


def attach(result: HealthResult, book: Logbook | None, ladders: Ladders, at_utc: str | None = None) -> None:
    """Name each finding's module identity, keep the check in ``book``, set the report's actions."""
    report = result.report
    seen = seen_modules(result.inventory) + [Seen(m.id, m.uuid, m.serial, m.bus_id, m.model.name)
                                             for m in result.gone if m.uuid]  # off the bus: still that module
    report.identities = {s.slot: ModuleId(s.uuid, s.serial) for s in seen}
    now = at_utc or utc_now()
    run_id = _begin(book, result, now) if book else "this-check"
    sightings, findings = health_rows(run_id, now, report.node, seen, flagged(result), result.boot_id)
    if book:
        book.sight(sightings)
        book.add_findings(findings)
        book.finish(run_id, _VERDICT.get(report.status, "warn"), [], at_utc=now)
    report.actions = steps_now(book, sightings, findings, ladders, now)
    if not book and report.actions:
        report.notes.append("ladder steps from this check alone: pass --logbook to count repeats on each module")


def _begin(book: Logbook, result: HealthResult, now: str) -> str:
    report, inv = result.report, result.inventory
    driver = inv.software.driver_version if inv else None
    cuda = inv.software.cuda_driver_version if inv else None
    env: dict[str, object] = {
        "kind": "health", "tool": "gpuvet", "tool_version": __version__, "host": socket.gethostname(),
        "time_utc": now, "backend": report.backend, "simulated": report.simulated, "node": report.node,
        "driver_version": _text(driver), "cuda_driver_version": _text(cuda), "health_status": report.status.value,
        "modules": [module_environment(m) for m in (inv.modules if inv else ()) if isinstance(m.uuid, str)]}
    return book.begin("health", env, report.simulated, report.node, at_utc=now)

