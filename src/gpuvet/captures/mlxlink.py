"""``mlxlink``'s port report as people paste it (mstflint/MFT: ``mlxlink -d mlx5_0 [-p 1] [-c]``): its
'Operational Info' block (State : Active, Physical state : LinkUp, Speed : IB-HDR or 100G, Width : 2x)
read into the same NIC port record ibstat gives. The device is the one the command line names
(``-d mlx5_0``; an mst path or a bus id as given), else 'mlxlink device'. InfiniBand speeds are a
lane's (IB-HDR: 50 Gb/s a lane, times the width: HDR100 at 2x); an Ethernet speed is the port's. ``--json``
prints the same block as a JSON object ('"Operational Info" : {', '"State" : "Active",'): its fields are read as the
text form's (MFT's mlxlink JSON output keeps the text form's names), a cut document's whole fields too."""

from __future__ import annotations

import math
import re

from gpuvet.backends.nic_readings import UNKNOWN, Nic, NicPort
from gpuvet.captures.text import Line
from gpuvet.errors import CaptureError

MAX_PORT = 8  # an adapter's ports as mlxlink -p numbers them (ConnectX: 1 or 2; a few more on some cards)
LANES = (1, 2, 4, 8, 12)  # the lane counts an InfiniBand or Ethernet port trains at
MAX_PORT_GBPS = 3200.0  # no port runs faster than 1.6 Tb/s today; twice that is room, not a reading

_COMMAND = re.compile(r"\bmlxlink\b.*?\s-d\s*(\S+)(?:.*?\s-p\s*(\d{1,2}))?")
# a field as the text form prints it ('State : Active') or --json ('"State" : "Active",': a quoted key and value)
_FIELD = re.compile(r'^\s*(?:(State|Physical state|Speed|Width|Recommendation)\s*:\s*(.*?)'
                    r'|"(State|Physical state|Speed|Width|Recommendation)"\s*:\s*"([^"]*)",?)\s*$')
_TITLE = re.compile(r'^\s*(?:Operational Info|"Operational Info"\s*:\s*\{)\s*$')
_IB_LANE = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0, "EDR": 25.0, "HDR": 50.0, "NDR": 100.0,
            "XDR": 200.0}  # Gb/s a lane, by the IBTA's speed names
_ETH = re.compile(r"^(\d+(?:\.\d+)?)G(?:bE)?\b", re.I)
_STATE = {"active": "ACTIVE", "down": "DOWN", "polling": "DOWN", "disable": "DOWN", "init": "INIT", "armed": "ARMED"}


def parse(lines: list[Line], claimed: set[int]) -> dict[str, Nic]:
    """The port of each 'Operational Info' block, under the device its command line named."""
    out: dict[str, Nic] = {}
    device, port = "mlxlink device", 1
    fields: dict[str, str] | None = None
    for ln in lines:
        if "mlxlink" in ln.text and (c := _COMMAND.search(ln.text)) is not None:
            device, port = c.group(1).rsplit("/", 1)[-1], int(c.group(2) or 1)
            if not 1 <= port <= MAX_PORT:
                raise CaptureError(f"mlxlink -p {port}: no adapter has a port {port} (1-{MAX_PORT})",
                                   where=f"line {ln.no}",
                                   fix="give mlxlink's output as it printed it, with its own command line.")
        elif _TITLE.match(ln.text):
            fields = {}
            out.setdefault(device, Nic(device, None, None, ()))
        elif fields is not None and (f := _FIELD.match(ln.text)) is not None:
            key, value = (f.group(1), f.group(2)) if f.group(1) else (f.group(3), f.group(4))
            fields[key.lower()] = value
            if key == "Width":
                out[device] = Nic(device, None, None, (_port(port, fields, ln.no),))
        else:
            continue
        claimed.add(ln.no)
    return {d: n for d, n in out.items() if n.ports}


def _port(port: int, f: dict[str, str], line: int) -> NicPort:
    """The port's record; a width or speed no port has (x99, 'inf' or a thousand Gb/s and more) is refused:
    judged, it would pass or fail the port against a number no link runs at."""
    speed, width = f.get("speed", ""), f.get("width", "")
    lanes = int(w.group(1)) if (w := re.match(r"(\d+)x", width)) else None
    ib = speed.upper().startswith("IB-")
    lane = _IB_LANE.get(speed.upper().removeprefix("IB-")) if ib else None
    eth = _ETH.match(speed) if not ib else None
    rate = lane * lanes if lane and lanes else float(eth.group(1)) if eth else None
    if lanes is not None and lanes not in LANES:
        raise CaptureError(f"mlxlink Width {width[:40]!r}: a port runs on 1, 2, 4, 8 or 12 lanes", where=f"line {line}",
                           fix="give mlxlink's output as it printed it.")
    if rate is not None and not (math.isfinite(rate) and 0 < rate <= MAX_PORT_GBPS):
        raise CaptureError(f"mlxlink Speed {speed[:40]!r} (the block whose Width is on this line): no port runs at "
                           f"{rate:g} Gb/s (at most {MAX_PORT_GBPS:,.0f} Gb/s)", where=f"line {line}",
                           fix="give mlxlink's output as it printed it.")
    state = _STATE.get(f.get("state", "").split()[0].lower(), UNKNOWN) if f.get("state") else UNKNOWN
    phys = f.get("physical state", UNKNOWN).split()[0] if f.get("physical state") else UNKNOWN
    return NicPort(port, state, "LinkUp" if phys.lower() == "linkup" else phys, rate, f"{lanes}X" if lanes else None,
                   "InfiniBand" if ib else "Ethernet" if eth else UNKNOWN)
