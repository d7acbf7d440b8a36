"""A long text's lines kept as places in the text, each Line made when it is read (issue 43).

A bug report of 125 MB is 1.4 million lines: as Line objects (a pair, an int and a str each) they were
305 MiB beside the text; as two arrays of places they are 11 MiB, the text held once. ``TextLines`` is a
list of Line to every reader (indexing, slicing, iterating, ``len``, comparing) with no Line stored: a
reader's pass makes the Lines it walks and lets them go. It is read-only: a reader that changes its lines
gets a TypeError, never a silent change.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from itertools import count, repeat
from operator import getitem
from typing import TYPE_CHECKING, NoReturn, SupportsIndex, overload

from gpuvet.captures.text import Line

if TYPE_CHECKING:
    import numpy as np

_MADE = tuple.__new__  # as text.clean makes its Lines: a Python __new__ per line would cost a call each
_STEP = 1 << 20  # characters of the text read at a time where its line ends are found
_FOUND_FIRST = 1 << 16  # characters: lines spanning no more are searched for each word once before its places
_SEARCHED = 1 << 18  # characters of it searched at a time for words (_places: its arrays ~1 MiB, not a bug report's peak)


def line_ends(text: str, lead: int) -> tuple[array[int], array[int]]:
    """Where each line of ``text`` after its first ``lead`` characters starts and ends (its newline), as
    ``text.split("\\n")`` cuts it: a step of characters at a time (UTF-32, one unit a character, so the places
    are the str's own whatever it holds), each step's places added as found (no whole-text array beside them)."""
    import numpy as np

    starts, ends = array("I", [lead]), array("I")
    for at in range(lead, len(text), _STEP):
        units = np.frombuffer(text[at:at + _STEP].encode("utf-32-le", "surrogatepass"), dtype="<u4")
        newlines = (np.flatnonzero(units == 10) + at).astype("<u4")
        del units
        ends.frombytes(newlines.tobytes())
        newlines += 1
        starts.frombytes(newlines.tobytes())
    ends.append(len(text))
    return starts, ends


class TextLines(list[Line]):  # a list to every reader's annotation; its own list storage stays empty
    """The lines of ``text`` at ``starts``/``ends`` (line i is number i + 1), those at ``index`` (all where
    it is a range), with ``over``'s Lines in place of a few (a poster's cut, a line text.clean changed)."""

    def __init__(self, text: str, starts: array[int], ends: array[int], index: range | array[int] | None = None,
                 over: dict[int, Line] | None = None, whole: bool = False) -> None:
        """``whole``: the lines joined after a newline each are ``text`` (nothing right-stripped)."""
        super().__init__()
        self.text, self.starts, self.ends = text, starts, ends
        self.firsts: list[np.ndarray] = []  # each line's first byte, once counted (shared with the views)
        self.may: Callable[[str], bool] | None = None  # the text's byte triples' test (marks.Marks.may), if counted
        self.rows: range | array[int] = range(len(starts)) if index is None else index
        self.over: dict[int, Line] = {} if over is None else over
        self.whole = whole and index is None
        self.whole_rows = whole  # no line right-stripped (views keep it: a slice of the text is their lines')
        self.ascending = not isinstance(self.rows, range) or self.rows.step > 0

    def joined(self) -> str | None:
        """The lines, each after a newline, as one text: the text itself where they are all of it, as it is."""
        return self.text if self.whole and not self.over else None

    def blank(self) -> list[int]:
        """The positions of the empty lines, in order."""
        import numpy as np

        empty = np.frombuffer(self.ends, dtype=np.uint32) == np.frombuffer(self.starts, dtype=np.uint32)
        found = {int(i) for i in np.flatnonzero(empty)}
        found.update(i for i, ln in self.over.items() if not ln.text)
        found.difference_update(i for i, ln in self.over.items() if ln.text)
        return [p for i in sorted(found) if (p := self.index_of(i + 1)) is not None]

    def _view(self, index: range | array[int], ascending: bool = True) -> TextLines:
        view = TextLines(self.text, self.starts, self.ends, index, self.over)
        view.firsts, view.whole_rows, view.may = self.firsts, self.whole_rows, self.may
        view.ascending = self.ascending and ascending
        return view

    def _line(self, i: int) -> Line:
        got = self.over.get(i)
        return got if got is not None else _MADE(Line, (i + 1, self.text[self.starts[i]:self.ends[i]]))

    def __len__(self) -> int:
        return len(self.rows)

    def __bool__(self) -> bool:
        return len(self.rows) > 0

    @overload
    def __getitem__(self, k: SupportsIndex) -> Line: ...

    @overload
    def __getitem__(self, k: slice) -> TextLines: ...

    def __getitem__(self, k: SupportsIndex | slice) -> Line | TextLines:
        if isinstance(k, slice):
            return self._view(self.rows[k], k.step is None or k.step > 0)
        i: int = self.rows[k]
        if self.over and (got := self.over.get(i)) is not None:
            return got
        return _MADE(Line, (i + 1, self.text[self.starts[i]:self.ends[i]]))

    def __iter__(self) -> Iterator[Line]:
        index = self.rows
        if isinstance(index, range) and index.step == 1:
            # the arrays sliced (a copy of the view's places), not islice'd: islice steps over every place before
            # the view's first, so walking each of a long text's objects was quadratic (review 67b F4)
            texts = map(getitem, repeat(self.text), map(slice, self.starts[index.start:index.stop],
                                                         self.ends[index.start:index.stop]))
            made: Iterator[Line] = map(_MADE, repeat(Line), zip(count(index.start + 1), texts))
        else:
            texts = map(getitem, repeat(self.text), map(slice, map(self.starts.__getitem__, index),
                                                         map(self.ends.__getitem__, index)))
            made = map(_MADE, repeat(Line), zip(map((1).__add__, index), texts, strict=True))
        return made if not self.over else (self.over.get(ln[0] - 1, ln) for ln in made)

    def __reversed__(self) -> Iterator[Line]:
        return map(self._line, reversed(self.rows))

    def __contains__(self, item: object) -> bool:
        return any(ln == item for ln in self)

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if not isinstance(other, list) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, iter(other), strict=True))

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # a list's

    def __add__(self, other: Iterable[Line]) -> list[Line]:  # type: ignore[override]
        return [*self, *other]

    def __radd__(self, other: Iterable[Line]) -> list[Line]:
        return [*other, *self]

    def __mul__(self, n: SupportsIndex) -> list[Line]:
        return [*self] * n

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"TextLines({len(self)} lines)"

    def copy(self) -> list[Line]:
        return [*self]

    def count(self, item: Line) -> int:
        return sum(ln == item for ln in self)

    def index(self, item: Line, start: SupportsIndex = 0, stop: SupportsIndex = 2**62) -> int:
        """list.index: where ``item`` first is (ValueError where it is not)."""
        for at, ln in enumerate(self[start:stop], int(start) if int(start) >= 0 else max(0, len(self) + int(start))):
            if ln == item:
                return at
        raise ValueError(f"{item!r} is not in the lines")

    def index_of(self, number: int) -> int | None:
        """Where the line numbered ``number`` is among these (None: not one of them)."""
        index = self.rows
        if isinstance(index, range):
            return index.index(number - 1) if number - 1 in index else None
        at = bisect_left(index, number - 1)
        return at if at < len(index) and index[at] == number - 1 else None

    def without(self, numbers: set[int]) -> TextLines:
        """These lines less those numbered in ``numbers``, in order (the lines no format has claimed)."""
        index = self.rows
        if isinstance(index, range) and index.step == 1:
            drop = sorted(n - 1 for n in numbers if index.start <= n - 1 < index.stop)
            kept = array("I")
            at = index.start
            for i in drop:
                kept.extend(range(at, i))
                at = i + 1
            kept.extend(range(at, index.stop))
            return self._view(kept)
        return self._view(array("I", [i for i in index if i + 1 not in numbers]))

    def holding(self, words: list[str]) -> list[int] | None:
        """The positions, in order, of these lines holding one of ``words``: each word found in the text by
        ``str.find`` (not tested on every line), the places mapped to lines at C speed. None where that
        cannot answer (a word holding a newline)."""
        import numpy as np

        if not self.ascending or any("\n" in w or not w for w in words):
            return None
        text, index = self.text, self.rows
        if not len(index):
            return []
        lo, hi = self.starts[index[0]], self.ends[index[-1]]
        starts, ends = np.frombuffer(self.starts, dtype=np.uint32), np.frombuffer(self.ends, dtype=np.uint32)
        found = [np.zeros(0, dtype=np.intp)]
        searched = words if self.may is None else [w for w in words if self.may(w)]  # one the text's byte triples
        if hi - lo <= _FOUND_FIRST:  # a short span: a word it lacks told by one find, no arrays made for it
            searched = [w for w in searched if text.find(w, lo, hi) >= 0]
        for word, where in _places(text, searched, lo, hi):  # rule out is in none of its lines: unsearched
            lines = np.searchsorted(starts, where, side="right") - 1  # the line each place is on
            found.append(lines[where + len(word) <= ends[lines]])  # the word whole on it (before its end's blanks)
        base = _distinct(np.concatenate(found))
        if self.over:  # a line text.clean changed: its own text decides
            changed = np.fromiter(self.over, dtype=np.int64, count=len(self.over))
            holds = np.array([i for i, ln in self.over.items() if any(w in ln.text for w in words)], dtype=np.int64)
            base = _distinct(np.concatenate((base[~np.isin(base, changed)], holds)))
        return self._positions(base)

    def starting(self, chars: str) -> list[int]:
        """The positions, in order, of these lines whose first character is one of ``chars`` ("\\n" in it: the
        empty lines too), and of every line text.clean changed (its own text is the reader's to test)."""
        import numpy as np

        firsts = _first_bytes(self)
        index = self.rows
        picked = firsts[index.start:index.stop:index.step] if isinstance(index, range) else \
            firsts[np.frombuffer(index, dtype=np.uint32)]
        hit = np.isin(picked, np.frombuffer(chars.encode("ascii"), dtype=np.uint8))
        del picked
        at = np.flatnonzero(hit).tolist()
        if not self.over:
            return at
        changed = self._positions(np.array(sorted(self.over), dtype=np.int64))
        return sorted({*at, *changed})

    def block(self, first: int, stop: int) -> str | None:
        """The texts of lines ``first`` to ``stop`` (positions) joined by newlines, as slices of the text where
        nothing changed or right-stripped them: one where they are next to each other in it, else one for each run
        of them that is (_runs); None where they are not."""
        index = self.rows
        if not self.whole_rows or self.over or first >= stop or stop > len(index):
            return None
        a, b = index[first], index[stop - 1]
        if b - a == stop - 1 - first:
            return self.text[self.starts[a]:self.ends[b]]
        return None if isinstance(index, range) else _runs(self, index, first, stop)

    def _positions(self, base: np.ndarray) -> list[int]:
        """Where the lines of ``base`` (indices in the text's lines, ascending) are among these."""
        import numpy as np

        index = self.rows
        if isinstance(index, range):
            inside = base[(base >= index.start) & (base < index.stop) & ((base - index.start) % index.step == 0)]
            return [int(p) for p in (inside - index.start) // index.step]
        held = np.frombuffer(index, dtype=np.uint32)
        at = np.searchsorted(held, base)
        ok = at < len(held)
        ok[ok] = held[at[ok]] == base[ok]
        return [int(p) for p in at[ok]]

    def unread(self, claimed: set[int]) -> tuple[str, int] | None:
        """The numbers of these lines that hold more than blanks, are no poster's cut and are not in
        ``claimed``, as text._ranges words them, and how many: counted at C speed (read.py's _skipped).
        None for lines in another order than the text's (read one by one)."""
        import numpy as np

        from gpuvet.captures.text import spans_text

        if not self.ascending:
            return None
        index = self.rows
        starts, ends = np.frombuffer(self.starts, dtype=np.uint32), np.frombuffer(self.ends, dtype=np.uint32)
        if isinstance(index, range):
            keep = (ends[index.start:index.stop:index.step] != starts[index.start:index.stop:index.step])
            numbers = np.arange(index.start + 1, index.stop + 1, index.step, dtype=np.uint32) if len(index) else \
                np.zeros(0, dtype=np.uint32)
        else:
            held = np.frombuffer(index, dtype=np.uint32)
            keep = (ends != starts)[held]
            numbers = held + np.uint32(1)
        gone = [n - 1 for n in claimed] + [i for i, ln in self.over.items() if ln.elision or not ln.text.strip()]
        keep[self._positions(_distinct(np.array(gone, dtype=np.int64)))] = False
        filled = [i for i, ln in self.over.items() if not ln.elision and ln.text.strip() and i + 1 not in claimed]
        keep[self._positions(_distinct(np.array(filled, dtype=np.int64)))] = True
        numbers = numbers[keep]
        del keep
        if not len(numbers):
            return "", 0
        firsts = np.concatenate(([0], np.flatnonzero(np.diff(numbers) != 1) + 1))
        lasts = np.concatenate((firsts[1:] - 1, [len(numbers) - 1]))
        spans = [(int(numbers[a]), int(numbers[b])) for a, b in zip(firsts[:6], lasts[:6], strict=True)]
        return spans_text(spans, len(firsts)), len(numbers)

    def _refuse(self, *_: object) -> NoReturn:
        raise TypeError("a capture's lines are read-only (TextLines): copy them with list() first")

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore[assignment]
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


def _runs(lines: TextLines, index: array[int], first: int, stop: int) -> str | None:
    """TextLines.block of lines not all next to each other: each run of them that is one slice of the text, the
    slices joined by newlines (a reader's unclaimed lines: another reader's few claimed lines leave gaps, and the
    lines between two gaps were each made a Line and joined, 0.02 s of a 20 MB report); None where they are far
    apart (as many slices as lines: the caller joins them)."""
    import numpy as np

    rows = np.frombuffer(index, dtype=np.uint32)[first:stop]
    cuts = (np.flatnonzero(np.diff(rows) != 1) + 1).tolist()
    if len(cuts) > (stop - first) // 8:
        return None
    text, starts, ends = lines.text, lines.starts, lines.ends
    return "\n".join([text[starts[rows[i]]:ends[rows[j - 1]]] for i, j in zip([0, *cuts], [*cuts, len(rows)], strict=True)])


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``, sorted, without the import of ``numpy.ma`` (~10 ms of every bug report's read) that
    numpy 2.4's ``unique``, ``union1d`` and ``setdiff1d`` make (as node/matrix_arrays.py's)."""
    import numpy as np

    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


def _places(text: str, words: list[str], lo: int, hi: int) -> Iterator[tuple[str, np.ndarray]]:
    """Each word with places of it in ``text[lo:hi]``: at least its first on each line it is on. An ASCII text's
    words of two characters or more are found by numpy a step of the text at a time, all of them together (each
    step encoded once, each word's first two bytes compared, its places narrowed by the next bytes): at 20 MB that is
    ~5 ms a word where ``str.find`` took 10-15 ms, and a word on 27k lines (a DGX report's 'nvidia') is no
    Python loop of 27k finds. A single character is found by ``str.find`` (memchr), line by line."""
    import numpy as np

    long = [w for w in words if len(w) > 1] if text.isascii() else []
    for word in words:
        if word not in long:
            yield word, _finds(text, word, lo, hi)
    if not long:
        return
    wanted = [np.frombuffer(w.encode("ascii"), dtype=np.uint8) for w in long]
    found: list[list[np.ndarray]] = [[] for _ in long]
    reach = max(map(len, long)) - 1  # a word that starts in a step may end in the next
    for at in range(lo, hi, _SEARCHED):
        data = np.frombuffer(text[at:min(hi, at + _SEARCHED + reach)].encode("ascii"), dtype=np.uint8)
        for got, byte in zip(found, wanted, strict=True):
            if (room := min(len(data) - len(byte) + 1, _SEARCHED)) <= 0:
                continue
            lead = data[:room] == byte[0]
            lead &= data[1:room + 1] == byte[1]  # two bytes compared whole: fewer places made than from one
            place = np.flatnonzero(lead)
            for k in range(2, len(byte)):
                place = place[data[place + k] == byte[k]]
            got.append(place.astype(np.uint32) + np.uint32(at))  # a text's places: as its line starts are kept
    for word, got in zip(long, found, strict=True):
        yield word, np.concatenate(got) if got else np.zeros(0, dtype=np.uint32)


def _finds(text: str, word: str, lo: int, hi: int) -> np.ndarray:
    """The first place of ``word`` on each line of ``text[lo:hi]`` holding it, by ``str.find`` (the next looked
    for after that line's end)."""
    import numpy as np

    at, places = text.find(word, lo, hi), array("I")
    while at >= 0:
        places.append(at)
        end = text.find("\n", at + len(word), hi)
        at = text.find(word, end, hi) if end >= 0 else -1
    return np.frombuffer(places, dtype=np.uint32)


def _first_bytes(self: TextLines) -> np.ndarray:
    """Each line's first byte (an ASCII text's: TextLines are made of those only), a newline for an empty
    line; counted once a step of the text at a time (no copy of the whole text encoded)."""
    import numpy as np

    if self.firsts:
        return self.firsts[0]
    starts, ends = np.frombuffer(self.starts, dtype=np.uint32), np.frombuffer(self.ends, dtype=np.uint32)
    firsts = np.full(len(starts), 10, dtype=np.uint8)
    lo = 0
    for at in range(0, len(self.text), _STEP):
        hi = int(np.searchsorted(starts, min(at + _STEP, len(self.text))))  # a start at the end: empty
        if hi > lo:
            chunk = np.frombuffer(self.text[at:at + _STEP].encode("ascii"), dtype=np.uint8)
            firsts[lo:hi] = chunk[starts[lo:hi] - at]
            lo = hi
    firsts[starts == ends] = 10
    self.firsts.append(firsts)
    return firsts


def starting(lines: list[Line], chars: str) -> list[int] | None:
    """The positions of the lines beginning with one of ``chars`` (or changed by text.clean) where ``lines`` are
    places in a long text (TextLines); None for any other list (its reader tests each line as before)."""
    return lines.starting(chars) if isinstance(lines, TextLines) else None


def block(lines: list[Line], first: int, stop: int) -> str:
    """``"\\n".join`` of the texts of ``lines[first:stop]``: a slice of the text where they are places in it,
    next to each other (no Line made)."""
    got = lines.block(first, stop) if isinstance(lines, TextLines) else None
    return got if got is not None else "\n".join([ln.text for ln in lines[first:stop]])


def walk(lines: list[Line], busy: Callable[[], bool], candidates: list[int] | None) -> Iterable[Line]:
    """``lines`` in order, but while ``busy()`` is false only those at ``candidates`` (positions, in order): a
    reader with no block open skips the lines its own first test would pass over, none of them made (issue 43).
    No candidates: the lines themselves (a list is read at C speed)."""
    return lines if candidates is None else _skipping(lines, busy, candidates)


def _skipping(lines: list[Line], busy: Callable[[], bool], candidates: list[int]) -> Iterator[Line]:
    i, k, n = 0, 0, len(lines)
    while i < n:
        if not busy():
            k = bisect_left(candidates, i, k)
            if k == len(candidates):
                return
            i = candidates[k]
        yield lines[i]
        i += 1


class Placed(list[tuple[int, Line]]):  # a list to every reader's annotation; its own list storage stays empty
    """The (position, Line) pairs of a TextLines' lines at ``positions``, each Line made when read (issue 43: a
    bug report's 171k kernel lines holding a driver's word were 40 MiB as pairs kept beside the text)."""

    def __init__(self, lines: TextLines, positions: list[int]) -> None:
        super().__init__()
        rows = lines.rows
        self.positions = array("I", positions)
        self.lines = lines._view(array("I", map(rows.__getitem__, positions)))  # the Lines alone, as a list

    def __len__(self) -> int:
        return len(self.positions)

    def __bool__(self) -> bool:
        return len(self.positions) > 0

    def __iter__(self) -> Iterator[tuple[int, Line]]:
        return zip(self.positions, self.lines, strict=True)

    @overload
    def __getitem__(self, k: SupportsIndex) -> tuple[int, Line]: ...

    @overload
    def __getitem__(self, k: slice) -> list[tuple[int, Line]]: ...

    def __getitem__(self, k: SupportsIndex | slice) -> tuple[int, Line] | list[tuple[int, Line]]:
        if isinstance(k, slice):
            return list(zip(self.positions[k], self.lines[k], strict=True))
        return self.positions[k], self.lines[k]

    def __repr__(self) -> str:
        return f"Placed({len(self)} lines)"

    def _refuse(self, *_: object) -> NoReturn:
        raise TypeError("a capture's lines are read-only (Placed): copy them with list() first")

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore[assignment]
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


PLACED_FROM = 1 << 16  # pairs: more are kept as places (Placed), fewer as a list (each pass over them at C speed)


def pairs(lines: list[Line], positions: list[int]) -> list[tuple[int, Line]]:
    """``[(i, lines[i]) for i in positions]``; where ``lines`` are places in a long text (TextLines) and the pairs
    many, each Line made when the pairs are read, none kept (a few MiB of pairs are faster read from a list)."""
    if isinstance(lines, TextLines) and len(positions) > PLACED_FROM:
        return Placed(lines, positions)
    return [(i, lines[i]) for i in positions]


def unless(lines: list[Line], positions: list[int], pattern: re.Pattern[str]) -> list[int]:
    """``positions`` less those of the lines ``pattern`` matches whole: a long text's lines tested at C speed (their
    texts sliced from it, none made a Line), a reader's word that a flood of one harmless line holds."""
    if isinstance(lines, TextLines) and not lines.over:
        rows, text, starts, ends = lines.rows, lines.text, lines.starts, lines.ends
        firsts, lasts = map(starts.__getitem__, map(rows.__getitem__, positions)), map(ends.__getitem__, map(
            rows.__getitem__, positions))  # no list of the rows beside the positions (171k at 125 MB)
        texts = map(text.__getitem__, map(slice, firsts, lasts))
        return [p for p, m in zip(positions, map(pattern.fullmatch, texts), strict=True) if m is None]
    return [p for p in positions if pattern.fullmatch(lines[p].text) is None]


def seconds(placed: list[tuple[int, Line]]) -> list[Line]:
    """``[ln for _, ln in placed]``: for pairs ``pairs`` placed, their Lines as places (none made here)."""
    return placed.lines if isinstance(placed, Placed) else [ln for _, ln in placed]
