"""mlx5_core's firmware command failures (R9C, issue 46), as Linux drivers/net/ethernet/mellanox/mlx5/core/cmd.c
prints them (mlx5_cmd_check before 5.17, mlx5_cmd_out_err after; cmd_status_str's words):

    mlx5_core 0000:04:00.0: mlx5_cmd_check:795:(pid 9993): RTR2RTS_QP(0x504) op_mod(0x0) failed, status bad
    parameter(0x3), syndrome (0x4bb88f)
    mlx5_core 0000:08:00.0: mlx5_cmd_out_err:838:(pid 2150): CREATE_MKEY(0x200) op_mod(0x0) failed, status bad
    parameter(0x3), syndrome (0x3f5eb0), err(-22)

The status says whose fault it was. The firmware refusing a command for what it was asked (a bad parameter, a bad
resource or QP state, a bad index, limits exceeded, no resources, a busy resource, a bad operation or length) is the
caller's request, mostly a program's verbs call passed down by the driver (a QP's RTR2RTS with attributes the port
does not take): the card answered, so the line is read and noted, no finding. An internal error or a bad system
state is the card's own: left to the other readers (unread_leads asks to read it), never called benign here."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuvet.captures.text import Line

WORD = "op_mod("  # every line read here holds it (the cheap gate before the pattern)
# '<OPCODE>(0x504) op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x4bb88f)'
_CMD = re.compile(
    r"(?<![\w-])(?P<op>[A-Z0-9][A-Z0-9_]{1,40})\(0x[0-9a-fA-F]{1,4}\) op_mod\(0x[0-9a-fA-F]{1,4}\) failed, "
    r"status (?P<status>[a-zA-Z][\w ()/-]{1,40}?)\((?P<code>0x[0-9a-fA-F]{1,2})\)"
    r"(?:, syndrome \((?P<synd>0x[0-9a-fA-F]{1,8})\))?"
)
# cmd.c's MLX5_CMD_STAT_* the card reports of itself: internal error, bad system state
CARD_STATUSES = frozenset({0x1, 0x4})
_BUS = re.compile(r"\b(?:mlx5_core|mlx5_ib)\s+(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b")


@dataclass(frozen=True)
class Refusal:
    """A command the firmware refused for the caller's request: which, with what status, on which card."""

    line: int
    bus_id: str | None
    command: str  # RTR2RTS_QP
    status: str  # bad parameter(0x3)


def refusal(ln: Line) -> Refusal | None:
    """The caller's refused command on this line; None for other lines and for the card's own statuses."""
    if WORD not in ln.text or (m := _CMD.search(ln.text)) is None or int(m.group("code"), 16) in CARD_STATUSES:
        return None
    bus = b.group("bus").lower() if (b := _BUS.search(ln.text)) is not None else None
    return Refusal(ln.no, bus, m.group("op"), f"{m.group('status').strip()}({m.group('code')})")


def note(found: list[Refusal]) -> str:
    """One note for a card's (or the text's) refused commands: what and how often, and why no finding."""
    by: dict[tuple[str | None, str, str], int] = {}
    for r in found:
        by[(r.bus_id, r.command, r.status)] = by.get((r.bus_id, r.command, r.status), 0) + 1
    said = "; ".join(f"{bus or 'bus id not in the log'}: {cmd} {status} x{n}" for (bus, cmd, status), n in by.items())
    return (
        f"mlx5_core: the firmware refused {len(found)} command(s) for the caller's request ({said}): a program's "
        "or the driver's request the card answered (a verbs call's attributes, a resource's state), not a fault "
        "of the card"
    )
