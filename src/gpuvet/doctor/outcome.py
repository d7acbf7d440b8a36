"""What a check returns: it confirmed a cause (with findings), found nothing wrong, or could
not tell (saying what it lacked); and the confidence levels checks use.

A "clear" names what it read (``Cited``): a clear without evidence sends the engineer away from
the fault, so ``clear`` refuses to be made without any, and the runner turns one that slipped
through into "can't tell"."""

from __future__ import annotations

from dataclasses import dataclass

from gpuvet.doctor.model import Cited, Finding

__all__ = ["HIGH", "LOW", "MEDIUM", "Cited", "Outcome", "clear", "confirmed", "unknown"]

HIGH, MEDIUM, LOW = 0.9, 0.7, 0.5


@dataclass(frozen=True)
class Outcome:
    status: str  # confirmed, clear, inconclusive
    summary: str
    findings: tuple[Finding, ...] = ()
    evidence: tuple[Cited, ...] = ()


def confirmed(summary: str, *found: Finding, cited: tuple[Cited, ...] = ()) -> Outcome:
    return Outcome("confirmed", summary, tuple(found), cited)


def clear(summary: str, *evidence: Cited) -> Outcome:
    """Nothing wrong, on the readings named; with none named it is "can't tell" (a check's bug)."""
    if not evidence:
        return unknown(f"can't tell: the check cited no evidence for {summary!r}")
    return Outcome("clear", summary, (), tuple(evidence))


def unknown(summary: str) -> Outcome:
    return Outcome("inconclusive", summary)
