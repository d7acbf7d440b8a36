"""Doctor's steps and findings on the terminal."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from gpuvet.doctor.model import DoctorRun

_STATUS = {"confirmed": "[bold red]confirmed[/]", "clear": "[green]clear[/]", "inconclusive": "[yellow]can't tell[/]"}
_SEV = {"critical": "bold red", "warn": "yellow", "info": "cyan"}


def render(console: Console, run: DoctorRun) -> None:
    if run.simulated:
        console.print(Panel("[bold yellow]SIMULATED[/] — the evidence comes from a model of the node", style="yellow"))
    steps = Table(title=f"doctor {run.symptom or '(triage across all playbooks)'}: steps in order", title_justify="left")
    for col in ("playbook", "check", "result", "what it found"):
        steps.add_column(col)
    for s in run.steps:
        steps.add_row(s.playbook or "", s.check, _STATUS[s.status], s.summary)
    console.print(steps)
    if not run.findings:
        console.print("[green]no cause found[/]: every check came back clear or could not tell (see above)")
    for f in run.findings:
        where = f.module or ("↔".join(f.between) if f.between else "node")
        evidence = ", ".join(f"{k}={v}" for k, v in list(f.evidence.items())[:6])
        console.print(f"[{_SEV[f.severity]}]{f.severity.upper()}[/] [bold]{escape(f.title)}[/] on {escape(where)} "
                      f"(confidence {f.confidence:.0%}, {f.playbook}/{f.check})")
        console.print(f"    evidence: {evidence}", markup=False)
        console.print(f"    fix: {f.fix}", markup=False)
    for note in run.notes:
        console.print(f"[dim]{escape(note)}[/]")
