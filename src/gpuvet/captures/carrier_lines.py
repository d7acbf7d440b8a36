"""Issue 46 (R11B): an InfiniBand interface's carrier as the host's network daemon logs it. systemd-networkd
(src/network/networkd-link.c: log_link_info 'Gained carrier' / 'Lost carrier'; older releases 'lost carrier') and
NetworkManager ('device (ib0): carrier: link connected' / 'link disconnected') say when an IPoIB netdev (ib0..ib7,
ibp12s0, a child ib0.8001) loses and regains its link, that is its port's. Azure's HPC health checks count these lines
per interface and fail a node whose IB links flap.

Read per interface: FLAPS losses or more are a flapping link (nic_errors, warn: cable, transceiver, switch port);
fewer, with the last line a loss after the link had carrier, a link lost (nic_port_down_undeclared, warn). Only
IPoIB names: the same daemons log every veth and docker bridge a container starts and stops, healthy."""

from __future__ import annotations

import re

from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

MARKS = ("carrier",)
_IB = r"ib[p\d][\w.]{0,14}"
_NETWORKD = re.compile(r"(?:^|[\s\]:])(" + _IB + r"): ([LlGg])(?:ost|ained) carrier\s*$")
_NM = re.compile(r"\bdevice \((" + _IB + r")\): carrier: link (connected|disconnected)\b")
_HEAD = 400


def read(lines: list[Line], marks: Marks | None = None) -> dict[str, list[tuple[Line, bool]]]:
    """Each IPoIB interface's carrier lines in order: (line, up)."""
    seen: dict[str, list[tuple[Line, bool]]] = {}
    for i in holding(lines, MARKS, marks):
        head = lines[i].text[:_HEAD]
        if (m := _NETWORKD.search(head)) is not None:
            seen.setdefault(m.group(1), []).append((lines[i], m.group(2) in "Gg"))
        elif (n := _NM.search(head)) is not None:
            seen.setdefault(n.group(1), []).append((lines[i], n.group(2) == "connected"))
    return seen


def change(seq: list[tuple[Line, bool]], flaps: int) -> tuple[str, Line, int] | None:
    """('flapping' or 'lost', the first line said, the losses), or None: a link lost and regained once or twice, or
    one never up (the daemon logs a port unplugged since boot as no loss)."""
    downs = [ln for ln, up in seq if not up]
    if len(downs) >= flaps:
        return "flapping", downs[0], len(downs)
    if downs and not seq[-1][1] and any(up for _, up in seq):
        return "lost", downs[-1], len(downs)
    return None
