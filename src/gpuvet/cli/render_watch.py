"""The live watch table and event listings."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from gpuvet.backends.readings import Sample
from gpuvet.checks.events import Event
from gpuvet.cli import term

if TYPE_CHECKING:
    from gpuvet.checks.window import TickBlock
    from gpuvet.logbook.records import ModuleEvent
    from gpuvet.watch.backtest import Backtest
    from gpuvet.watch.forecast_decide import ForecastStatus
    from gpuvet.watch.loop import WatchConfig, Watcher, WatchResult
from gpuvet.node.timeunits import format_duration

_SEVERITY = {"info": "cyan", "warn": "yellow", "critical": "bold red"}


def _f(v: float | int | None, fmt: str = "{:.0f}") -> str:
    return "" if v is None else fmt.format(v)


def module_table(t: float, samples: dict[str, Sample], simulated: bool, lost: Sequence[Event] = ()) -> Table:
    """The live modules, one row each, drawn for 80 columns (clocks as SM/memory MHz in one cell;
    the throttle reasons wrap); modules lost are listed under the table, not as rows."""
    title = f"gpuvet watch — t = {format_duration(t)}" + (" — SIMULATED" if simulated else "")
    table = term.table(title)
    if lost:
        table.caption = Text("lost: " + ", ".join(f"{e.module} ({e.uuid}) at {format_duration(e.time)}"
                                                  for e in lost), style="red")
        table.caption_justify = "left"
    for col in ("module", "°C", "W", "SM/mem MHz", "util %", "PCIe", "NVLink", "ECC corr.", "throttle"):
        term.column(table, col, key=col == "module", right=col not in ("module", "throttle", "PCIe"))
    for s in sorted(samples.values(), key=lambda x: (len(x.module), x.module)):
        pcie = f"gen{s.pcie_gen}x{s.pcie_width}" if s.pcie_gen is not None else ""
        nvl = f"{s.nvlink_up}/{s.nvlink_expected}" if s.nvlink_up is not None else ""
        clocks = f"{_f(s.sm_clock_mhz)}/{_f(s.mem_clock_mhz)}" if s.sm_clock_mhz is not None else ""
        reasons = ", ".join(term.reason_words(r.label) for r in s.reasons)
        table.add_row(Text(s.module), _f(s.temp_c, "{:.1f}"), _f(s.power_w), clocks,
                      _f(None if s.util is None else 100 * s.util), pcie, nvl, _f(s.ecc_corrected, "{}"), Text(reasons))
    return table


def event_line(e: Event) -> Text:
    """One event as plain text in its severity's colour (the message is data: never markup)."""
    color = _SEVERITY.get(e.severity.value, "")
    extra = f" → crossing at {format_duration(e.predicted_crossing)}" if e.predicted_crossing else ""
    return Text.assemble((f"{format_duration(e.time):>8} {e.severity.value:<8} {e.kind:<20}", color),
                         f" {e.module or '':<6} {e.message}{extra}")


def with_slow_fields(s: Sample, previous: Sample | None) -> Sample:
    """The sample to show: between slow ticks the slow fields stay on screen from the last one
    that had them (a copy; the sample itself is left as it came)."""
    if previous is None or s.pcie_gen is not None:
        return s
    return replace(s, **{name: getattr(previous, name) for name in _SLOW_SHOWN if getattr(s, name) is None})


_SLOW_SHOWN = ("ecc_corrected", "pcie_gen", "pcie_width", "nvlink_up", "nvlink_expected")


@dataclass
class LiveTable:
    """What the live view shows: the last sample of each module still there, and the lost ones."""

    simulated: bool
    shown: dict[str, Sample] = field(default_factory=dict)  # uuid -> what its row shows
    lost: list[Event] = field(default_factory=list)
    t: float = 0.0

    def tick(self, t: float, samples: list[Sample]) -> None:
        for s in samples:
            if not any(e.uuid == s.uuid for e in self.lost):
                self.shown[s.uuid] = with_slow_fields(s, self.shown.get(s.uuid))
        self.t = t

    def block(self, block: TickBlock) -> None:
        """A run of ticks sampled at once shows what its ticks one by one would: the last tick's
        readings, the slow fields of its slow ticks (fast ticks read none, so they carry none)."""
        last = len(block.times) - 1
        for i in [i for i, slow in enumerate(block.slow[:last]) if slow] + [last]:
            self.tick(block.times[i], block.samples(i))

    def event(self, e: Event) -> None:
        if e.kind == "module_lost" and e.uuid:
            self.shown.pop(e.uuid, None)
            self.lost.append(e)
        elif e.kind == "module_added" and e.uuid:  # back on the bus under the same UUID: live again
            self.lost = [x for x in self.lost if x.uuid != e.uuid]

    def table(self) -> Table:
        return module_table(self.t, self.shown, self.simulated, self.lost)


def live(watcher: Watcher, prometheus: str | None, by_tick: bool = False) -> WatchResult:
    """The live table over the run, its events as they come, then the summary. The table takes a
    run of ticks sampled at once (``--speedup max`` on a simulated node) as one refresh from its
    last tick (issue 43); ``by_tick``: every tick one by one (tests compare the two)."""
    console = term.console()
    view = LiveTable(watcher.backend.simulated)
    last = 0.0

    def refresh() -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= 0.25:
            last = now
            live_view.update(view.table())

    def on_tick(t: float, samples: list[Sample]) -> None:
        view.tick(t, samples)
        refresh()

    def on_block(block: TickBlock) -> None:
        view.block(block)
        refresh()

    def on_event(e: Event) -> None:
        view.event(e)
        live_view.console.print(event_line(e))

    watcher.on_tick, watcher.on_event = on_tick, on_event
    watcher.on_block = None if by_tick else on_block
    header = f"watching{_until(watcher.config)}; Ctrl-C stops" + (
        f"; Prometheus metrics at http://{prometheus}/metrics" if prometheus else "")
    console.print(Text(header, style="dim"))
    with Live(Group(view.table()), console=console, refresh_per_second=4) as live_view:
        result = watcher.run()
        live_view.update(view.table())
    console.print()
    console.print(Text(f"{result.samples} samples, {len(result.events)} events; sampling cost "
                       f"{result.sampler_seconds_per_module * 1e6:.0f} µs per module" +
                       (f"; run {result.run_id}" if result.run_id else "")))
    roots(console, result.events)
    for note in result.notes:
        console.print(Text(note, style="dim"))
    forecast_states(console, result.forecast)
    return result


def _until(config: WatchConfig, now: float | None = None) -> str:
    """How long the run will take in wall time and when it ends: a 72 h watch must say so before
    the operator walks away from it."""
    if config.duration_s is None:
        return " until stopped"
    if config.speedup is None:
        return f" {format_duration(config.duration_s)} of simulated time, as fast as it goes"
    wall = config.duration_s / config.speedup
    ends = time.strftime("%Y-%m-%d %H:%M %Z", time.localtime((time.time() if now is None else now) + wall))
    return f" for {format_duration(wall)} (until about {ends})"


def roots(console: Console, events: Sequence[Event]) -> None:
    """The lost modules and downed links first, each with how many later events it explains (issue 42)."""
    from gpuvet.watch.events import event_roots

    for r in event_roots(events):
        more = f" — explains {len(r.explains) - 1} event(s)" if len(r.explains) > 1 else ""
        console.print(Text.assemble(("root: ", "bold"), f"{r.event.module} {r.event.kind} at "
                                    f"{format_duration(r.event.time)}: {r.event.message}{more}"))


def forecast_states(console: Console, statuses: Sequence[ForecastStatus]) -> None:
    """One line of counts, then the modules warned or withdrawn with what the forecast rests on."""
    if not statuses:
        return
    from gpuvet.watch.forecast_text import fixes_of

    counts = {s: sum(f.state == s for f in statuses) for s in ("warned", "withdrawn", "watching", "insufficient")}
    console.print(Text("overheating forecast: " + ", ".join(f"{n} {s}" for s, n in counts.items())
                       + fixes_of(statuses)))
    for f in statuses:
        if f.state in ("warned", "withdrawn"):
            console.print(Text(f"  {f.module} {f.state}: R {f.r_now or 0:.4f} °C/W, {f.confidence}; inlet "
                               f"{f.inlet_c or 0:.1f} °C ({f.reference}), at {f.power_w or 0:.0f} W"))


def events_table(console: Console, rows: list[ModuleEvent]) -> None:
    """Kept events, oldest first: the time, severity and place never cut; the message wraps."""
    table = term.table("events")
    for col in ("time (UTC)", "t", "severity", "kind", "module", "message"):
        term.column(table, col, key=col in ("time (UTC)", "severity", "module"))
    for r in rows:
        severity = r.get("severity") or ""
        t = r.get("time")
        when = r["time_utc"].replace("T", " ").removesuffix("+00:00")
        table.add_row(Text(when), format_duration(t) if t is not None else "",
                      Text(severity, style=_SEVERITY.get(severity, "")), Text(r["kind"]), Text(r.get("module") or ""),
                      Text(r["message"]))
    console.print(table)


def _utc(t: float | None, width: int = term.NARROW) -> str:
    from datetime import UTC, datetime

    return "" if t is None else term.minute(datetime.fromtimestamp(t, UTC).isoformat(), width)


def backtest_report(console: Console, bt: Backtest, shown: int = 5) -> None:
    """The forecast against what really happened: each event's verdict and lead, the false-alarm
    rate, and the threshold settings that would have done best (module names are data: Text)."""
    cur = bt.current
    lead = f"median lead {cur.median_lead_h:.0f} h" if cur.median_lead_h is not None else "no lead"
    throttled = sum(v.kind == "throttled" for v in cur.verdicts)
    console.print(Text(f"backtest: {bt.outcomes} events in the file; as run ({cur.settings.label()}):"))
    console.print(Text(f"  warned >= {bt.lead_s / 3600:.0f} h before the first slowdown: {cur.count('warned')} of "
                       f"{throttled} ({lead}); late: {cur.count('late')}; missed: {cur.count('missed')}; "
                       f"warned before maintenance: {cur.count('warned before maintenance')}"))
    console.print(Text(f"  false alarms: {len(cur.false_alarms)} over {cur.module_days:,.0f} module-days "
                       f"({cur.per_1000:.2f} per 1,000); open (under 14 days of data after the warning): "
                       f"{len(cur.open)}"))
    if bt.unknown_modules:
        console.print(Text(f"  not in the telemetry, left out: {', '.join(bt.unknown_modules[:10])}"
                           + (f" and {len(bt.unknown_modules) - 10} more" if len(bt.unknown_modules) > 10 else "")))
    if bt.unscored_modules:
        console.print(Text(f"  in the telemetry without temperature and power readings, left out: "
                           f"{', '.join(bt.unscored_modules[:10])}"
                           + (f" and {len(bt.unscored_modules) - 10} more" if len(bt.unscored_modules) > 10 else "")))
    if cur.verdicts or cur.false_alarms:
        table = term.table("what happened, and what the forecast said")
        for col in ("module", "event", "when (UTC)", "warned (UTC)", "lead h", "verdict"):
            term.column(table, col, key=col in ("event", "when (UTC)", "warned (UTC)"),
                        right=col == "lead h", min_width=len("maintenance") if col == "verdict" else None)
        rows = [(v.module, v.kind, _utc(v.time, console.width), _utc(v.warned_at, console.width),
                 "" if v.lead_h is None else f"{v.lead_h:.0f}", v.result) for v in cur.verdicts]
        rows += [(m, "-", "", _utc(t, console.width), "", "false alarm") for m, t in cur.false_alarms]
        for row in sorted(rows, key=lambda r: r[0]):
            table.add_row(*(Text(c) for c in row))
        console.print(table)
    table = term.table(f"threshold sweep ({len(bt.sweep)} settings, best first)")
    for col in ("alpha", "margin h", "min rise °C", "warned", "late", "missed", "false alarms", "per 1,000",
                "median lead h"):
        term.column(table, col, right=True)
    for s in bt.sweep[:shown]:
        table.add_row(f"{s.settings.alpha:.2f}", f"{s.settings.margin_s / 3600:.0f}", f"{s.settings.min_rise_c:g}",
                      str(s.count("warned")), str(s.count("late")), str(s.count("missed")), str(len(s.false_alarms)),
                      f"{s.per_1000:.2f}", "-" if s.median_lead_h is None else f"{s.median_lead_h:.0f}")
    console.print(table)
    console.print(Text(f"best: {bt.best.settings.label()} ({bt.best.count('warned')} warned in time, "
                       f"{len(bt.best.false_alarms)} false alarms)"))
