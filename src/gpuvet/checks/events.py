"""An event: something that happened to a module, when, how bad, and the evidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: the check model's module loads pydantic's models (watch --replay needs none)
    from gpuvet.checks.model import EvidenceMap


class Severity(StrEnum):
    INFO = "info"
    WARN = "warn"
    CRITICAL = "critical"


@dataclass(frozen=True)
class Event:
    kind: str  # throttle, clock_flapping, link_degraded, nvlink_errors, ecc_rising, ecc_uncorrectable, xid,
    #            module_lost, module_added, module_ready, module_quarantined, overheat_forecast, ...
    severity: Severity
    module: str | None
    time: float  # seconds since the watch began (simulated on a simulated node)
    message: str
    evidence: EvidenceMap = field(default_factory=dict)
    predicted_crossing: float | None = None  # overheat_forecast: seconds since the watch began
    uuid: str | None = None
