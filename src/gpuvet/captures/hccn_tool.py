"""Issue 46 (ASC): Ascend's ``hccn_tool``, the NPUs' RoCE ports as people paste them: each answer under its command
line (``hccn_tool -i 5 -link -g`` / ``link status: DOWN``, ``-net_health -g`` / ``net health status: Socket failed``,
``-optical -g``'s block, ``-link_stat -g``'s link change records), or a ``for i in {0..7}; do hccn_tool -i $i -link
-g; done`` loop's answers one per NPU in order. The formats and what is a fault are Ascend's own (MindCluster's
fault-diagnosis guide and its npu_info_parser: the net health statuses it flags, an optical module's Los/LoL flags
other than 0x0, a power outside its own thresholds, a link down longer than 30 s).

A port down is judged as ibstat's are: where another NPU's port of the same node is up, the node uses that rail
and the port down is a fault of the port (nic_port_down); where every port read is down, nothing says the node
needs them (a single-node host may have no cable at all). A net health fault on a port that is down is that
port's fault, said once. Each becomes an application error record of kind ``hccn_*`` (capture_errors.KIND_CAUSES)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from gpuvet.captures import hccn_net
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

TOOL = "hccn_tool"
_COMMAND = re.compile(r"hccn_tool\s+-i\s+(?P<id>\d{1,3}|\$\{?\w+\}?)\s+-(?P<opt>\w+)\s+-g\b")
_LOOP = re.compile(r"\bfor\s+\w+\s+in\s+(?:\{(?P<a>\d{1,3})\.\.\d{1,3}\}|\$\(seq\s+(?P<b>\d{1,3})\s+\d{1,3}\))")
_LINK = re.compile(r"^\s*link status:\s*(UP|DOWN)\s*$")
_HEALTH = re.compile(r"^\s*net health status:\s*(\S.{0,40}?)\s*$")
_HEALTHY = ("Success", "Init")  # Init: the detection not configured yet (no detect address): not a fault
_KEY = re.compile(r"^\s*([A-Za-z][\w ]{1,30}?)\s*:\s*(\S.{0,60}?)\s*$")
_MW = re.compile(r"^(-?\d+(?:\.\d+)?)\s*mW$")
_STAT = re.compile(
    r"^\s*\[dev(?:id)? (?P<id>\d{1,3})\]\s*(?:(?P<when>\w{3} \w{3}\s+\d{1,2} \d\d:\d\d:\d\d \d{4})\s+"
    r"LINK (?P<state>UP|DOWN)|link up count\s*:\s*\d+|current time\s*:.*|link change records\s*:)\s*$"
)
_OTHER = re.compile(
    r"^\s*(?:ipaddr|netmask|netdetect address|default gateway|fec mode|packet statistics|"
    r"[a-z][a-z0-9_]{2,40}_num)\s*:"
)  # -ip, -netdetect, -gateway, -fec, -stat answers: read, not judged
DOWN_LONGER_S = 30  # MindCluster's rule: a link down longer than this is a disconnection, not a blip


@dataclass
class _Port:
    """What the file says of one NPU's port: (state, line) of -link, -net_health, the optical block, the records."""

    link: tuple[str, Line] | None = None
    health: tuple[str, Line] | None = None
    optical: dict[str, tuple[str, Line]] = field(default_factory=dict)
    changes: list[tuple[datetime, str, Line]] = field(default_factory=list)


@dataclass
class _Walk:
    ports: dict[str, _Port] = field(default_factory=dict)
    claimed: set[int] = field(default_factory=set)
    npu: str | None = None  # the NPU the last command named ('?' where none: a bare answer)
    option: str | None = None
    loop: int | None = None  # a loop's next NPU: its answers name one each, in order


def parse(lines: list[Line]) -> AppErrorsParse:
    """The NPU ports the answers describe, judged (module docstring); every answer and command line claimed."""
    walk = _Walk()
    for ln in lines:
        _line(walk, ln)
    read, said = hccn_net.read(lines) if walk.claimed else (set(), [])  # -ip, -lldp, -route, -stat: said (R6C)
    out = AppErrorsParse(claimed=walk.claimed | read, notes=said)
    if not walk.ports:
        return out
    out.errors = _links(walk.ports) + _health(walk.ports) + _optical(walk.ports) + _flaps(walk.ports)
    up = sum(1 for p in walk.ports.values() if p.link and p.link[0] == "UP")
    out.notes.append(f"hccn_tool: {len(walk.ports)} NPU port(s) read ({up} link UP)")
    return out


def _line(walk: _Walk, ln: Line) -> None:
    text = ln.text
    if (c := _COMMAND.search(text)) is not None:
        walk.option, walk.claimed = c["opt"], walk.claimed | {ln.no}
        looped = _LOOP.search(text)
        walk.loop = int(looped["a"] or looped["b"]) if looped and not c["id"].isdigit() else None
        walk.npu = c["id"] if c["id"].isdigit() else None
        return
    if (s := _STAT.match(text)) is not None:
        walk.claimed.add(ln.no)
        if s["state"]:
            when = datetime.strptime(" ".join(s["when"].split()), "%a %b %d %H:%M:%S %Y")
            walk.ports.setdefault(s["id"], _Port()).changes.append((when, s["state"], ln))
        return
    said = _LINK.match(text) or _HEALTH.match(text)
    if said is not None:
        port = walk.ports.setdefault(_answering(walk), _Port())
        if said.re is _LINK:
            port.link = (said.group(1), ln)
        else:
            port.health = (said.group(1), ln)
        walk.claimed.add(ln.no)
    elif text.strip() == "optical info:" or walk.option == "optical" and _KEY.match(text):
        if (k := _KEY.match(text)) is not None and walk.npu is not None:
            walk.ports.setdefault(walk.npu, _Port()).optical[k.group(1)] = (k.group(2), ln)
        walk.claimed.add(ln.no)
    elif walk.option is not None and _OTHER.match(text):
        walk.claimed.add(ln.no)


def _answering(walk: _Walk) -> str:
    """The NPU an answer is of: its command's, else the loop's next, else '?' (an answer with no command)."""
    if walk.loop is not None:
        walk.loop += 1
        return str(walk.loop - 1)
    return walk.npu if walk.npu is not None else "?"


def _where(npu: str) -> str:
    return f"NPU {npu} RoCE port" if npu != "?" else "an NPU's RoCE port (which one not in the log)"


def _error(kind: str, npu: str, ln: Line, said: str) -> AppError:
    return AppError(kind, ln.no, ln.text.strip()[:300], _where(npu), TOOL, meaning=said)


def _links(ports: dict[str, _Port]) -> list[AppError]:
    """Ports down: each a fault of its port where another is up (the rail is used), else one lead for all of them."""
    down = {n: p.link[1] for n, p in ports.items() if p.link and p.link[0] == "DOWN"}
    if not down:
        return []
    if any(p.link and p.link[0] == "UP" for p in ports.values()):
        return [
            _error("hccn_link_down", n, ln, "link status: DOWN while other NPUs' ports are UP") for n, ln in down.items()
        ]
    first = next(iter(down.values()))
    npus = ", ".join(down)
    return [
        AppError(
            "hccn_link_down_alone",
            first.no,
            first.text.strip()[:300],
            f"NPU {npus} RoCE port{'s' if len(down) > 1 else ''}",
            TOOL,
            times=len(down),
            meaning=f"link status: DOWN on every port read ({len(down)})",
        )
    ]


def _health(ports: dict[str, _Port]) -> list[AppError]:
    """Net health other than Success or Init on a port whose link is not down (a port down says it already)."""
    return [
        _error("hccn_net_unhealthy", n, p.health[1], f"net health status: {p.health[0]}")
        for n, p in ports.items()
        if p.health and p.health[0] not in _HEALTHY and not (p.link and p.link[0] == "DOWN")
    ]


def _optical(ports: dict[str, _Port]) -> list[AppError]:
    """An optical module present whose Los/LoL flags are set or whose power is outside its own thresholds."""
    out = []
    for n, p in ports.items():
        got = {k: v for k, (v, _) in p.optical.items()}
        if not got or got.get("present", "").strip().lower() == "not present":
            continue
        flags = [f"{k} {v}" for k, v in got.items() if k.endswith("Flag") and v not in ("0x0", "0", "NA")]
        power = [f"{k} {v}" for k, v in got.items() if _outside(k, v, got)]
        if flags or power:
            ln = p.optical.get(next(iter(flags or power)).rsplit(" ", 1)[0], next(iter(p.optical.values())))[1]
            out.append(_error("hccn_optical_alarm", n, ln, "optical module: " + ", ".join(flags + power)))
    return out


def _outside(key: str, value: str, got: dict[str, str]) -> bool:
    """A lane's Tx/Rx power ('Rx Power2 : 0.0054 mW') below its Low or above its High threshold."""
    lane = re.match(r"(Tx|Rx) Power\d*$", key)
    mw = _MW.match(value)
    low, high = (
        (_MW.match(got.get(f"{lane.group(1)}Power {b} Thres", "")) for b in ("Low", "High")) if lane else (None, None)
    )
    return bool(mw and low and high and not float(low.group(1)) <= float(mw.group(1)) <= float(high.group(1)))


def _flaps(ports: dict[str, _Port]) -> list[AppError]:
    """-link_stat's records: a link down longer than DOWN_LONGER_S before it came back (a disconnection)."""
    out = []
    for n, p in ports.items():
        changes = sorted(p.changes, key=lambda c: c[0])
        long = [
            (a, b)
            for a, b in zip(changes, changes[1:], strict=False)
            if a[1] == "DOWN" and b[1] == "UP" and (b[0] - a[0]).total_seconds() > DOWN_LONGER_S
        ]
        if long:
            (when, _, ln), back = long[0]
            out.append(
                _error(
                    "hccn_link_flap",
                    n,
                    ln,
                    f"link down {len(long)} time(s) longer than {DOWN_LONGER_S} s "
                    f"(first at {when:%Y-%m-%d %H:%M:%S}, back {back[0]:%H:%M:%S})",
                )
            )
    return out
