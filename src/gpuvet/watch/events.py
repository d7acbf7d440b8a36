"""Events now live in the shared layer (``gpuvet.checks.events``); this name stays for the
watch modules and faces that import it from here.

Root cause first (issue 42): a module that is lost, or whose fabric links are down, explains the
events that follow on that module while it stays so (throttle, power and clock events, link and
collective slowness, its own ``cleared``): ``event_roots`` groups them under it, so a summary
names one fault, not its consequences one by one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuvet.checks.events import Event, Severity

if TYPE_CHECKING:  # a type only (the check model's module loads pydantic's models)
    from gpuvet.checks.model import Json

__all__ = ["Event", "EventRoot", "Severity", "event_key", "event_roots", "root_of"]

# the events that explain what follows on their module, and the event that ends each one's reach
ROOT_KINDS = {"module_lost": "module_added", "link_down": "cleared"}
# what a lost module or a downed link can cause on its module: the slowdowns and link symptoms that
# follow from it. An Xid, an ECC error, a forecast or a PCIe/NIC error is a fact of its own and
# stays a root or an event of its own (a double-bit error after a link went down is not the link).
CONSEQUENCES = frozenset({"throttle", "clock_flapping", "link_degraded", "nvlink_errors", "cleared"})


def event_key(e: Event) -> str:
    """``kind/module/time``: names an event in --json's ``roots`` and ``root`` (from its own fields)."""
    return f"{e.kind}/{e.module or 'node'}/{e.time:g}"


@dataclass(frozen=True)
class EventRoot:
    """A root event and the events it explains (indexes into the run's events, its own first)."""

    event: Event
    explains: tuple[int, ...]

    def to_json(self, events: Sequence[Event]) -> dict[str, Json]:
        e = self.event
        return {"key": event_key(e), "kind": e.kind, "severity": e.severity.value, "module": e.module,
                "time": e.time, "message": e.message, "explains": [event_key(events[i]) for i in self.explains]}


def _ends(root: Event, e: Event) -> bool:
    """Whether ``e`` ends the root's reach: a module back on the bus, or its links' ``cleared``."""
    end = ROOT_KINDS[root.kind]
    return e.kind == end and (end != "cleared" or e.evidence.get("of") == root.kind)


def event_roots(events: Sequence[Event]) -> list[EventRoot]:
    """Each module_lost or link_down event with the later events on its module that it can cause
    (CONSEQUENCES) until its reach ends (the ``cleared`` that closes a link_down is its own, and is
    explained by it too); a lost module's off-bus Xid just before it is the same fact."""
    roots: list[EventRoot] = []
    taken: set[int] = set()
    for i, root in enumerate(events):
        if root.kind not in ROOT_KINDS or root.module is None or i in taken:
            continue
        explains = [i, *_first_signs(events, i, taken)]
        for j in range(i + 1, len(events)):
            e = events[j]
            if e.module != root.module or e.time < root.time or j in taken:
                continue
            if e.kind == "module_added" or e.kind in ROOT_KINDS and e.kind != root.kind:
                break  # a new module, or another root: its own story
            if e.kind not in CONSEQUENCES:
                continue  # a fact of its own (an Xid, ECC): never folded under the root
            explains.append(j)
            if _ends(root, e):
                break
        taken.update(explains)
        roots.append(EventRoot(root, tuple(explains)))
    return roots


def _first_signs(events: Sequence[Event], i: int, taken: set[int]) -> list[int]:
    """The off-bus Xids on a lost module before its loss (the driver's word for the same fact)."""
    root = events[i]
    if root.kind != "module_lost":
        return []
    from gpuvet.knowledge import off_bus_xids

    off_bus = set(off_bus_xids())
    out = []
    for j in range(i - 1, -1, -1):
        e = events[j]
        if e.module != root.module or j in taken:
            continue
        if e.kind in ("module_added", "module_lost"):
            break
        if e.kind == "xid" and e.evidence.get("code") in off_bus:
            out.append(j)
    return sorted(out)


def root_of(events: Sequence[Event]) -> dict[int, str]:
    """Event index -> the key of the root event that explains it (roots themselves left out)."""
    return {j: event_key(r.event) for r in event_roots(events) for j in r.explains[1:]}
