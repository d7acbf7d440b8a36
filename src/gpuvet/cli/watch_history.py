"""`gpuvet watch --replay FILE…` and `gpuvet watch --prometheus-url URL`: the detectors and the
forecast over telemetry a fleet already has. Parsing and replay live in gpuvet.watch; this
module maps flags to them and renders the result."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuvet.errors import GpuvetError
from gpuvet.watch.backtest import Outcome, check_outcomes
from gpuvet.watch.replay import ReplayConfig, Replayer, ReplayResult

if TYPE_CHECKING:  # the logbook and the terminal load only when a run opens or prints them (--no-log, --json)
    from gpuvet.logbook.store import Logbook
    from gpuvet.watch.events import Event


@dataclass(frozen=True)
class HistoryFlags:
    files: list[Path]
    prometheus_url: str | None
    since_s: float
    match: str
    step_s: float | None
    follow: bool
    interval_s: float
    horizon_s: float
    slowdown_c: float | None
    as_json: bool
    outcomes: tuple[Outcome, ...] | None = None  # --backtest
    fields: tuple[str, ...] = ()  # --fields: the columns of header-less CSV logs


def run(flags: HistoryFlags, book: Logbook | None, stopped: Callable[[], bool]) -> ReplayResult:
    """Read, replay, and (with --follow) keep reading Prometheus until stopped."""
    from gpuvet.watch import readers

    printer = None if flags.as_json else _printer()
    replayer = Replayer(ReplayConfig(flags.horizon_s, flags.slowdown_c, flags.outcomes), book, printer)
    if flags.files:
        rec = readers.read_files(flags.files, flags.interval_s, flags.fields)
        check_outcomes(flags.outcomes or (), rec, flags.horizon_s)  # before the logbook sees a run
        replayer.begin(rec.source, sorted({m.node for m in rec.modules.values()}),
                       {"files": [str(p) for p in flags.files]})
        replayer.feed(rec)
        return replayer.finish()
    from gpuvet.watch import prom_history  # the HTTP client only for a server

    assert flags.prometheus_url is not None
    match = prom_history.check_match(flags.match)
    end = time.time()
    step = flags.step_s or prom_history.choose_step(flags.since_s)
    query = prom_history.HistoryQuery(flags.prometheus_url, end - flags.since_s, end, step, match)
    rec = prom_history.read_history(query)
    check_outcomes(flags.outcomes or (), rec, flags.horizon_s)
    replayer.begin(rec.source, sorted({m.node for m in rec.modules.values()}),
                   {"prometheus_url": flags.prometheus_url, "match": match, "step_s": step})
    replayer.feed(rec)
    while flags.follow and not stopped():
        _sleep(step, stopped)
        last = replayer.last_t or end
        if time.time() - last < step:
            continue
        try:
            rec = prom_history.read_history(prom_history.HistoryQuery(flags.prometheus_url, last + step / 2,
                                                                      time.time(), step, match))
        except GpuvetError as exc:
            if printer is None:
                from gpuvet.cli.literal import literal

                sys.stderr.write(f"{literal(str(exc))}\n")
            continue  # nothing new yet, or the server is restarting: try again next step
        replayer.feed(rec)
    return replayer.finish()


def _sleep(seconds: float, stopped: Callable[[], bool]) -> None:
    until = time.monotonic() + seconds
    while not stopped() and time.monotonic() < until:
        time.sleep(min(0.5, until - time.monotonic()))


def _printer() -> Callable[[Event], None]:
    from gpuvet.cli import term
    from gpuvet.cli.render_history import event_text

    console = term.console()

    def show(e: Event) -> None:
        console.print(event_text(e))

    return show


def render(result: ReplayResult, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), indent=1) + "\n")
        return

    from gpuvet.cli import term
    from gpuvet.cli.render_history import summary

    summary(term.console(), result)
    if result.backtest is not None:
        from gpuvet.cli.render_watch import backtest_report

        backtest_report(term.console(), result.backtest)
