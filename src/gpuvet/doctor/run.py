"""Run playbooks in order: each step's check confirms a cause, rules it out, or cannot tell.
A playbook stops at the first confirmed cause, unless a later step confirms a more severe one
(all steps with ``all_steps``); without a
symptom, every playbook runs (triage) and findings are merged."""

from __future__ import annotations

from dataclasses import replace

from gpuvet.doctor import host_facts, notable, smi_peers, tool_leads
from gpuvet.doctor.answer import doctor_roots
from gpuvet.doctor.checks import CHECKS
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.kernel_ids import conflicts
from gpuvet.doctor.model import DoctorRun, Finding, Playbook, Step, StepResult, playbook, playbooks
from gpuvet.doctor.outcome import Outcome, unknown
from gpuvet.node.bus import bus_key

# checks that speak of the machine, the driver or the environment: still meaningful without modules
ABOUT_THE_MACHINE = {"module_presence", "xid_log", "driver_runtime", "host_bottleneck", "nccl_environment",
                     "hotplug_history"}


_RANK = {"info": 0, "warn": 1, "critical": 2}


def run_playbook(book: Playbook, ev: Evidence, all_steps: bool = False) -> tuple[list[StepResult], list[Finding]]:
    """Every step until one confirms; after that only a step that confirms a MORE severe cause is
    kept (an ECC off warning must not hide an uncorrectable ECC error a later step reads), and the
    run ends once nothing more severe can come (a critical)."""
    steps: list[StepResult] = []
    findings: list[Finding] = []
    worst: int | None = None  # the most severe finding confirmed so far
    for step in book.steps:
        if worst is not None and worst >= _RANK["critical"]:
            break
        result = _run_step(book, step, ev)
        rank = max((_RANK.get(f.severity, 0) for f in result.findings), default=None)
        if worst is not None and (result.status != "confirmed" or rank is None or rank <= worst):
            continue  # ran only to look for a more severe cause; none here
        steps.append(result)
        findings.extend(result.findings)
        if result.status == "confirmed" and not all_steps:
            worst = max(worst or 0, rank if rank is not None else 0)
    return steps, findings


def _run_step(book: Playbook, step: Step, ev: Evidence) -> StepResult:
    if ev.no_modules and step.check not in ABOUT_THE_MACHINE:
        outcome = unknown(f"no module to judge: {ev.no_modules}")  # never "clear" about zero modules
    else:
        outcome = cited_or_unknown(CHECKS[step.key](ev))
    found = _one_name_each(ev, [replace(f, playbook=book.id, check=step.check) for f in outcome.findings])
    return StepResult(step.check, step.why, outcome.status, outcome.summary, found, book.id,  # type: ignore[arg-type]
                      outcome.evidence)


def _first_confirmed(steps: list[StepResult]) -> str:
    return next((s.check for s in steps if s.status == "confirmed"), steps[-1].check if steps else "?")


def _one_name_each(ev: Evidence, found: list[Finding]) -> tuple[Finding, ...]:
    """One module, one name, one finding per cause: a capture's inventory names its modules gpuN
    while its -q sections name them by bus id (one disabled ECC came out as gpu1 and as
    0000:2A:00.0). Captured findings take the bus id, the name the pasted text shows; live and
    simulated ones keep gpuN."""
    by_bus = ev.modules_by_bus_id() if found else {}
    captured = ev.backend is not None and ev.backend.captured
    to_bus = {module: bus for bus, module in by_bus.items()}
    out: dict[tuple[str, str | None, tuple[str, str] | None, object], Finding] = {}
    for f in found:
        if f.module and captured:
            f = replace(f, module=to_bus.get(f.module, f.module))
        elif f.module and ":" in f.module:
            f = replace(f, module=by_bus.get(bus_key(f.module), f.module))
        _keep(out, f)
    return tuple(out.values())


def cited_or_unknown(outcome: Outcome) -> Outcome:
    """A clear that names no reading is not a clear (the audit in the tests catches the check)."""
    if outcome.status == "clear" and not outcome.evidence:
        return unknown(f"can't tell: the check cited no evidence for {outcome.summary!r}")
    return outcome


def _keep(found: dict[tuple[str, str | None, tuple[str, str] | None, object], Finding], f: Finding) -> None:
    """One (cause, place): the strongest verdict wins, never the first read (a captured power cap is info as a
    setting, but a peer capped apart is warn: smi_peers' warn must not be lost behind checks' info)."""
    old = found.get(k := _key(f))
    if old is None or _RANK.get(f.severity, 0) > _RANK.get(old.severity, 0):
        found[k] = f


def _key(f: Finding) -> tuple[str, str | None, tuple[str, str] | None, object]:
    # one finding per Xid code on a module: Xid 48 and Xid 63 on one module are two different facts;
    # a lost module's [79] (the presence step's) and its 79 (the log's) are one
    xid = f.evidence.get("xid")
    xid = xid[0] if isinstance(xid, list) and len(xid) == 1 else xid
    # a finding's place is its host and module: one bus id on two hosts is two modules
    return (f.cause, f"{f.host} {f.module}" if f.host else f.module,  # type: ignore[return-value]
            tuple(sorted(f.between)) if f.between else None, xid if isinstance(xid, int) else None)


# Triage order: the most specific symptoms first, so a cause is credited to the playbook
# that names it most directly (a missing module also slows the interconnect).
TRIAGE_ORDER = ("module-missing", "compute-errors", "overheating", "compute-below-peak", "results-fluctuate",
                "interconnect-slow")


def diagnose(ev: Evidence, symptom: str | None = None, all_steps: bool = False) -> DoctorRun:
    ev.symptom = symptom or ev.symptom  # a check may weigh what it reads by the symptom (other_processes)
    books = [playbook(symptom)] if symptom else sorted(
        playbooks().values(), key=lambda b: TRIAGE_ORDER.index(b.id) if b.id in TRIAGE_ORDER else len(TRIAGE_ORDER))
    steps: list[StepResult] = []
    findings: dict[tuple[str, str | None, tuple[str, str] | None, object], Finding] = {}
    stopped: list[str] = []
    try:
        for book in books:
            s, f = run_playbook(book, ev, all_steps)
            steps += s
            if len(s) < len(book.steps):  # stopped at its first confirmed cause (or its most severe)
                stopped.append(f"{book.id} at {_first_confirmed(s)} ({len(book.steps) - len(s)} later step(s) not shown)")
            for x in f:
                _keep(findings, x)
        for x in tool_leads.leads(ev.captures, list(findings.values())):  # SAFE: a tool's failure is never clear
            _keep(findings, x)
        for x in notable.findings(ev.captures, list(findings.values())):  # NOTE: settings worth noting (info)
            _keep(findings, x)
        for x in smi_peers.findings(ev.captures):  # AGX2: nvidia-smi's modules against their peers
            _keep(findings, x)
        for x in host_facts.findings(ev.captures):  # R14E: the host's facts (OOM kills), never behind a module's
            _keep(findings, x)
        design = ev.declared or (ev.node if ev.backend is not None and not ev.no_modules else None)  # roots route on it
    finally:
        ev.close()
    simulated = bool(ev.backend and ev.backend.simulated)
    notes = ["simulated: the evidence comes from a model of the node"] if simulated else []
    if stopped:  # a second cause may hide behind the first
        notes.append("stopped at the first confirmed cause (a later step shown only where it confirms a more severe "
                     "one): " + "; ".join(stopped) + ". --all runs every step")
    if ev.window is not None and simulated:
        from gpuvet.checks.window import SIM_WINDOW_INTERVAL_S  # (the window's detectors: a captured file needs none)

        notes.append(f"telemetry: {ev.window.duration_s / 86400:.1f} simulated days observed")
        if ev.window.interval_s > SIM_WINDOW_INTERVAL_S:  # a node too big to sample every minute in seconds
            notes.append(f"telemetry: simulated window sampled every {ev.window.interval_s / 60:g} min for "
                         f"{ev.window.modules} modules (every {SIM_WINDOW_INTERVAL_S / 60:g} min on smaller nodes)")
    notes += ev.captures.notes  # what each captured file was read as, and what was skipped
    notes += [c.note() for c in conflicts(ev)]  # one bus id, two boards: nothing merged
    if ev.backend is not None and ev.backend.captured:  # what the captured node left out (another vendor's modules)
        notes += [n for n in ev.backend.notes() if n not in notes]
    ordered = sorted(findings.values(), key=lambda f: (-{"critical": 2, "warn": 1, "info": 0}[f.severity], -f.confidence))
    return DoctorRun(symptom, simulated, steps, ordered, notes, doctor_roots(ordered, design))


def validate_playbooks() -> None:
    """Every step names a check that exists (run by the tests)."""
    for book in playbooks().values():
        for step in book.steps:
            if step.key not in CHECKS:
                raise ValueError(f"playbook {book.id} names unknown check {step.key}")
