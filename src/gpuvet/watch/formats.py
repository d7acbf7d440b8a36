"""The telemetry log formats watch replays, in the order a file's first lines are tried: what
each is, how it is recognised and which reader parses it. A new format is one reader module
and one entry here; readers.py opens, bounds and dispatches by this list alone."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gpuvet.watch import read_dmon, read_prom, read_smi, read_table
from gpuvet.watch.recording import Recording

# (lines, node, where, interval_s) -> the recording; raises GpuvetError
LineReader = Callable[[Iterable[str], str, str, float], Recording]


@dataclass(frozen=True)
class TelemetryFormat:
    """One format: ``head`` recognises it from the file's first bytes, ``line`` from one of its
    first lines (line formats are tried together, line by line, so the first header wins);
    ``read`` parses its lines, ``read_body`` (JSON) its whole text, read within the JSON bound."""

    name: str
    what: str
    read: LineReader | None = None
    read_body: Callable[[str, str], Recording] | None = None
    head: Callable[[str], bool] | None = None
    line: Callable[[str], bool] | None = None


def _exposition(lines: Iterable[str], node: str, where: str, interval_s: float) -> Recording:
    return read_prom.read_exposition(lines, where)  # its series name their own node; no spacing


def _table(lines: Iterable[str], node: str, where: str, interval_s: float) -> Recording:
    return read_table.read_table(lines, node, where)  # its own clock line times each block


FORMATS = (
    TelemetryFormat("range-json", "the JSON of Prometheus' /api/v1/query_range",
                    read_body=read_prom.read_range_json, head=read_prom.is_range_json),
    TelemetryFormat("table", "the plain nvidia-smi table printed by nvidia-smi -l", _table, head=read_table.is_table),
    TelemetryFormat("pmon", "an nvidia-smi pmon log", read_dmon.read_pmon, line=read_dmon.is_pmon_header),
    TelemetryFormat("dmon", "an nvidia-smi dmon log", read_dmon.read_dmon, line=read_dmon.is_dmon_header),
    TelemetryFormat("query-csv", "an nvidia-smi --query-gpu CSV log", read_smi.read_query_csv,
                    line=read_smi.is_query_header),
    TelemetryFormat("exposition", "a Prometheus text dump with timestamps", _exposition, head=read_prom.is_exposition),
)
BY_NAME = {f.name: f for f in FORMATS}
HEAD_LINES = 40  # the first non-blank lines a header line is looked for in


def recognise(head: str) -> str | None:
    """The first format in FORMATS that ``head`` (a file's first bytes) is, or None."""
    lines = [text for text in head.splitlines() if text.strip()][:HEAD_LINES]
    i = 0
    while i < len(FORMATS):
        fmt = FORMATS[i]
        if fmt.line is None:
            if fmt.head is not None and fmt.head(head):
                return fmt.name
            i += 1
            continue
        run = list(itertools.takewhile(lambda f: f.line is not None, FORMATS[i:]))
        found = next((f.name for text in lines for f in run if f.line is not None and f.line(text)), None)
        if found is not None:
            return found
        i += len(run)
    return None
