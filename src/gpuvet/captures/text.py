"""Cleaning pasted text: what a launcher, a forum or an editor put around a tool's own output.

A capture may start with a header ``# source: …`` (the test corpus names its source that way),
followed by ``# shows:``, ``# conclusion:``, ``# expect:``, ``# tuned:`` or ``# note:`` lines; the
header is skipped. Launcher and log-collector prefixes, markdown quote marks and indentation
(decorations.py says which, and when a prefix counts as one), markdown's escaped ``\\#`` and code
fences are removed;
a line of dots (``...``) marks a cut made by the poster and is kept as an elision.
"""

from __future__ import annotations

import gc
import math
import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress, count, islice, repeat
from operator import is_, is_not, itemgetter, lt, ne, sub
from typing import ClassVar, NamedTuple, Protocol, cast

from gpuvet.captures import decorations
from gpuvet.captures.wrapping import _WRAP_MOST as WRAP_MOST  # unwrap reads no longer text

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_DOTS, _WORDS = r"(?:\.{3,5}|…)", r"[\w\-,:/'() ]{0,60}?"  # around words: a rocm-smi title between dots is none
_SNIPPED = _WORDS + r"\bsnip(?:ped|s|ping)?\b" + _WORDS
_ELISION = re.compile(r"^\s*(?:<!--|//|#|-{2,}|[\[(<])?\s*(?:\.\.\.+|…|" + _DOTS + _WORDS + _DOTS + r"|(?:"
                      + _DOTS + r")?" + _SNIPPED + r"(?:" + _DOTS + r")?)\s*(?:-->|-{2,}|[\])>])?\s*$",
                      re.IGNORECASE)  # a poster's cut: ... … [...] (...) [snip] <snip> <!-- snip --> --- snip --- // ...
# ...skipping... [... 120 lines omitted ...] ... (output truncated) ...: dots on both sides of a few words, or 'snip'
_ELISION_MORE = re.compile(r"^\s*(?:(?:#|//)\s*)?(?:[\[(<]\s*[\w ,]{0,30}?\btruncated\b[\w ,.]{0,30}?[\])>]"
                           r"|[\[(]cut\b[^\])\n]{0,80}[\])]|-*\s*(?:8<|\u2702)[\s-]*|\.(?: \.){2,})\s*$",
                           re.IGNORECASE)  # (truncated) [truncated] [cut] # [cut: the rest of the log] -- 8< -- ✂ . . .
_CUT_FIRST = (".", "…", "[", "(", "<", "-", "/", "#", "8", "\u2702")  # how a poster's cut starts (_ELISION)
_CUT_CHARS = 300  # a cut mark is a few words (_WORDS: 60 a side): a longer line is none, and is not retried


def _cut_mark(s: str) -> bool:
    """``s`` (stripped) is a poster's cut mark; bounded work (review 55 F11: _ELISION's runs of blanks beside
    its optional parts are retried split by split, quadratic on a long line)."""
    return len(s) <= _CUT_CHARS and bool(_ELISION.match(s) or _ELISION_MORE.match(s))
_HEADER = re.compile(r"^#\s*source:", re.I)
_HEADER_MORE = re.compile(r"^#\s*(shows|conclusion|expect|note|tuned)\b[^:]*:", re.I)
MAX_LINES = 2_000_000  # a capture (even an unpacked bug report) longer than this is refused before parsing
MAX_LINE_CHARS = 65_536  # a line longer than this is named in a note: text tools print lines of a few KB
# modules in one listing (-q, -q -x, --query-gpu, the table, amd-smi, rocm-smi, npu-smi): more is not one node
MAX_MODULES = 4096  # (docs/limits.md)


class _Pair(NamedTuple):
    no: int  # 1-based line number in the file as given
    text: str  # what is left after the launcher prefix and quote marks


class Line(_Pair):
    """One line of a capture. A pair, not a dataclass (issue 43): a bug report has millions of lines,
    and a pair is what decorations.peel reads, so the pair made from the file's line is the Line
    kept (one object per line, made at C speed, not a second copy after peeling)."""

    __slots__ = ()
    elision: ClassVar[bool] = False  # the poster cut lines here (`...`): a Cut (a class's, not each line's)


class Cut(Line):
    """A line where the poster cut lines (`...`, `[snip]`): what was cut is not known."""

    __slots__ = ()
    elision: ClassVar[bool] = True


@dataclass
class Cleaned:
    lines: list[Line]
    notes: list[str] = field(default_factory=list)
    hosts: tuple[str, ...] = ()  # launcher prefixes naming hosts or ranks, in order of appearance
    host_of: dict[int, str] = field(default_factory=dict)  # line number -> its host, where prefixes named two or more
    host: str | None = None  # the one host a host-naming prefix named (syslog's host column, pdsh's 'node1: ')
    exact: bool = False  # the lines are the text clean gave ``settle``, line for line (its leading newline aside)


def _long_lines(parts: list[str]) -> list[str]:
    """A line longer than any text tool prints is named in a note (a pasted blob, or a log that lost
    its line ends); it is read whole all the same: XML or JSON saved on one line is such a line, and
    the text as a whole is bounded by the file's own limits."""
    if max(map(len, parts), default=0) <= MAX_LINE_CHARS:  # one C-speed pass: most files have none
        return []
    long = [n for n, s in enumerate(parts, 1) if len(s) > MAX_LINE_CHARS]
    return [f"line(s) {ranges(long)}: longer than {MAX_LINE_CHARS:,} characters (no text tool prints such a line: "
            "a pasted blob, or a log that lost its line ends?); read whole"]


def _long_lines_places(starts: array[int], ends: array[int]) -> list[str]:
    """_long_lines of lines kept as places (their lengths counted at C speed)."""
    import numpy as np

    lengths = np.frombuffer(ends, dtype=np.uint32) - np.frombuffer(starts, dtype=np.uint32)  # no end before its start
    if not len(lengths) or int(lengths.max()) <= MAX_LINE_CHARS:
        return []
    long = (np.flatnonzero(lengths > MAX_LINE_CHARS) + 1).tolist()
    return [f"line(s) {ranges(long)}: longer than {MAX_LINE_CHARS:,} characters (no text tool prints such a line: "
            "a pasted blob, or a log that lost its line ends?); read whole"]


_MARKS = ("```", "~~~", "\\#", "...", "\u2026", "runcated", "RUNCATED", ". . .", "\u2702")  # a fence, an escaped
# '#', a cut (…, (truncated), [OUTPUT TRUNCATED], ✂, . . .: _ELISION_MORE reads any case): each such line holds one;
# -- 8< -- is found by its rare '<' (memchr's speed, not a scan
# of every character for '8<')
_SNIP = re.compile(r"snip|[\[(]cut", re.I)  # or this (_ELISION's [snip], <snip>, --- snip ---, [cut: …], (Cut)); keep
# both beside it and _SNIPS
_SNIPS = ("snip", "[cut", "(cut")


_NULS = re.compile("\x00+")


def _without_nuls(text: str) -> tuple[str, list[str]]:
    """The text without its runs of NUL bytes (read.py lets through only a text whose NULs are a few runs
    after whole lines: a log file preallocated before a crash, its unwritten tail zero-filled), said."""
    runs = [(m.start(), m.end() - m.start()) for m in _NULS.finditer(text)]
    first = text.count("\n", 0, runs[0][0]) + 1
    said = (f"{sum(n for _, n in runs):,} NUL byte(s) in {len(runs)} run(s) dropped (first at line {first}: a "
            "log file preallocated before a crash, or a disk's zero fill); the text around them read")
    return text.replace("\x00", ""), [said]


def clean(text: str | list[str], settle: Callable[[str], Holds | None] | None = None) -> Cleaned:
    """The tool output inside a pasted text, each line with its number in the file. Whole-text work at
    C speed (issue 43): the split, the right-strip and each Line made by map; only the lines that hold
    a fence, an escaped '#' or a cut mark (found by str.find over the text) and those decorations.peel
    changed are looked at one by one. The text given in a list is taken out of it: clean then lets it
    go once the lines are made, where peel does not read it (a bug report's text beside its lines).
    ``settle``: where the text in the list opens with a newline of the caller's own, called with the text
    (that newline first, as marks.Marks joins lines) before the lines are made, where the text is them line
    for line (Cleaned.exact says whether they stayed so): the caller's whole-text searches done then, so a
    bug report's text and its lines are never held together (issue 43: they were its peak memory); what it
    returns says which of the marks a poster's cut needs the text cannot hold (those are not searched)."""
    if isinstance(text, list):
        if settle is not None and (got := _clean_led(text, settle)) is not None:
            return got
        text = text.pop()
    if "\r" in text:  # most captures have none: no copy of the whole text made for them
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    nuls: list[str] = []
    if "\x00" in text:
        text, nuls = _without_nuls(text)
    text, wrapped = decorations.unwrap(text)  # a paste wrapped at a fixed width: its pieces rejoined
    parts = list(map(str.rstrip, text.split("\n")))  # rstrip gives the same string back where nothing is cut
    notes = nuls + _long_lines(parts)
    marked = _marked(text)
    with collector_paused():
        lines = list(map(_MADE, repeat(Line), zip(count(1), parts)))
    same = sum(map(len, parts)) + len(parts) - 1 == len(text)  # nothing right-stripped: the lines are the text
    del parts
    if lines and lines[0].text.lstrip().startswith("\ufeff"):
        lines[0], same = Line(1, lines[0].text.lstrip("\ufeff")), False
    lines, header = _skip_header(lines)
    whole = text if same and not header else None  # the lines' text already (no second copy joined)
    del text  # else peel joins the cleaned lines: the text as read is not held beside them (one line right-stripped)
    peeled = decorations.peel(cast(decorations.Numbered, lines), whole)  # a Line is a (no, text) pair
    del whole, lines
    return _finish(peeled, marked, header, notes, wrapped)


def _clean_led(held: list[str], settle: Callable[[str], Holds | None]) -> Cleaned | None:
    """clean of the text ``held`` holds after a newline of the caller's own, its lines made once ``settle`` has
    had the text and it is let go (their peel's whole-text tests made on it before). None, the text put back
    in ``held`` without that newline, where it needs what only clean's general way does: line ends or escapes
    to rewrite, NULs, a corpus header, a byte-order mark, or a paste wrapped at a fixed width."""
    led = held.pop()
    firsts = led[1:_nth_newline(led, 4)].split("\n")  # its first three lines (the 1st newline is the caller's)
    if any(c in led for c in "\r\x1b\x00") or any(_HEADER.match(s) for s in firsts[:3]) \
            or firsts[0].lstrip().startswith("\ufeff") or _unwraps(led):
        held.append(led[1:])
        return None
    if len(led) > PLACES_FROM and led.isascii():  # a bug report's size: its lines kept as places in the text
        return _clean_places(led, settle)
    parts = list(map(str.rstrip, led.split("\n")))  # rstrip gives the same string back where nothing is cut
    if sum(map(len, parts)) + len(parts) - 1 != len(led):  # a line right-stripped: the lines' text made from them
        led = "\n".join(parts)  # (its lines, and the lines holding a mark, are the text's as read)
    del parts[0]  # the newline's empty line
    notes = _long_lines(parts)
    survey = decorations.Survey.of(led, 1)
    marked = [i - 1 for i in _marked(led, settle(led))]  # the newline first: each line's number one more
    del led
    with collector_paused():
        lines = list(map(_MADE, repeat(Line), zip(count(1), parts)))
    peeled = decorations.peel(cast(decorations.Numbered, lines), survey=survey)
    del lines
    got = _finish(peeled, marked, range(0), notes, decorations.Unwrapped())
    got.exact = len(got.lines) == len(parts) and all(map(is_, map(itemgetter(1), got.lines), parts))
    return got


PLACES_FROM = 8 * 2**20  # characters: a longer (ASCII) text's lines are places in it (lines.TextLines), not objects
_BLANKS = " \t\x0b\x0c\x1c\x1d\x1e\x1f"  # what str.rstrip takes off an ASCII line (no CR is left by then)


def _clean_places(led: str, settle: Callable[[str], Holds | None]) -> Cleaned:
    """_clean_led's work on a long text whose lines stay places in it (issue 43: as objects a 125 MB bug
    report's 1.4 million lines were 305 MiB beside the text). The same Lines to every reader; the text is
    the one ``settle`` had, so the walk's searches are of it, where nothing changed a line."""
    from gpuvet.captures.lines import TextLines, line_ends

    holds = settle(led)
    starts, ends = line_ends(led, 1)
    stripped = _strip_ends(led, starts, ends, holds)
    notes = _long_lines_places(starts, ends)
    survey = decorations.Survey.of(led, 1)
    marked = [i - 1 for i in _marked(led, holds)]
    lines = TextLines(led, starts, ends, whole=not stripped)
    lines.may = holds.may if holds is not None else None  # the words a reader looks for that the text lacks
    peeled = decorations.peel(cast(decorations.Numbered, lines), survey=survey)
    got = _finish(peeled, marked, range(0), notes, decorations.Unwrapped())
    got.exact = got.lines is lines and lines.joined() is led
    return got


def _strip_ends(text: str, starts: array[int], ends: array[int], holds: Holds | None) -> bool:
    """Each line's end moved back over what str.rstrip takes off (an ASCII text's blanks); whether one moved.
    Only a blank the text's triples allow before a newline is searched for."""
    cut = {len(ends) - 1} if text[-1:] in _BLANKS else set()
    for pair in [c + "\n" for c in _BLANKS]:
        if holds is not None and not holds.may(pair):
            continue
        at = text.find(pair)
        while at >= 0:
            cut.add(bisect_left(ends, at + 1))
            at = text.find(pair, at + 2)
    for i in cut:
        ends[i] = starts[i] + len(text[starts[i]:ends[i]].rstrip())
    return bool(cut)


def _unwraps(led: str) -> bool:
    """Whether decorations.unwrap rejoins anything of the text after its first newline. A text longer than
    unwrap reads is left as it is: no copy of it made to ask (issue 43: below 32 MiB the copy, let go, stays
    in the process's heap, 19 MiB of a 20 MB report's peak)."""
    if len(led) - 1 > WRAP_MOST:
        return False
    body = led[1:]
    unwrapped, wrapped = decorations.unwrap(body)
    return unwrapped is not body or bool(wrapped.dropped)


def _nth_newline(text: str, n: int) -> int:
    """Where the text's ``n``-th newline is (its end where it has fewer)."""
    at = -1
    for _ in range(n):
        at = text.find("\n", at + 1)
        if at < 0:
            return len(text)
    return at


def _finish(peeled: decorations.Peeled, marked: list[int], header: range, notes: list[str],
            wrapped: decorations.Unwrapped) -> Cleaned:
    """The peeled lines read one by one where they must be (the first, those peeled, those ``marked``), and
    what was done said."""
    notes += peeled.notes
    pairs, peeled.lines = peeled.lines, []
    placed = getattr(pairs, "over", None)  # lines.TextLines' Lines changed here, where the lines are places
    look = {0, *(compress(count(), map(is_not, map(type, pairs), repeat(Line))) if placed is None else ())}  # the
    # first, and those peeled (a TextLines peel left as it was: none)
    look.update(i if i < header.start else i - len(header) for i in marked if i not in header)
    kept, counts, cuts = _per_line(pairs, sorted(i for i in look if i < len(pairs)), placed)
    fences, escaped = counts
    if fences:
        notes.append(f"{fences} code-fence line(s) skipped")
    if peeled.quoted:
        notes.append(f"{peeled.quoted} line(s) had markdown quote marks (>), removed")
    if escaped:
        notes.append(f"{escaped} line(s) began with markdown's escaped '\\#', read as '#'")
    if cuts:
        marks = _list([f"'{m}'" for m in dict.fromkeys(ln.text.strip() for ln in cuts)])
        notes.append(f"the poster cut lines at line(s) {_ranges([ln.no for ln in cuts])} ({marks}): "
                     "what was cut is not known")
    if wrapped.dropped:
        kept, notes = decorations.without(kept, wrapped.dropped), [*notes, wrapped.note()]
    return Cleaned(kept, notes, peeled.hosts, host_of=peeled.host_of, host=peeled.host)


_MADE = tuple.__new__  # Line's own __new__ is a Python call: a bug report makes millions


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a file's Lines are made, or while doctor reads its files: each
    Line is a pair of an int and a str, which the collector can never free, and a bug report's million of
    them would set it off to walk the whole heap again and again (issue 43: that doubled the time to make
    them, and a tenth of a read). Whatever cycle the work left is collected when it is back on."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Holds(Protocol):
    """What a survey of a whole text (marks.Marks, its byte triples counted) says it cannot hold, with no search."""

    def may(self, word: str) -> bool: ...

    def any_case(self, word: str) -> bool: ...


def _marked(text: str, holds: Holds | None = None) -> list[int]:
    """0-based numbers of the lines of ``text`` holding one of _MARKS or _SNIP, in order: one search of
    the whole text for each (a bug report holds few or none), not a Python test of every line. ``holds``:
    the text's survey, where one was made: a mark it rules out is not searched (issue 43: each search reads
    the whole text, 0.09 s of a 20 MB bug report that held none)."""
    at: list[int] = []
    for mark in _MARKS if holds is None else [m for m in _MARKS if holds.may(m)]:
        i = text.find(mark) if mark[0] in text else -1  # one character is found at memchr's speed: most are absent
        while i >= 0:  # the first on each line is enough
            at.append(i)
            end = text.find("\n", i)
            i = text.find(mark, end) if end >= 0 else -1
    i, seen = text.find("<") if holds is None or holds.may("8<") else -1, 0
    while i >= 0:  # few texts hold many '<' (XML does: past 64 of them, '8<' is searched for as it is)
        if text[i - 1:i] == "8":
            at.append(i)
        seen += 1
        i = text.find("<", i + 1) if seen < 64 else text.find("8<", i) + 1 or -1
    if not text.isascii() or ((holds is None or any(map(holds.any_case, _SNIPS))) and _holds_snip(text)):
        at += (m.start() for m in _SNIP.finditer(text))
    numbers, line, last = [], 0, 0
    for pos in sorted(at):
        line += text.count("\n", last, pos)
        numbers.append(line)
        last = pos
    return numbers


def _holds_snip(text: str, step: int = 1 << 20) -> bool:
    """Whether an ASCII text holds 'snip' or '[cut' in any case (lower() folds ASCII as re.I does), a MiB
    lowered at a time: twice _SNIP's speed on a bug report, and no lowered copy of the whole text."""
    return any(any(w in low for w in _SNIPS) for at in range(0, len(text), step)
               if (low := text[at:at + step + 3].lower()))


def _per_line(pairs: decorations.Numbered, look: list[int], placed: dict[int, Line] | None = None
              ) -> tuple[list[Line], tuple[int, int], list[Line]]:
    """The pairs as Lines, the lines at ``look`` read one by one: a code fence dropped, markdown's
    escaped '#' read as '#', a poster's cut made a Cut; every other pair is already the Line it was
    made as. The Lines, (fences, escaped) and the cuts. ``placed``: where the pairs are a TextLines, its
    Lines put in place of those changed (each made afresh when read: one the same as its place is not)."""
    escaped = 0
    cuts: list[Line] = []
    fences: list[int] = []
    for i in look:
        n, unquoted = pairs[i]
        head = unquoted.lstrip()
        first = head[:1]  # after the quote marks: a '>     [...]' is a cut too
        if first in ("`", "~") and head[:3] in ("```", "~~~"):
            fences.append(i)
            continue
        if first == "\\" and head.startswith("\\#"):  # markdown's escaped '#' (a dmon or nccl-tests header in a post)
            unquoted, escaped, first = unquoted.replace("\\#", "#", 1), escaped + 1, "#"
        if first in _CUT_FIRST and _cut_mark(unquoted.strip()):
            cuts.append(Cut(n, unquoted))
            if placed is None:
                pairs[i] = cuts[-1]
            else:
                placed[i] = cuts[-1]
        elif placed is not None:
            if unquoted != pairs[i][1]:
                placed[i] = Line(n, unquoted)
        elif type(pairs[i]) is not Line or unquoted is not pairs[i][1]:
            pairs[i] = Line(n, unquoted)
    if fences:
        keep = bytearray(b"\x01") * len(pairs)
        for i in fences:
            keep[i] = 0
        pairs = list(compress(pairs, keep))
    return cast(list[Line], pairs), (len(fences), escaped), cuts


def _skip_header(lines: list[Line]) -> tuple[list[Line], range]:
    """The corpus header: a `# source:` line in the first three, and the `# shows:` … lines right after it.
    The lines without it, and the indexes it held."""
    start = next((i for i, (n, s) in enumerate(lines[:3]) if _HEADER.match(s)), None)
    if start is None:
        return lines, range(0)
    end = start + 1
    while end < len(lines) and _HEADER_MORE.match(lines[end][1]):
        end += 1
    return lines[:start] + lines[end:], range(start, end)


def _list(items: list[str], most: int = 6) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def _ranges(numbers: list[int], most: int = 6) -> str:
    """1,2,3,7 -> '1–3, 7' (at most `most` ranges, then a count). The ranges are counted at C speed, only
    the first few made: a bug report's unread lines are some hundred thousand numbers."""
    rising = all(map(lt, numbers, islice(numbers, 1, None)))  # as a file's lines come: no set of them made
    ordered = numbers if rising else sorted(set(numbers))  # (issue 43: a bug report's was its peak memory)
    if not ordered:
        return ""
    steps = map(sub, islice(ordered, 1, None), ordered)
    breaks = compress(count(1), map(ne, steps, repeat(1)))  # where a range other than the first starts
    starts = [0, *islice(breaks, most)]
    total = len(starts) + sum(map(bool, breaks))
    ends = [at - 1 for at in starts[1:]] + [len(ordered) - 1]
    return spans_text([(ordered[a], ordered[b]) for a, b in zip(starts, ends, strict=True)][:most], total, most)


def spans_text(spans: list[tuple[int, int]], total: int, most: int = 6) -> str:
    """_ranges' words for its first ``spans`` of ``total`` ranges."""
    text = ", ".join(f"{a}–{b}" if b > a else f"{a}" for a, b in spans)
    return text + (f" and {total - most} more range(s)" if total > most else "")


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
