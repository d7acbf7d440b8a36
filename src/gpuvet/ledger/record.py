"""What a health check, a doctor run, a validate run or a watch hands the ledger, as the
logbook's rows, and the step each module stands on after it (the one call they make into the
ledger: ``steps_now`` or ``module_steps``; both judge by ``ladders.current_step``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pydantic import JsonValue

from gpuvet.backends.readings import Inventory, ModuleInfo
from gpuvet.ledger.build import build_ledger
from gpuvet.ledger.ladders import Ladders
from gpuvet.ledger.model import Step
from gpuvet.logbook.records import FindingRow, LedgerRows, Sighting
from gpuvet.logbook.store import Logbook

_XID = re.compile(r"\bXid (\d+)\b")


@dataclass(frozen=True)
class Seen:
    """A module a check found: its slot and identity."""

    slot: str
    uuid: str
    serial: str | None = None
    bus_id: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class Flagged:
    """A failed finding as the ledger keeps it (``module`` None: the node's)."""

    check: str
    module: str | None
    reason: str
    fix: str | None = None
    evidence: list[JsonValue] = field(default_factory=list)
    kernel_lines: list[str] = field(default_factory=list)
    xid_seqs: list[int] = field(default_factory=list)
    fault: str | None = None  # the ladder's key where the caller knows it (doctor's Xid); else from check and reason
    status: str = "fail"  # fail or warn
    captured_from: list[str] = field(default_factory=list)  # the captured files it was read from (doctor --from)


@dataclass(frozen=True)
class ModuleStep:
    """The step a module stands on, named by node, slot and identity."""

    node: str
    slot: str
    uuid: str | None
    serial: str | None
    step: Step
    bus_id: str | None = None  # where known: how a capture names the module

    def to_json(self) -> dict[str, JsonValue]:
        return {"node": self.node, "module": self.slot, "uuid": self.uuid, "serial": self.serial,
                "step": self.step.step, "fault": self.step.fault, "occurrences": self.step.nth,
                "window_days": round(self.step.window_s / 86400, 3), "why": self.step.why}


FIRMWARE = ("serial", "vbios_version", "inforom_version", "gsp_firmware")  # ModuleInfo's, kept per module


def seen_in(inv: Inventory | None) -> list[Seen]:
    """The modules an inventory lists, each by slot and identity (serial and bus id where read)."""
    def text(v: object) -> str | None:
        return v if isinstance(v, str) and v else None

    return [Seen(m.id, m.uuid, text(m.serial), text(m.bus_id), m.model) for m in (inv.modules if inv else ())
            if isinstance(m.uuid, str)]


def module_environment(m: ModuleInfo) -> dict[str, JsonValue]:
    """A module as a run's envelope keeps it (its ``modules`` entry), with the serial and firmware
    versions its backend read: what the RMA packet's environment.json gives for the module."""
    out: dict[str, JsonValue] = {"id": m.id, "model": m.model}
    for key in ("uuid", "bus_id", *FIRMWARE):
        value = getattr(m, key)
        if isinstance(value, str) and value:
            out[key] = value
    return out


def fault_of(check: str, reason: str) -> str:
    """The ladder's key of a health finding: ``xid:<code>`` for an Xid, else the check's name."""
    m = _XID.search(reason) if check == "xid" else None
    return f"xid:{m.group(1)}" if m else check


def health_rows(run_id: str, time_utc: str, node: str, seen: Sequence[Seen], flagged: Sequence[Flagged],
                boot_id: str | None) -> tuple[list[Sighting], list[FindingRow]]:
    return check_rows("health", run_id, time_utc, node, seen, flagged, boot_id)


def check_rows(source: str, run_id: str, time_utc: str, node: str, seen: Sequence[Seen], flagged: Sequence[Flagged],
               boot_id: str | None, ladders: Ladders | None = None) -> tuple[list[Sighting], list[FindingRow]]:
    """The sightings and findings of one check by ``source`` (health, doctor, validate); with
    ``ladders``, each fault under its ladder key (``same_as``), so doctor's ``module_missing``
    counts with health's ``presence``."""
    sightings = [Sighting(run_id, time_utc, node, s.slot, s.uuid, s.serial, s.bus_id, s.model) for s in seen]
    ids = {s.slot: s for s in seen}
    rows = []
    for i, f in enumerate(flagged):
        who = ids.get(f.module or "")
        fault = f.fault or fault_of(f.check, f.reason)
        fault = ladders.key(fault) if ladders else fault
        token = (f"{boot_id}#{min(f.xid_seqs)}" if f.xid_seqs else boot_id) if boot_id else None
        data: dict[str, JsonValue] = {"check": f.check, "fix": f.fix, "evidence": f.evidence,
                                      "kernel_lines": list(f.kernel_lines)}
        if f.captured_from:
            data["captures"] = list(f.captured_from)
        rows.append(FindingRow(run_id, i, time_utc, node, f.module, who.uuid if who else None,
                               who.serial if who else None, source, fault, f.status, f.reason, token, data))
    return sightings, rows


def steps_now(book: Logbook | None, sightings: list[Sighting], findings: list[FindingRow], ladders: Ladders,
              now_utc: str) -> list[ModuleStep]:
    """Each flagged module's step: from its whole history in ``book`` (already holding this
    check's rows), else from this check alone."""
    longest = max([ladders.default.window_s, *(lad.window_s for lad in ladders.faults.values())])
    since = (datetime.fromisoformat(now_utc) - timedelta(seconds=longest)).isoformat(timespec="seconds")
    rows = book.ledger_rows(since, checks=False) if book else LedgerRows([], sightings, findings, [], [])
    ledger = build_ledger(rows, ladders, now_utc)
    flagged = {f.uuid for f in findings if f.uuid}
    by_slot = {(f.node, f.slot) for f in findings if not f.uuid and f.slot}  # gone from the bus: named by its slot
    out = []
    for h in ledger.modules:
        if h.step is not None and (flagged & set(h.uuids) or (h.places[-1].node, h.places[-1].slot) in by_slot):
            place = h.places[-1]
            out.append(ModuleStep(place.node, place.slot, h.uuids[-1], h.serial, h.step, place.bus_id))
    return sorted(out, key=lambda m: (-m.step.rank, m.slot))


def module_steps(book: Logbook, uuids: Sequence[str], ladders: Ladders, now_utc: str) -> list[ModuleStep]:
    """The step of each of these modules that stands on one now, from its history in the logbook
    (one reading of it for them all: watch asks for every module it lists)."""
    longest = max([ladders.default.window_s, *(lad.window_s for lad in ladders.faults.values())])
    since = (datetime.fromisoformat(now_utc) - timedelta(seconds=longest)).isoformat(timespec="seconds")
    ledger = build_ledger(book.ledger_rows(since, checks=False), ladders, now_utc)
    out = []
    for uuid in uuids:
        for h in ledger.modules:
            if uuid in h.uuids and h.step is not None:
                place = h.places[-1]
                out.append(ModuleStep(place.node, place.slot, uuid, h.serial, h.step, place.bus_id))
    return out
