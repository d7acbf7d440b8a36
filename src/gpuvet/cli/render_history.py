"""Rendering a replay of recorded telemetry: events with their recorded times, then what the
forecast could and could not do for each module. Data strings are printed as plain Text."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.console import Console
from rich.text import Text

from gpuvet.cli import term
from gpuvet.watch.events import Event
from gpuvet.watch.forecast_text import fixes_of
from gpuvet.watch.replay import ReplayResult

MAX_ROWS = 40  # a fleet of 512 modules without inlet sensors should not scroll the warnings away
_STYLE = {"info": "cyan", "warn": "yellow", "critical": "bold red"}


def _when(t: float) -> str:
    if t < 1e9:  # relative time (a log without timestamps)
        return f"+{t / 3600:.1f} h"
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M")


def event_text(e: Event) -> Text:
    line = Text()
    line.append(f"{_when(e.time)} {e.severity.value:<8} {e.kind:<20}", style=_STYLE.get(e.severity.value, ""))
    line.append(f" {e.module or ''} {e.message}")
    if e.predicted_crossing is not None:
        line.append(f" → crossing {_when(e.predicted_crossing)}")
    reference = e.evidence.get("reference")
    if reference:
        line.append(f" [reference: {reference}]")
    return line


def summary(console: Console, result: ReplayResult) -> None:
    span = ""
    if result.first_t is not None and result.last_t is not None:
        span = f", {_when(result.first_t)} → {_when(result.last_t)} ({(result.last_t - result.first_t) / 86400:.1f} d)"
    console.print(Text(f"replayed {result.samples:,} samples of {len(result.modules)} modules from {result.source}"
                       f"{span} in {result.wall_s:.1f} s ({result.samples_per_s:,.0f} samples/s)"))
    for note in result.notes:
        console.print(Text(f"note: {note}"))
    from gpuvet.cli.render_watch import roots

    roots(console, result.events)  # a lost module or a downed link first, with what it explains (issue 42)
    warned = [f for f in result.forecast if f.state in ("warned", "withdrawn")]
    insufficient = [f for f in result.forecast if f.state == "insufficient"]
    console.print(Text(f"overheating forecast: {sum(f.state == 'warned' for f in warned)} warned, "
                       f"{sum(f.state == 'withdrawn' for f in warned)} withdrawn, "
                       f"{sum(f.state == 'watching' for f in result.forecast)} watched without a crossing in sight, "
                       f"{len(insufficient)} without enough data{fixes_of(insufficient)}"))
    if warned or insufficient:
        table = term.table("forecast by module")
        rows = warned + insufficient
        shared = len({f.reason for f in rows}) == 1 and len(rows) > 1  # said once, above the table
        for col in ("module", "forecast") + (() if shared else ("why",)) + ("reference", "hours"):
            term.column(table, col, key=col == "module", right=col == "hours")
        for f in rows[:MAX_ROWS]:
            why = () if shared else (Text(f.reason),)
            table.add_row(Text(f.module), Text(f.state), *why, Text(f.reference), str(f.hours))
        if shared:
            console.print(Text(f"every module below: {rows[0].reason}"))
        console.print(table)
        if len(rows) > MAX_ROWS:
            console.print(Text(f"… and {len(rows) - MAX_ROWS} more modules (all of them in --json's forecast list)"))
    if result.run_id:
        console.print(Text(f"logbook run {result.run_id}: gpuvet events --kind overheat_forecast"))
