"""The live watch table and event listings."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from gpuvet.backends.nvml_monitor import reason_names
from gpuvet.backends.readings import Sample
from gpuvet.checks.events import Event
from gpuvet.node.timeunits import format_duration

_SEVERITY = {"info": "cyan", "warn": "yellow", "critical": "bold red"}


def _f(v: float | int | None, fmt: str = "{:.0f}") -> str:
    return "" if v is None else fmt.format(v)


def module_table(t: float, samples: dict[str, Sample], simulated: bool) -> Table:
    title = f"gpuvet watch — t = {format_duration(t)}" + (" — SIMULATED" if simulated else "")
    table = Table(title=title, title_justify="left")
    for col in ("module", "°C", "W", "SM MHz", "mem MHz", "util %", "throttle", "PCIe", "NVLink", "ECC corr."):
        table.add_column(col, justify="left" if col in ("module", "throttle") else "right", no_wrap=col != "throttle")
    for s in sorted(samples.values(), key=lambda x: (len(x.module), x.module)):
        pcie = f"gen{s.pcie_gen} x{s.pcie_width}" if s.pcie_gen is not None else ""
        nvl = f"{s.nvlink_up}/{s.nvlink_expected}" if s.nvlink_up is not None else ""
        table.add_row(s.module, _f(s.temp_c, "{:.1f}"), _f(s.power_w), _f(s.sm_clock_mhz), _f(s.mem_clock_mhz),
                      _f(None if s.util is None else 100 * s.util), ", ".join(reason_names(s.throttle)), pcie, nvl,
                      _f(s.ecc_corrected, "{}"))
    return table


def event_line(e: Event) -> str:
    color = _SEVERITY.get(e.severity.value, "")
    extra = f" → crossing at {format_duration(e.predicted_crossing)}" if e.predicted_crossing else ""
    head = f"[{color}]{format_duration(e.time):>8} {e.severity.value:<8} {e.kind:<20}[/]"
    return f"{head} {e.module or '':<6} {e.message}{extra}"


def live(watcher: Any, prometheus: str | None) -> Any:
    console = Console()
    latest: dict[str, Sample] = {}
    state = {"t": 0.0, "last": 0.0, "simulated": False}

    def on_tick(t: float, samples: list[Sample]) -> None:
        for s in samples:
            previous = latest.get(s.uuid)
            if previous is not None and s.pcie_gen is None:  # keep the slow fields on screen between slow ticks
                s_slow = previous
                for name in ("ecc_corrected", "pcie_gen", "pcie_width", "nvlink_up", "nvlink_expected"):
                    if getattr(s, name) is None:
                        setattr(s, name, getattr(s_slow, name))
            latest[s.uuid] = s
        state["t"] = t
        now = time.monotonic()
        if now - state["last"] >= 0.25:
            state["last"] = now
            live_view.update(module_table(t, latest, watcher.backend.simulated))

    def on_event(e: Event) -> None:
        live_view.console.print(event_line(e))

    watcher.on_tick, watcher.on_event = on_tick, on_event
    header = "watching; Ctrl-C stops" + (f"; Prometheus metrics at http://{prometheus}/metrics" if prometheus else "")
    console.print(f"[dim]{escape(header)}[/]")
    with Live(Group(module_table(0.0, {}, watcher.backend.simulated)), console=console, refresh_per_second=4) as live_view:
        result = watcher.run()
        live_view.update(module_table(state["t"], latest, watcher.backend.simulated))
    console.print()
    console.print(f"{result.samples} samples, {len(result.events)} events; sampling cost "
                  f"{result.sampler_seconds_per_module * 1e6:.0f} µs per module" +
                  (f"; run {result.run_id}" if result.run_id else ""))
    for note in result.notes:
        console.print(f"[dim]{escape(note)}[/]")
    return result


def events_table(console: Console, rows: list[dict[str, Any]]) -> None:
    table = Table(title="events", title_justify="left")
    for col in ("time (UTC)", "t", "severity", "kind", "module", "message"):
        table.add_column(col)
    for r in rows:
        color = _SEVERITY.get(r.get("severity") or "", "")
        t = r.get("time")
        table.add_row(r["time_utc"], format_duration(t) if t is not None else "", f"[{color}]{r.get('severity') or ''}[/]",
                      r["kind"], r.get("module") or "", r["message"])
    console.print(table)
