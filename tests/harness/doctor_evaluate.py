"""Score doctor on the fault matrix: for each case, a simulated node with that fault, doctor
run with the case's symptom and as a triage; correct when the expected cause is named on the
expected module or pair by the expected playbook, and nothing else critical is claimed."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from gpuvet.backends.select import open_backend
from gpuvet.doctor.evidence import Evidence, TrendFactory
from gpuvet.doctor.model import Finding
from gpuvet.doctor.run import diagnose
from tests.harness.doctor_matrix import Case


@dataclass(frozen=True)
class Outcome:
    case: Case
    verdict: str  # correct, wrong, missed (or, for a healthy node: correct / wrong)
    findings: tuple[Finding, ...]
    triage_ok: bool


def _matches(f: Finding, case: Case) -> bool:
    if f.cause != case.cause:
        return False
    if case.between is not None:
        return f.between is not None and set(f.between) == set(case.between)
    if case.module is not None:
        return f.module == case.module
    return f.module is None and f.between is None


def run_case(case: Case, folder: Path, trend: TrendFactory | None, window_s: float | None = None) -> Outcome:
    """``trend``: the thermal trend model the face gives doctor (watch's forecaster). ``window_s``
    shortens the simulated telemetry window (tests; the benchmark keeps the default)."""
    spec = folder / "case.yaml"
    spec.write_text(yaml.safe_dump({"base": case.preset, "faults": [case.fault] if case.fault else []}))
    backend = open_backend(sim=str(spec))
    if case.fault is None:
        triage = diagnose(Evidence(backend, backend.declared, window_s=window_s, trend=trend))
        ok = not triage.findings
        return Outcome(case, "correct" if ok else "wrong", tuple(triage.findings), ok)
    # one observation, read by the symptom's playbook and then by triage
    evidence = Evidence(backend, backend.declared, window_s=window_s, trend=trend)
    result = diagnose(evidence, case.symptom)
    found = [f for f in result.findings if _matches(f, case) and f.playbook == case.symptom]
    others = [f for f in result.findings if not _matches(f, case) and f.severity != "info"]
    verdict = "correct" if found and not others else ("wrong" if result.findings else "missed")
    triage = diagnose(evidence)
    triage_ok = any(_matches(f, case) for f in triage.findings)
    return Outcome(case, verdict, tuple(result.findings), triage_ok)


def evaluate(cases: list[Case], trend: TrendFactory | None) -> list[Outcome]:
    with tempfile.TemporaryDirectory() as folder:
        return [run_case(c, Path(folder), trend) for c in cases]
