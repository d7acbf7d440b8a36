"""validate's one call into the module ledger (docs/ledger.md): each root it found on a module (a
link down or slowed, a power cap, a module missing; a benchmark figure below design that no
fact explains) kept as a finding of that module, and each such module's ladder step by the code
path health's and doctor's take (``ledger.record.steps_now``)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import JsonValue

from gpuvet.backends.readings import Inventory
from gpuvet.checks.model import Check
from gpuvet.checks.roots import ROOT_LAYERS, Root
from gpuvet.ledger.ladders import Ladders
from gpuvet.ledger.record import Flagged, ModuleStep, check_rows, seen_in, steps_now
from gpuvet.logbook.store import Logbook, utc_now

BENCHMARK = "benchmark"  # the ladder of a figure below design that no fact of the node explains


def flagged(roots: Sequence[Root], checks: Sequence[Check], slots: set[str]) -> list[Flagged]:
    """Each root on a module (either end of a link that is a module), once per module: a fact of
    the node under its own kind, a benchmark root under ``benchmark``; info roots are no finding."""
    by_key = {c.key: c for c in checks}
    out = []
    for r in roots:
        if r.severity not in ("critical", "warn"):
            continue
        lead = by_key.get(r.key)
        fact = lead is not None and lead.layer in ROOT_LAYERS
        evidence: list[JsonValue] = [{"root": r.key, "title": r.title, "explains": list(r.explains)}]
        for module in [m for m in r.subject.split("↔") if m in slots or (fact and lead and m == lead.module)]:
            out.append(Flagged(r.kind if fact else BENCHMARK, module, r.title, lead.fix if lead else None, evidence,
                               status="fail" if r.severity == "critical" else "warn"))
    return out


def keep(run_id: str | None, node: str, inv: Inventory, roots: Sequence[Root], checks: Sequence[Check],
         book: Logbook | None, ladders: Ladders, at_utc: str | None = None) -> list[ModuleStep]:
    """Keep the run's modules (with their serials) and module findings in ``book`` (its run is
    already there) and return each flagged module's step: from its history there, else from this
    run alone."""
    now = at_utc or utc_now()
    seen = seen_in(inv)
    found = flagged(roots, checks, {s.slot for s in seen})
    sightings, findings = check_rows("validate", run_id or "this-run", now, node, seen, found, None, ladders)
    if book and run_id:
        book.sight(sightings)
        book.add_findings(findings)
    steps = steps_now(book if run_id else None, sightings, findings, ladders, now)
    if book and run_id:
        book.keep_actions(run_id, [a.to_json() for a in steps], at_utc=now)
    return steps
