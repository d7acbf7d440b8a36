"""The ledger from the logbook's rows: modules by identity (a UUID or serial seen together is
one module, wherever it sat), their places over time, and every report, figure and fault
occurrence attached to the module it names."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime

from gpuvet.backends.readings import ThrottleReason
from gpuvet.checks.model import Check
from gpuvet.ledger.ladders import Ladders, current_step
from gpuvet.ledger.model import Figure, ModuleHistory, Occurrence, Place, Report
from gpuvet.logbook.records import FindingRow, LedgerEvent, LedgerRows, RunRow, Sighting

_SW_CAP_ONLY = {ThrottleReason.SW_POWER_CAP.label}  # a throttle's reasons that are no hardware or thermal slowdown
COALESCE_S = 3600.0  # reports of one fault on one module this close are one occurrence (watch and health alike)
QUIET_EVENTS = ("module_ready", "module_added", "overheat_forecast_withdrawn", "aborted", "layer")


@dataclass
class Ledger:
    modules: list[ModuleHistory]
    unattributed: list[Report] = field(default_factory=list)  # node-level reports (no module named)
    runs: dict[str, RunRow] = field(default_factory=dict)


def build_ledger(rows: LedgerRows, ladders: Ladders, now_utc: str) -> Ledger:
    runs = {r.run_id: r for r in rows.runs}
    sightings = sorted([*rows.sightings, *_validate_sightings(rows.runs)], key=lambda s: (s.time_utc, s.node, s.slot))
    groups = _group(sightings)
    histories = {key: _history(key, members) for key, members in groups.items()}
    by_uuid = {u: key for key, h in histories.items() for u in h.uuids}
    slots = _slot_index(sightings, by_uuid)
    unattributed: list[Report] = []
    for report in [*map(_from_finding, rows.findings), *filter(None, map(_from_event, rows.events))]:
        report = replace(report, fault=ladders.key(report.fault))  # an older row's name counts as its fault
        key = by_uuid.get(report.uuid or "") or _at(slots, report.node, report.slot, report.time_utc)
        (histories[key].reports if key else unattributed).append(report)
    for run_id, check in rows.checks:
        run = runs.get(run_id)
        key = _check_module(run, check.module, by_uuid, slots) if run else None
        if key and run:
            histories[key].figures.append(_figure(run, check))
    for h in histories.values():
        h.reports.sort(key=lambda r: r.time_utc)
        h.occurrences = occurrences(h, runs)
        h.step = current_step(h.occurrences, ladders, now_utc)
    return Ledger(list(histories.values()), unattributed, runs)


def _validate_sightings(runs: list[RunRow]) -> list[Sighting]:
    """A validate run keeps the modules it found in its envelope (id, UUID, bus id, model)."""
    return [Sighting(r.run_id, r.started_utc, r.node or r.host, m.id, m.uuid, None, m.bus_id, m.model)
            for r in runs if r.kind == "validate" for m in r.envelope.modules if m.uuid and m.id]


def _group(sightings: list[Sighting]) -> dict[str, list[Sighting]]:
    """Union of UUIDs and serials seen together: one module per connected set."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for s in sightings:
        root = find(f"u:{s.uuid}")
        if s.serial:
            parent[find(f"s:{s.serial}")] = root
    groups: dict[str, list[Sighting]] = defaultdict(list)
    for s in sightings:
        groups[find(f"u:{s.uuid}")].append(s)
    return {_module_id(members): members for members in groups.values()}


def _module_id(members: list[Sighting]) -> str:
    serials = [s.serial for s in members if s.serial]
    return serials[-1] if serials else members[0].uuid


def _history(key: str, members: list[Sighting]) -> ModuleHistory:
    uuids = list(dict.fromkeys(s.uuid for s in members))
    serial = next((s.serial for s in reversed(members) if s.serial), None)
    model = next((s.model for s in reversed(members) if s.model), None)
    h = ModuleHistory(key, serial, uuids, model, runs=list(dict.fromkeys(s.run_id for s in members)))
    for s in members:
        last = h.places[-1] if h.places else None
        if last and (last.node, last.slot) == (s.node, s.slot):
            h.places[-1] = Place(last.node, last.slot, s.bus_id or last.bus_id, last.first_utc, s.time_utc)
        else:
            h.places.append(Place(s.node, s.slot, s.bus_id, s.time_utc, s.time_utc))
    return h


SlotIndex = dict[tuple[str, str], list[tuple[str, str]]]  # (node, slot) -> [(time, module id)] in time order


def _slot_index(sightings: list[Sighting], by_uuid: dict[str, str]) -> SlotIndex:
    out: SlotIndex = defaultdict(list)
    for s in sightings:
        out[(s.node, s.slot)].append((s.time_utc, by_uuid[s.uuid]))
    return out


def _at(slots: SlotIndex, node: str | None, slot: str | None, time_utc: str) -> str | None:
    """The module in that slot at that time: the last seen there at or before it, else the first after."""
    seen = slots.get((node or "", slot or ""))
    if not seen:
        return None
    before = [key for t, key in seen if t <= time_utc]
    return before[-1] if before else seen[0][1]


def _from_finding(f: FindingRow) -> Report:
    return Report(f.time_utc, f.node, f.slot, f.uuid, f.source, f.run_id, f.fault, f.status, f.message, f.token,
                  f.data)


def _from_event(e: LedgerEvent) -> Report | None:
    """A watch event that says something is wrong (warn or critical) is a report; the rest is not."""
    if e.kind in QUIET_EVENTS or e.severity not in ("warn", "critical"):
        return None
    return Report(e.time_utc, e.node or "", e.module, e.uuid, "watch", e.run_id, event_fault(e), e.severity,
                  e.message, None, e.data)


def event_fault(e: LedgerEvent) -> str:
    """The ladder's key of a watch event: ``xid:<code>`` for an Xid; ``sw_power_cap`` for a
    throttle whose only reason is the software power cap (the module draws its power limit: no
    hardware or thermal slowdown, which is the ``throttle`` ladder's fact); else its kind."""
    code = e.data.get("code")
    if e.kind == "xid" and isinstance(code, int):
        return f"xid:{code}"
    reasons = e.data.get("reasons")
    if e.kind == "throttle" and isinstance(reasons, list) and reasons and set(map(str, reasons)) <= _SW_CAP_ONLY:
        return "sw_power_cap"
    return e.kind


def _check_module(run: RunRow, module: str | None, by_uuid: dict[str, str], slots: SlotIndex) -> str | None:
    uuid = next((m.uuid for m in run.envelope.modules if m.id == module and m.uuid), None)
    return by_uuid.get(uuid or "") or _at(slots, run.node or run.host, module, run.started_utc)


def _figure(run: RunRow, check: Check) -> Figure:
    expected = check.expected if isinstance(check.expected, (int, float)) and not isinstance(check.expected, bool) \
        else None
    pct = float(check.pct_of_expected) if check.pct_of_expected is not None else None
    return Figure(run.started_utc, run.run_id, run.node or run.host, check.module or "", f"{check.layer}/{check.name}",
                  check.number, check.unit, None if expected is None else float(expected), pct, check.verdict.value)


def occurrences(h: ModuleHistory, runs: dict[str, RunRow]) -> list[Occurrence]:
    """Reports of one fault that are one happening: within COALESCE_S of the last, or the same
    record (token) with no health check that saw the module clean in between."""
    out: list[Occurrence] = []
    by_fault: dict[str, list[Report]] = defaultdict(list)
    for r in h.reports:
        by_fault[r.fault].append(r)
    for fault, reports in by_fault.items():
        flagged = {r.run_id for r in reports}
        clean = [t for t, run_id in _health_checks(h, runs) if run_id not in flagged]
        current: list[Report] = []
        for r in reports:
            if current and _continues(current, r, clean):
                current.append(r)
                continue
            if current:
                out.append(_occurrence(fault, current))
            current = [r]
        if current:
            out.append(_occurrence(fault, current))
    return sorted(out, key=lambda o: o.first_utc)


def _health_checks(h: ModuleHistory, runs: dict[str, RunRow]) -> list[tuple[str, str]]:
    return [(runs[r].started_utc, r) for r in h.runs if r in runs and runs[r].kind == "health"]


def _continues(current: list[Report], r: Report, clean: list[str]) -> bool:
    last = current[-1]
    if _seconds(last.time_utc, r.time_utc) <= COALESCE_S:
        return True
    tokens = {c.token for c in current if c.token}
    return bool(r.token) and r.token in tokens and not any(last.time_utc < t < r.time_utc for t in clean)


def _seconds(a: str, b: str) -> float:
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()


def _occurrence(fault: str, reports: list[Report]) -> Occurrence:
    first = reports[0]
    return Occurrence(fault, first.time_utc, reports[-1].time_utc, first.node, first.slot, len(reports))


def find_module(ledger: Ledger, ident: str) -> ModuleHistory | None:
    """By serial, UUID (or a unique prefix of one), or ``node/slot`` (the module there last)."""
    for h in ledger.modules:
        if ident == h.id or ident == h.serial or ident in h.uuids:
            return h
    if "/" in ident:
        node, slot = ident.rsplit("/", 1)
        here = [h for h in ledger.modules for p in h.places if (p.node, p.slot) == (node, slot)]
        return max(here, key=lambda h: max(p.last_utc for p in h.places if (p.node, p.slot) == (node, slot)),
                   default=None)
    prefixed = [h for h in ledger.modules if any(u.startswith(ident) for u in h.uuids)] if len(ident) >= 8 else []
    return prefixed[0] if len(prefixed) == 1 else None
