"""Showing benchmark reports: tables by benchmark, copy matrices, a progress bar, JSON."""

from __future__ import annotations

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from gpuvet.bench.records import BenchReport, BenchResult, Status
from gpuvet.cli import term
from gpuvet.report.jsonable import to_jsonable

_ALWAYS = {"benchmark", "metric", "value", "unit", "status", "simulated"}


def result_json(r: BenchResult) -> dict[str, object]:
    data = to_jsonable(r)
    return {k: v for k, v in data.items() if k in _ALWAYS or v not in (None, {}, [])}


def to_json(report: BenchReport) -> str:
    from gpuvet.cli.jsonout import dumps

    return dumps({
        "simulated": report.simulated, "benchmark": report.benchmark, "ok": report.ok,
        "environment": to_jsonable(report.environment), "notes": list(report.notes),
        "results": [result_json(r) for r in report.results],
    }, indent=2)


def _fmt(value: float | None) -> str:
    return term.sig(value)


def _value(r: BenchResult) -> str:
    if r.value is None:
        return "-"
    if r.unit == "rel_error":
        return f"{r.value:.0e}"
    return term.sig(r.value, r.unit if r.unit != "ratio" else "")


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


_STATUS_STYLE = {"ok": "green", "skipped": "yellow", "failed": "red", "unreliable": "yellow", "WRONG": "red",
                 "throttled": "yellow"}


def _status_word(r: BenchResult) -> tuple[str, str | None]:
    """(word, note) of one result: ok, or what went wrong with the reason in words."""
    if r.status is not Status.OK:
        return str(r.status), r.reason or ""
    if r.correct is False:
        return "WRONG", r.reason or ""
    reasons = sorted({why for t in r.telemetry.values() for why in t.throttle_reasons})
    return ("throttled", term.throttled(reasons)) if reasons else ("ok", None)


def _status(results: list[BenchResult], notes: _Notes) -> Text:
    """The worst status of the results in one row, with its note number."""
    order = ("WRONG", "failed", "unreliable", "skipped", "throttled", "ok")
    words = [_status_word(r) for r in results] or [("ok", None)]
    word, note = min(words, key=lambda w: order.index(w[0]))
    return Text.assemble((word, _STATUS_STYLE[word]), f" {notes.ref(note)}" if note else "")


def _where(r: BenchResult) -> str:
    if r.between:
        return f"{r.between[0]}→{r.between[1]}" if r.metric != "p2p_two_way" else f"{r.between[0]}↔{r.between[1]}"
    return r.module or str(r.detail.get("set", r.detail.get("op", "")))


def report(console: Console, rep: BenchReport) -> None:
    env = rep.environment
    if rep.simulated:
        console.print(Panel(Text.assemble(("SIMULATED", "bold yellow"), f" {rep.benchmark} on {env.node} — figures "
                                          "come from a model, not from hardware"), style="yellow"))
    else:
        extras = ", ".join(f"{k} {v}" for k, v in (("torch", env.torch_version), ("CUDA", env.cuda_version),
                                                    ("driver", env.driver_version)) if v)
        console.print(Text.assemble((rep.benchmark, "bold"), f" on {env.node} ({env.device}; {extras})"))
    notes = _Notes()
    if rep.benchmark == "collective":
        _collective_matrix(console, rep, notes)
    else:
        rest = _module_matrix(console, rep, notes)
        if rest:
            _generic_table(console, rep, rest, notes)
    if rep.benchmark == "copy":
        for metric in ("p2p_one_way", "p2p_two_way"):
            _pair_matrix(console, rep, metric)
    notes.print(console)
    for note in rep.notes:
        console.print(Text(note, style="dim"))


def _column_of(r: BenchResult) -> str:
    """The matrix column of a per-module figure: the dtype for gemm, else the metric (and dtype)."""
    if r.benchmark == "gemm":
        return r.dtype or r.metric
    return r.metric + (f" {r.dtype}" if r.dtype and r.benchmark != "model" else "")


def _module_matrix(console: Console, rep: BenchReport, notes: _Notes) -> list[BenchResult]:
    """Per-module figures as a module × (dtype or metric) matrix; returns the results left over.
    gemm's bit checks fold into each module's status instead of a row each."""
    per_module = [r for r in rep.results if r.module and not r.between and r.metric != "check"]
    checks = [r for r in rep.results if r.metric == "check"]
    rest = [r for r in rep.results if r not in per_module and r not in checks
            and r.metric not in ("p2p_one_way", "p2p_two_way")]
    if not per_module:
        return rest + checks
    units = {r.unit for r in per_module}
    cols = list(dict.fromkeys(_column_of(r) for r in per_module))
    modules = list(dict.fromkeys(r.module or "" for r in per_module))
    cells = {(r.module, _column_of(r)): r for r in per_module}
    unit = next(iter(units)) if len(units) == 1 else ""
    t = term.table(f"{rep.benchmark}" + (f" ({unit})" if unit else "") + (" SIMULATED" if rep.simulated else ""))
    term.column(t, "module", key=True)
    for c in cols:
        term.column(t, c, right=True)
    term.column(t, "status", key=True)
    for m in modules:
        row = [cells.get((m, c)) for c in cols]
        shown = [("-" if r is None else (_fmt(r.value) if unit else _value(r))) for r in row]
        mine = [r for r in row if r is not None] + [r for r in checks if r.module == m]
        t.add_row(Text(m), *shown, _status(mine, notes))
    peaks = [next((r.pct_of_peak for r in per_module if _column_of(r) == c and r.pct_of_peak is not None), None)
             for c in cols]
    if any(p is not None for p in peaks):
        t.add_section()
        medians = []
        for c in cols:
            pct = sorted(r.pct_of_peak for r in per_module if _column_of(r) == c and r.pct_of_peak is not None)
            medians.append(f"{term.sig(pct[len(pct) // 2])} %" if pct else "-")
        t.add_row(Text("% of peak", style="dim"), *medians, Text("median", style="dim"))
    console.print(t)
    return rest


def _generic_table(console: Console, rep: BenchReport, rows: list[BenchResult], notes: _Notes) -> None:
    t = term.table(f"{rep.benchmark}" + (" SIMULATED" if rep.simulated else ""))
    for col in ("figure", "where", "value", "% peak", "CV %", "status"):
        term.column(t, col, right=col in ("value", "% peak", "CV %"), key=col in ("where", "status"))
    for r in rows:
        what = r.metric + (f" {r.dtype}" if r.dtype else "")
        t.add_row(Text(what), Text(_where(r)), _value(r), _fmt(r.pct_of_peak),
                  _fmt(100 * r.cv) if r.cv is not None else "", _status([r], notes))
    console.print(t)


def _pair_matrix(console: Console, rep: BenchReport, metric: str) -> None:
    cells = {r.between: r for r in rep.results if r.metric == metric and r.between}
    if not cells:
        return
    ids = sorted({m for pair in cells for m in pair}, key=lambda m: (len(m), m))
    both = metric == "p2p_two_way"
    title = f"{metric} GB/s" + (" (both directions summed; each pair shown twice)" if both else " (row → column)")
    t = term.table(title + (" SIMULATED" if rep.simulated else ""))
    term.column(t, "", key=True)
    for m in ids:
        term.column(t, m, right=True)
    for a in ids:
        row: list[str | Text] = []
        for b in ids:
            r = cells.get((a, b)) or (cells.get((b, a)) if both else None)
            row.append("-" if a == b or r is None else (_fmt(r.value) if r.value is not None
                                                          else Text("skip", style="yellow")))
        t.add_row(Text(a), *row)
    console.print(t)
    values = [r.value for r in cells.values() if r.value is not None]
    if values:
        what = f"{len(values)} pairs (each counted once)" if both else f"{len(values)} ordered pairs"
        console.print(Text(f"over {what}: sum {term.sig(sum(values), 'GB/s')}, min {term.sig(min(values))}, "
                           f"max {term.sig(max(values))}"))


def _collective_matrix(console: Console, rep: BenchReport, notes: _Notes) -> None:
    """busbw as a size × op matrix (nccl-tests' sizes down, collectives across), then each op's
    fitted latency and bandwidth and the algorithms it used."""
    bus = [r for r in rep.results if r.metric == "busbw"]
    alg = [r for r in rep.results if r.metric == "algbw"]
    ops = list(dict.fromkeys(str(r.detail.get("op")) for r in bus + alg))
    sizes = sorted({r.size_bytes or 0 for r in bus + alg})
    cell = {(str(r.detail.get("op")), r.size_bytes or 0): r for r in bus}
    t = term.table("collective busbw GB/s (size × op)" + (" SIMULATED" if rep.simulated else ""))
    term.column(t, "size", right=True, key=True)
    split = console.width < 100 and len(ops) > 3  # at 80 columns a long name takes two lines in the header
    for op in ops:
        t.add_column(op.replace("_", "_\n") if split else op, justify="right", overflow="fold")
    term.column(t, "status", key=True)
    for size in sizes:
        row = [cell.get((op, size)) for op in ops]
        failed = [r for r in alg if (r.size_bytes or 0) == size and r.status is not Status.OK]
        t.add_row(term.size(size), *["-" if r is None or r.value is None else _fmt(r.value) for r in row],
                  _status([r for r in row if r is not None] + failed, notes))
    console.print(t)
    fits = {(str(r.detail.get("op")), r.metric): r for r in rep.results
            if r.metric in ("latency", "bandwidth") and r.status is Status.OK}
    for op in ops:
        used = list(dict.fromkeys(str(r.detail.get("algorithm") or "-") for r in alg if r.detail.get("op") == op))
        lat, bw = fits.get((op, "latency")), fits.get((op, "bandwidth"))
        fit = (f"fitted α {term.sig(lat.value, 'µs')}, β {term.sig(bw.value, 'GB/s')} "
               f"(R² {float(lat.detail.get('r_squared', 0)):.3f})" if lat and bw else "no fit")
        console.print(Text(f"{op}: {fit}; algorithm {', '.join(used)}"))
