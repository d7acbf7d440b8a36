"""Bounds on recorded telemetry (docs/limits.md, "Telemetry replay"). Each is checked while the
input streams in, so a hostile file or answer is refused before it costs memory or time; the
figures sit well above what one node, rack or Prometheus page holds."""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO, TextIO

from gpuvet.errors import GpuvetError
from gpuvet.node.vendor_tools import GIVE

MAX_TEXT_BYTES = 256 * 2**20  # one log or dump, on disk or unpacked (a gzip bomb stops here)
MAX_JSON_BYTES = 64 * 2**20  # one query_range file or answer: json.loads holds ~8x this
MAX_LINE_CHARS = 64 * 2**10  # a --query-gpu row with every field is ~2 KB, a dcgm series line ~400 B
MAX_FILE_LINES = 4_000_000  # one file: ~8 modules at 1 s for 6 days, or 64 at 1 min for 43 days
MAX_REPLAY_LINES = 8_000_000  # all files of one replay, counted before any is parsed
MAX_POINTS = 8_000_000  # readings of one replay or one --prometheus-url read (JSON)
MAX_SERIES = 20_000  # distinct label sets in one Prometheus dump or read (~190 nodes x 8 x 13 fields)
MAX_MODULES = 4_096  # modules in one replay (512 eight-module nodes)
MAX_INDEX = MAX_MODULES - 1  # a GPU index (nvidia-smi's index, dmon's gpu): 0 … 4,095, as many as one replay holds
MAX_LABELS = 64  # labels on one series (dcgm-exporter writes ~8, Kubernetes adds ~4)
MAX_LABEL_CHARS = 2_048  # one label name or value
MAX_NUMBER_CHARS = 40  # a double needs 24, a 64-bit hex mask 18
LATEST_T = 4_102_444_800.0  # 2100-01-01 UTC: a later recorded time is a unit or clock error
TEMP_C = (0.0, 200.0)  # no module reports below freezing or above 200 °C; the sensor's error codes do
POWER_W = (0.0, 10_000.0)  # a GB200 superchip draws ~2.7 kW

FIX_SPLIT = "split it (by day, node or rack) and replay the parts you need."
FIX_LONG = "check the file is a telemetry log (no telemetry line is this long)."
BOM = "\ufeff"  # UTF-8's byte-order mark: PowerShell's Out-File -Encoding utf8 starts a file with it
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # PowerShell 5's '>' and Out-File write UTF-16


# --- text: one helper for every reader (replay formats and the backtest's events file) ----
def open_text(binary: BinaryIO) -> io.TextIOWrapper:
    """``binary`` as UTF-8 text: a leading byte-order mark dropped, CR, LF and CR LF all read as a
    line end (universal newlines), bytes that are not UTF-8 replaced (a cell of them is no reading)."""
    return io.TextIOWrapper(binary, encoding="utf-8-sig", errors="replace", newline=None)


def decode_head(data: bytes) -> str:
    """The first bytes of a file as the readers will see them (a BOM dropped), for format detection."""
    return data.decode("utf-8-sig", errors="replace")


def line_ends(chunk: bytes, cr_before: bool) -> tuple[bytes, bool]:
    """``chunk`` with CR LF and lone CR made LF, so that lines are counted and measured as the
    text reader splits them; ``cr_before``: the previous chunk ended in CR (its LF, if this chunk
    starts with one, is the same line end). Returns the chunk and whether it ends in CR."""
    if cr_before and chunk[:1] == b"\n":
        chunk = chunk[1:]
    if b"\r" not in chunk:
        return chunk, False
    return chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n"), chunk.endswith(b"\r")


_BLOCK_CHARS = 2**16  # text read at once: lines split by one call a block, not one readline a line
_ASCII_ENDS = "\v\f\x1c\x1d\x1e"  # where str.splitlines also ends a line (as at \x85, \u2028, \u2029)


def text_lines(text: TextIO, where: str, limit: int = MAX_LINE_CHARS, max_lines: int = MAX_FILE_LINES,
               fix: str = FIX_LONG) -> Iterator[str]:
    """The lines of ``text`` (opened with universal newlines: ``open_text`` or ``io.StringIO(…,
    newline=None)``), each ending in LF, a byte-order mark at the start of any line dropped (two
    PowerShell files joined with cat carry one mid-file), each line and their count within the
    bounds (checked again while read: a file may have grown since its scan). Read and split a
    block at a time (a readline a line cost as much as the rest of the reading); the lines
    before a bad one are given before its error, as line by line."""
    return itertools.chain.from_iterable(_blocks(text, (where, limit, max_lines, fix)))


def _blocks(text: TextIO, bound: tuple[str, int, int, str]) -> Iterator[list[str]]:
    """``text_lines``' lines, a block's at a time; a line past the bound is refused once it is
    longer than the bound, not once it is whole."""
    count, rest = 0, ""
    size = max(min(_BLOCK_CHARS, bound[1]), 1)  # no bigger than a line may be: only a block's first line can be longer
    while True:
        block = text.read(size)
        data = rest + block if rest else block
        lines = _split(data) if data else []
        rest = lines.pop() if block and lines and not lines[-1].endswith("\n") else ""
        if len(rest) > bound[1]:
            lines.append(rest)
        good, error = _checked(lines, count, BOM in data, bound)
        yield good
        if error is not None:
            raise error  # once the lines before it are taken
        count += len(lines)
        if not block:
            return


def _split(data: str) -> list[str]:
    """``data`` split after each LF, ends kept (str.splitlines also splits at the other ends)."""
    lines = data.splitlines(True)
    if not (data.isascii() or "\x85" not in data and "\u2028" not in data and "\u2029" not in data) or any(
            end in data for end in _ASCII_ENDS):
        lines = [piece + "\n" for piece in data.split("\n")]
        last = lines.pop()[:-1]
        if last:
            lines.append(last)
    return lines


def _checked(lines: list[str], before: int, bom: bool,
             bound: tuple[str, int, int, str]) -> tuple[list[str], GpuvetError | None]:
    """``lines`` (the ``before``-th line of the text was the last before them), BOMs dropped
    (``bom``: one is among them), up to the first that breaks a bound, and its error."""
    where, limit, max_lines, fix = bound
    bad = 0 if lines and len(lines[0]) - lines[0].endswith("\n") > limit else len(lines)  # the others fit a block
    many = max(max_lines - before, 0)
    error = None
    if bad < len(lines) and bad <= many:
        error = GpuvetError(f"line longer than {limit:,} characters", where=f"{where}:{before + bad + 1}", fix=fix)
    elif many < len(lines):
        error = too_many(before + many + 1, max_lines, "lines", where, FIX_SPLIT)
    good = lines[:min(bad, many)] if error is not None else lines
    return ([line[1:] if line[:1] == BOM else line for line in good] if bom else good), error


def not_utf16(head: bytes, where: str) -> None:
    """Refuses UTF-16 text (a log redirected with PowerShell 5's '>'): read as UTF-8 it is no format."""
    if head[:2] in UTF16_BOMS:
        raise GpuvetError("UTF-16 text (what PowerShell 5's '>' and Out-File write), not UTF-8", where=where,
                          fix="convert it, e.g. iconv -f UTF-16 -t UTF-8 FILE > FILE8, or in PowerShell Get-Content "
                              f"FILE | Set-Content -Encoding utf8 FILE8; or log with {GIVE['utf8_log']}.")


def number_text(text: str, where: str) -> str:
    """``text`` if it is short enough to be a reading; a 400-digit number is no reading."""
    if len(text) > MAX_NUMBER_CHARS:
        raise GpuvetError(f"a number of {len(text):,} characters ({text[:12]}…): no reading has more than "
                          f"{MAX_NUMBER_CHARS}", where=where, fix="check the file is the tool's own output, unedited.")
    return text


def check_time(t: float, where: str, relative: bool = False) -> float:
    """A recorded time in Unix seconds (or seconds from the start, ``relative``), checked."""
    if not math.isfinite(t) or t < 0 or (not relative and t > LATEST_T):
        shown = repr(t) if math.isfinite(t) or math.isnan(t) else ("1e400 or more" if t > 0 else "-1e400 or less")
        raise GpuvetError(f"time {shown} is not a recorded time (Unix seconds from 1970 to 2100)", where=where,
                          fix="check the timestamp column or field: seconds (or milliseconds in Prometheus text) "
                              "since 1970, as the exporter wrote them.")
    return t


def too_many(count: int, limit: int, what: str, where: str, fix: str = FIX_SPLIT) -> GpuvetError:
    return GpuvetError(f"more than {limit:,} {what}", where=where, fix=fix)


def too_big(limit: int, what: str, where: str, fix: str = FIX_SPLIT) -> GpuvetError:
    return GpuvetError(f"more than {limit // 2**20} MiB of {what}", where=where, fix=fix)


@dataclass
class Dropped:
    """Readings outside their physical range (a sensor's error code, a sign flipped by a script) or
    not a finite number (``nan``, ``inf``, ``1e400``, in any numeric column): dropped, counted, and
    named in a note with the first place, so a month's log replays despite one glitch and the user
    still sees it."""

    where: str
    count: int = 0
    first: str = ""
    kinds: set[str] = field(default_factory=set)
    nonfinite: int = 0

    def check(self, value: float | None, lo_hi: tuple[float, float], kind: str, place: str) -> float | None:
        if value is None or lo_hi[0] <= value <= lo_hi[1]:
            return value
        if not math.isfinite(value):
            self.not_finite(kind, place, f"{value:g}")
            return None
        self.count += 1
        self.kinds.add(kind)
        self.first = self.first or f"{place} ({kind} {value:g})"
        return None

    def not_finite(self, kind: str, place: str, text: str) -> None:
        """Counts a cell that parsed to nan or ±inf (``text``: as the file wrote it); always None."""
        self.count += 1
        self.nonfinite += 1
        self.kinds.add(kind)
        shown = text if len(text) <= 16 else text[:12] + "…"
        self.first = self.first or f"{place} ({kind} {shown})"
        return None

    def note(self) -> str | None:
        if not self.count:
            return None
        what = " or not a finite number (nan, inf, 1e400)" if self.nonfinite else ""
        return (f"{self.where}: {self.count:,} reading(s) outside {TEMP_C[0]:g}-{TEMP_C[1]:g} °C / "
                f"{POWER_W[0]:g}-{POWER_W[1]:,.0f} W{what} dropped (first: {self.first})")


def index_text(cell: str) -> str | None:
    """None when ``cell`` is a GPU index (a whole number 0 … MAX_INDEX); else the cell as a note shows it."""
    text = cell.strip()
    if text.isascii() and text.isdigit() and len(text) <= MAX_NUMBER_CHARS and int(text) <= MAX_INDEX:
        return None
    return text if len(text) <= 16 else text[:12] + "…"


@dataclass
class BadIndex:
    """Rows whose GPU index is negative, too large or no number (``-1``, sixty 9s): skipped, counted
    and named in a note with the first line, never read as a module ``gpu-1`` or ``gpu999…``."""

    where: str
    column: str = "index"
    count: int = 0
    first: str = ""

    def skip(self, shown: str, place: str) -> None:
        self.count += 1
        self.first = self.first or f"{place} ({self.column} {shown!r})"

    def note(self) -> str | None:
        if not self.count:
            return None
        return (f"{self.where}: {self.count:,} row(s) whose {self.column} cell is no GPU index (a whole number "
                f"0-{MAX_INDEX:,}) skipped (first: {self.first})")
