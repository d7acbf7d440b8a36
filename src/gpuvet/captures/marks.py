"""Which markers a text holds (issue 43): a format, or one reader of a tool's several, runs only on a
text holding one of its markers, strings its every line holds. Each marker is looked for once in
the whole text, with ``in`` (C speed), whoever asks; a bug report is mostly other tools' lines, and
a parser's own Python loop over each of them costs a hundred times more than that one search."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import numpy as np

from gpuvet.captures.text import Line

Marker = str | re.Pattern[str]
_SMALL = 1 << 16  # characters: a text this short is searched marker by marker, no triples counted
_STEP = 1 << 20  # characters of the text encoded and counted at a time (memory: a few MiB, whatever the text)
_WINDOW = np.dtype("<u4")  # four bytes as one number, the first the low byte
_TRIPLE = (1 << 22) - 1  # a window's first three bytes, the third's two high bits dropped: 4 Mi flags
_PAIR = (1 << 16) - 1  # its first two
_FOLD = 0x202020  # each of a window's first three bytes with its 0x20 bit set: an ASCII capital as its small letter
_DOTTED_I, _KELVIN = 0xB0C4, (0xE2, 0x84, 0xAA)  # İ and the Kelvin sign in UTF-8: the two whose lower() is ASCII


class Marks:
    """The markers the lines hold, each looked for at most once (the lines joined on first need, each
    after a newline: a pattern anchored at a line's start is ``\n…``, a literal the search runs to). A
    long text's byte pairs and triples are counted once, in one pass; a marker one of whose pairs or
    triples is not there is not there, with no search: a bug report lacks most of some hundred markers, and a
    search that finds nothing reads the whole text, each of them."""

    def __init__(self, lines: list[Line]) -> None:
        self.lines = lines
        self.text: str | None = None
        self.found: dict[Marker, bool] = {}
        self.seen: tuple[np.ndarray, np.ndarray] | None = None  # the pairs, the triples
        self.folded: np.ndarray | None = None  # the folded triples (_FOLD), a bit each; None: İ or K may be there

    def any(self, markers: Iterable[Marker]) -> bool:
        """Whether the text holds one of ``markers``; none given: always (a format said to need none)."""
        given = False
        for marker in markers:
            given = True
            if self.has(marker):
                return True
        return not given

    def settle(self, groups: Iterable[tuple[Marker, ...]]) -> None:
        """Whether the text holds one of each group's markers answered now (as ``any`` answers it), then
        the joined text and its counts let go (a bug report's size again, held through every parser's run
        otherwise; the folded triples, 512 KiB, are kept for any_case); a marker asked later joins it again."""
        for markers in groups:
            self.any(markers)
        self.text, self.seen = None, None

    def has(self, marker: Marker) -> bool:
        if (got := self.found.get(marker)) is None:
            if self.text is None:
                self.text = "\n" + "\n".join([ln.text for ln in self.lines])  # each line after a "\n"
                counts = _counted(self.text) if len(self.text) > _SMALL else None
                self.seen = counts[:2] if counts is not None else None
                self.folded = np.packbits(counts[2]) if counts is not None and not counts[3] else None
            text = self.text
            if isinstance(marker, str):
                got = (self.seen is None or _may_hold(*self.seen, marker)) and marker in text
            else:
                got = bool(marker.search(text))
            self.found[marker] = got
        return got


    def any_case(self, word: str) -> bool:
        """Whether the lowered text may hold the ASCII ``word`` (in small letters): False only where one of
        its triples, each byte's 0x20 bit set (a capital as its small letter), is in no place of the text
        so folded, and the text holds neither İ nor the Kelvin sign (lower() makes ASCII of those two)."""
        if self.text is None and self.folded is None and not self.found:
            self.has("\n")  # joined and counted
        if self.folded is None or not word.isascii():
            return True
        data, folded = word.encode(), self.folded
        return all(_bit(folded, (data[i] | data[i + 1] << 8 | data[i + 2] << 16 | _FOLD) & _TRIPLE)
                   for i in range(len(data) - 2))


def _bit(packed: np.ndarray, k: int) -> bool:
    """Flag ``k`` of np.packbits' array (the first flag the high bit of the first byte)."""
    return bool(packed[k >> 3] >> (7 - (k & 7)) & 1)


def may_hold(text: str) -> Callable[[str], bool]:
    """A test of whether a word may be in ``text``: False only where one of the word's byte pairs or triples
    is not in it (then neither is the word); always True for a short text (search it)."""
    if len(text) <= _SMALL:
        return lambda word: True
    pairs, triples, _, _ = _counted(text)
    return lambda word: _may_hold(pairs, triples, word)


def _counted(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Which byte pairs (_PAIR + 1 flags) and triples (hashed to _TRIPLE + 1) the text's UTF-8 holds, as it
    is and folded (_FOLD), a step of characters at a time, each step with the two characters after it
    (those across its end); and whether İ or the Kelvin sign may be in it."""
    pairs, triples, folded = (np.zeros(_PAIR + 1, dtype=bool), np.zeros(_TRIPLE + 1, dtype=bool),
                              np.zeros(_TRIPLE + 1, dtype=bool))
    for start in range(0, len(text), _STEP):
        data = text[start:start + _STEP + 2].encode("utf-8", "surrogatepass") + b"\0\0"  # the last windows' ends
        for at in range(4):  # the windows starting at offsets 0, 4, 8, …, then 1, 5, 9, …
            if (count := (len(data) - at) // 4) > 0:
                windows = np.frombuffer(data, dtype=_WINDOW, count=count, offset=at)
                pairs[windows & _PAIR] = True
                triples[windows & _TRIPLE] = True
                folded[(windows | _FOLD) & _TRIPLE] = True
    kelvin = (_KELVIN[0] | _KELVIN[1] << 8 | _KELVIN[2] << 16) & _TRIPLE
    return pairs, triples, folded, bool(pairs[_DOTTED_I]) or bool(triples[kelvin])


def _may_hold(pairs: np.ndarray, triples: np.ndarray, marker: str) -> bool:
    """False when a byte pair or triple of the marker is nowhere in the text (then neither is the marker);
    a marker of one byte is searched."""
    data = marker.encode("utf-8", "surrogatepass")
    if len(data) == 2:
        return bool(pairs[data[0] | data[1] << 8])
    return all(triples[(data[i] | data[i + 1] << 8 | data[i + 2] << 16) & _TRIPLE] for i in range(len(data) - 2))
