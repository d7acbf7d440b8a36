"""Cleaning pasted text: what a launcher, a forum or an editor put around a tool's own output.

A capture may start with a header ``# source: …`` (the test corpus names its source that way),
followed by ``# shows:``, ``# conclusion:``, ``# expect:``, ``# tuned:`` or ``# note:`` lines; the
header is skipped. Launcher and log-collector prefixes, markdown quote marks and indentation
(decorations.py says which, and when a prefix counts as one), markdown's escaped ``\\#`` and code
fences are removed;
a line of dots (``...``) marks a cut made by the poster and is kept as an elision.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from gpuvet.captures import decorations

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_ELISION = re.compile(r"^\s*(\.\.\.+|…|[\[(]\s*(\.\.\.+|…|snip\w*)\s*[\])]|<\s*snip\w*\s*>)\s*$",
                      re.IGNORECASE)  # a poster's cut: ... … [...] (...) [snip] <snip>
_CUT_FIRST = (".", "…", "[", "(", "<")  # how a poster's cut starts (_ELISION)
_HEADER = re.compile(r"^#\s*source:", re.I)
_HEADER_MORE = re.compile(r"^#\s*(shows|conclusion|expect|note|tuned)\b[^:]*:", re.I)
MAX_LINES = 2_000_000  # a capture (even an unpacked bug report) longer than this is refused before parsing
MAX_LINE_CHARS = 65_536  # a line longer than this is named in a note: text tools print lines of a few KB
# modules in one listing (-q, -q -x, --query-gpu, the table, amd-smi, rocm-smi, npu-smi): more is not one node
MAX_MODULES = 4096  # (docs/limits.md)


class Line(NamedTuple):
    """One line of a capture. A tuple, not a dataclass (issue 43): a bug report has millions of lines,
    and a tuple of three is a third of the memory of an object with a __dict__, and faster made."""

    no: int  # 1-based line number in the file as given
    text: str  # what is left after the launcher prefix and quote marks
    elision: bool = False  # the poster cut lines here (`...`)


@dataclass
class Cleaned:
    lines: list[Line]
    notes: list[str] = field(default_factory=list)
    hosts: tuple[str, ...] = ()  # launcher prefixes naming hosts or ranks, in order of appearance


def _cut_long(numbered: list[tuple[int, str]], notes: list[str]) -> list[tuple[int, str]]:
    """A line longer than any text tool prints is named in a note (a pasted blob, or a log that lost
    its line ends); it is read whole all the same: XML or JSON saved on one line is such a line, and
    the text as a whole is bounded by the file's own limits."""
    long = [n for n, s in numbered if len(s) > MAX_LINE_CHARS]
    if long:
        notes.append(f"line(s) {ranges(long)}: longer than {MAX_LINE_CHARS:,} characters (no text tool prints "
                     "such a line: a pasted blob, or a log that lost its line ends?); read whole")
    return numbered


def clean(text: str) -> Cleaned:
    """The tool output inside a pasted text, each line with its number in the file."""
    if "\r" in text:  # most captures have none: no copy of the whole text made for them
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    raw = (_ANSI.sub("", text) if "\x1b" in text else text).split("\n")
    notes: list[str] = []
    numbered = [(i + 1, s.rstrip()) for i, s in enumerate(raw)]
    numbered = _cut_long(numbered, notes)
    if numbered and numbered[0][1].lstrip().startswith("\ufeff"):
        numbered[0] = (1, numbered[0][1].lstrip("\ufeff"))
    peeled = decorations.peel(_skip_header(numbered))  # quote marks, indentation, launcher prefixes
    notes += peeled.notes
    del raw, numbered
    pairs, peeled.lines = peeled.lines, []
    pairs.reverse()  # taken from the end, each pair let go as its Line is made: the two lists never both whole
    lines: list[Line] = []
    fences = escaped = 0
    made = tuple.__new__  # Line's own __new__ is a Python call: a bug report makes millions
    while pairs:
        n, unquoted = pairs.pop()
        head = unquoted.lstrip()
        first = head[:1]  # after the quote marks: a '>     [...]' is a cut too
        if first in ("`", "~") and head[:3] in ("```", "~~~"):
            fences += 1
            continue
        if first == "\\" and head.startswith("\\#"):  # markdown's escaped '#' (a dmon or nccl-tests header in a post)
            unquoted, escaped, first = unquoted.replace("\\#", "#", 1), escaped + 1, "#"
        lines.append(made(Line, (n, unquoted, first in _CUT_FIRST and bool(_ELISION.match(unquoted)))))
    if fences:
        notes.append(f"{fences} code-fence line(s) skipped")
    if peeled.quoted:
        notes.append(f"{peeled.quoted} line(s) had markdown quote marks (>), removed")
    if escaped:
        notes.append(f"{escaped} line(s) began with markdown's escaped '\\#', read as '#'")
    cuts = [ln for ln in lines if ln.elision]
    if cuts:
        marks = _list([f"'{m}'" for m in dict.fromkeys(ln.text.strip() for ln in cuts)])
        notes.append(f"the poster cut lines at line(s) {_ranges([ln.no for ln in cuts])} ({marks}): "
                     "what was cut is not known")
    return Cleaned(lines, notes, peeled.hosts)


def _skip_header(numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The corpus header: a `# source:` line in the first three, and the `# shows:` … lines right after it."""
    start = next((i for i, (n, s) in enumerate(numbered[:3]) if _HEADER.match(s)), None)
    if start is None:
        return numbered
    end = start + 1
    while end < len(numbered) and _HEADER_MORE.match(numbered[end][1]):
        end += 1
    return numbered[:start] + numbered[end:]


def _list(items: list[str], most: int = 6) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def _ranges(numbers: list[int], most: int = 6) -> str:
    """1,2,3,7 -> '1–3, 7' (at most `most` ranges, then a count)."""
    spans: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if spans and n == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], n)
        else:
            spans.append((n, n))
    text = ", ".join(f"{a}–{b}" if b > a else f"{a}" for a, b in spans[:most])
    return text + (f" and {len(spans) - most} more range(s)" if len(spans) > most else "")


def ranges(numbers: list[int]) -> str:
    return _ranges(numbers)


def number(text: str | None) -> float | None:
    """The leading number of a field ('80 GiB', '16x', '2.5GT/s'); None for N/A, '7.3.1', 'abc',
    NaN or infinity, so a malformed figure never becomes a value."""
    if text is None:
        return None
    m = re.match(r"\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\d.]*\.\d)", text)
    if not m:
        return None
    value = float(m.group(1))
    return value if math.isfinite(value) else None


TEMP_C = (0.0, 200.0)  # no module reports below freezing or above 200 °C (watch's replay bound); sensor error codes do
CLOCK_MHZ = (0.0, 100_000.0)  # no module clocks at 100 GHz
_READING = re.compile(r"\s*([-+]?(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|nan|inf(?:inity)?))(?![\w.])", re.I)


def reading(text: str | None, bounds: tuple[float, float], what: str, corrupt: list[str]) -> float | None:
    """A figure within physical bounds. One outside them, or NaN or infinite, is a corrupt reading:
    said in ``corrupt`` and left out (None), never turned into another number. N/A and words: None."""
    if text is None or (m := _READING.match(text)) is None:
        return None
    value = float(m.group(1))
    if math.isfinite(value) and bounds[0] <= value <= bounds[1]:
        return value
    why = (f"is outside {bounds[0]:g}-{bounds[1]:,.0f}" if math.isfinite(value) else "is not a finite number")
    corrupt.append(f"{what} {text.strip()[:40]!r} {why}: a corrupt reading, left out")
    return None


MAX_FIELD_CHARS = 256  # a name or field kept from a capture; no tool prints a longer model name or UUID


def bounded(text: str | None, what: str, cuts: list[str]) -> str | None:
    """A name or field of at most MAX_FIELD_CHARS characters; a longer one is cut there, said in ``cuts``."""
    if text is None or len(text) <= MAX_FIELD_CHARS:
        return text
    cuts.append(f"{what} of {len(text):,} characters cut to its first {MAX_FIELD_CHARS} (no tool prints one so long)")
    return text[:MAX_FIELD_CHARS]


def integer(text: str | None) -> int | None:
    v = number(text)
    return int(v) if v is not None and v == int(v) else None
