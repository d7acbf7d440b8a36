"""What the logbook hands back: typed records, so that callers read fields, not string keys.

A run's environment, checks and events are the run document's types (logbook/document.py);
the rows around them are typed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from pydantic import JsonValue

from gpuvet.checks.model import Check
from gpuvet.logbook.document import Environment, EventRecord

# (mkey, t, temp_c, power_w, sm_clock_mhz, mem_clock_mhz, util, throttle): one module's sample
SampleRow = tuple[int, float, float | None, float | None, float | None, float | None, float | None, int]

# (bucket start s, temp mean, temp max, power mean, util mean, sm clock min, throttle max)
SeriesRow = tuple[float | None, ...]

RunEvent = EventRecord  # an event of one run, as `log show` prints it (the older name)


@dataclass(frozen=True)
class RunRow:
    """One kept run: its identity, status and environment envelope."""

    run_id: str
    kind: str
    status: str
    verdict: str | None
    started_utc: str
    ended_utc: str | None
    host: str
    simulated: bool
    node: str | None
    envelope: Environment


class ModuleEvent(TypedDict):
    """An event of any run, as `gpuvet events` prints it (``time``: the run's own clock, s)."""

    run_id: str
    time_utc: str
    kind: str
    message: str
    module: str | None
    uuid: str | None
    time: float | None
    severity: str | None
    data: dict[str, JsonValue]
    node: str | None  # the node it happened on (the run's node for events kept before events had one)


@dataclass(frozen=True)
class Sighting:
    """A module seen in a node's slot by a run: what the ledger follows a module by."""

    run_id: str
    time_utc: str
    node: str
    slot: str
    uuid: str
    serial: str | None = None
    bus_id: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class FindingRow:
    """A finding against a module (or its node), kept for the module's history. ``fault`` is
    the ladder's key (``xid:79``, ``ecc``…); ``token`` names the record it came from (an Xid's
    boot and sequence number), so one record read by several checks counts once."""

    run_id: str
    seq: int
    time_utc: str
    node: str
    slot: str | None
    uuid: str | None
    serial: str | None
    source: str
    fault: str
    status: str
    message: str
    token: str | None
    data: dict[str, JsonValue]


@dataclass(frozen=True)
class LedgerEvent:
    """An event of any run with the node it happened on."""

    run_id: str
    time_utc: str
    node: str | None
    kind: str
    message: str
    module: str | None
    uuid: str | None
    severity: str | None
    data: dict[str, JsonValue]


@dataclass(frozen=True)
class LedgerRows:
    """Everything the ledger is built from, read in one pass."""

    runs: list[RunRow]
    sightings: list[Sighting]
    findings: list[FindingRow]
    events: list[LedgerEvent]
    checks: list[tuple[str, Check]]  # (run id, a module's check) of validate runs
