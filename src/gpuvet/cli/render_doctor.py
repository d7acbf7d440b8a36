"""Doctor's steps and findings on the terminal: steps grouped by playbook, each finding's place
never cut, evidence in words ("87.1 °C, 594 W, throttled: software thermal slowdown")."""

from __future__ import annotations

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from gpuvet.cli import term
from gpuvet.doctor.model import DoctorRun

_STATUS = {"confirmed": ("confirmed", "bold red"), "clear": ("clear", "green"),
           "inconclusive": ("can't tell", "yellow")}
_SEV = {"critical": "bold red", "warn": "yellow", "info": "cyan"}


def render(console: Console, run: DoctorRun) -> None:
    if run.simulated:
        console.print(Panel(Text.assemble(("SIMULATED", "bold yellow"), " — the evidence comes from a model of the "
                                          "node"), style="yellow"))
    steps = term.table(f"doctor {run.symptom or '(triage across all playbooks)'}: steps in order")
    term.column(steps, "check", key=True)
    term.column(steps, "result", key=True)
    term.column(steps, "what it found")
    book = None
    for s in run.steps:
        if s.playbook != book:
            book = s.playbook
            steps.add_row(Text(book or "", style="bold"))
        word, style = _STATUS[s.status]
        steps.add_row(Text(s.check), Text(word, style=style), Text(s.summary))
    console.print(steps)
    if not run.findings:
        console.print(Text.assemble(("no cause found", "green"),
                                    ": every check came back clear or could not tell (see above)"))
    for f in run.findings:
        where = f.module or ("↔".join(f.between) if f.between else "node")
        console.print(Text.assemble((f.severity.upper(), _SEV[f.severity]), " ", (where, "bold"), ": ",
                                    (f.title, "bold"), f" (confidence {f.confidence:.0%}, {f.playbook}/{f.check})"))
        console.print(Text(f"    evidence: {term.evidence_words(f.evidence)}"))
        console.print(Text(f"    fix: {f.fix}"))
    for note in run.notes:
        console.print(Text(note, style="dim"))
