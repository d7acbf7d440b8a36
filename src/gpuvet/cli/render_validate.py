"""Rich renderings for validate, the logbook and comparisons."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from gpuvet.cli import term
from gpuvet.report.format import value as format_value

if TYPE_CHECKING:
    from gpuvet.checks.model import Check
    from gpuvet.logbook.document import RunDocument
    from gpuvet.logbook.store import RunRow
    from gpuvet.validate.compare import EnvChange, ResultChange

_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


def _where(c: Check) -> str:
    arrow = "↔" if "two_way" in c.name else "→"  # both directions at once
    return arrow.join(c.between) if c.between else c.module or ""


def _figure(v: object, unit: object = None) -> str:
    """A check's value: a whole number (a count, a code) exactly, a reading at 3 significant figures."""
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,} {unit}" if unit else f"{v:,}"
    if isinstance(v, float):
        return term.sig(v, str(unit) if unit else "")
    return format_value(v) + (f" {unit}" if unit and v is not None else "")


class _Notes:
    """Reasons as numbered notes under the table; a fix shared by many checks is printed once."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str | None]] = []

    def add(self, c: Check) -> str:
        self.lines.append((f"{c.name} {_where(c)}: {c.reason}", c.fix))
        return f" [{len(self.lines)}]"

    def print(self, console: Console) -> None:
        first: dict[str, int] = {}
        for i, (text, fix) in enumerate(self.lines, 1):
            line = Text.assemble((f"[{i}]", "dim"), " ", text)
            if fix and fix in first:
                line.append(f" — fix: as [{first[fix]}]", style="dim")
            elif fix:
                first[fix] = i
                line.append(f" — fix: {fix}")
            console.print(line)


def _summary(console: Console, checks: list[Check]) -> None:
    summary = term.table("by layer")
    for col in ("layer", "pass", "warn", "fail", "skip"):
        term.column(summary, col, right=col != "layer", key=col == "layer")
    for layer in dict.fromkeys(str(c.layer) for c in checks):
        rows = [c for c in checks if c.layer == layer]
        counts = [(v, sum(c.verdict == v for c in rows)) for v in ("pass", "warn", "fail", "skip")]
        summary.add_row(Text(layer), *[Text(str(n), style=_STYLE[v] if n else "") for v, n in counts])
    console.print(summary)


def _checks_table(console: Console, doc: RunDocument, shown: list[Check], notes: _Notes) -> None:
    """One row per check, grouped by layer; the verdict and the place are never cut."""
    t = term.table(f"validate ({doc.level})")
    for col in ("check", "where", "verdict", "value", "expected", "% exp"):
        term.column(t, col, right=col in ("value", "expected", "% exp"), key=col in ("check", "where", "verdict"))
    layer = None
    for c in shown:
        if c.layer != layer:
            layer = str(c.layer)
            t.add_row(Text(layer, style="bold"))
        v = c.verdict.value
        mark = notes.add(c) if c.reason and v != "pass" else ""
        pct = c.pct_of_expected
        t.add_row(Text(c.name), Text(_where(c)), Text.assemble((v, _STYLE[v]), mark),
                  Text(_figure(c.value, c.unit)), Text(_figure(c.expected)),
                  term.sig(pct) if isinstance(pct, (int, float)) else "")
    console.print(t)


def roots(console: Console, doc: RunDocument) -> None:
    """The verdict and the faults that explain the failures, first: one line per root (issue 42)."""
    found = doc.roots
    verdict = doc.verdict.value if doc.verdict else ""
    head = f"verdict: {verdict}" + (f" — {len(found)} root cause(s)" if found else "")
    console.print(Text(head, style=_STYLE.get(verdict, "bold")))
    for i, r in enumerate(found, 1):
        more = len(r.explains) - 1
        tail = f" — explains {more} check(s)" if more > 0 else ""
        console.print(Text.assemble((f" {i}. {r.severity}", _STYLE.get(
            {"critical": "fail"}.get(r.severity, "warn"), "")), f" {r.title}{tail}"))


def actions(console: Console, doc: RunDocument) -> None:
    """Each flagged module's step on its fault's ladder (the module ledger's), as health says it."""
    kept = (doc.model_extra or {}).get("actions")
    for a in kept if isinstance(kept, list) else []:
        if isinstance(a, dict):
            console.print(Text(f"action {a.get('module')}: {str(a.get('step')).upper()} ({a.get('why')})"))


def run(console: Console, doc: RunDocument, report: Path | None, junit: Path | None, fails_only: bool = False) -> None:
    if doc.simulated:  # first: the verdict and its actions below it are a model's (newcomer 56)
        console.print(Panel(Text.assemble(("SIMULATED", "bold yellow"), " — every figure comes from a model of the "
                                          "node, not from hardware"), style="yellow"))
    roots(console, doc)
    actions(console, doc)
    checks = list(doc.checks)
    _summary(console, checks)
    notes = _Notes()
    shown = [c for c in checks if c.verdict not in ("pass", "skip" if fails_only else "pass")] \
        if len(checks) > 60 or fails_only else checks
    if shown:
        _checks_table(console, doc, shown, notes)
    if len(shown) < len(checks):
        console.print(Text(f"{len(checks) - len(shown)} passing checks not shown (--json or --report for all)",
                           style="dim"))
    notes.print(console)
    counts = {v: sum(c.verdict == v for c in checks) for v in ("pass", "warn", "fail", "skip")}
    verdict = doc.verdict.value if doc.verdict else ""
    console.print(Text.assemble((f"verdict: {verdict}", _STYLE.get(verdict, "bold")), "  "
                                + "  ".join(f"{k} {n}" for k, n in counts.items())
                                + (f"   run {doc.run_id}" if doc.run_id else "")
                                + f"   status {doc.status or 'complete'}"))
    for note in doc.notes:
        console.print(Text(str(note), style="dim"))
    for path in (report, junit):
        if path:
            console.print(Text(f"wrote {path}"))


def runs(console: Console, rows: Sequence[RunRow]) -> None:
    t = term.table("logbook")
    for col in ("run", "started (UTC)", "status", "verdict", "node", "level", "sim"):
        term.column(t, col, key=col in ("run", "started (UTC)", "verdict"))
    for r in rows:  # kept data printed literally (a running run has no verdict, so no style either)
        started = term.minute(r.started_utc, console.width)  # a wrapped 'mi300x-/8' read badly
        t.add_row(Text(r.run_id), Text(started), Text(r.status),
                  Text(r.verdict or "", style=_STYLE.get(r.verdict or "", "")), Text(r.node or ""),
                  Text(r.envelope.level or ""), "yes" if r.simulated else "")
    console.print(t)


def comparison(console: Console, a: str, b: str, env: Sequence[EnvChange], results: Sequence[ResultChange],
               note: str | None = None) -> None:
    if env:
        t = term.table("environment changes")
        for col in ("what", a, b):
            term.column(t, col)
        for e in env:
            t.add_row(Text(e.key), Text(format_value(e.a)), Text(format_value(e.b)))
        console.print(t)
    console.print(Text(f"A = run {a}, B = run {b}"))
    t = term.table("results")
    for col in ("check", "where", "A", "B", "change"):
        term.column(t, col, right=col in ("A", "B", "change"), key=col in ("check", "where", "change"))
    layer = None
    for r in results:
        part, name, where = (r.key.split("/", 2) + ["", ""])[:3]
        if part != layer:
            layer = part
            t.add_row(Text(layer, style="bold"))
        change = Text(f"{r.change_pct:+.1f} %" if r.change_pct is not None else "")
        if r.regression:
            change.append(" REGRESSION", style="bold red")
        unit = str(r.unit) if r.unit and r.unit != "ratio" else ""
        t.add_row(Text(name), Text("" if where == "node" else where), Text(_figure(r.a, unit)),
                  Text(_figure(r.b, unit)), change)
    console.print(t)
    if note:
        console.print(Text(note, style="yellow"))
