"""Issue 46: Intel Gaudi's ``hl-smi-async`` console telemetry (hl-smi/app/hl-smi-async; docs.habana.ai's
hl_smi_async Tool page): 'Timestamp: 23958 ms, Packet: Temperature, Field: temperature.aip, Data: 47', one line per
field of each telemetry packet, for the one device its ``-D BUS`` option names. Read as that device's readings
(temperature, power draw, AIP utilization) and its fields said; the packets' codes (health, system status) are
documented only in Intel's In-Band Telemetry document, so they are said as printed, never judged."""

from __future__ import annotations

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


def read(lines: list[Line], out: ListedParse) -> None:
    """The device's last value of each field, its readings kept and its fields said."""
    fields: dict[str, str] = {}
    for ln in lines:
        if "Packet:" in ln.text and (m := _FIELD.match(ln.text)) is not None:
            fields[m.group(3)] = m.group(4)
            out.claimed.add(ln.no)
        elif _OWN.match(ln.text):
            out.claimed.add(ln.no)
    if not fields:
        return
    bus = next((d.group(1).upper() for ln in lines if "-D" in ln.text and (d := _DEVICE.search(ln.text))), None)
    bad: list[str] = []
    temp = reading(fields["temperature.aip"], TEMP_C, "temperature.aip", bad) if "temperature.aip" in fields else None
    power = next((float(v) for k, v in fields.items() if k.startswith("power.draw") and 0 <= float(v) <= 5000), None)
    busy = float(fields["utilization.aip"]) if 0 <= float(fields.get("utilization.aip", "-1")) <= 100 else None
    state = StateReading(busy_pct=busy, power_w=power) if power is not None or busy is not None else None
    out.modules.append(ListedModule(f"AIP {bus or '(the device -D named)'}", name="Intel Gaudi", bus_id=bus,
                                    temperature_c=temp, tool=TOOL, state=state))
    out.kinds.append(TOOL)
    said = ", ".join(f"{k} {v}" for k, v in list(fields.items())[:_SAID_MAX])
    out.notes += [f"{TOOL}: {b}" for b in bad]
    out.notes.append(f"{TOOL}: telemetry of one Gaudi device ({bus or 'its -D bus id not in the paste'}): {said} "
                     "(health and status codes said as printed: their meanings are in Intel's In-Band Telemetry "
                     "document, not judged)")
