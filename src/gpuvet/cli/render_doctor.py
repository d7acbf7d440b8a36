"""Doctor's answer on the terminal, the answer first: the verdict and its root causes (issue 42: each
fault with the findings it explains under it), then each finding's place
never cut, evidence in words: "87.1 °C, 594 W, throttled: software thermal slowdown"), then each check
that judged something once with what it read (``read:`` lines, see ``cited_lines``), then one line for
the checks that could not tell. --verbose (or --all) lists every step grouped by playbook."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from gpuvet.cli import term
from gpuvet.cli.literal import literal
from gpuvet.doctor.answer import cant_tell_line, finding_key, judged, place, unjudged_figures
from gpuvet.doctor.model import Cited, DoctorRun, Finding

_STATUS = {"confirmed": ("confirmed", "bold red"), "clear": ("clear", "green"),
           "inconclusive": ("can't tell", "yellow")}
_SEV = {"critical": "bold red", "warn": "yellow", "info": "cyan"}


READ_LINES = 1  # lines of what a verdict read shown under it (the most telling); --json lists every citation
_PLACES = 3  # places named on one read line before "and N more"
_VALUE = 160  # characters of a value shown (a kernel log line); --json keeps it whole


def cited_lines(items: Sequence[Cited], most: int = READ_LINES) -> list[str]:
    """What a verdict read, for a person at a terminal: ``source: field = value [places]``.

    Citations of one source, field and value are one line naming their places (eight modules
    reading 0 uncorrectable errors are one fact, not eight), and the value fewest places share
    comes first: the module whose reading differs from its peers is the telling one. At most
    ``most`` lines (one by default), the last saying how many more --json lists. An SRE wants one
    glance of what each check looked at (the file, the field, the value) beside its verdict, at
    80 columns; every citation of a 72-module node on the screen would bury the findings, and the
    scripts that need them all read --json."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for c in items:
        groups.setdefault((c.source, c.field, c.value), []).append(c.where or "")
    order = sorted(groups.items(), key=lambda kv: len(kv[1]))  # stable: equal counts keep the cited order
    lines = [_cited_line(source, field, value, places) for (source, field, value), places in order[:most]]
    if lines and len(order) > most:
        lines[-1] += f" (+{len(order) - most} more in --json)"
    return lines


def _cited_line(source: str, field: str, value: str, places: list[str]) -> str:
    value = (value if len(value) <= _VALUE else value[:_VALUE - 3] + "...").replace("\n", "\\n")  # one line
    named = [p for p in places if p]
    where = ", ".join(named[:_PLACES]) + (f" and {len(named) - _PLACES} more" if len(named) > _PLACES else "")
    return f"{source}: {field} = {value}" + (f" [{where}]" if where else "")


def with_read(summary: str, items: Sequence[Cited]) -> Text:
    """A summary cell with its ``read:`` lines under it (dim: the verdict's words stay first)."""
    cell = Text(literal(summary))  # escaped before rich measures it: "\x1b" takes four columns, not none
    for line in cited_lines(items):
        cell.append(f"\nread: {literal(line)}", style="dim")
    return cell


def render(console: Console, run: DoctorRun, verbose: bool = False) -> None:
    """The answer first: the verdict and its causes, then each check that judged something (once), then
    one line for the checks that could not tell; ``verbose`` lists every step of every playbook instead."""
    if run.simulated:
        console.print(Panel(Text.assemble(("SIMULATED", "bold yellow"), " — the evidence comes from a model of the "
                                          "node"), style="yellow"))
    _verdict(console, run, verbose)
    if verbose:
        _every_step(console, run)
    else:
        _judged(console, run)
        line = cant_tell_line(run)
        if line:
            console.print(Text.assemble(("can't tell", "yellow"), line[len("can't tell"):],
                                        " (--verbose lists every step)"))
    for note in run.notes:
        console.print(Text(note, style="dim"))


def _verdict(console: Console, run: DoctorRun, verbose: bool = False) -> None:
    """The headline and the root causes (each with how many findings it explains), then each root's
    finding with its place, evidence and fix (``verbose``: and what its cause means in full), and under
    it one line per finding it explains."""
    what = f"doctor {run.symptom or '(triage across all playbooks)'}"
    if not run.findings:
        untold = unjudged_figures(run)
        if untold:  # a figure read but not judged: "no cause found" alone reads as "normal"
            console.print(Text.assemble((f"{what}: no cause found, but can't tell whether the figures it read "
                                         "are normal", "yellow"), ": ", literal("; ".join(untold))))
            return
        console.print(Text.assemble((f"{what}: no cause found", "green"),
                                    ": every check came back clear or could not tell (see below)"))
        return
    counts = [f"{n} {sev}" for sev in ("critical", "warn", "info")
              if (n := sum(1 for f in run.findings if f.severity == sev))]
    grouped = f"; {len(run.roots)} root(s)" if 0 < len(run.roots) < len(run.findings) else ""
    console.print(Text.assemble((f"{what}: {len(run.findings)} cause(s) found", "bold"), f" ({', '.join(counts)})",
                                grouped))
    for i, r in enumerate(run.roots, 1):
        more = f" — explains {len(r.explains) - 1} finding(s)" if len(r.explains) > 1 else ""
        console.print(Text.assemble(f" {i}. ", (r.severity, _SEV.get(r.severity, "")), f" {literal(r.title)}{more}"))
    by_key: dict[str, Finding] = {}
    for found in sorted(run.findings, key=lambda f: -f.confidence):  # two checks of one fault: the surer leads
        by_key.setdefault(finding_key(found), found)
    shown: set[str] = set()
    for r in run.roots:
        lead = by_key.get(r.explains[0])
        if lead is not None:
            _finding(console, lead, verbose, run.symptom)
        for key in r.explains[1:]:
            if (f := by_key.get(key)) is not None:
                words = term.evidence_words(f.evidence, 3) or "no evidence cited"
                words = words if len(words) <= _VALUE else words[:_VALUE - 3] + "..."  # a log line: --json has it
                console.print(Text(f"    explains {_where(f)}: {f.cause.replace('_', ' ')} ({literal(words)})"))
        shown.update(r.explains)
    for f in run.findings:
        if finding_key(f) not in shown:  # info: advice, not a fault
            _finding(console, f, verbose, run.symptom)


def _where(f: Finding) -> str:
    return place(f) or ("↔".join(f.between) if f.between else "node")


def _finding(console: Console, f: Finding, verbose: bool = False, symptom: str | None = None) -> None:
    console.print(Text.assemble((f.severity.upper(), _SEV[f.severity]), " ", (_where(f), "bold"), ": ",
                                (f.title, "bold"), f" (confidence {f.confidence:.0%}, {_label(f, symptom)})"))
    if verbose and (detail := _detail(f)):
        console.print(Text(f"    means: {detail}"))
    console.print(Text(f"    evidence: {term.evidence_words(f.evidence) or 'none cited'}"))
    console.print(Text(f"    fix: {f.fix}"))


def _label(f: Finding, symptom: str | None) -> str:
    """The check that found it, under the playbook the user asked for; a triage names the check
    alone: the playbook there is only the order the checks ran in, and 'module-missing/xid_log' on
    an application's Xid 13 read as 'a module is missing' (newcomer 56)."""
    return f"{f.playbook}/{f.check}" if symptom and f.playbook else (f.check or "-")


def _detail(f: Finding) -> str:
    """The knowledge base's whole meaning where the finding's title is its short one: the title
    says what, this says when and why."""
    from gpuvet.knowledge import faults

    kind = faults().get(f.cause)
    return kind.meaning if kind and kind.short and f.title == kind.short else ""


def _judged(console: Console, run: DoctorRun) -> None:
    """Each check that confirmed or cleared something, once, with what it read."""
    shown = judged(run)
    if not shown:
        return
    steps = term.table("checks that judged something")
    term.column(steps, "check", key=True)
    term.column(steps, "result", key=True)
    term.column(steps, "what it found")
    for s in shown:
        word, style = _STATUS[s.status]
        steps.add_row(Text(s.check), Text(word, style=style), with_read(s.summary, s.evidence))
    console.print(steps)


def _every_step(console: Console, run: DoctorRun) -> None:
    """Every step of every playbook, grouped by playbook, in the order they ran (--verbose, --all)."""
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
        steps.add_row(Text(s.check), Text(word, style=style), with_read(s.summary, s.evidence))
    console.print(steps)
