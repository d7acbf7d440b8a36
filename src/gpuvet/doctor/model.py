"""Playbooks and causes (data files) as typed objects, and what a doctor run produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict

from gpuvet.checks.model import Cited as Cited  # re-exported: what a doctor verdict cites
from gpuvet.checks.model import EvidenceMap, Json
from gpuvet.checks.roots import Root
from gpuvet.errors import GpuvetError
from gpuvet.knowledge.package_yaml import load_package_yaml


class Cause(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    fix: str
    severity: Literal["info", "warn", "critical"]


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    check: str
    why: str
    scope: str | None = None  # a narrower reading of the check for this playbook (CHECKS["check:scope"])

    @property
    def key(self) -> str:
        return f"{self.check}:{self.scope}" if self.scope else self.check


class Playbook(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    title: str
    order: str
    steps: list[Step]


@cache
def causes() -> dict[str, Cause]:
    """The causes doctor names (causes.yaml), each with the knowledge base's meaning, action and
    severity for its fault kind: the words and level every other command gives the same fact."""
    from gpuvet.knowledge import faults

    text = resources.files("gpuvet.doctor").joinpath("causes.yaml").read_text(encoding="utf-8")
    known = faults()
    return {name: Cause(title=known[name].title, fix=known[name].action, severity=known[name].severity)
            for name in load_package_yaml(text)["causes"]}


@cache
def playbooks() -> dict[str, Playbook]:
    folder = resources.files("gpuvet.doctor").joinpath("playbooks")
    books = [Playbook.model_validate(load_package_yaml(f.read_text(encoding="utf-8")))
             for f in folder.iterdir() if f.name.endswith(".yaml")]
    return {b.id: b for b in sorted(books, key=lambda b: b.id)}


def playbook(symptom: str) -> Playbook:
    books = playbooks()
    if symptom not in books:
        near = _nearest(symptom, list(books))
        hint = f"did you mean {near}? Or " if near else ""
        raise GpuvetError(f"unknown symptom {symptom!r}", where="SYMPTOM",
                          fix=f"{hint}use one of {', '.join(books)}, or none for a triage across all of them.")
    return books[symptom]


def _nearest(word: str, names: list[str]) -> str | None:
    """The symptom a mistyped one meant ('interconnect_slow', 'Overheat'), if one is close."""
    import difflib

    typed = word.lower().replace("_", "-").replace(" ", "-")
    close = difflib.get_close_matches(typed, names, n=1, cutoff=0.6)
    return close[0] if close else None


@dataclass(frozen=True)
class Finding:
    cause: str
    title: str
    fix: str
    confidence: float  # 0..1
    severity: str
    module: str | None = None
    between: tuple[str, str] | None = None
    evidence: EvidenceMap = field(default_factory=dict)
    playbook: str | None = None
    check: str | None = None
    host: str | None = None  # the host its module is on, where a capture names two or more (pdsh's 'node1: ')


def finding(cause: str, confidence: float, module: str | None = None, between: tuple[str, str] | None = None,
            fix: str | None = None, carried: EvidenceMap | None = None, **evidence: Json) -> Finding:
    """``carried``: evidence an event or reading already carries, kept as it is (before ``evidence``)."""
    c = causes()[cause]
    return Finding(cause, c.title, fix or c.fix, confidence, c.severity, module, between, {**(carried or {}), **evidence})


@dataclass(frozen=True)
class StepResult:
    check: str
    why: str
    status: Literal["confirmed", "clear", "inconclusive"]
    summary: str
    findings: tuple[Finding, ...] = ()
    playbook: str | None = None
    evidence: tuple[Cited, ...] = ()  # what a clear or confirmed verdict read; empty only for "can't tell"


@dataclass
class DoctorRun:
    symptom: str | None
    simulated: bool
    steps: list[StepResult]
    findings: list[Finding]
    notes: list[str] = field(default_factory=list)
    roots: list[Root] = field(default_factory=list)  # the findings grouped under the fault that explains them
