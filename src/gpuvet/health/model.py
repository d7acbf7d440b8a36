"""What a health check returns: one finding per check (and per module where it matters), each
ok, fail, unknown (could not tell) or skip (does not apply here), and the overall status that
becomes the exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from gpuvet.checks.model import Cited
from gpuvet.ledger.record import ModuleStep

# in the order a drain reason names them: the gravest first
# (kernel_messages: the driver saying a module did not come up tells why presence may fail next)
CHECKS = ("driver", "kernel_messages", "presence", "xid", "ecc", "row_remap", "fabric", "fabric_state", "pcie", "nic",
          "peer_memory", "throttle", "processes", "power_limit")


class Status(StrEnum):
    OK = "ok"
    FAIL = "fail"
    WARN = "warn"  # flagged, not drained: the node computes right, slower (faults.yaml's warn)
    UNKNOWN = "unknown"  # could not tell: a reading failed or is not allowed
    SKIP = "skip"  # does not apply (not supported by the module, no fabric)

    @property
    def exit_code(self) -> int:
        return {"ok": 0, "fail": 1, "warn": 0, "unknown": 2, "skip": 0}[self.value]


@dataclass(frozen=True)
class Finding:
    check: str
    status: Status
    reason: str  # one line, fit for a drain reason or a node condition message
    module: str | None = None
    fix: str | None = None
    evidence: tuple[Cited, ...] = ()  # what an OK (or a failure) read: source, field, value; never empty for OK


@dataclass(frozen=True)
class ModuleId:
    """A module's identity, so that every finding names the module, not only its slot."""

    uuid: str | None
    serial: str | None


@dataclass
class HealthReport:
    node: str
    backend: str
    simulated: bool
    findings: list[Finding]
    elapsed_s: float
    modules: int
    expected: str  # what presence was judged against: the --expect spec or "inferred from …"
    notes: list[str] = field(default_factory=list)
    identities: dict[str, ModuleId] = field(default_factory=dict)  # module id -> its identity
    actions: list[ModuleStep] = field(default_factory=list)  # each flagged module's ladder step (the ledger's)

    @property
    def status(self) -> Status:
        kinds = {f.status for f in self.findings}
        if Status.FAIL in kinds:
            return Status.FAIL
        if Status.UNKNOWN in kinds:
            return Status.UNKNOWN
        return Status.OK

    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.status is Status.FAIL]

    def unknowns(self) -> list[Finding]:
        return [f for f in self.findings if f.status is Status.UNKNOWN]

    def warnings(self) -> list[Finding]:
        """What a scheduler keeps in service but names: a slowed link, a lowered power cap."""
        return [f for f in self.findings if f.status is Status.WARN]
