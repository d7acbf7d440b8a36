"""Showing benchmark reports: tables by benchmark, copy matrices, a progress bar, JSON."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from gpuvet.bench.records import BenchReport, BenchResult, Status
from gpuvet.report.jsonable import to_jsonable

_ALWAYS = {"benchmark", "metric", "value", "unit", "status", "simulated"}


def result_json(r: BenchResult) -> dict[str, Any]:
    data = to_jsonable(r)
    return {k: v for k, v in data.items() if k in _ALWAYS or v not in (None, {}, [])}


def to_json(report: BenchReport) -> str:
    from gpuvet.cli.jsonout import dumps

    return dumps({
        "simulated": report.simulated, "benchmark": report.benchmark, "ok": report.ok,
        "environment": to_jsonable(report.environment), "notes": list(report.notes),
        "results": [result_json(r) for r in report.results],
    }, indent=2)


@contextlib.contextmanager
def progress(enabled: bool) -> Iterator[Any]:
    """A progress callback (done, total, label) drawing a bar on stderr while it runs."""
    if not enabled:
        yield lambda done, total, label: None
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                   TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    task = bar.add_task("starting", total=1)
    with bar:
        yield lambda done, total, label: bar.update(task, completed=done, total=max(total, 1), description=label)


def _fmt(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}" if abs(value) >= 1 else f"{value:.3g}"


def _value(r: BenchResult) -> str:
    if r.value is None:
        return "-"
    if r.unit == "rel_error":
        return f"{r.value:.0e}"
    return f"{_fmt(r.value, 3 if r.unit == 'ratio' else 1)} {r.unit if r.unit != 'ratio' else ''}".rstrip()


class _Notes:
    """Long reasons as numbered notes under the table, so the table stays narrow."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def ref(self, text: str) -> str:
        if text not in self.texts:
            self.texts.append(text)
        return f"[{self.texts.index(text) + 1}]"

    def print(self, console: Console) -> None:
        for i, text in enumerate(self.texts, 1):
            console.print(Text.assemble((f"[{i}]", "dim"), " ", text))  # reasons are data: never markup


def _status(r: BenchResult, notes: _Notes) -> str:
    if r.status is Status.SKIPPED:
        return f"[yellow]skipped[/] {notes.ref(r.reason or '')}"
    if r.status is Status.FAILED:
        return f"[red]failed[/] {notes.ref(r.reason or '')}"
    if r.status is Status.UNRELIABLE:
        return f"[yellow]unreliable[/] {notes.ref(r.reason or '')}"
    if r.correct is False:
        return f"[red]WRONG[/] {notes.ref(r.reason or '')}"
    reasons = sorted({why for t in r.telemetry.values() for why in t.throttle_reasons})
    return f"[yellow]throttled[/] {notes.ref('throttle reasons seen: ' + ', '.join(reasons))}" if reasons else "[green]ok[/]"


def _where(r: BenchResult) -> str:
    if r.between:
        return f"{r.between[0]}→{r.between[1]}" if r.metric != "p2p_two_way" else f"{r.between[0]}↔{r.between[1]}"
    return r.module or str(r.detail.get("set", r.detail.get("op", "")))


def report(console: Console, rep: BenchReport) -> None:
    env = rep.environment
    if rep.simulated:
        console.print(Panel(f"[bold yellow]SIMULATED[/] {rep.benchmark} on {env.node} — figures come from a model, "
                            "not from hardware", style="yellow"))
    else:
        extras = ", ".join(f"{k} {v}" for k, v in (("torch", env.torch_version), ("CUDA", env.cuda_version),
                                                    ("driver", env.driver_version)) if v)
        console.print(f"[bold]{rep.benchmark}[/] on {env.node} ({env.device}; {extras})")
    if rep.benchmark == "collective":
        _collective_table(console, rep)
    else:
        _generic_table(console, rep)
    if rep.benchmark == "copy":
        for metric in ("p2p_one_way", "p2p_two_way"):
            _pair_matrix(console, rep, metric)
    for note in rep.notes:
        console.print(f"[dim]{escape(note)}[/]")


def _generic_table(console: Console, rep: BenchReport) -> None:
    rows = [r for r in rep.results if r.metric not in ("p2p_one_way", "p2p_two_way")]
    notes = _Notes()
    t = Table(title=f"{rep.benchmark}" + (" (SIMULATED)" if rep.simulated else ""), title_justify="left")
    for col in ("metric", "where", "dtype", "value", "% peak", "CV %", "n", "status"):
        t.add_column(col, justify="right" if col in ("value", "% peak", "CV %", "n") else "left", no_wrap=True)
    for r in rows:
        s = r.stats
        t.add_row(r.metric, _where(r), r.dtype or "", _value(r), _fmt(r.pct_of_peak),
                  _fmt(100 * r.cv) if r.cv is not None else "", str(s.n) if s else "", _status(r, notes))
    console.print(t)
    notes.print(console)


def _pair_matrix(console: Console, rep: BenchReport, metric: str) -> None:
    cells = {r.between: r for r in rep.results if r.metric == metric and r.between}
    if not cells:
        return
    ids = sorted({m for pair in cells for m in pair}, key=lambda m: (len(m), m))
    both = metric == "p2p_two_way"
    title = f"{metric} GB/s" + (" (both directions summed)" if both else " (row → column)")
    t = Table(title=title + (" SIMULATED" if rep.simulated else ""), title_justify="left")
    t.add_column("")
    for m in ids:
        t.add_column(m, justify="right")
    for a in ids:
        row = []
        for b in ids:
            r = cells.get((a, b)) or (cells.get((b, a)) if both else None)
            row.append("-" if a == b or r is None else (_fmt(r.value) if r.value is not None else "[yellow]skip[/]"))
        t.add_row(a, *row)
    console.print(t)
    values = [r.value for r in cells.values() if r.value is not None]
    if values:
        console.print(f"sum {sum(values):,.0f} GB/s, min {min(values):,.1f}, max {max(values):,.1f}")


def _collective_table(console: Console, rep: BenchReport) -> None:
    t = Table(title="collective" + (" (SIMULATED)" if rep.simulated else ""), title_justify="left")
    for col in ("op", "size B", "time us", "algbw GB/s", "busbw GB/s", "CV %", "algorithm", "correct"):
        t.add_column(col, justify="left" if col in ("op", "algorithm", "correct") else "right")
    bus = {(r.detail.get("op"), r.size_bytes): r for r in rep.results if r.metric == "busbw"}
    notes = _Notes()
    for r in rep.results:
        if r.metric != "algbw":
            continue
        b = bus.get((r.detail.get("op"), r.size_bytes))
        if r.status is not Status.OK:
            t.add_row(str(r.detail.get("op")), str(r.size_bytes), "", "", "", "", "", _status(r, notes))
            continue
        correct = {True: "[green]yes[/]", False: "[red]NO[/]", None: "-"}[r.correct]
        t.add_row(str(r.detail.get("op")), f"{r.size_bytes:,}", _fmt(r.detail.get("time_us")), _fmt(r.value, 2),
                  _fmt(b.value if b else None, 2), _fmt(100 * r.cv) if r.cv is not None else "",
                  str(r.detail.get("algorithm") or "-"), correct)
    console.print(t)
    notes.print(console)
    fits = [r for r in rep.results if r.metric in ("latency", "bandwidth")]
    for r in fits:
        if r.status is Status.OK:
            console.print(f"{r.detail.get('op')}: fitted {r.metric} {_fmt(r.value, 2)} {r.unit} "
                          f"(t = α + S/β, R² {r.detail.get('r_squared', 0):.3f})")
