"""nvidia-smi logs: ``--query-gpu=… --format=csv[,nounits]`` (any column order, units in the
header or not, ``[N/A]`` / ``[Not Supported]`` cells, one header or one per restart, with or
without ``-l`` repetitions and a timestamp column); dmon / pmon are read_dmon.py's. One file is
one node; the node is named after the file.

Times without a zone are read as UTC. Without a time column, samples are spaced by the
interval the caller gives (``-l`` / ``-d``) and the recording says its times are relative."""

from __future__ import annotations

import csv
import operator
import re
from collections.abc import Iterable, Iterator

import numpy as np

from gpuvet.errors import GpuvetError
from gpuvet.watch import bounds
from gpuvet.watch.recording import MAX_SAMPLES, Recording
from gpuvet.watch.smi_cells import BadTimes, Clock, bad_index, no_index_at_all
from gpuvet.watch.smi_rows import ColumnReader, RowReader, has_digit, per_module, row_key

# --query-gpu field (as the header prints it, units stripped) -> our field
QUERY_FIELDS = {
    "timestamp": "time", "index": "index", "name": "model", "gpu_name": "model", "uuid": "uuid", "gpu_uuid": "uuid",
    "pci.bus_id": "bus_id", "gpu_bus_id": "bus_id", "temperature.gpu": "temp_c", "power.draw": "power_w",
    "power.draw.instant": "power_w_instant", "power.draw.average": "power_w_average", "utilization.gpu": "util",
    "clocks.current.sm": "sm_clock_mhz", "clocks.sm": "sm_clock_mhz", "clocks.current.graphics": "gr_clock_mhz",
    "clocks.gr": "gr_clock_mhz", "clocks.current.memory": "mem_clock_mhz", "clocks.mem": "mem_clock_mhz",
    "clocks_event_reasons.active": "throttle", "clocks_throttle_reasons.active": "throttle",
    "clocks_event_reasons": "throttle", "ecc.errors.corrected.volatile.total": "ecc_corrected",
    "ecc.errors.uncorrected.volatile.total": "ecc_uncorrected", "pcie.link.gen.current": "pcie_gen",
    "pcie.link.gen.gpucurrent": "pcie_gen", "pcie.link.gen.max": "pcie_gen_max", "pcie.link.gen.gpumax": "pcie_gen_max",
    "pcie.link.width.current": "pcie_width", "pcie.link.width.max": "pcie_width_max",
}
_UNITS = re.compile(r"\s*\[[^\]]*\]\s*$")


def _canon(cell: str) -> str:
    return _UNITS.sub("", cell.strip()).lower()


def is_query_header(line: str) -> bool:
    cells = [_canon(c) for c in line.split(",")]
    return sum(c in QUERY_FIELDS for c in cells) >= 2 and any(
        QUERY_FIELDS.get(c) in ("temp_c", "power_w", "power_w_instant", "util", "time") for c in cells)


def read_query_csv(lines: Iterable[str], node: str, where: str, interval_s: float) -> Recording:
    """Raises GpuvetError for a file with no header, or one without temperature and power. The
    usual log is read column by column (``_read_columns``); any other row by row."""
    held: list[str] = []
    try:
        held.extend(lines)
    except GpuvetError as exc:  # a line or the file past its bound: raised where the row reader meets it
        return _read_rows(_then_raise(held, exc), node, where, interval_s)
    cut = _cut_last_line(held, where)
    if cut:
        held.pop()
    rec = _read_columns(held, node, where) or _read_rows(held, node, where, interval_s)
    if cut:
        rec.notes.append(cut)
    return rec


_CUT_PEERS = 50  # rows before a last line that its width and last cell are measured against


def _cut_last_line(held: list[str], where: str) -> str | None:
    """The note for a last line that a copy or a crash cut short, which is left out: it has no line
    end and fewer cells than the rows before it, or its last cell is shorter than that column's
    cells above (a UUID or a bus id cut mid-way read as a new board, '4' read as 4 C). None when
    the last line is whole."""
    last = held[-1] if len(held) > 1 else "\n"
    if last.endswith("\n") or not any(ch.isdigit() for ch in last):  # no digit: no sample to leave out
        return None
    before = [line for line in held[-1 - _CUT_PEERS:-1] if line.strip()]
    if not before:
        return None
    rows = [line for line in before if not is_query_header(line)] or before[-1:]
    width, have = max(line.count(",") for line in rows), last.count(",")
    if have < width:
        why = f"{have + 1} of its {width + 1} cells"
    else:
        ends = [line.rsplit(",", 1)[-1].strip() for line in rows if line.count(",") == have]
        cell = last.rsplit(",", 1)[-1].strip()
        if rows == before[-1:] and is_query_header(rows[0]) or len(cell) >= min(map(len, ends)):
            return None
        why = f"its last cell {cell!r} shorter than that column's cells above"
    return (f"{where}:{len(held)}: the last line is cut (no line end, {why}): left out, not read as a "
            "sample")


def _then_raise(held: list[str], exc: GpuvetError) -> Iterator[str]:
    yield from held
    raise exc


def _read_rows(lines: Iterable[str], node: str, where: str, interval_s: float) -> Recording:
    rec = Recording("nvidia-smi --query-gpu csv")
    clock = Clock()
    cols: dict[str, int] = {}
    reader: RowReader | None = None
    tick, seen, rows = 0, set[str](), 0
    dropped, bad, untimed = bounds.Dropped(where), bounds.BadIndex(where), BadTimes(where)
    headers: dict[bool, int] = {}  # timed or not -> its first header's line
    good_index: set[str | None] = set()  # index cells already found to be GPU indices
    for number, row in _csv_rows(lines, where):
        if not row or not row[0].strip():
            continue
        if not row[0][:1].isdigit() and not any(ch.isdigit() for ch in row[0]) and is_query_header(",".join(row)):
            if reader is not None:
                reader.flush()
            cols = _header_columns(row)
            reader = RowReader(cols, node, rec, where, dropped)
            headers.setdefault("time" in cols, number)
            if len(headers) == 2:
                raise GpuvetError(f"a header with a timestamp column (line {headers[True]}) and one without (line "
                                  f"{headers[False]}): samples without times cannot join the recorded time line",
                                  where=f"{where}:{number}", fix="replay the parts logged with and without "
                                                                "timestamp as two files, in two runs.")
            continue
        if reader is None:
            raise GpuvetError("this nvidia-smi CSV has no header line", where=f"{where}:{number}",
                              fix="log with --format=csv (not noheader), e.g. nvidia-smi --query-gpu=timestamp,index,"
                                  "uuid,name,temperature.gpu,power.draw,utilization.gpu,clocks.sm,clocks.mem,"
                                  "clocks_event_reasons.active --format=csv -l 60.")
        index = cols.get("index")
        if index is not None and (cell := row[index] if index < len(row) else None) not in good_index:
            if (shown := bad_index(cell)) is not None:
                bad.skip(shown, f"line {number}")  # 'gpu-1' or 'gpu999…' is no module of this node
                continue
            if len(good_index) < 4096:  # a node's few index cells, checked once each
                good_index.add(cell)
        if reader.time >= 0:
            t = clock(row[reader.time]) if reader.time < len(row) else None
            if t is None:
                untimed.skip(row[reader.time] if reader.time < len(row) else "", number)
                continue
            reader.add(bounds.check_time(t, f"{where}:{number}"), row, 0, number)
        else:
            key = row_key(row, cols, len(seen))
            if key in seen:
                tick, seen = tick + 1, set()
            seen.add(key)
            reader.add(tick * interval_s, row, len(seen) - 1, number)
        rows += 1
        if rows > MAX_SAMPLES:
            raise GpuvetError(f"more than {MAX_SAMPLES:,} samples", where=where, fix="replay fewer or shorter files.")
    if reader is not None:
        reader.flush()
    return _finish_csv(rec, cols, rows, (dropped, bad), where, interval_s, untimed)


def _read_columns(held: list[str], node: str, where: str) -> Recording | None:
    """The usual log (one header with a timestamp column and a module's identity, every row as wide
    as it and its cells spaced as nvidia-smi writes them, every time and index readable) read a
    column at a time, a block of rows after another: the same samples, modules and notes as row by
    row, held as arrays (``Recording.columns``). None where the log is not so; a GpuvetError is
    left to the row reader, which raises it where it meets it."""
    header = next(csv.reader(held[:1], skipinitialspace=True, quoting=csv.QUOTE_NONE), [])
    if not header or not header[0].strip() or has_digit(header[0]) or not is_query_header(",".join(header)):
        return None
    cols = _header_columns(header)
    n = len(held) - 1
    if "time" not in cols or not {"index", "bus_id", "uuid"} & set(cols) or not 0 < n <= MAX_SAMPLES:
        return None
    if not _timed_rows(held[1:]):  # what a block would refuse, found before any is read (a restart's header)
        return None
    rec = Recording("nvidia-smi --query-gpu csv")
    dropped = bounds.Dropped(where)
    reader = ColumnReader(cols, node, rec, where, dropped, len(header))
    parts = []
    try:
        for start in range(0, n, RowReader.BLOCK):  # the row reader's blocks: the same notes in the same order
            lines = held[1 + start:1 + start + RowReader.BLOCK]
            got = reader.plain(lines, start)
            if got is None:
                one = reader.block(lines, start)
                if one is None:
                    return None
                got = [one]
            parts += got
    except GpuvetError:
        return None
    who, times = (np.concatenate([p[i] for p in parts]) for i in (0, 1))
    readings = {name: np.concatenate([p[2][name] for p in parts]) for name in parts[0][2]}
    rec.columns = per_module(reader.names, who, times, readings)
    return _finish_csv(rec, cols, n, (dropped, bounds.BadIndex(where)), where, 60.0)


_FIRST = operator.itemgetter(slice(0, 1))


def _timed_rows(body: list[str]) -> bool:
    """Whether every line's first cell holds a digit (no blank line, no second header): the first
    characters of the lines gathered at once in C, each line looked into only where its first is
    not a digit (a month's log: none)."""
    if all(c.isdigit() for c in set(map(_FIRST, body))):
        return True
    return all(has_digit(line.split(",", 1)[0]) for line in body if not line[:1].isdigit())


def _csv_rows(lines: Iterable[str], where: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each line. nvidia-smi quotes nothing, so a quote is a character of
    its cell (``csv.QUOTE_NONE``): a stray '"' can neither swallow the lines after it into one
    cell (rows lost without a word) nor grow a cell past the line bound (``_csv.Error``)."""
    reader = csv.reader(lines, skipinitialspace=True, quoting=csv.QUOTE_NONE)
    try:
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        raise GpuvetError(f"not CSV the reader can take ({exc})", where=f"{where}:{reader.line_num}",
                          fix="check the file is nvidia-smi's own --query-gpu output, unedited.") from None


def _finish_csv(rec: Recording, cols: dict[str, int], rows: int, skipped: tuple[bounds.Dropped, bounds.BadIndex],
                where: str, interval_s: float, untimed: BadTimes | None = None) -> Recording:
    """The notes a whole log earns: readings dropped, rows skipped, columns missing, no timestamps."""
    rec.notes.extend(note for note in (s.note() for s in (*skipped, untimed) if s) if note)
    no_index_at_all(rows, skipped[1], where)
    if not rows and untimed and untimed.count:
        raise GpuvetError(f"no row has a timestamp that is a date and time: {untimed.count:,} row(s) skipped, first "
                          f"{untimed.first}", where=where,
                          fix="check the timestamp column is nvidia-smi's own (YYYY/MM/DD HH:MM:SS.mmm), unedited.")
    if not rows:
        raise GpuvetError("no sample rows under the nvidia-smi CSV header", where=where,
                          fix="check the file is a --query-gpu log with at least one reading.")
    if not {"temp_c", "power_w", "power_w_instant", "power_w_average"} & set(cols):
        rec.notes.append(f"{where}: no temperature.gpu or power.draw column: the forecast needs both")
    if "time" not in cols:
        rec.relative_time = True
        rec.notes.append(f"{where}: no timestamp column; samples spaced {interval_s:g} s apart (--interval): its "
                         "times count from its start, it has no clock")
    return rec

def _header_columns(row: list[str]) -> dict[str, int]:
    """Our field -> its column, the first column of that name winning."""
    cols: dict[str, int] = {}
    for i, cell in enumerate(row):
        name = QUERY_FIELDS.get(_canon(cell))
        if name and name not in cols:
            cols[name] = i
    return cols
