"""The two readers of an nvidia-smi --query-gpu CSV: row by row (any layout, every cell judged)
and by columns (a log whose ticks name the modules in one order, read as arrays at once). Apart
from read_smi.py, which recognises the header and picks the reader (issue 45: one job a module)."""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt

from gpuvet.backends.readings import Sample
from gpuvet.watch import bounds
from gpuvet.watch.columns import COUNTS, Columns
from gpuvet.watch.recording import Recording
from gpuvet.watch.smi_cells import UNAVAILABLE, Clock, bad_index, finite, parse_cell, stamps


def has_digit(cell: str) -> bool:
    return cell[:1].isdigit() or any(ch.isdigit() for ch in cell)


def flat_cells(lines: list[str], k: int) -> list[str] | None:
    """Every cell of ``lines`` in one list, row after row, each row's ``k`` cells followed by a
    line-end cell ('\\n': rows are ``k`` + 1 apart), where every line has ``k`` cells split by ', '
    alone (what the csv module reads them as); else None. A line of another width moves the
    line-end cells after it off their places: found here, with no count of each line's commas."""
    body = "".join(lines)
    if not body.endswith("\n"):
        body += "\n"
    if "\r" in body or "\x00" in body or ",  " in body:
        return None
    flat = body.replace("\n", ", \n, ").split(", ")
    flat.pop()  # the empty cell after the last line end
    n = len(lines)
    return flat if len(flat) == (k + 1) * n and flat[k::k + 1] == ["\n"] * n else None


def column_times(cells: list[str], run: int = 1) -> npt.NDArray[np.float64] | None:
    """Each row's time (nvidia-smi's own layout at once, any other each distinct stamp once); None
    where one is not a recorded time. ``run``: the runs of equal cells they come in (``_run``)."""
    at_once = stamps(cells) if run == 1 else stamps(cells[::run])
    if at_once is not None and run > 1:
        at_once = np.repeat(at_once, run)[:len(cells)]
    if at_once is not None:
        return at_once if ((at_once >= 0) & (at_once <= bounds.LATEST_T)).all() else None
    clock, seen = Clock(), {}
    for cell in dict.fromkeys(cells):
        t = clock(cell)
        if t is None or not 0 <= t <= bounds.LATEST_T:
            return None  # a row skipped or a time refused: row by row, naming its line
        seen[cell] = t
    return np.array([seen[c] for c in cells], dtype=np.float64)


def _run(cells: list[str]) -> int:
    """The length of the runs of equal cells ``cells`` come in (a tick's time on each of its
    modules' rows: 8 for an 8-module node), where every cell is its run's first; else 1."""
    first = cells[0] if cells else ""
    run = next((i for i, cell in enumerate(itertools.islice(cells, 1, 4097), 1) if cell != first), 1)
    heads = cells[::run]
    if run == 1 or any(cells[k::run] != heads[:len(cells[k::run])] for k in range(1, run)):
        return 1
    return run


def _text(row: list[str], cols: dict[str, int], name: str) -> str | None:
    i = cols.get(name)
    if i is None or i >= len(row):
        return None
    text = row[i].strip()
    return None if text.lower() in UNAVAILABLE or text.startswith("[") else text


def row_key(row: list[str], cols: dict[str, int], position: int) -> str:
    """The module's key in its node: index, else bus id, else UUID, else its place in the tick."""
    for name in ("index", "bus_id", "uuid"):
        text = _text(row, cols, name)
        if text:
            return text
    return str(position)


_COUNTS = ("throttle", "ecc_corrected", "ecc_uncorrected", "pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max")


class RowReader:
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
            key, uuid = row_key(row, cols, position), _text(row, cols, "uuid")
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


class ColumnReader(RowReader):
    """``RowReader`` over a block of rows' cells (``flat``, ``k`` a row), the blocks the row reader
    flushes, so the same readings are dropped and noted in the same order."""

    SUB = 5_000

    def __init__(self, cols: dict[str, int], node: str, rec: Recording, where: str, dropped: bounds.Dropped,
                 k: int) -> None:
        super().__init__(cols, node, rec, where, dropped)
        self.flat: list[str] = []
        self.k, self.stride = k, k + 1  # cells a row; a row's cells and its line end (``flat_cells``)
        self.kept_only = False  # ``plain``: a block with a dropped reading is no block (None)
        self.period: int | None = None  # the block's rows per tick, where every tick names the modules in one order
        self.names: list[tuple[str, str]] = []  # (module, uuid) of each module, in the order first read
        self._code: dict[tuple[str, ...], int] = {}  # identity cells -> module, once read
        self._place: dict[tuple[str, str], int] = {}
        self._of_code: list[int] = []
        self._known: dict[tuple[str, bool], dict[str, float]] = {}  # (column, hex) -> its cells read before

    def _cells(self, i: int) -> list[str]:
        return self.flat[i::self.stride]

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
        flat, k = flat_cells(lines, self.k), self.stride
        if flat is None:
            return None
        firsts = flat[0::k]
        run = _run(firsts)  # each cell of a run its first's: their distinct cells are the runs' firsts'
        if not all(c[:1].isdigit() or has_digit(c) for c in set(firsts[::run])):
            return None  # a blank row or a second header: row by row
        index = self.cols.get("index")
        if index is not None and any(bad_index(c) is not None for c in set(flat[index::k])):
            return None
        at = self.cols["time"]
        times = column_times(firsts, run) if at == 0 else column_times(flat[at::k], _run(flat[at::k]))
        self.flat, self.numbers = flat, list(range(start + 2, start + 2 + len(lines)))
        who = self._modules() if times is not None else None
        readings = self._readings() if who is not None else None
        if who is None or times is None or readings is None:
            return None
        return who, times, readings

    def _modules(self) -> npt.NDArray[np.int64] | None:
        """Each row's module (its place in ``names``), the modules made in the order the rows name
        them; None where one's identity is not read once for all its rows (the row reader's cache)."""
        flat, k = self.flat, self.stride
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
            row = flat[r * k:r * k + self.k]
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
        cells = self.flat[i::self.stride]
        p = self.period
        # a reading each module holds through the block (a clock, a counter): one tick's cells, repeated
        head = cells[:p] if p is not None and cells[p:] == cells[:-p] else cells
        hexa = cells[0][:2] == "0x"
        known = self._known.setdefault((name, hexa), {})
        if len(known) > _KNOWN:
            known.clear()
        values = _parsed(head, hexa, known)
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


_SAMPLE, _FEW = 256, 64  # a column with at most this many values in its first cells is read by value
_KNOWN = 4096  # the most cells of a column kept as read (a counter that keeps growing starts again)


def _parsed(cells: list[str], hexa: bool, known: dict[str, float]) -> npt.NDArray[np.float64] | None:
    """Each cell as ``_column`` reads it (``_as_numbers``: '583.54 W' -> 583.54, hex masks where the
    first cell is one; else ``parse_cell``), NaN for a cell that is no reading ('[N/A]'); None where
    one is nan or ±inf (dropped and noted by ``_column``). A column of few values (clocks, whole °C,
    a mask) is parsed a distinct cell at a time; one of many (watts) cell by cell in C, where
    hashing each cell to parse it once costs more than parsing it. None too where a cell is longer
    than a number (``bounds.MAX_NUMBER_CHARS``): measured over the distinct cells where they are few.
    ``known``: the column's cells read in blocks before (each a number or NaN, as read here), so a
    block whose every cell is among them is read without gathering its distinct cells again."""
    if hexa or len(set(cells[:_SAMPLE])) <= _FEW:
        try:
            return np.fromiter(map(known.__getitem__, cells), dtype=np.float64, count=len(cells))
        except KeyError:  # a cell not read before: the block's distinct cells read as they always are
            pass
        distinct = set(cells)
        if max(map(len, distinct)) > bounds.MAX_NUMBER_CHARS:
            return None
        return _mapped(cells, _numbers(hexa, distinct, known))
    if max(map(len, cells)) > bounds.MAX_NUMBER_CHARS:
        return None
    try:  # a cell without a unit is its number ('61'); one with ('583.54 W') fails here at once
        values = np.fromiter(map(float, cells), dtype=np.float64, count=len(cells))
    except ValueError:
        try:
            values = _unit_cut(cells)
        except ValueError:
            return _mapped(cells, _numbers(hexa, set(cells)))
    return values if np.isfinite(values).all() else None


def _unit_cut(cells: list[str]) -> npt.NDArray[np.float64]:
    """Each cell's number before its unit ('583.54 W' -> 583.54): the first cell's unit cut off
    every cell in C (``str.removesuffix``), the same number as cutting at the first space where
    float() takes the rest (it strips only the ends); each cell cut at its first space where not.
    Raises ValueError for a cell that is no number either way."""
    _, space, unit = cells[0].partition(" ")
    if space:
        try:
            return np.fromiter(map(float, map(str.removesuffix, cells, itertools.repeat(space + unit))),
                               dtype=np.float64, count=len(cells))
        except ValueError:
            pass
    return np.fromiter(map(float, [c.partition(" ")[0] for c in cells]), dtype=np.float64, count=len(cells))


def _mapped(cells: list[str], number: dict[str, float] | None) -> npt.NDArray[np.float64] | None:
    if number is None:
        return None
    return np.fromiter(map(number.__getitem__, cells), dtype=np.float64, count=len(cells))


def _numbers(hexa: bool, distinct: Iterable[str], known: dict[str, float] | None = None) -> dict[str, float] | None:
    """Each distinct cell as ``_column`` reads it (``_as_numbers``, else ``parse_cell``), NaN for a
    cell that is no reading ('[N/A]'); None where one is nan or ±inf (no reading: dropped, noted).
    Only cells read the first way join ``known``: the same cell reads otherwise beside one that
    fails it ('20' is 32 among hex masks, 20 beside '[N/A]'), as it does without ``known``."""
    try:
        number = {c: float(int(c, 16)) if hexa else float(c.partition(" ")[0]) for c in distinct}
    except ValueError:
        cell = {c: parse_cell(c) for c in distinct}
        if not all(v - v == 0 for v in cell.values() if v is not None):
            return None
        return {c: math.nan if v is None else v for c, v in cell.items()}
    if not all(v - v == 0 for v in number.values()):
        return None
    if known is not None:
        known.update(number)
    return number


def per_module(names: list[tuple[str, str]], who: npt.NDArray[np.int64],
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
