"""nvidia-smi logs: ``--query-gpu=… --format=csv[,nounits]`` (any column order, units in the
header or not, ``[N/A]`` / ``[Not Supported]`` cells, one header or one per restart, with or
without ``-l`` repetitions and a timestamp column); dmon / pmon are read_dmon.py's. One file is
one node; the node is named after the file.

Times without a zone are read as UTC. Without a time column, samples are spaced by the
interval the caller gives (``-l`` / ``-d``) and the recording says its times are relative."""

from __future__ import annotations

import csv
import itertools
import math
import operator
import re
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import numpy.typing as npt

from gpuvet.backends.readings import Sample
from gpuvet.errors import GpuvetError
from gpuvet.watch import bounds
from gpuvet.watch.columns import COUNTS, Columns
from gpuvet.watch.recording import MAX_SAMPLES, Recording
from gpuvet.watch.smi_cells import UNAVAILABLE, Clock, bad_index, finite, no_index_at_all, parse_cell, stamps

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
    reader: _RowReader | None = None
    tick, seen, rows = 0, set[str](), 0
    dropped, bad = bounds.Dropped(where), bounds.BadIndex(where)
    headers: dict[bool, int] = {}  # timed or not -> its first header's line
    good_index: set[str | None] = set()  # index cells already found to be GPU indices
    for number, row in _csv_rows(lines, where):
        if not row or not row[0].strip():
            continue
        if not row[0][:1].isdigit() and not any(ch.isdigit() for ch in row[0]) and is_query_header(",".join(row)):
            if reader is not None:
                reader.flush()
            cols = _header_columns(row)
            reader = _RowReader(cols, node, rec, where, dropped)
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
                continue
            reader.add(bounds.check_time(t, f"{where}:{number}"), row, 0, number)
        else:
            key = _key(row, cols, len(seen))
            if key in seen:
                tick, seen = tick + 1, set()
            seen.add(key)
            reader.add(tick * interval_s, row, len(seen) - 1, number)
        rows += 1
        if rows > MAX_SAMPLES:
            raise GpuvetError(f"more than {MAX_SAMPLES:,} samples", where=where, fix="replay fewer or shorter files.")
    if reader is not None:
        reader.flush()
    return _finish_csv(rec, cols, rows, (dropped, bad), where, interval_s)


def _read_columns(held: list[str], node: str, where: str) -> Recording | None:
    """The usual log (one header with a timestamp column and a module's identity, every row as wide
    as it and its cells spaced as nvidia-smi writes them, every time and index readable) read a
    column at a time, a block of rows after another: the same samples, modules and notes as row by
    row, held as arrays (``Recording.columns``). None where the log is not so; a GpuvetError is
    left to the row reader, which raises it where it meets it."""
    header = next(csv.reader(held[:1], skipinitialspace=True, quoting=csv.QUOTE_NONE), [])
    if not header or not header[0].strip() or _has_digit(header[0]) or not is_query_header(",".join(header)):
        return None
    cols = _header_columns(header)
    n = len(held) - 1
    if "time" not in cols or not {"index", "bus_id", "uuid"} & set(cols) or not 0 < n <= MAX_SAMPLES:
        return None
    body = held[1:]  # what a block would refuse, found before any block is read (a restart's header)
    if set(map(str.count, body, itertools.repeat(","))) != {len(header) - 1} or \
            not all(_has_digit(line.split(",", 1)[0]) for line in body if not line[:1].isdigit()):
        return None
    rec = Recording("nvidia-smi --query-gpu csv")
    dropped = bounds.Dropped(where)
    reader = _ColumnReader(cols, node, rec, where, dropped, len(header))
    parts = []
    try:
        for start in range(0, n, _RowReader.BLOCK):  # the row reader's blocks: the same notes in the same order
            lines = held[1 + start:1 + start + _RowReader.BLOCK]
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
    rec.columns = _per_module(reader.names, who, times, readings)
    return _finish_csv(rec, cols, n, (dropped, bounds.BadIndex(where)), where, 60.0)


def _has_digit(cell: str) -> bool:
    return cell[:1].isdigit() or any(ch.isdigit() for ch in cell)


def _flat_cells(lines: list[str], k: int) -> list[str] | None:
    """Every cell of ``lines`` (each with ``k`` - 1 commas: the caller checks) in one list, row
    after row, where every cell is split by ', ' alone (what the csv module reads them as); else None."""
    body = "".join(lines)
    if not body.endswith("\n"):
        body += "\n"
    if "\r" in body or "\x00" in body or ",  " in body:
        return None
    flat = body[:-1].replace("\n", ", ").split(", ")  # one cell more than ', ' in the lines, each line end one more
    return flat if len(flat) == k * len(lines) else None  # so: every comma followed by a space


def _times(cells: list[str]) -> npt.NDArray[np.float64] | None:
    """Each row's time (nvidia-smi's own layout at once, any other each distinct stamp once); None
    where one is not a recorded time."""
    at_once = stamps(cells)
    if at_once is not None:
        return at_once if ((at_once >= 0) & (at_once <= bounds.LATEST_T)).all() else None
    clock, seen = Clock(), {}
    for cell in dict.fromkeys(cells):
        t = clock(cell)
        if t is None or not 0 <= t <= bounds.LATEST_T:
            return None  # a row skipped or a time refused: row by row, naming its line
        seen[cell] = t
    return np.array([seen[c] for c in cells], dtype=np.float64)


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
                where: str, interval_s: float) -> Recording:
    """The notes a whole log earns: readings dropped, rows skipped, columns missing, no timestamps."""
    rec.notes.extend(note for note in (s.note() for s in skipped) if note)
    no_index_at_all(rows, skipped[1], where)
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


def _text(row: list[str], cols: dict[str, int], name: str) -> str | None:
    i = cols.get(name)
    if i is None or i >= len(row):
        return None
    text = row[i].strip()
    return None if text.lower() in UNAVAILABLE or text.startswith("[") else text


def _key(row: list[str], cols: dict[str, int], position: int) -> str:
    """The module's key in its node: index, else bus id, else UUID, else its place in the tick."""
    for name in ("index", "bus_id", "uuid"):
        text = _text(row, cols, name)
        if text:
            return text
    return str(position)


_COUNTS = ("throttle", "ecc_corrected", "ecc_uncorrected", "pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max")


class _RowReader:
    """Rows under one header -> samples, converted column by column in blocks: the positions are
    looked up once per header, a module's identity once per distinct key cell, and a column of
    plain numbers is one list comprehension (cell by cell only where one is not)."""

    BLOCK = 20_000

    def __init__(self, cols: dict[str, int], node: str, rec: Recording, where: str, dropped: bounds.Dropped) -> None:
        self.cols, self.node, self.rec, self.where, self.dropped = cols, node, rec, where, dropped
        self.time = cols.get("time", -1)
        self.width = max(cols.values(), default=-1) + 1
        self.key_col = next((cols[k] for k in ("index", "bus_id", "uuid") if k in cols), -1)
        # every identity cell of a row: an index that names another board (its bus id or UUID) is another module
        self.id_cols = [cols[k] for k in ("index", "bus_id", "uuid") if k in cols]
        self.idents: dict[tuple[str, ...], tuple[str, str]] = {}
        # the identity cells as one key (the first twice: itemgetter of one column gives no tuple); unused
        # without identity columns
        self._id_cells: Callable[[list[str]], tuple[str, ...]] = operator.itemgetter(*self.id_cols,
                                                                                      *(self.id_cols[:1] or [0]))
        self.rows: list[list[str]] = []
        self.times: list[float] = []
        self.who: list[tuple[str, str]] = []
        self.numbers: list[int] = []  # each row's line

    def _ident(self, row: list[str], position: int) -> tuple[str, str]:
        cell = row[self.key_col] if 0 <= self.key_col < len(row) else None
        # rows are padded to every named column (``add``): the identity cells are all there
        seen = self._id_cells(row) if cell is not None else None
        ident = self.idents.get(seen) if seen is not None else None
        if ident is None:
            cols = self.cols
            key, uuid = _key(row, cols, position), _text(row, cols, "uuid")
            meta = self.rec.module(self.node, key, uuid, _text(row, cols, "model"), _text(row, cols, "bus_id"))
            if len(self.rec.modules) > bounds.MAX_MODULES:
                raise bounds.too_many(bounds.MAX_MODULES, bounds.MAX_MODULES, "modules in one file", self.where,
                                      "check the index/uuid column: one node has a few modules.")
            ident = (meta.name, meta.uuid)
            # a shortcut only from a row whose key cell named the module and which had its UUID
            if seen is not None and cell is not None and key == cell.strip() and (uuid or "uuid" not in cols):
                self.idents[seen] = ident
        return ident

    def add(self, t: float, row: list[str], position: int, number: int) -> None:
        if len(row) < self.width:
            row = row + [""] * (self.width - len(row))
        self.who.append(self._ident(row, position))
        self.rows.append(row)
        self.times.append(t)
        self.numbers.append(number)
        if len(self.rows) >= self.BLOCK:
            self.flush()

    def _cells(self, i: int) -> list[str]:
        """Column ``i`` of the rows held (``_Columns`` takes them from the file's columns)."""
        return [row[i] for row in self.rows]

    def _column(self, name: str) -> list[float | None]:
        i = self.cols.get(name, -1)
        if i < 0:
            return [None] * len(self.numbers)
        cells = self._cells(i)
        distinct = set(cells)
        if max(map(len, distinct)) > bounds.MAX_NUMBER_CHARS:
            for k, cell in enumerate(cells):
                bounds.number_text(cell.strip().partition(" ")[0], f"{self.where}:{self.numbers[k]}")
        try:
            values = _as_numbers(cells, distinct)
            if values is not None:
                return values
        except ValueError:
            pass
        # nan, inf and 1e400 are no readings: dropped and counted as out-of-range ones are
        return [finite(self.dropped, c, name, f"line {n}") for c, n in zip(cells, self.numbers, strict=True)]

    def _counts(self, name: str) -> list[int | None]:
        if name not in self.cols:
            return [None] * len(self.numbers)
        return [None if v is None else int(v) for v in self._column(name)]

    def flush(self) -> None:
        if not self.rows:
            return
        temp, power, sm, mem, util = self.readings()
        counts = [self._counts(name) for name in _COUNTS]
        self.rec.samples.extend(
            Sample(t, who[0], who[1], tc, pw, sc, mc, None if u is None else u / 100.0, th or 0, ecc_corrected=ec,
                   ecc_uncorrected=eu, pcie_gen=g, pcie_gen_max=gm, pcie_width=w, pcie_width_max=wm)
            for t, who, tc, pw, sc, mc, u, th, ec, eu, g, gm, w, wm in zip(
                self.times, self.who, temp, power, sm, mem, util, *counts, strict=True))
        self.rows, self.times, self.who, self.numbers = [], [], [], []

    def readings(self) -> tuple[list[float | None], ...]:
        """Temperature, power, SM and memory clocks, utilisation (in %) of the rows held, each
        column read as a whole; out-of-range and non-finite readings dropped and counted."""
        temp, util = self._ranged(self._column("temp_c"), bounds.TEMP_C, "temp_c"), self._column("util")
        power = self._column("power_w")
        if any(p is None for p in power):
            instant, average = self._column("power_w_instant"), self._column("power_w_average")
            power = [p if p is not None else (a or b) for p, a, b in zip(power, instant, average, strict=True)]
        power = self._ranged(power, bounds.POWER_W, "power_w")
        sm, gr, mem = self._column("sm_clock_mhz"), self._column("gr_clock_mhz"), self._column("mem_clock_mhz")
        if any(x is None for x in sm):
            sm = [a if a is not None else b for a, b in zip(sm, gr, strict=True)]
        return temp, power, sm, mem, util

    def _ranged(self, values: list[float | None], lo_hi: tuple[float, float], kind: str) -> list[float | None]:
        """``values`` with those outside ``lo_hi`` dropped (and counted)."""
        lo, hi = lo_hi
        if all(v is None or lo <= v <= hi for v in values):
            return values
        return [self.dropped.check(v, lo_hi, kind, f"line {n}") for v, n in zip(values, self.numbers, strict=True)]


def _as_numbers(cells: list[str], distinct: set[str]) -> list[float | None] | None:
    """Each cell as a number ('583.54 W' -> 583.54; hex masks where the first cell is one), each
    distinct cell read once (a log repeats its clocks and whole °C); None where one is nan or
    ±inf (no reading). Raises ValueError for a cell that is no number."""
    hexa = cells[0][:2] == "0x"
    number: dict[str, float | None] = {c: float(int(c, 16)) if hexa else float(c.partition(" ")[0])
                                       for c in distinct}
    if not all(v - v == 0 for v in number.values() if v is not None):
        return None
    return list(map(number.__getitem__, cells))


_Block = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], dict[str, npt.NDArray[np.float64]]]


class _ColumnReader(_RowReader):
    """``_RowReader`` over a block of rows' cells (``flat``, ``k`` a row), the blocks the row reader
    flushes, so the same readings are dropped and noted in the same order."""

    SUB = 5_000

    def __init__(self, cols: dict[str, int], node: str, rec: Recording, where: str, dropped: bounds.Dropped,
                 k: int) -> None:
        super().__init__(cols, node, rec, where, dropped)
        self.flat: list[str] = []
        self.k = k
        self.kept_only = False  # ``plain``: a block with a dropped reading is no block (None)
        self.period: int | None = None  # the block's rows per tick, where every tick names the modules in one order
        self.names: list[tuple[str, str]] = []  # (module, uuid) of each module, in the order first read
        self._code: dict[tuple[str, ...], int] = {}  # identity cells -> module, once read
        self._place: dict[tuple[str, str], int] = {}
        self._of_code: list[int] = []

    def _cells(self, i: int) -> list[str]:
        return self.flat[i::self.k]

    def plain(self, lines: list[str], start: int) -> list[_Block] | None:
        """``block`` of ``lines`` a ``SUB`` rows at a time (a few MB of cells that stay in the CPU's
        caches: a month's log read a third faster), where no reading of theirs is dropped; None
        where one is, for ``block`` to read them at once and note it as the row reader does."""
        self.kept_only = True
        try:
            parts: list[_Block] = []
            for at in range(0, len(lines), self.SUB):
                got = self.block(lines[at:at + self.SUB], start + at)
                if got is None:
                    return None
                parts.append(got)
            return parts
        finally:
            self.kept_only = False

    def block(self, lines: list[str], start: int) -> _Block | None:
        """Each row's module, time and readings; None where a row is not of the usual log."""
        flat, k = _flat_cells(lines, self.k), self.k
        if flat is None or not all(_has_digit(c) for c in set(flat[0::k])):
            return None  # a blank row or a second header: row by row
        index = self.cols.get("index")
        if index is not None and any(bad_index(c) is not None for c in set(flat[index::k])):
            return None
        times = _times(flat[self.cols["time"]::k])
        self.flat, self.numbers = flat, list(range(start + 2, start + 2 + len(lines)))
        who = self._modules() if times is not None else None
        readings = self._readings() if who is not None else None
        if who is None or times is None or readings is None:
            return None
        return who, times, readings

    def _modules(self) -> npt.NDArray[np.int64] | None:
        """Each row's module (its place in ``names``), the modules made in the order the rows name
        them; None where one's identity is not read once for all its rows (the row reader's cache)."""
        flat, k = self.flat, self.k
        ids = [flat[c::k] for c in self.id_cols]
        period = self.period = _period(ids)
        if period is not None:  # every tick names the modules in one order: row i is module i mod period's
            keys = list(zip(*(c[:period] for c in ids), strict=True))
            rows = np.arange(len(ids[0]), dtype=np.int64) % period
            first = list(range(period))
        else:
            keys = list(dict.fromkeys(zip(*ids, strict=True)))  # in the order the rows first name them
            local = {key: i for i, key in enumerate(keys)}
            rows = np.fromiter(map(local.__getitem__, zip(*ids, strict=True)), dtype=np.int64, count=len(ids[0]))
            first = np.unique(rows, return_index=True)[1].tolist()
        for key, r in zip(keys, first, strict=True):
            if key in self._code:
                continue
            row = flat[r * k:(r + 1) * k]
            ident = self._ident(row, 0)
            if self.idents.get(self._id_cells(row)) != ident:
                return None
            self._code[key] = len(self._of_code)
            self._of_code.append(self._place.setdefault(ident, len(self._place)))
        self.names = list(self._place)
        return np.asarray([self._of_code[self._code[key]] for key in keys], dtype=np.int64)[rows]

    def _readings(self) -> dict[str, npt.NDArray[np.float64]] | None:
        """The block's reading columns; None where a counter is too large to hold exactly in a
        float (the row reader keeps it as a Python int)."""
        out = self._kept()
        if out is None and self.kept_only:
            return None
        if out is None:
            out = {name: np.array(values, dtype=np.float64)
                   for name, values in zip(("temp", "power", "sm", "mem", "util"), self.readings(), strict=True)}
            out.update((name, np.array(self._column(name), dtype=np.float64)) for name in _COUNTS if name in self.cols)
        if any(np.nanmax(np.abs(out[c]), initial=0.0) >= 2.0 ** 53 for c in _COUNTS if c in out):
            return None
        out["util"] = out["util"] / 100.0
        return out

    def _kept(self) -> dict[str, npt.NDArray[np.float64]] | None:
        """``readings`` and the counters as arrays where no reading is dropped (each column read
        once as a whole, no list of its values); None where one is, for ``readings`` to note it."""
        if "power_w" not in self.cols:
            return None  # power from the instant or average column: ``readings``
        temp, power, util = self._array("temp_c", bounds.TEMP_C), self._array("power_w", bounds.POWER_W), \
            self._array("util")
        if power is not None and {"power_w_instant", "power_w_average"} & set(self.cols) and np.isnan(power).any():
            return None  # a missing power taken from the instant or average column: ``readings``
        sm, gr = self._array("sm_clock_mhz"), self._array("gr_clock_mhz")
        if sm is not None and gr is not None:
            sm = np.where(np.isnan(sm), gr, sm)  # a missing SM clock is the graphics clock, as ``readings`` takes it
        mem = self._array("mem_clock_mhz")
        counts = {name: self._array(name) for name in _COUNTS if name in self.cols}
        got = {"temp": temp, "power": power, "sm": sm, "mem": mem, "util": util, **counts}
        if any(v is None for v in got.values()):
            return None
        return {name: v for name, v in got.items() if v is not None}

    def _array(self, name: str, lo_hi: tuple[float, float] | None = None) -> npt.NDArray[np.float64] | None:
        """Column ``name`` as ``_column`` reads it, NaN for a missing reading; None where one would
        be dropped (out of ``lo_hi``, not finite) or its cells are too long for a number."""
        i = self.cols.get(name, -1)
        n = len(self.numbers)
        if i < 0:
            return np.full(n, np.nan)
        cells = self.flat[i::self.k]
        p = self.period
        # a reading each module holds through the block (a clock, a counter): one tick's cells, repeated
        head = cells[:p] if p is not None and cells[p:] == cells[:-p] else cells
        if max(map(len, head)) > bounds.MAX_NUMBER_CHARS:
            return None
        values = _parsed(head, cells[0][:2] == "0x")
        if values is None:
            return None
        if len(head) < n:
            values = np.resize(values, n)
        if lo_hi is not None and not ((values >= lo_hi[0]) & (values <= lo_hi[1]) | np.isnan(values)).all():
            return None
        return values


def _period(ids: list[list[str]]) -> int | None:
    """The number of rows after which the identity cells (``ids``, a list per column) repeat, where
    they do throughout and the rows of one period are all distinct modules; else None."""
    first = ids[0]
    period = first.index(first[0], 1) if first.count(first[0]) > 1 else len(first)
    if any(c[period:] != c[:-period] for c in ids) or len(set(zip(*(c[:period] for c in ids), strict=True))) != period:
        return None
    return period


def _parsed(cells: list[str], hexa: bool) -> npt.NDArray[np.float64] | None:
    """Each cell as ``_column`` reads it (``_as_numbers``: '583.54 W' -> 583.54, hex masks where the
    first cell is one; else ``parse_cell``), NaN for a cell that is no reading ('[N/A]'); None where
    one is nan or ±inf (dropped and noted by ``_column``). A column of few values (clocks, whole °C,
    a mask) is parsed a distinct cell at a time; one of many (watts) cell by cell in C, where
    hashing each cell to parse it once costs more than parsing it."""
    if hexa or len(set(cells[:_SAMPLE])) <= _FEW:
        return _mapped(cells, _numbers(hexa, set(cells)))
    try:  # a cell without a unit is its number ('61'); one with ('583.54 W') fails here at once
        values = np.fromiter(map(float, cells), dtype=np.float64, count=len(cells))
    except ValueError:
        try:
            values = np.fromiter(map(float, [c.partition(" ")[0] for c in cells]), dtype=np.float64,
                                 count=len(cells))
        except ValueError:
            return _mapped(cells, _numbers(hexa, set(cells)))
    return values if np.isfinite(values).all() else None


_SAMPLE, _FEW = 256, 64  # a column with at most this many values in its first cells is read by value


def _mapped(cells: list[str], number: dict[str, float] | None) -> npt.NDArray[np.float64] | None:
    if number is None:
        return None
    return np.fromiter(map(number.__getitem__, cells), dtype=np.float64, count=len(cells))


def _numbers(hexa: bool, distinct: Iterable[str]) -> dict[str, float] | None:
    """Each distinct cell as ``_column`` reads it (``_as_numbers``, else ``parse_cell``), NaN for a
    cell that is no reading ('[N/A]'); None where one is nan or ±inf (no reading: dropped, noted)."""
    try:
        number = {c: float(int(c, 16)) if hexa else float(c.partition(" ")[0]) for c in distinct}
    except ValueError:
        cell = {c: parse_cell(c) for c in distinct}
        if not all(v - v == 0 for v in cell.values() if v is not None):
            return None
        return {c: math.nan if v is None else v for c, v in cell.items()}
    return number if all(v - v == 0 for v in number.values()) else None


def _per_module(names: list[tuple[str, str]], who: npt.NDArray[np.int64],
                times: npt.NDArray[np.float64], got: dict[str, npt.NDArray[np.float64]]) -> list[Columns]:
    """The rows split by module, each in the order read (where every tick names the modules in
    one order, module ``who[j]``'s rows are j, j + ticks' length, …: taken as strides, not sorted)."""
    throttle = np.nan_to_num(got.get("throttle", np.zeros(len(who))), nan=0.0).astype(np.int64)
    p = len(names)
    if len(who) >= p and np.array_equal(np.sort(who[:p]), np.arange(p)) and np.array_equal(who[p:], who[:-p]):
        picks: list[slice | npt.NDArray[np.int64]] = [slice(int(np.flatnonzero(who[:p] == m)[0]), None, p)
                                                      for m in range(p)]
    else:
        order = np.argsort(who, kind="stable")
        cuts = np.searchsorted(who[order], np.arange(p + 1))
        picks = [order[cuts[m]:cuts[m + 1]] for m in range(p)]
    out = []
    for (module, uuid), rows in zip(names, picks, strict=True):
        seq = np.arange(len(who), dtype=np.int64)[rows] if isinstance(rows, slice) else rows
        out.append(Columns(module, uuid, seq, times[rows], got["temp"][rows], got["power"][rows], got["sm"][rows],
                           got["mem"][rows], got["util"][rows], throttle[rows],
                           {c: got[c][rows] for c in COUNTS if c in got}))
    return out
