"""The plain ``nvidia-smi`` table, as people leave it running (``nvidia-smi -l 60 > gpu.log``):
each table starts with the time it was printed, then two rows a module — index, name and bus id;
temperature, power draw and cap, memory and utilisation. Fan, performance state and the process
list are not telemetry the forecast uses and are skipped."""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable

from gpuvet.backends.readings import Sample
from gpuvet.errors import GpuvetError
from gpuvet.watch import bounds
from gpuvet.watch.recording import MAX_SAMPLES, Recording

# "Thu Oct  9 23:47:45 2025", the line nvidia-smi prints above each table
_STAMP = re.compile(r"^\s*(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{2}):(\d{2}):(\d{2})\s+"
                    r"(\d{4})\s*$")
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                                       "Dec"), 1)}
# "|   0  NVIDIA GeForce RTX 5080 ...  WDDM  |   00000000:01:00.0  On |   N/A |"
_IDENT = re.compile(r"^\|\s+(\d{1,4})\s+(.+?)\s+(?:On|Off|WDDM|TCC)?\s*\|\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:"
                    r"[0-9A-Fa-f]{2}\.[0-7])\s")
# "| N/A   59C    P0            172W /  175W |   14502MiB /  16303MiB |     89%      Default |"
_STATE = re.compile(r"^\|\s*(?:\d{1,3}%|N/A|ERR!)\s+(\d{1,3}|N/A)C?\s+P\d{1,2}\s+(?:\S+\s+)?"
                    r"(\d{1,6}(?:\.\d{1,3})?|N/A)W?\s*/\s*(?:[\d.]{1,9}|N/A)W?\s*\|\s*(\d{1,9})MiB\s*/\s*(\d{1,9})MiB\s*\|\s*(\d{1,3}|N/A)%?")
_HEAD_WORDS = ("NVIDIA-SMI", "Driver Version")


def is_table(head: str) -> bool:
    """A plain nvidia-smi table: its banner and the two-row module header."""
    return all(w in head for w in _HEAD_WORDS) and "Pwr:Usage/Cap" in head and "Memory-Usage" in head


def _stamp(match: re.Match[str]) -> float | None:
    month, day, hh, mm, ss, year = match.groups()
    try:
        return float(calendar.timegm((int(year), _MONTHS[month], int(day), int(hh), int(mm), int(ss), 0, 0, 0)))
    except (KeyError, ValueError, OverflowError):
        return None


def _value(text: str) -> float | None:
    return None if text == "N/A" else float(text)


def read_table(lines: Iterable[str], node: str, where: str) -> Recording:
    """Raises GpuvetError when no table in the log carries a time and a module row.
    Times are the printout's local clock read as UTC: spacing and order are what the detectors
    and the forecast use."""
    rec = Recording("nvidia-smi table")
    dropped = bounds.Dropped(where)
    t: float | None = None
    pending: tuple[str, str, str] | None = None  # index, name, bus id of the row above
    for number, line in enumerate(lines, 1):
        if stamp := _STAMP.match(line):
            t = _stamp(stamp)
            if t is not None:
                t = bounds.check_time(t, f"{where}:{number}")
            continue
        if ident := _IDENT.match(line):
            pending = (ident.group(1), ident.group(2).removesuffix("...").strip(), ident.group(3))
            continue
        state = _STATE.match(line)
        if state is None or pending is None or t is None:
            continue
        index, name, bus = pending
        pending = None
        meta = rec.module(node, index, model=name, bus_id=bus.upper()[-12:])
        if len(rec.modules) > bounds.MAX_MODULES:
            raise bounds.too_many(len(rec.modules), bounds.MAX_MODULES, "modules in one file", where,
                                  "check the log: one node has a few modules.")
        temp, power, used, total, util = state.groups()
        place = f"line {number}"
        temp_c = dropped.check(_value(temp), bounds.TEMP_C, "temp_c", place)
        power_w = dropped.check(_value(power), bounds.POWER_W, "power_w", place)
        busy = _value(util)
        used_b, free_b = int(used) * 2**20, max(int(total) - int(used), 0) * 2**20
        rec.samples.append(Sample(t, meta.name, meta.uuid, temp_c, power_w, None, None,
                                  busy / 100.0 if busy is not None else None,
                                  fb_used_bytes=used_b, fb_free_bytes=free_b))
        if len(rec.samples) > MAX_SAMPLES:
            raise GpuvetError(f"more than {MAX_SAMPLES:,} samples", where=where, fix="replay fewer or shorter files.")
    if not rec.samples:
        raise GpuvetError("no table with a time line and a module row in this nvidia-smi log", where=where,
                          fix="log with nvidia-smi -l SECONDS (each table starts with the time it was printed).")
    if note := dropped.note():
        rec.notes.append(note)
    rec.notes.append(f"{where}: the plain nvidia-smi table has no clocks or throttle reasons; its times are the "
                     "printing machine's local clock, read as UTC")
    return rec
