"""The live watch table and event listings."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gpuvet.backends.readings import Sample
from gpuvet.checks.events import Event

if TYPE_CHECKING:
    from gpuvet.logbook.records import ModuleEvent
    from gpuvet.watch.loop import Watcher, WatchResult
from gpuvet.node.timeunits import format_duration

_SEVERITY = {"info": "cyan", "warn": "yellow", "critical": "bold red"}


def _f(v: float | int | None, fmt: str = "{:.0f}") -> str:
    return "" if v is None else fmt.format(v)


def module_table(t: float, samples: dict[str, Sample], simulated: bool, lost: Sequence[Event] = ()) -> Table:
    """The live modules, one row each; modules lost are listed under the table, not as rows."""
    title = f"gpuvet watch — t = {format_duration(t)}" + (" — SIMULATED" if simulated else "")
    caption = Text("lost: " + ", ".join(f"{e.module} ({e.uuid}) at {format_duration(e.time)}" for e in lost),
                   style="red") if lost else None
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for col in ("module", "°C", "W", "SM MHz", "mem MHz", "util %", "throttle", "PCIe", "NVLink", "ECC corr."):
        table.add_column(col, justify="left" if col in ("module", "throttle") else "right", no_wrap=col != "throttle")
    for s in sorted(samples.values(), key=lambda x: (len(x.module), x.module)):
        pcie = f"gen{s.pcie_gen} x{s.pcie_width}" if s.pcie_gen is not None else ""
        nvl = f"{s.nvlink_up}/{s.nvlink_expected}" if s.nvlink_up is not None else ""
        table.add_row(s.module, _f(s.temp_c, "{:.1f}"), _f(s.power_w), _f(s.sm_clock_mhz), _f(s.mem_clock_mhz),
                      _f(None if s.util is None else 100 * s.util), ", ".join(r.label for r in s.reasons), pcie, nvl,
                      _f(s.ecc_corrected, "{}"))
    return table


def event_line(e: Event) -> str:
    color = _SEVERITY.get(e.severity.value, "")
    extra = f" → crossing at {format_duration(e.predicted_crossing)}" if e.predicted_crossing else ""
    head = f"[{color}]{format_duration(e.time):>8} {e.severity.value:<8} {e.kind:<20}[/]"
    return f"{head} {e.module or '':<6} {e.message}{extra}"


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

    def event(self, e: Event) -> None:
        if e.kind == "module_lost" and e.uuid:
            self.shown.pop(e.uuid, None)
            self.lost.append(e)
        elif e.kind == "module_added" and e.uuid:  # back on the bus under the same UUID: live again
            self.lost = [x for x in self.lost if x.uuid != e.uuid]

    def table(self) -> Table:
        return module_table(self.t, self.shown, self.simulated, self.lost)


def live(watcher: Watcher, prometheus: str | None) -> WatchResult:
    console = Console()
    view = LiveTable(watcher.backend.simulated)
    last = 0.0

    def on_tick(t: float, samples: list[Sample]) -> None:
        nonlocal last
        view.tick(t, samples)
        now = time.monotonic()
        if now - last >= 0.25:
            last = now
            live_view.update(view.table())

    def on_event(e: Event) -> None:
        view.event(e)
        live_view.console.print(event_line(e))

    watcher.on_tick, watcher.on_event = on_tick, on_event
    header = "watching; Ctrl-C stops" + (f"; Prometheus metrics at http://{prometheus}/metrics" if prometheus else "")
    console.print(f"[dim]{escape(header)}[/]")
    with Live(Group(view.table()), console=console, refresh_per_second=4) as live_view:
        result = watcher.run()
        live_view.update(view.table())
    console.print()
    console.print(f"{result.samples} samples, {len(result.events)} events; sampling cost "
                  f"{result.sampler_seconds_per_module * 1e6:.0f} µs per module" +
                  (f"; run {result.run_id}" if result.run_id else ""))
    for note in result.notes:
        console.print(f"[dim]{escape(note)}[/]")
    return result


def events_table(console: Console, rows: list[ModuleEvent]) -> None:
    table = Table(title="events", title_justify="left")
    for col in ("time (UTC)", "t", "severity", "kind", "module", "message"):
        table.add_column(col)
    for r in rows:
        color = _SEVERITY.get(r.get("severity") or "", "")
        t = r.get("time")
        table.add_row(r["time_utc"], format_duration(t) if t is not None else "", f"[{color}]{r.get('severity') or ''}[/]",
                      r["kind"], r.get("module") or "", r["message"])
    console.print(table)
