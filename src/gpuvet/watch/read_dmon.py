"""nvidia-smi ``dmon`` and ``pmon`` logs (with or without ``-o DT``): whitespace columns under
``# gpu …`` header lines. One file is one node; without Date/Time columns samples are spaced by
the interval the caller gives and the recording says its times are relative."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from gpuvet.backends.readings import Sample
from gpuvet.errors import GpuvetError
from gpuvet.watch import bounds
from gpuvet.watch.recording import MAX_SAMPLES, ModuleMeta, Recording
from gpuvet.watch.smi_cells import Clock, finite, no_index_at_all

DMON_FIELDS = {"pwr": "power_w", "gtemp": "temp_c", "sm": "util", "mclk": "mem_clock_mhz", "pclk": "sm_clock_mhz",
               "pviol": "pviol", "tviol": "tviol"}


def _header_tokens(line: str) -> list[str]:
    return line.lstrip("#").split()


def is_dmon_header(line: str) -> bool:
    tokens = [t.lower() for t in _header_tokens(line)] if line.startswith("#") else []
    return "gpu" in tokens and "pid" not in tokens and bool({"pwr", "gtemp", "sm", "pclk"} & set(tokens))


def is_pmon_header(line: str) -> bool:
    tokens = [t.lower() for t in _header_tokens(line)] if line.startswith("#") else []
    return "gpu" in tokens and "pid" in tokens


def _rows(lines: Iterable[str], where: str, kind: str, notes: list[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, column -> cell) for each data row under the latest header; a last line cut
    short (no line end, fewer cells than the header) is left out with a note in ``notes``."""
    header: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        if line.startswith("#"):
            tokens = [t.lower() for t in _header_tokens(line)]
            if "gpu" in tokens:
                header = tokens
            continue
        if not header:
            raise GpuvetError(f"a data row before any nvidia-smi {kind} header", where=f"{where}:{number}",
                              fix=f"keep the '# gpu …' header lines nvidia-smi {kind} prints.")
        cells = line.split()
        if not raw.endswith("\n") and len(cells) < len(header):
            notes.append(f"{where}:{number}: the last line is cut (no line end, {len(cells)} of its {len(header)} "
                         "cells): left out, not read as a sample")
            continue
        if kind == "pmon" and len(cells) > len(header):  # the command column may hold spaces
            cells = cells[:len(header) - 1] + [" ".join(cells[len(header) - 1:])]
        yield number, dict(zip(header, cells, strict=False))


def _row_time(row: dict[str, str], clock: Clock, place: str) -> float | None:
    if "date" in row and "time" in row:
        t = clock(row["date"] + row["time"])
        return None if t is None else bounds.check_time(t, place)
    return None


def _numbers(row: dict[str, str], fields: Iterable[str], place: str) -> None:
    """Refuses a cell too long to be a reading (a 400-digit 'pwr')."""
    for k in fields:
        cell = row.get(k)
        if cell is not None and len(cell) > bounds.MAX_NUMBER_CHARS:
            bounds.number_text(cell, place)


class _Timing:
    """Whether rows had recorded times; rows with and without in one log are refused (their
    times would be Unix seconds and seconds from the start on one time line)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.first: dict[bool, int] = {}

    def row(self, timed: bool, number: int) -> None:
        self.first.setdefault(timed, number)
        if len(self.first) == 2:
            raise GpuvetError(f"rows with Date/Time (line {self.first[True]}) and rows without (line "
                              f"{self.first[False]}) in one log", where=f"{self.where}:{number}",
                              fix="replay the parts logged with -o DT and without as two files, in two runs.")

    @property
    def timed(self) -> bool:
        return self.first.get(True) is not None


def read_dmon(lines: Iterable[str], node: str, where: str, interval_s: float) -> Recording:
    rec = Recording("nvidia-smi dmon")
    clock, timing, dropped, bad = Clock(), _Timing(where), bounds.Dropped(where), bounds.BadIndex(where, "gpu")
    tick, seen = 0, set[str]()
    for number, row in _rows(lines, where, "dmon", rec.notes):
        place = f"{where}:{number}"
        gpu = row.get("gpu", "")
        if (shown := bounds.index_text(gpu)) is not None:
            bad.skip(shown, f"line {number}")
            continue
        t = _row_time(row, clock, place)
        timing.row(t is not None, number)
        if t is None:
            if gpu in seen:
                tick, seen = tick + 1, set()
            t = tick * interval_s
        seen.add(gpu)
        meta = _module(rec, node, gpu, where)
        _numbers(row, DMON_FIELDS, place)
        v = {DMON_FIELDS[k]: finite(dropped, c, DMON_FIELDS[k], f"line {number}")
             for k, c in row.items() if k in DMON_FIELDS}
        v["temp_c"] = dropped.check(v.get("temp_c"), bounds.TEMP_C, "temp_c", f"line {number}")
        v["power_w"] = dropped.check(v.get("power_w"), bounds.POWER_W, "power_w", f"line {number}")
        util = v.get("util")
        throttle = (0x4 if (v.get("pviol") or 0) > 0 else 0) | (0x20 if (v.get("tviol") or 0) > 0 else 0)
        rec.samples.append(Sample(t, meta.name, meta.uuid, v.get("temp_c"), v.get("power_w"), v.get("sm_clock_mhz"),
                                  v.get("mem_clock_mhz"), util / 100.0 if util is not None else None, throttle))
    rec.notes.extend(note for note in (dropped.note(), bad.note()) if note)
    no_index_at_all(len(rec.samples), bad, where)
    _finish(rec, where, "dmon", interval_s, timing.timed)
    return rec


def _module(rec: Recording, node: str, gpu: str, where: str) -> ModuleMeta:
    meta = rec.module(node, gpu)
    if len(rec.modules) > bounds.MAX_MODULES:
        raise bounds.too_many(bounds.MAX_MODULES, bounds.MAX_MODULES, "modules in one file", where,
                              "check the gpu column: one node has a few modules.")
    return meta


def read_pmon(lines: Iterable[str], node: str, where: str, interval_s: float) -> Recording:
    """Per-process SM shares summed per module: utilisation only (pmon has no temperature or power)."""
    rec = Recording("nvidia-smi pmon")
    clock, timing, dropped, bad = Clock(), _Timing(where), bounds.Dropped(where), bounds.BadIndex(where, "gpu")
    ticks: dict[tuple[float, str], float] = {}
    tick, seen = 0, set[tuple[str, str]]()
    for number, row in _rows(lines, where, "pmon", rec.notes):
        place = f"{where}:{number}"
        gpu, pid = row.get("gpu", ""), row.get("pid", "-")
        if (shown := bounds.index_text(gpu)) is not None:
            bad.skip(shown, f"line {number}")
            continue
        t = _row_time(row, clock, place)
        timing.row(t is not None, number)
        if t is None:
            if (gpu, pid) in seen:
                tick, seen = tick + 1, set()
            t = tick * interval_s
        seen.add((gpu, pid))
        _numbers(row, ("sm",), place)
        share = max(finite(dropped, row.get("sm", "-"), "util", f"line {number}") or 0.0, 0.0)
        ticks[(t, gpu)] = min(ticks.get((t, gpu), 0.0) + share, 100.0)
    for (t, gpu), share in sorted(ticks.items()):
        meta = _module(rec, node, gpu, where)
        rec.samples.append(Sample(t, meta.name, meta.uuid, None, None, None, None, share / 100.0))
    rec.notes.extend(note for note in (dropped.note(), bad.note()) if note)
    no_index_at_all(len(rec.samples), bad, where)
    rec.notes.append(f"{where}: pmon has utilisation only (no temperature or power): no forecast from it")
    _finish(rec, where, "pmon", interval_s, timing.timed)
    return rec


def _finish(rec: Recording, where: str, kind: str, interval_s: float, timed: bool) -> None:
    if not rec.samples:
        raise GpuvetError(f"no sample rows under the nvidia-smi {kind} header", where=where,
                          fix=f"check the file is an nvidia-smi {kind} log with at least one reading.")
    if len(rec.samples) > MAX_SAMPLES:
        raise GpuvetError(f"more than {MAX_SAMPLES:,} samples", where=where, fix="replay fewer or shorter files.")
    if not timed:
        rec.relative_time = True
        rec.notes.append(f"{where}: no Date/Time columns (log with -o DT); samples spaced {interval_s:g} s apart "
                         "(--interval): its times count from its start, it has no clock")
