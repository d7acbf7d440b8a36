"""What the logbook hands back: typed records, so that callers read fields, not string keys.

A run's environment, checks and events are the run document's types (logbook/document.py);
the rows around them are typed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from pydantic import JsonValue

from gpuvet.logbook.document import Environment, EventRecord

# (mkey, t, temp_c, power_w, sm_clock_mhz, mem_clock_mhz, util, throttle): one module's sample
SampleRow = tuple[int, float, float | None, float | None, float | None, float | None, float | None, int]

# (bucket start s, temp mean, temp max, power mean, util mean, sm clock min, throttle max)
SeriesRow = tuple[float | None, ...]

RunEvent = EventRecord  # an event of one run, as `log show` prints it (the older name)


@dataclass(frozen=True)
class RunRow:
    """One kept run: its identity, status and environment envelope."""

    run_id: str
    kind: str
    status: str
    verdict: str | None
    started_utc: str
    ended_utc: str | None
    host: str
    simulated: bool
    node: str | None
    envelope: Environment


class ModuleEvent(TypedDict):
    """An event of any run, as `gpuvet events` prints it (``time``: the run's own clock, s)."""

    run_id: str
    time_utc: str
    kind: str
    message: str
    module: str | None
    uuid: str | None
    time: float | None
    severity: str | None
    data: dict[str, JsonValue]
