"""Issue 46: Intel Gaudi's ``hl-smi-async`` console telemetry (hl-smi/app/hl-smi-async; docs.habana.ai's
hl_smi_async Tool page): 'Timestamp: 23958 ms, Packet: Temperature, Field: temperature.aip, Data: 47', one line per
field of each telemetry packet, for the one device its ``-D BUS`` option names (a paste of several runs is several
devices, never one). Read as that device's readings (temperature, power draw, AIP utilization) and its fields
said; the packets' codes (health, system status) are documented only in Intel's In-Band Telemetry document, so they
are said as printed, never judged."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.records import ListedModule, ListedParse, StateReading
from gpuvet.captures.text import TEMP_C, Line, reading

TOOL = "hl-smi-async"
MARKERS = ("Packet: ",)
_FIELD = lazy(r"^\s*Timestamp:\s*(\d{1,15})\s*ms,\s*Packet:\s*([\w ]{1,40}?),\s*Field:\s*([\w.]{1,60}),\s*"
              r"Data:\s*(-?\d{1,20}(?:\.\d{1,6})?)\s*$")
_DEVICE = lazy(r"hl-smi-async\b[^\n]{0,200}?\s-D\s+((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
_OWN = lazy(r"^\s*(?:Starting telemetry data collection|Reading all synced telemetry packets)\s*$")
_SAID_MAX = 24  # fields said in its note
_MAX_RUNS = 64


@dataclass
class _Run:
    """One run of the tool: the device its -D named (None: not in the paste) and its fields' last values."""

    bus: str | None
    fields: dict[str, str] = field(default_factory=dict)
    start: int = 0


def _runs(lines: list[Line], out: ListedParse) -> list[_Run]:
    """The runs in the lines: each command line, and each 'Starting telemetry' after readings, starts one."""
    runs: list[_Run] = []
    for ln in lines:
        text = ln.text
        if "hl-smi-async" in text and not text.lstrip().startswith("Timestamp"):
            bus = d.group(1).upper() if "-D" in text and (d := _DEVICE.search(text)) else None
            if runs and not runs[-1].fields:
                runs[-1].bus = bus
            elif len(runs) < _MAX_RUNS:
                runs.append(_Run(bus, start=ln.no))
        elif "Packet:" in text and (m := _FIELD.match(text)) is not None:
            if not runs:
                runs.append(_Run(None, start=ln.no))
            if m.group(3) in runs[-1].fields or len(runs[-1].fields) < _SAID_MAX * 4:
                runs[-1].fields[m.group(3)] = m.group(4)
            out.claimed.add(ln.no)
        elif _OWN.match(text):
            if "Starting" in text and runs and runs[-1].fields and len(runs) < _MAX_RUNS:
                runs.append(_Run(None, start=ln.no))
            out.claimed.add(ln.no)
    return [r for r in runs if r.fields]


def read(lines: list[Line], out: ListedParse) -> None:
    """One module per device a run's -D names, its last run's readings on it; a run whose device is not in the paste
    is one card only where it is the paste's one run (several runs' readings are never pooled, nor guessed onto a
    card), else its readings are said, on no card."""
    runs = _runs(lines, out)
    if not runs:
        return
    out.kinds.append(TOOL)
    latest: dict[str | None, _Run] = {r.bus: r for r in runs if r.bus is not None}
    if len(runs) == 1 and runs[0].bus is None:
        latest = {None: runs[0]}
    for bus, run in latest.items():
        _module(bus, run, out)
    for run in runs:
        if run.bus is None and len(runs) > 1:
            out.notes.append(f"{TOOL}: the run at line {run.start} names no device (its -D bus id not in the paste): "
                             f"its readings ({_said(run)}) are on no card")


def _module(bus: str | None, run: _Run, out: ListedParse) -> None:
    fields, bad = run.fields, list[str]()
    temp = reading(fields["temperature.aip"], TEMP_C, "temperature.aip", bad) if "temperature.aip" in fields else None
    power = next((float(v) for k, v in fields.items() if k.startswith("power.draw") and 0 <= float(v) <= 5000), None)
    busy = float(fields["utilization.aip"]) if 0 <= float(fields.get("utilization.aip", "-1")) <= 100 else None
    state = StateReading(busy_pct=busy, power_w=power) if power is not None or busy is not None else None
    out.modules.append(ListedModule(f"AIP {bus or '(the device -D named)'}", name="Intel Gaudi", bus_id=bus,
                                    temperature_c=temp, tool=TOOL, state=state))
    out.notes += [f"{TOOL}: {b}" for b in bad]
    out.notes.append(f"{TOOL}: telemetry of one Gaudi device ({bus or 'its -D bus id not in the paste'}): "
                     f"{_said(run)} (health and status codes said as printed: their meanings are in Intel's In-Band "
                     "Telemetry document, not judged)")


def _said(run: _Run) -> str:
    return ", ".join(f"{k} {v}" for k, v in list(run.fields.items())[:_SAID_MAX])
