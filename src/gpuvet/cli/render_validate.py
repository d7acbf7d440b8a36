"""Rich renderings for validate, the logbook and comparisons."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from gpuvet.report.format import value as format_value

_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


@contextlib.contextmanager
def progress(enabled: bool) -> Iterator[tuple[Any, Any]]:
    """(progress callback, layer callback) drawing on stderr while validate runs."""
    if not enabled:
        yield (lambda d, t, s: None), (lambda layer: None)
        return
    bar = Progress(TextColumn("[bold]{task.fields[layer]}[/] {task.description}"), BarColumn(),
                   TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), console=Console(stderr=True),
                   transient=True)
    task = bar.add_task("", total=1, layer="starting")
    with bar:
        yield (lambda done, total, label: bar.update(task, completed=done, total=max(total, 1), description=label),
               lambda layer: bar.update(task, layer=layer))





def _where(c: dict[str, Any]) -> str:
    if c.get("between"):
        return "→".join(c["between"])
    return c.get("module") or ""


def run(console: Console, doc: dict[str, Any], report: Path | None, junit: Path | None) -> None:
    if doc.get("simulated"):
        console.print(Panel("[bold yellow]SIMULATED[/] — every figure comes from a model of the node, not from hardware",
                            style="yellow"))
    checks = doc.get("checks", [])
    summary = Table(title="by layer", title_justify="left")
    for col in ("layer", "pass", "warn", "fail", "skip"):
        summary.add_column(col, justify="left" if col == "layer" else "right")
    for layer in dict.fromkeys(c["layer"] for c in checks):
        rows = [c for c in checks if c["layer"] == layer]
        summary.add_row(layer, *[f"[{_STYLE[v]}]{n}[/]" if (n := sum(c["verdict"] == v for c in rows)) else "0"
                                 for v in ("pass", "warn", "fail", "skip")])
    console.print(summary)
    t = Table(title=f"validate ({doc.get('level')})", title_justify="left")
    for col in ("layer", "check", "where", "verdict", "value", "unit", "expected", "% exp", "% peak"):
        t.add_column(col, justify="right" if col in ("value", "expected", "% exp", "% peak") else "left")
    notes: list[str] = []
    shown = [c for c in checks if c["verdict"] != "pass"] if len(checks) > 60 else checks
    for c in shown:
        v = c["verdict"]
        reason = c.get("reason")
        mark = ""
        if reason and v != "pass":
            notes.append(f"{c['name']} {_where(c)}: {reason}" + (f" — fix: {c['fix']}" if c.get("fix") else ""))
            mark = f" [{len(notes)}]"
        figures = [format_value(c.get(k)) for k in ("value", "unit", "expected", "pct_of_expected", "pct_of_peak")]
        t.add_row(c["layer"], c["name"], _where(c), f"[{_STYLE[v]}]{v}[/]{mark}", *figures)
    if shown:
        console.print(t)
    if len(shown) < len(checks):
        console.print(f"[dim]{len(checks) - len(shown)} passing checks not shown (--json or --report for all)[/]")
    for i, n in enumerate(notes, 1):
        console.print(f"[dim]\\[{i}][/] {escape(n)}")
    counts = {v: sum(c["verdict"] == v for c in checks) for v in ("pass", "warn", "fail", "skip")}
    verdict = doc.get("verdict", "")
    console.print(f"[{_STYLE.get(verdict, 'bold')}]verdict: {verdict}[/]  "
                  + "  ".join(f"{k} {n}" for k, n in counts.items())
                  + (f"   run {doc.get('run_id')}" if doc.get("run_id") else "")
                  + f"   status {doc.get('status', 'complete')}")
    for note in doc.get("notes", []):
        console.print(f"[dim]{escape(note)}[/]")
    for path in (report, junit):
        if path:
            console.print(f"wrote {path}", markup=False)


def runs(console: Console, rows: list[Any]) -> None:
    t = Table(title="logbook", title_justify="left")
    for col in ("run", "started (UTC)", "status", "verdict", "node", "level", "sim"):
        t.add_column(col)
    for r in rows:  # kept data printed literally (a running run has no verdict, so no style either)
        t.add_row(Text(r.run_id), Text(r.started_utc), Text(r.status),
                  Text(r.verdict or "", style=_STYLE.get(r.verdict or "", "")), Text(r.node or ""),
                  Text(r.envelope.level or ""), "yes" if r.simulated else "")
    console.print(t)


def comparison(console: Console, a: str, b: str, env: list[Any], results: list[Any], note: str | None = None) -> None:
    if env:
        t = Table(title="environment changes", title_justify="left")
        for col in ("what", a, b):
            t.add_column(col)
        for e in env:
            t.add_row(e.key, format_value(e.a), format_value(e.b))
        console.print(t)
    t = Table(title="results", title_justify="left")
    for col in ("check", a, b, "unit", "change %", ""):
        t.add_column(col, justify="right" if col not in ("check", "unit", "") else "left")
    for r in results:
        change = f"{r.change_pct:+.1f}" if r.change_pct is not None else ""
        t.add_row(r.key, format_value(r.a), format_value(r.b), format_value(r.unit), change,
                  "[bold red]REGRESSION[/]" if r.regression else "")
    console.print(t)
    if note:
        console.print(Text(note, style="yellow"))
