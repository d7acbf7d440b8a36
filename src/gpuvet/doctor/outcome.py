"""What a check returns: it confirmed a cause (with findings), found nothing wrong, or could
not tell (saying what it lacked); and the confidence levels checks use."""

from __future__ import annotations

from dataclasses import dataclass

from gpuvet.doctor.model import Finding

HIGH, MEDIUM, LOW = 0.9, 0.7, 0.5


@dataclass(frozen=True)
class Outcome:
    status: str  # confirmed, clear, inconclusive
    summary: str
    findings: tuple[Finding, ...] = ()


def confirmed(summary: str, *found: Finding) -> Outcome:
    return Outcome("confirmed", summary, tuple(found))


def clear(summary: str) -> Outcome:
    return Outcome("clear", summary)


def unknown(summary: str) -> Outcome:
    return Outcome("inconclusive", summary)
