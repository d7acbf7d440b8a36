"""`gpuvet watch` and `gpuvet events`."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from gpuvet.cli import exits
from gpuvet.cli.checks import ints
from gpuvet.cli.common import LogbookOpt, NodeOpt, SimOpt, chosen_node, flag_seconds, open_logbook
from gpuvet.cli.jsonout import write_json
from gpuvet.quantities import check_float, is_loopback, parse_float, parse_host_port, parse_seconds

if TYPE_CHECKING:
    from gpuvet.backends.base import Backend
    from gpuvet.checks.events import Event
    from gpuvet.logbook.store import Logbook
    from gpuvet.watch.loop import WatchConfig
    from gpuvet.watch.prometheus import ExportState, _MetricsServer

INTERVAL_S = (0.01, 3600.0)  # 10 ms: below it the sampling itself is the load; 1 h: above it nothing is watched
DURATION_S = (0.01, 10 * 365 * 86400.0)
HORIZON_S = (60.0, 365 * 86400.0)  # forecasts further than a year out are not forecasts
RETENTION_S = (60.0, 10 * 365 * 86400.0)
SINCE_S = (60.0, 10 * 365 * 86400.0)  # --prometheus-url: less than a minute holds no window
STEP_S = (1.0, 86400.0)  # the query step: no exporter samples faster than 1 s; a day holds one point per window


def watch(
    node_ref: NodeOpt = None,
    sim: SimOpt = None,
    interval: Annotated[str, typer.Option("--interval", help="Fast sampling interval (temperature, power, clocks, "
                                          "utilisation, throttle).")] = "1s",
    slow_every: Annotated[str, typer.Option("--slow-every", help="Slow fields (ECC, PCIe, NVLink) interval.")] = "30s",
    duration: Annotated[str | None, typer.Option("--duration", help="Stop after this long (simulated time on a "
                                                 "simulated node), e.g. 10m, 200h. Default: until Ctrl-C.")] = None,
    speedup: Annotated[str, typer.Option("--speedup", help="Simulated seconds per wall second, or 'max' to run as "
                                         "fast as possible (simulated nodes only).")] = "1",
    horizon: Annotated[str, typer.Option("--horizon", help="Overheating forecast horizon.")] = "72h",
    retention: Annotated[str, typer.Option("--retention", help="Keep raw samples this long (one-minute roll-ups "
                                           "stay).")] = "8d",
    prometheus: Annotated[str | None, typer.Option("--prometheus", help="Serve Prometheus metrics at HOST:PORT "
                                                   "(e.g. 127.0.0.1:9400; loopback unless you name another address).")
                          ] = None,
    names: Annotated[str, typer.Option("--names", help="Prometheus metric names: gpuvet (its own), dcgm "
                                       "(dcgm-exporter's names, units and labels, for its dashboards), both, or amd "
                                       "(AMD Device Metrics Exporter's names, for its dashboards).")
                     ] = "gpuvet",
    no_admission: Annotated[bool, typer.Option("--no-admission", help="Do not benchmark modules that appear.")] = False,
    logbook: LogbookOpt = None,
    no_log: Annotated[bool, typer.Option("--no-log", help="Keep nothing in the logbook.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="No live table; print the run (events included) as JSON at "
                                          "the end.")] = False,
    replay: Annotated[bool, typer.Option("--replay", help="Replay the telemetry FILES (nvidia-smi --query-gpu CSV, "
                                         "dmon/pmon logs, Prometheus text dumps or query_range JSON) through the "
                                         "detectors and the forecast, as fast as possible, with the recorded times.")
                      ] = False,
    files: Annotated[list[Path] | None, typer.Argument(help="Telemetry files for --replay (one node per nvidia-smi "
                                                       "log, named after the file, or after its folder where logs "
                                                       "in different folders share a name).", show_default=False)
                      ] = None,
    prometheus_url: Annotated[str | None, typer.Option("--prometheus-url", help="Read dcgm-exporter (or gpuvet) "
                                                       "history from this Prometheus server, e.g. http://prom:9090.")
                              ] = None,
    since: Annotated[str, typer.Option("--since", help="With --prometheus-url: how far back to read.")] = "30d",
    match: Annotated[str, typer.Option("--match", help="With --prometheus-url: a label selector, e.g. "
                                       "'{Hostname=~\"rack3.*\"}'.")] = "",
    step: Annotated[str | None, typer.Option("--step", help="With --prometheus-url: the query step (default: from "
                                             "the span, at most 10,000 points per series).")] = None,
    follow: Annotated[bool, typer.Option("--follow", help="With --prometheus-url: after the history, keep reading "
                                         "new samples every step until Ctrl-C.")] = False,
    slowdown: Annotated[float | None, typer.Option("--slowdown-c", help="Replay: slowdown temperature for modules "
                                                   "whose model neither the catalog nor the data knows.")] = None,
    backtest: Annotated[Path | None, typer.Option("--backtest", help="With --replay or --prometheus-url: score the "
                                                  "forecast against EVENTS.csv (module,time,kind: throttled, "
                                                  "repasted, replaced) and sweep its thresholds.",
                                                  metavar="EVENTS.csv")] = None,
    fields: Annotated[str | None, typer.Option("--fields", help="With --replay: the --query-gpu list of logs "
                                               "written with --format=csv,noheader (they have no header to name "
                                               "their columns), comma-separated, e.g. timestamp, index, "
                                               "temperature.gpu, power.draw.")
                      ] = None,
) -> None:
    """Watch the modules: a live table, events as they happen (throttling, clock flapping, link
    downgrades, ECC, Xid, modules lost or added, overheating forecasts), everything kept in the
    logbook, optionally served to Prometheus.

    Exit 1 if a critical event happened (module lost, uncorrectable ECC, fatal Xid).
    """
    sim = chosen_node(node_ref, sim)
    if replay or files or prometheus_url:
        _history(replay, files or [], prometheus_url, since, match, step, follow, interval, horizon, slowdown, no_log,
                 logbook, as_json, backtest, fields)
        return
    if backtest is not None:
        from gpuvet.errors import GpuvetError

        raise GpuvetError("--backtest scores the forecast over recorded telemetry", where="--backtest",
                          fix="add --replay FILE… or --prometheus-url URL --since 90d.")
    config = _config(sim, interval, slow_every, duration, speedup, horizon, retention, no_admission)
    events = _live(sim, config, prometheus, names, None if no_log else logbook, not no_log, as_json)
    if any(e.severity.value == "critical" for e in events):
        raise typer.Exit(1)


def _config(sim: str | None, interval: str, slow_every: str, duration: str | None, speedup: str, horizon: str,
            retention: str, no_admission: bool) -> WatchConfig:
    """The flags of a live watch, checked, as its configuration."""
    from gpuvet.errors import GpuvetError
    from gpuvet.watch.loop import WatchConfig

    if speedup != "max" and not sim and speedup not in ("1", "1.0"):
        raise GpuvetError("--speedup applies to simulated nodes only", where="--speedup",
                          fix="drop it, or add --node PRESET.")
    speed = None if speedup == "max" else parse_float(speedup, "--speedup", 1, 1e9)  # below 1: a 1 h watch takes days
    config = WatchConfig(interval_s=parse_seconds(interval, "--interval", *INTERVAL_S),
                         slow_every_s=parse_seconds(slow_every, "--slow-every", *INTERVAL_S[:1], 86400.0),
                         duration_s=None if duration is None else parse_seconds(duration, "--duration", *DURATION_S),
                         speedup=speed, horizon_s=parse_seconds(horizon, "--horizon", *HORIZON_S),
                         keep_raw_s=parse_seconds(retention, "--retention", *RETENTION_S), admission=not no_admission)
    return config


def _live(sim: str | None, config: WatchConfig, prometheus: str | None, names: str, logbook: str | None,
          keep: bool, as_json: bool) -> list[Event]:
    """Watch the node until the duration ends or a signal stops it; prints the run; returns its events.
    ``keep``: whether to keep the run in the logbook (``logbook``; None: the default one)."""
    from gpuvet.backends.select import open_backend
    from gpuvet.cli import render_watch
    from gpuvet.errors import GpuvetError
    from gpuvet.watch.loop import Watcher

    address = parse_host_port(prometheus, "--prometheus") if prometheus else None
    if address and not is_loopback(address[0]):
        sys.stderr.write(f"gpuvet: warning: --prometheus {prometheus} serves host names, module UUIDs and events "
                         "to every machine that can reach this address, not only this one; use 127.0.0.1 unless "
                         "a firewall or the scraper's network is private\n")
    if names not in ("gpuvet", "dcgm", "both", "amd"):  # before anything is opened: bad input leaves no trace
        raise GpuvetError(f"--names {names!r} is not gpuvet, dcgm or both (nor amd)", where="--names",
                          fix="use dcgm for dashboards built on dcgm-exporter, both for those and gpuvet's own, amd "
                              "for those built on AMD's device-metrics-exporter.")
    backend = open_backend(sim=sim)
    _refuse_no_module(backend)
    book: Logbook | None = open_logbook(logbook) if keep else None
    export = None
    if prometheus:  # the endpoint's module (prometheus_client, http.server) only when it is served (issue 43)
        from gpuvet.watch.prometheus import ExportState

        export = ExportState(names=names, hostname=backend.node().name)
    server = _serve(export, prometheus) if prometheus and export is not None else None
    watcher = Watcher(backend, config, book, export=export)

    def stop(signum: int, frame: FrameType | None) -> None:
        watcher.stop_requested = True

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        result = watcher.run() if as_json else render_watch.live(watcher, prometheus)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if server is not None:
            server.shutdown()
        backend.close()
        if book:
            book.close()
    if as_json:
        write_json(result.to_json(), indent=1)
    return result.events


def _refuse_no_module(backend: Backend) -> None:
    """Exit 2 before anything is sampled or kept when the node shows no module: a watch of the
    host alone measures nothing a GPU check needs, and an empty run in the logbook reads as a
    quiet one (validate and health say so the same way)."""
    from gpuvet.errors import GpuvetError

    if backend.why_no_modules is None:
        return
    backend.close()
    raise GpuvetError(f"nothing could be measured: no GPU module to watch ({backend.why_no_modules})",
                      fix="run it on a node with its driver loaded (nvidia-smi or amd-smi lists the modules), or "
                          "watch a simulated node: gpuvet watch --node hgx-h200-8")


def _serve(export: ExportState, prometheus: str) -> _MetricsServer:
    from gpuvet.errors import GpuvetError
    from gpuvet.watch.prometheus import serve

    try:
        server, _ = serve(export, prometheus)
    except (OSError, ValueError) as exc:
        raise GpuvetError(f"cannot serve Prometheus metrics at {prometheus}: {exc}", where="--prometheus",
                          fix="pick a free HOST:PORT, e.g. 127.0.0.1:9400.") from None
    return server


def _history(replay: bool, files: list[Path], url: str | None, since: str, match: str, step: str | None,
             follow: bool, interval: str, horizon: str, slowdown: float | None, no_log: bool, logbook: str | None,
             as_json: bool, backtest: Path | None = None, fields: str | None = None) -> None:
    """--replay FILE… or --prometheus-url: recorded telemetry instead of live sampling."""
    from gpuvet.cli import watch_history
    from gpuvet.errors import GpuvetError
    from gpuvet.watch import readers

    if files and not replay:
        raise GpuvetError(f"{files[0]}: files are read only with --replay", where="watch",
                          fix="write gpuvet watch --replay FILE…")
    if replay and not files:
        raise GpuvetError("--replay needs one or more telemetry files", where="--replay",
                          fix="e.g. gpuvet watch --replay node1.csv node2.csv")
    if replay and url:
        raise GpuvetError("--replay and --prometheus-url are two sources; give one", where="--prometheus-url",
                          fix="replay the files, or read the server, in two runs.")
    if follow and not url:
        raise GpuvetError("--follow applies to --prometheus-url", where="--follow", fix="drop it.")
    if backtest is not None and follow:
        raise GpuvetError("--backtest scores a history that ends; --follow never ends", where="--backtest",
                          fix="drop --follow.")
    if fields is not None and not replay:
        raise GpuvetError("--fields names the columns of replayed CSV logs", where="--fields", fix="add --replay FILE….")
    columns = () if fields is None else readers.query_fields(fields)
    outcomes = None
    if backtest is not None:  # before any reading: a bad events file costs nothing
        from gpuvet.watch.backtest import read_outcomes

        outcomes = tuple(read_outcomes(backtest))
    flags = watch_history.HistoryFlags(  # each in its range: 0 once became the default silently
        files, url, parse_seconds(since, "--since", *SINCE_S), match,
        None if step is None else parse_seconds(step, "--step", *STEP_S), follow,
        parse_seconds(interval, "--interval", *INTERVAL_S), parse_seconds(horizon, "--horizon", *HORIZON_S),
        None if slowdown is None else check_float(slowdown, "--slowdown-c", 1.0, 200.0, unit="°C"), as_json, outcomes,
        columns)
    book = None if no_log else open_logbook(logbook)
    stop = {"now": False}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop["now"] = True

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        result = watch_history.run(flags, book, lambda: stop["now"])
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if book:
            book.close()
    with exits.verdict(1 if any(e.severity.value == "critical" for e in result.events) else 0):
        watch_history.render(result, as_json)


def events(since: Annotated[str | None, typer.Option("--since", help="Only events newer than this (e.g. 2h, 7d; "
                                                     "wall-clock time).")] = None,
           module: Annotated[str | None, typer.Option("--module", help="Only this module (id or UUID).")] = None,
           kind: Annotated[list[str] | None, typer.Option("--kind", help="Only these kinds (repeat).")] = None,
           limit: Annotated[int, typer.Option("--limit", callback=ints(1, 1_000_000), metavar="N",
                                                         help="Show at most N events, the newest.")] = 200,
           logbook: LogbookOpt = None,
           as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False) -> None:
    """What happened: events from watch runs (and validate aborts), oldest first."""
    from datetime import UTC, datetime, timedelta

    since_utc = None
    if since:
        seconds = flag_seconds(since, "--since") or 0.0
        since_utc = (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat(timespec="seconds")
    book = open_logbook(logbook, existing=True)
    try:
        rows = book.module_events(since_utc, module, tuple(kind or ()), limit)
    finally:
        book.close()
    if as_json:
        write_json(rows, indent=1)
        return
    from gpuvet.cli import render_watch, term

    if not rows:  # an empty table reads as a display fault; say what was looked at
        from rich.text import Text

        where = " ".join(x for x in (f"newer than {since}" if since else "", f"of {module}" if module else "",
                                     f"of kind {', '.join(kind)}" if kind else "") if x)
        term.console().print(Text(f"no events{' ' + where if where else ''} in the logbook "
                                  "(watch and validate keep them)"))
        return
    render_watch.events_table(term.console(), rows)


