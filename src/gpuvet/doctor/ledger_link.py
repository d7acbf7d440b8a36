"""doctor's one call into the module ledger (docs/ledger.md): each cause it found on a module,
kept as a finding with the captured lines that were its evidence (``--from FILES``: the Xid and
driver lines of that module) when a logbook is given, and each such module's ladder step by the
code path health's takes (``ledger.record.steps_now``)."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from gpuvet import __version__
from gpuvet.backends.readings import Unavailable
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.kernel_ids import Conflict, conflicts
from gpuvet.doctor.model import DoctorRun, Finding
from gpuvet.ledger.ladders import Ladders
from gpuvet.ledger.record import Flagged, ModuleStep, Seen, check_rows, module_environment, seen_in, steps_now
from gpuvet.logbook.records import FindingRow
from gpuvet.logbook.store import Logbook, utc_now
from gpuvet.node.bus import bus_key
from gpuvet.report.jsonable import to_jsonable


@dataclass(frozen=True)
class Place:
    """What doctor examined: the node's name and the modules it found, each by slot and identity."""

    node: str
    seen: list[Seen]
    by_bus: dict[str, str]  # bus key -> slot
    conflicts: dict[str, Conflict] = field(default_factory=dict)  # bus key -> two captures' different boards


def place_of(ev: Evidence) -> Place:
    """The node and its modules as found; a declared module that is gone (fallen off the bus)
    still counts as that module where the design names its identity (a simulated spec's)."""
    inv = ev.inventory if ev.backend is not None else None
    seen = seen_in(inv)
    slots = {s.slot for s in seen}
    declared = ev.declared.modules if ev.declared is not None else ()
    seen += [Seen(m.id, m.uuid, m.serial, m.bus_id, m.model.name) for m in declared if m.uuid and m.id not in slots]
    node = ev.node.name if ev.node is not None else socket.gethostname()
    return Place(node, seen, {bus_key(s.bus_id): s.slot for s in seen if s.bus_id},
                 {c.bus_id: c for c in conflicts(ev)})


def _slot(f: Finding, place: Place) -> str | None:
    if not f.module:
        return None
    return place.by_bus.get(bus_key(f.module), f.module) if ":" in f.module else f.module


def _slots(f: Finding, place: Place) -> list[str]:
    """The modules a finding is about: its own, or each end of a link (``between``) that is a
    module of this node (a switch end is not), as validate's ``subject`` ends are mapped."""
    own = _slot(f, place)
    if own is not None:
        return [own]
    known = {s.slot for s in place.seen}
    ends = [place.by_bus.get(bus_key(e), e) if ":" in e else e for e in (f.between or ())]
    return list(dict.fromkeys(e for e in ends if e in known))


def _xids(f: Finding) -> list[int]:
    raw = f.evidence.get("xid")
    items = raw if isinstance(raw, list) else [raw]
    return [x for x in items if isinstance(x, int) and not isinstance(x, bool)]


def kernel_lines(f: Finding, ev: Evidence, place: Place, slot: str | None = None) -> list[str]:
    """The captured kernel lines that were this finding's evidence: its module's Xid lines (of its
    codes, where it names some) and the driver's messages about it."""
    slot = slot or _slot(f, place)
    codes = set(_xids(f))

    def mine(where: str) -> bool:
        if ":" in where and bus_key(where) in place.conflicts:  # another board's lines on that bus
            return False
        return (place.by_bus.get(bus_key(where)) if ":" in where else where.lower()) == slot

    lines = [x.text for x in ev.captures.xids if x.host == f.host and mine(x.bus_id) and (not codes or x.code in codes)]
    if f.cause != "xid" and f.host is None:  # the driver's messages name no host: none is another host's
        lines += [e.text for e in ev.captures.kernel_events if mine(e.module)]
    return list(dict.fromkeys(lines))


def flagged(run: DoctorRun, ev: Evidence, place: Place) -> list[Flagged]:
    """The causes found on a module (not info): what the ledger keeps of this diagnosis. A module of a log of
    several hosts is kept as 'node1 0000:3B:00.0': another host's module is never this node's."""
    out = []
    for f in run.findings:
        if f.severity == "info":
            continue
        codes = _xids(f)
        evidence: list[JsonValue] = [to_jsonable(f.evidence)]
        clash = place.conflicts.get(bus_key(f.module)) if f.module and ":" in f.module else None
        if clash is not None and ("log" in f.evidence or codes):  # the kernel's board is not the listed one
            out.append(Flagged(f.cause, None, f.title, f.fix, [*evidence, clash.note()],
                               fault=f"xid:{codes[0]}" if codes else None,
                               status="fail" if f.severity == "critical" else "warn"))
            continue
        out += [Flagged(f.cause, f"{f.host} {slot}" if f.host else slot, f.title, f.fix, evidence,
                        kernel_lines(f, ev, place, slot),
                        fault=f"xid:{codes[0]}" if codes else None,
                        status="fail" if f.severity == "critical" else "warn",
                        captured_from=[Path(name).name for name in ev.captures.read_as])
                for slot in _slots(f, place)]
    return out


def keep(run: DoctorRun, ev: Evidence, book: Logbook | None, ladders: Ladders,
         at_utc: str | None = None) -> list[ModuleStep]:
    """Keep the diagnosis in ``book`` (a ``doctor`` run, its sightings and findings) and return each
    flagged module's step: from its history there, else from this diagnosis alone."""
    place = place_of(ev)
    now = at_utc or utc_now()
    found = flagged(run, ev, place)
    run_id = _begin(book, run, ev, place, now) if book else "this-diagnosis"
    sightings, findings = check_rows("doctor", run_id, now, place.node, place.seen, found, None, ladders)
    if book:
        book.sight(sightings)
        book.add_findings(findings)
        book.finish(run_id, "fail" if any(f.status == "fail" for f in findings) else "warn" if findings else "pass",
                    [], at_utc=now)
    steps = steps_now(book, sightings, findings, ladders, now)
    run.notes.extend(_no_step_notes(findings, steps))
    return steps


def _no_step_notes(findings: list[FindingRow], steps: list[ModuleStep]) -> list[str]:
    """Say which flagged modules get no ladder step because no run ever saw them (gone before the
    logbook first listed them: their identity is not known, so there is no history to climb)."""
    stepped = {s.slot for s in steps}
    lost = sorted({f.slot for f in findings if f.slot and not f.uuid and f.slot not in stepped})
    if not lost:
        return []
    return [f"no ladder step for {', '.join(lost)}: this logbook never saw the module while it was present, so "
            "its identity and history are unknown (a health or doctor run while it is present starts them)"]


def _begin(book: Logbook, run: DoctorRun, ev: Evidence, place: Place, now: str) -> str:
    inv = ev.inventory if ev.backend is not None else None
    listed = [module_environment(m) for m in (inv.modules if inv else ())]
    ids = {m["id"] for m in listed}
    gone = [{"id": s.slot, "model": s.model, "uuid": s.uuid, "bus_id": s.bus_id} for s in place.seen if s.slot not in ids]
    env: dict[str, object] = {
        "kind": "doctor", "tool": "gpuvet", "tool_version": __version__, "host": socket.gethostname(),
        "time_utc": now, "backend": ev.backend.name if ev.backend else None, "simulated": run.simulated,
        "node": place.node, "symptom": run.symptom, "modules": listed + gone,
        "captures": [{"file": Path(name).name, "read_as": list(kinds)} for name, kinds in ev.captures.read_as.items()]}
    if inv is not None:
        env |= {k: str(v) for k, v in (("driver_version", inv.software.driver_version),
                                       ("cuda_driver_version", inv.software.cuda_driver_version))
                if not isinstance(v, Unavailable)}
    return book.begin("doctor", env, run.simulated, place.node, at_utc=now)
