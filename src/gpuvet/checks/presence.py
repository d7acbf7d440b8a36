"""Which modules are there while telemetry is sampled: one that the source lists for the first
time after the start was added (and is admitted, if asked); one gone from the list, or silent
for ``LOST_AFTER_MISSES`` samples in a row, was lost. Its history stays; it leaves the table of
live modules."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpuvet.backends.readings import ModuleIdentity
from gpuvet.checks.events import Event, Severity

if TYPE_CHECKING:  # benchmarking a module that appears is imported only where one does (issue 43)
    from gpuvet.checks.admission import Admission

LOST_AFTER_MISSES = 3


@dataclass(frozen=True)
class ModuleState:
    """A module seen during the window and where it stands: present (there from the start),
    added, ready, quarantined or lost."""

    id: str
    uuid: str
    bus_id: str | None
    model: str
    state: str
    lost_at: float | None = None

    def to_json(self) -> dict[str, str | None]:
        return {"id": self.id, "uuid": self.uuid, "bus_id": self.bus_id, "model": self.model, "state": self.state}


class Presence:
    """Follows modules arriving and leaving; each method returns the events it raised."""

    def __init__(self, admit: Callable[[str], Admission] | None = None) -> None:
        self.admit = admit
        self.known: dict[str, ModuleIdentity] = {}  # uuid -> modules seen and not lost
        self.states: dict[str, ModuleState] = {}  # uuid -> every module seen, lost ones included
        self._misses: dict[str, int] = {}

    def listed(self, t: float, present: Iterable[ModuleIdentity]) -> list[Event]:
        """The source's list of modules at a slow tick."""
        now = {i.uuid: i for i in present}
        events: list[Event] = []
        for uuid, ident in now.items():
            if uuid not in self.known:
                events += self._arrived(t, ident)
        for uuid in [u for u in self.known if u not in now]:
            ident = self.known[uuid]
            events.append(self._lost(t, uuid, f"{ident.id} ({uuid}) is gone from the bus; its history stays in the "
                                              "logbook", {"bus_id": ident.bus_id}))
        return events

    def answered(self, t: float, uuids: set[str]) -> list[Event]:
        """The modules that gave a sample this tick; a module silent too long is lost."""
        events = []
        for uuid in list(self.known):
            self._misses[uuid] = 0 if uuid in uuids else self._misses.get(uuid, 0) + 1
            if self._misses[uuid] == LOST_AFTER_MISSES:
                events.append(self._lost(t, uuid, f"{self.known[uuid].id} stopped answering ({LOST_AFTER_MISSES} "
                                                  "samples missed)", {}))
        return events

    def settled(self, uuids: set[str]) -> bool:
        """Whether ``uuids`` listed and answering change nothing: exactly the modules known, none
        silent lately (a run of such ticks raises no event and may be taken at once)."""
        return uuids == self.known.keys() and not any(self._misses.get(u, 0) for u in uuids)

    def _arrived(self, t: float, ident: ModuleIdentity) -> list[Event]:
        self.known[ident.uuid] = ident
        first = t == 0.0
        state = ModuleState(ident.id, ident.uuid, ident.bus_id, ident.model, "present" if first else "added")
        self.states[ident.uuid] = state
        if first:
            return []
        events = [Event("module_added", Severity.INFO, ident.id, t, f"{ident.id} ({ident.uuid}) appeared",
                        {"bus_id": ident.bus_id}, uuid=ident.uuid)]
        if self.admit is not None:
            a = self.admit(ident.id)
            self.states[ident.uuid] = replace(state, state="ready" if a.ready else "quarantined")
            events.append(Event("module_ready" if a.ready else "module_quarantined",
                                Severity.INFO if a.ready else Severity.WARN, ident.id, t, a.reason, a.evidence,
                                uuid=ident.uuid))
        return events

    def _lost(self, t: float, uuid: str, message: str, evidence: dict[str, str | None]) -> Event:
        ident = self.known.pop(uuid)
        self.states[uuid] = replace(self.states[uuid], state="lost", lost_at=t)
        return Event("module_lost", Severity.CRITICAL, ident.id, t, message, dict(evidence), uuid=uuid)
