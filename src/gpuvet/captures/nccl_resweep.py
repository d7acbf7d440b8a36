"""NET/IB's 'Got async event : client reregistration' repeated (issue 46, R5B). The event is the subnet manager asking
the port's clients to register again (IBA's ClientReregister: a sweep after the SM restarted, failed over or lost
the port). Every process that opened the HCA gets it once per sweep: one line per rank is one sweep, and NCCL goes
on (a note, nccl_warns.BENIGN; fresh_o's healthy 8-rank run shows four). One process getting it again and again is
the SM re-sweeping that fabric over and over, the usual company of a job that stalls or fails across nodes: a lead
(warn, on the host and HCA the line names: doctor/nccl_steps._async_event)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuvet.captures.nccl_log import LogFailure, LogLine
    from gpuvet.captures.text import Line

WORD = "reregistration"  # the literal every line read here holds (nccl_log's cheap test)
TITLE = "The subnet manager keeps re-registering the InfiniBand port NCCL uses (client reregistration, repeated)"
MEANING = (
    "NET/IB received the subnet manager's 'client reregistration' again and again: the SM is re-sweeping the "
    "fabric (restarted, failed over, or a port that keeps dropping out of it); queue pairs and multicast "
    "joins on the port are set up again each time and a collective in flight can stall or fail"
)
FIX = (
    "on the host the line names, sminfo and the subnet manager's log (opensm.log: its sweeps, a restart or a "
    "failover), ibstat for the port's state and its SM lid, and the port's error counters (perfquery); one "
    "reregistration at start is normal, a stream of them is the fabric's to fix"
)
REPEATED = 2  # the event's lines from one process: a second sweep reached it


def repeated(lines: list[Line], log_line: Callable[[Line], LogLine | None]) -> list[LogFailure]:
    """The first reregistration line of each process that logged the event REPEATED times or more (by host and
    pid; ranks each logging one are one sweep), as a runtime failure of it (nccl_steps: NET/IB's async event).
    ``log_line``: nccl_log's reading of one line."""
    from gpuvet.captures.nccl_log import LogFailure

    procs: dict[tuple[str | None, int | None], list[LogLine]] = {}
    for ln in lines:
        at = log_line(ln) if WORD in ln.text else None
        said = at is not None and at.level == "WARN" and "async" in at.message and " event" in at.message  # 2.19+: error
        if at is not None and said and "client " + WORD in at.message:
            procs.setdefault((at.host, at.pid), []).append(at)
    return [LogFailure("runtime", ats[0]) for (_, pid), ats in procs.items() if pid is not None and len(ats) >= REPEATED]
