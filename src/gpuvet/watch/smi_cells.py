"""The cells and clocks every nvidia-smi log shares (a --query-gpu CSV, dmon, pmon): a cell as a
number or none, a GPU index that is none, and a timestamp as Unix seconds; one home so the two
readers never drift apart."""

from __future__ import annotations

import calendar
import re
import time

import numpy as np
import numpy.typing as npt

from gpuvet.errors import GpuvetError
from gpuvet.watch import bounds

UNAVAILABLE = {"[n/a]", "n/a", "[not supported]", "[unknown error]", "[gpu requires reset]", "[insufficient permissions]",
               "-", ""}


def parse_cell(cell: str) -> float | None:
    """'583.54 W', '91 %', '0x0000000000000004', '61' -> a number; '[N/A]', 'N/A', '-' -> None. 'nan', 'inf'
    and '1e400' come back as the float they parse to: no reading, which ``finite`` drops and counts."""
    head = cell.split(None, 1)[0] if cell else ""
    if head[1:2] == "x":
        try:
            return float(int(head, 16))
        except ValueError:
            return None
    try:
        return float(head)
    except ValueError:
        return None


def finite(dropped: bounds.Dropped, cell: str, kind: str, place: str) -> float | None:
    """``cell`` as a number; one that is nan or ±inf is counted in ``dropped`` (its note names it) and is None."""
    value = parse_cell(cell)
    if value is not None and value - value != 0:
        dropped.not_finite(kind, place, cell.split(None, 1)[0])
        return None
    return value


class BadTimes:
    """Rows whose timestamp is no date and time (``9999/99/99 99:99:99``, month 13): skipped, as a
    sample without a time cannot join the time line, but counted and named in a note with the
    first line, as dropped readings are, so a replay never loses rows without a word."""

    def __init__(self, where: str) -> None:
        self.where, self.count, self.first = where, 0, ""

    def skip(self, cell: str, number: int) -> None:
        self.count += 1
        if not self.first:
            text = cell.strip()
            odd = next((ch for ch in text if not ch.isprintable()), None)
            shown = (f"control characters, e.g. {odd!r}" if odd is not None else repr(text[:28] + "…")
                     if len(text) > 32 else repr(text) if text else "empty")
            self.first = f"line {number} ({shown})"

    def note(self) -> str | None:
        if not self.count:
            return None
        return (f"{self.where}: {self.count:,} row(s) whose timestamp is no date and time skipped "
                f"(first: {self.first})")


def bad_index(cell: str | None) -> str | None:
    """The cell as a note shows it when it is meant as a GPU index but is none (negative, past
    bounds.MAX_INDEX, no whole number); None for an index or an empty / [N/A] cell."""
    if cell is None:
        return None
    text = cell.strip()
    if text.lower() in UNAVAILABLE or text.startswith("["):
        return None
    return bounds.index_text(text)


class Clock:
    """'2024/01/16 14:44:16.981' (or with dashes, or YYYYMMDD HH:MM:SS) -> Unix seconds. The day is
    parsed once per day; the time of day from fixed positions where the layout allows."""

    def __init__(self) -> None:
        self._days: dict[str, float] = {}
        self._whole, self._base = "", 0.0  # the last second seen: the modules of one tick share it

    def __call__(self, text: str) -> float | None:
        text = text.strip()
        whole, _, frac = text.partition(".")
        extra = float("0." + frac) if frac.isdigit() else 0.0
        if whole == self._whole:
            return self._base + extra
        base = self._seconds(whole)
        if base is not None:
            self._whole, self._base = whole, base
            return base + extra
        return None

    def _seconds(self, whole: str) -> float | None:
        if len(whole) == 19 and whole[10] == " " and whole[13] == ":" and whole[16] == ":":
            base = self._day(whole[:10])
            hms = whole[11:13] + whole[14:16] + whole[17:19]
            if base is not None and hms.isdigit():
                h, m, sec = int(hms[:2]), int(hms[2:4]), int(hms[4:])
                if h < 24 and m < 60 and sec < 62:
                    return base + h * 3600 + m * 60 + sec
        return self._general(whole)

    def _day(self, date: str) -> float | None:
        base = self._days.get(date)
        if base is None:
            digits = re.sub(r"\D", "", date)
            if len(digits) != 8:
                return None
            try:
                base = float(calendar.timegm(time.strptime(digits, "%Y%m%d")))
            except ValueError:
                return None
            if len(self._days) > 100_000:
                self._days.clear()
            self._days[date] = base
        return base

    @staticmethod
    def _general(whole: str) -> float | None:
        digits = re.sub(r"\D", "", whole)
        if len(digits) < 14:
            return None
        try:
            st = time.strptime(digits[:14], "%Y%m%d%H%M%S")
        except ValueError:
            return None
        return float(calendar.timegm(st))



_DATE_DIGITS, _TIME_AT = [0, 1, 2, 3, 5, 6, 8, 9], [11, 12, 14, 15, 17, 18]
_DAYS = Clock()  # each date's midnight, read once for every block of every log (strptime costs ~20 µs)


def stamps(cells: list[str]) -> npt.NDArray[np.float64] | None:
    """``Clock()`` of every cell at once, where every cell is 'YYYY/MM/DD HH:MM:SS' with one
    fraction width (what nvidia-smi writes; '-' for '/' too): the same seconds, each day read
    once (``Clock._day``), the fraction as its digits over a power of ten (both exact, so the
    quotient rounds as float('0.fff') does). None otherwise: the caller reads them one by one."""
    width = len(cells[0]) if cells else 0
    places = width - 20  # digits of the fraction
    if not (width == 19 or 1 <= places <= 15):
        return None
    text = "".join(cells)
    if len(text) != width * len(cells) or not text.isascii():
        return None
    grid = np.frombuffer(text.encode("ascii"), dtype=np.uint8).reshape(len(cells), width)
    digits = [*_DATE_DIGITS, *_TIME_AT, *range(20, width)]
    marks = grid[:, [10, 13, 16, *([19] if places > 0 else [])]]
    seps = grid[:, [4, 7]]
    d = grid[:, digits].astype(np.int64) - 48
    if not (((d >= 0) & (d <= 9)).all() and (marks == np.frombuffer(b" ::."[:marks.shape[1]], np.uint8)).all()
            and ((seps != 46) & ((seps < 48) | (seps > 57))).all()):
        return None
    h, m, sec = (d[:, 8 + 2 * i] * 10 + d[:, 9 + 2 * i] for i in range(3))
    if (h >= 24).any() or (m >= 60).any() or (sec >= 62).any():
        return None
    day = ((d[:, 0] * 10 + d[:, 1]) * 10 + d[:, 2]) * 10 + d[:, 3]
    day = (day * 100 + d[:, 4] * 10 + d[:, 5]) * 100 + d[:, 6] * 10 + d[:, 7]
    keys, first, where = np.unique(day, return_index=True, return_inverse=True)
    bases = [_DAYS._day(cells[i][:10]) for i in first.tolist()]
    if any(b is None for b in bases):
        return None
    t: npt.NDArray[np.float64] = np.asarray(bases, dtype=np.float64)[where] + (h * 3600 + m * 60 + sec).astype(np.float64)
    if places:
        frac = np.zeros(len(cells), dtype=np.int64)
        for k in range(places):
            frac = frac * 10 + d[:, 14 + k]
        t = t + frac / float(10 ** places)
    return t


def no_index_at_all(rows: int, bad: bounds.BadIndex, where: str) -> None:
    """Refuses a log whose every row was skipped for its GPU index: nothing is left to replay."""
    if not rows and bad.count:
        raise GpuvetError(f"no row has a GPU index (a whole number 0-{bounds.MAX_INDEX:,}) in its {bad.column} "
                          f"column: {bad.count:,} row(s) skipped, first {bad.first}", where=where,
                          fix=f"check the {bad.column} column is nvidia-smi's own (0 for the first GPU), unedited.")

