"""The ledger's typed records: a module's places, what happened to it, and the step it is on."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import JsonValue


@dataclass(frozen=True)
class Place:
    """Where a module sat, from the first run that saw it there to the last."""

    node: str
    slot: str
    bus_id: str | None
    first_utc: str
    last_utc: str


@dataclass(frozen=True)
class Report:
    """One finding or event against a module: what the ledger counts and shows."""

    time_utc: str
    node: str
    slot: str | None
    uuid: str | None
    source: str  # health, watch, validate
    run_id: str
    fault: str  # the ladder's key: xid:79, ecc, throttle…
    severity: str  # fail / critical / warn
    message: str
    token: str | None = None
    data: dict[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Figure:
    """A benchmark figure of the module against its design (from a validate run)."""

    time_utc: str
    run_id: str
    node: str
    slot: str
    name: str
    value: float | None
    unit: str | None
    expected: float | None
    pct_of_expected: float | None
    verdict: str


@dataclass(frozen=True)
class Occurrence:
    """One fault on one module: the reports that are the same happening (docs/ledger.md)."""

    fault: str
    first_utc: str
    last_utc: str
    node: str
    slot: str | None
    reports: int


@dataclass(frozen=True)
class Step:
    """Where a module stands on its fault's ladder, and why, in words."""

    step: str
    rank: int
    fault: str
    nth: int  # occurrences of the fault within the window
    window_s: float
    why: str


@dataclass
class ModuleHistory:
    """One module, known by its serial where read, else its UUID."""

    id: str
    serial: str | None
    uuids: list[str]
    model: str | None
    places: list[Place] = field(default_factory=list)
    reports: list[Report] = field(default_factory=list)
    occurrences: list[Occurrence] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)  # the runs that saw it
    step: Step | None = None

    @property
    def where(self) -> str:
        """Its latest place, ``node/slot``."""
        return f"{self.places[-1].node}/{self.places[-1].slot}" if self.places else "-"
