"""Which markers a text holds (issue 43): a format, or one reader of a tool's several, runs only on a
text holding one of its markers, strings its every line holds. Each marker is looked for once in
the whole text, with ``in`` (C speed), whoever asks; a bug report is mostly other tools' lines, and
a parser's own Python loop over each of them costs a hundred times more than that one search."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, cast

from gpuvet.captures.text import Line

if TYPE_CHECKING:
    import numpy as np  # imported where a long text's triples are counted: a short capture never needs it


@dataclass(frozen=True)
class Needing:
    """A pattern searched only where the text may hold one of ``words``, each match holding one (a triple
    test each, no search). ``unicode``: the pattern's classes (\\d, \\w) take other scripts' characters too,
    the words only ASCII's: then they decide only for an ASCII text."""

    pattern: re.Pattern[str]
    words: tuple[str, ...]
    unicode: bool = False
    hashed: int = field(init=False, repr=False, compare=False)  # Marks' dict asks it per lookup: a pattern's hash
    # reads its compiled code each time

    def __post_init__(self) -> None:
        object.__setattr__(self, "hashed", hash((self.pattern, self.words, self.unicode)))

    def __hash__(self) -> int:
        return self.hashed


Marker = str | re.Pattern[str] | Needing
_LINE_START = r"\n[^\S\n]*"  # what a pattern anchored at a line's start opens with (its blanks before the line's text)
_BACKREF = re.compile(r"\\\d|\(\?P=")  # a pattern referring to its own groups is searched alone
_SMALL = 1 << 16  # characters: a text this short is searched marker by marker, no triples counted
_STEP = 1 << 20  # characters of the text encoded and counted at a time (memory: a few MiB, whatever the text)
_WINDOW = "<u4"  # four bytes as one number, the first the low byte
_TRIPLE = (1 << 22) - 1  # a window's first three bytes, the third's two high bits dropped: 4 Mi flags
_THIRDS = range(64)  # what is left of a third byte: a pair is there when a triple it begins is
_DOTTED_I, _KELVIN = (0xC4, 0xB0), (0xE2, 0x84, 0xAA)  # İ and the Kelvin sign in UTF-8: the two whose lower() is ASCII
_JOIN_LINES = 1024  # holding joins at most this many lines (a copy of their text) to search each word once
_TEXT = attrgetter("text")  # a line's text, at C speed
_GRAM = 3  # characters: a short text's runs of three, a set of them made once per settle (Marks._literals)


class Marks:
    """The markers the lines hold, each looked for at most once (the lines joined on first need, each
    after a newline: a pattern anchored at a line's start is ``\n…``, a literal the search runs to). A
    long text's byte triples are counted once, in one pass; a marker one of whose byte pairs or triples
    is not there is not there, with no search: a bug report lacks most of some hundred markers, and a
    search that finds nothing reads the whole text, each of them."""

    def __init__(self, lines: list[Line], text: str | None = None) -> None:
        """``text``: the lines joined as ``_joined`` joins them, given where the caller has it before the lines
        are made (text.clean's; issue 43: then the text and a bug report's million lines are never held together)."""
        self.lines = lines
        self.text: str | None = None
        self.found: dict[Marker, bool] = {}
        self.triples: np.ndarray | None = None  # a bit each (np.packbits); None: a short text, or not counted yet
        self.ascii = True
        self.small = False  # a short text's (no triples counted): a word looked for in it is searched, the answer kept
        self.settled: object = None  # the groups settle last answered (read.py asks its FORMATS' twice)
        self.groups: dict[int, tuple[tuple[Marker, ...], bool]] = {}  # id(a group asked) -> (it, its answer)
        if text is not None:
            self._take(text)

    def any(self, markers: Iterable[Marker]) -> bool:
        """Whether the text holds one of ``markers``; none given: always (a format said to need none). A tuple
        asked again answers at once (read.py asks each format's twice, a reader its own on each run): a pattern's
        hash, which each lookup of it in ``found`` takes, reads its compiled code."""
        if type(markers) is tuple and (known := self.groups.get(id(markers))) is not None and known[0] is markers:
            return known[1]
        given, found, answer = False, self.found, False
        for marker in markers:
            given = True
            if (got := found.get(marker)) is None:  # one asked before answers with no call
                got = self.has(marker)
            if got:
                answer = True
                break
        answer = answer or not given
        if type(markers) is tuple:
            self.groups[id(markers)] = (markers, answer)  # the tuple kept: its id names no other while here
        return answer

    def settle(self, groups: Iterable[tuple[Marker, ...]]) -> None:
        """Whether the text holds one of each group's markers answered now (as ``any`` answers it), then
        the joined text let go (a bug report's size again, held through every parser's run otherwise; the
        triples, 512 KiB, are kept for any_case); a marker asked later joins it again."""
        if groups is self.settled:  # the same tuple again: every answer is there
            self.text = None
            return
        groups = groups if isinstance(groups, tuple) else list(groups)
        plan = _planned(groups)
        self._at_line_starts(plan.others)
        held = self._literals(plan)
        if held is not None:  # each group of literals alone answered as ``any`` would, with no call per group
            self.groups.update(plan.unheld)
            for marker in held:
                self.groups.update(plan.holding.get(marker, {}))
        for markers in plan.mixed if held is not None else groups:
            self.any(markers)
        self.settled = groups if isinstance(groups, tuple) else None
        self.text = None

    def _literals(self, plan: _Plan) -> list[str] | None:
        """A short text's literal markers answered at once (those it holds returned; None for a long text's, left
        to ``has``, its byte triples): its runs of _GRAM characters put in a set, and a marker searched only where
        its last run is in it (the runs the markers end with joined with the set, in C) and its first and middle
        too (a search reads the whole text, a set's test does not; a capture lacks most of the formats' thousand
        literals)."""
        found = self.found
        todo = plan.literals if found.keys().isdisjoint(plan.literals) else plan.literals - found.keys()
        held = [] if todo is plan.literals else [m for m in plan.literals - todo if found[m]]
        if not todo:
            return held
        text = self._joined()
        if not text or len(text) > _SMALL:  # a long text's, counted or not (its lines' own text: TextLines)
            return None
        found.update(plan.unfound if todo is plan.literals else dict.fromkeys(todo, False))
        for marker in plan.short:
            if marker in todo and marker in text:
                found[marker] = True
                held.append(marker)
        grams = set(zip(text, text[1:], text[2:], strict=False))
        for run in grams.intersection(plan.runs) if len(grams) < len(plan.runs) else plan.runs.intersection(grams):
            for marker, runs in plan.by_run[run]:
                if marker in todo and runs <= grams and marker in text:
                    found[marker] = True
                    held.append(marker)
        return held

    def _at_line_starts(self, markers: list[Marker]) -> None:
        """The patterns anchored at a line's start (each opens _LINE_START) searched in one pass, where two or
        more would each be searched: every newline is a place each of them is tried, the text's most common
        one (a pass each cost about as much as the byte triples' count). Each is found where its own pattern
        matches at a place the joined one matched (a match never runs past the newline it opens with, so no
        place is passed over); a Needing whose words the triples rule out is not searched, as ``has`` says."""
        todo: dict[Marker, re.Pattern[str]] = {}
        for marker in markers:
            pattern = marker.pattern if isinstance(marker, Needing) else marker
            if isinstance(pattern, re.Pattern) and marker not in self.found and pattern.flags == re.UNICODE \
                    and pattern.pattern.startswith(_LINE_START) and not _BACKREF.search(pattern.pattern):
                todo[marker] = pattern
        if len(todo) < 2:
            return
        text = self._joined()
        for marker in [m for m in todo if isinstance(m, Needing) and not self._needs_search(m)]:
            self.found[marker] = False
            del todo[marker]
        if len(todo) < 2:
            return  # one left: ``has`` searches it alone
        joined = re.compile(_LINE_START + "(?:" + "|".join(f"(?:{p.pattern[len(_LINE_START):]})" for p in todo.values())
                            + ")")
        for hit in joined.finditer(text):
            for marker in [m for m, p in todo.items() if p.match(text, hit.start())]:
                self.found[marker] = True
                del todo[marker]
            if not todo:
                break
        self.found.update(dict.fromkeys(todo, False))

    def has(self, marker: Marker) -> bool:
        if (got := self.found.get(marker)) is None:
            text = self._joined()
            if isinstance(marker, str):
                got = (self.triples is None or _may_hold(self.triples, marker.encode("utf-8", "surrogatepass"))) \
                    and marker in text
            elif isinstance(marker, Needing):
                got = self._needs_search(marker) and bool(marker.pattern.search(text))
            else:
                got = bool(marker.search(text))
            self.found[marker] = got
        return got

    def _joined(self) -> str:
        """The lines joined (again, once let go), their triples counted the first time."""
        if self.text is None and (whole := getattr(self.lines, "joined", lambda: None)()) is not None:
            self.text = whole  # lines kept as places in their text (lines.TextLines): that text, no copy
        if self.text is None:
            texts = [""]  # each line after a "\n": joined once (not a join, then a second copy with "\n" before it)
            texts.extend(ln.text for ln in self.lines)
            self._take("\n".join(texts))
            del texts
        assert self.text is not None
        return self.text

    def _take(self, text: str) -> None:
        self.text = text
        self.triples = _counted(text) if len(text) > _SMALL else None
        self.small = self.triples is None
        self.ascii = text.isascii()

    def _needs_search(self, marker: Needing) -> bool:
        """False where the byte triples rule out every word of the marker (then its pattern is not there)."""
        decides = self.triples is not None and (self.ascii or not marker.unicode)
        return not decides or any(self._may(word) for word in marker.words)

    def _may(self, word: str) -> bool:
        return self.triples is None or _may_hold(self.triples, word.encode("utf-8", "surrogatepass"))

    def may(self, word: str) -> bool:
        """False only where the text cannot hold ``word`` (one of its byte triples is not in it); no search."""
        return self._may(word)

    def any_case(self, word: str) -> bool:
        """Whether the lowered text may hold the ASCII ``word`` (in small letters): False only where, at some
        place of the word, none of the casings of its byte triple is in the text, and the text holds neither
        İ nor the Kelvin sign (lower() makes ASCII of those two: then always True)."""
        if self.text is None and self.triples is None and not self.found:
            self.has("\n")  # joined and counted
        triples = self.triples
        if triples is None or not word.isascii() or _pair(triples, *_DOTTED_I) or _triple(triples, *_KELVIN):
            return True
        cased = [(b, b - 32) if 97 <= b <= 122 else (b,) for b in word.encode()]  # a small letter or its capital
        return all(any(_triple(triples, a, b, c) for a in cased[i] for b in cased[i + 1] for c in cased[i + 2])
                   for i in range(len(cased) - 2))


@dataclass(frozen=True)
class _Plan:
    """What settle asks of a text, sorted once per tuple of groups (read.py's FORMATS': the same for every text)."""

    others: list[Marker]  # the markers no literal (patterns)
    mixed: list[tuple[Marker, ...]]  # the groups holding one of them: asked after the literals are answered
    literals: frozenset[str]
    short: tuple[str, ...]  # literals shorter than _GRAM: searched
    by_run: dict[tuple[str, ...], list[tuple[str, frozenset[tuple[str, ...]]]]]  # last run -> (literal, its runs)
    runs: frozenset[tuple[str, ...]] = frozenset()  # by_run's keys: a set, so the text's runs are joined with it in C
    unfound: dict[str, bool] = field(default_factory=dict)  # every literal not found: a text's answers before search
    # Marks.groups' answers of the groups of literals alone: each not held (an empty one: held, as ``any`` says),
    # then, for a literal the text holds, the groups holding it
    unheld: dict[int, tuple[tuple[Marker, ...], bool]] = field(default_factory=dict)
    holding: dict[str, dict[int, tuple[tuple[Marker, ...], bool]]] = field(default_factory=dict)


_PLANS: dict[int, tuple[object, _Plan]] = {}  # id of a tuple of groups -> (it, its plan); the tuple held


def _planned(groups: tuple[tuple[Marker, ...], ...] | list[tuple[Marker, ...]]) -> _Plan:
    """The groups' plan: kept for a tuple (its id is never another's while it is held here)."""
    if isinstance(groups, tuple) and (kept := _PLANS.get(id(groups))) is not None and kept[0] is groups:
        return kept[1]
    distinct = dict.fromkeys(m for markers in groups for m in markers)
    literals = [m for m in distinct if isinstance(m, str)]
    by_run: dict[tuple[str, ...], list[tuple[str, frozenset[tuple[str, ...]]]]] = {}
    for m in literals:
        if len(m) >= _GRAM:
            by_run.setdefault(tuple(m[-_GRAM:]), []).append((m, _runs(m)))
    alone = [g for g in groups if all(isinstance(m, str) for m in g)]  # each held while the plan is (the groups)
    holding: dict[str, dict[int, tuple[tuple[Marker, ...], bool]]] = {}
    for g in alone:
        for literal in g:
            holding.setdefault(cast(str, literal), {})[id(g)] = (g, True)
    plan = _Plan([m for m in distinct if not isinstance(m, str)],
                 [g for g in groups if not all(isinstance(m, str) for m in g)], frozenset(literals),
                 tuple(m for m in literals if len(m) < _GRAM), by_run, frozenset(by_run), dict.fromkeys(literals, False),
                 {id(g): (g, not g) for g in alone}, holding)
    if isinstance(groups, tuple) and len(_PLANS) < 8:
        _PLANS[id(groups)] = (groups, plan)
    return plan


def _runs(marker: str) -> frozenset[tuple[str, ...]]:
    """The marker's first and middle run of _GRAM characters (each in a text holding it; its last indexes it)."""
    return frozenset(tuple(marker[at : at + _GRAM]) for at in (0, (len(marker) - _GRAM) // 2))


def may_hold(text: str) -> Callable[[str], bool]:
    """A test of whether a word may be in ``text``: False only where one of the word's byte pairs or triples
    is not in it (then neither is the word); always True for a short text (search it)."""
    if len(text) <= _SMALL:
        return lambda word: True
    triples = _counted(text)
    return lambda word: _may_hold(triples, word.encode("utf-8", "surrogatepass"))


def _counted(text: str) -> np.ndarray:
    """Which byte triples (hashed to _TRIPLE + 1 flags, packed a bit each) the text's UTF-8 holds, a step of
    characters at a time, each step with the two characters after it (those across its end) and two zero
    bytes after the last (so a pair ending the text begins a triple)."""
    import numpy as np

    seen = np.zeros(_TRIPLE + 1, dtype=bool)
    for start in range(0, len(text), _STEP):
        data = text[start:start + _STEP + 2].encode("utf-8", "surrogatepass") + b"\0\0"  # the last windows' ends
        for at in range(4):  # the windows starting at offsets 0, 4, 8, …, then 1, 5, 9, …
            if (count := (len(data) - at) // 4) > 0:
                seen[np.frombuffer(data, dtype=_WINDOW, count=count, offset=at) & _TRIPLE] = True
    return np.packbits(seen)


def _triple(packed: np.ndarray, a: int, b: int, c: int) -> bool:
    k = (a | b << 8 | c << 16) & _TRIPLE
    return bool(packed[k >> 3] >> (7 - (k & 7)) & 1)


def _pair(packed: np.ndarray, a: int, b: int) -> bool:
    return any(_triple(packed, a, b, c) for c in _THIRDS)


def _may_hold(triples: np.ndarray, data: bytes) -> bool:
    """False when a byte pair or triple of the marker (its UTF-8 ``data``) is nowhere in the text (then
    neither is the marker); a marker of one byte is searched."""
    if len(data) == 2:
        return _pair(triples, data[0], data[1])
    return all(_triple(triples, data[i], data[i + 1], data[i + 2]) for i in range(len(data) - 2))


def holding(lines: list[Line], words: tuple[str, ...], marks: Marks | None = None) -> list[int]:
    """The indices, in order, of the lines holding one of ``words``. ``marks``: a text's that holds the
    lines, whose byte triples tell the words it lacks without a search: only the others are tested, three
    ``in`` tests a line at most in one comprehension (a bug report's log holds few of a reader's words, and
    each word absent from a line costs a test of it on every line)."""
    if marks is not None and marks.small and lines is marks.lines:  # a short text's own lines: each word looked for
        present = [w for w in words if marks.has(w)]  # once in their text (kept), not in them joined again per reader
    else:
        present = list(words) if marks is None or marks.triples is None else [w for w in words if marks.may(w)]
    if not present:
        return []
    placed = getattr(lines, "holding", None)
    if placed is not None and (got := placed(present)) is not None:
        return list(got)  # lines kept as places in their text (lines.TextLines): the words found in it
    if 1 < len(present) and len(lines) <= _JOIN_LINES:  # each word searched once in the lines joined: a reader's
        joined = "\n".join(map(_TEXT, lines))
        present = [w for w in present if w in joined]  # words mostly in none of them; one a line holds is in it
        if not present:
            return []
    if len(present) == 1:
        word = present[0]
        return [i for i, ln in enumerate(lines) if word in ln.text]
    a, b, c = (present * 2)[:3]  # two: one tested again (never a wrong answer)
    if len(present) <= 3:
        return [i for i, ln in enumerate(lines) if a in (s := ln.text) or b in s or c in s]
    more = present[3:]
    return [i for i, ln in enumerate(lines) if a in (s := ln.text) or b in s or c in s or any(w in s for w in more)]
