"""A tool's output pasted inside a unified diff or a patch (a CHANGELOG's example in a pull request, a hunk
quoted in a code review, a `git diff` of two saved runs): the diff's marks are the editor's, the lines after
them the tool's. Taken off as decorations.peel takes a quote mark: the ``+``/``-``/`` `` column of each hunk
line and the diff's own lines (``diff --git``, ``index``, ``--- a/``, ``+++ b/``, ``@@ -1,4 +1,6 @@``).

Which side is read: the new one, as an engineer reads a diff for what the tool prints now: context and
added (``+``) lines. A removed (``-``) line is the output before the change: dropped, and counted in a note.
A diff that only adds keeps every line it shows. Without a hunk header a paste is a diff only where it
says so (a ```` ```diff ```` or ```` ```patch ```` fence) or where every line of it, or of one fenced block,
is an added line (a quote of the new side); a table border (``+----+``) alone is nobody's diff mark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuvet.captures.lazy_re import lazy

Numbered = list[tuple[int, str]]

_HUNK = lazy(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_FILE_HEAD = lazy(r"^(?:diff --git |diff -[a-zA-Z]+ |index [0-9a-f]{4,}\.\.[0-9a-f]{4,}|--- |\+\+\+ |new file mode |"
                  r"deleted file mode |similarity index |rename (?:from|to) |old mode |new mode )")
_DIFF_FENCE = lazy(r"^\s*(?:```|~~~)\s*(?:diff|patch)\s*$", re.I)
_BORDER = lazy(r"^\+[-=+|: ]*$")  # nvidia-smi's, a markdown table's: a border, not an added line
_NO_NEWLINE = "\\ No newline at end of file"


@dataclass(frozen=True)
class Signs:
    """Where the whole text may hold a diff peel reads (each found by one search of the text; most hold none)."""

    hunks: bool  # a hunk header's '@@ -'
    fenced: bool  # a ```diff/```patch fence, or a fence whose next line is led by '+'
    first: bool  # the paste's first line (blank and '#' lines aside) is led by '+'

    @classmethod
    def of(cls, whole: str) -> Signs | None:
        """One rare character first (memchr's speed: a 20 MB bug report holds no '@' or '`'), then the word."""
        got = cls("@" in whole and "@@ -" in whole, "`" in whole and "```" in whole and _FENCED.search(whole) is not None,
                  "+" in whole[:4096] and _FIRST.match(whole) is not None)
        return got if got.hunks or got.fenced or got.first else None


_FENCED = lazy(r"```(?:diff|patch)|(?:```|~~~)[^\n`]{0,40}\n[ \t>]*\+")
_FIRST = lazy(r"(?:[ \t]*(?:#[^\n]*)?\n){0,8}[ \t>]*\+")


def undiff(numbered: Numbered, notes: list[str], signs: Signs) -> tuple[Numbered, bool]:
    """The lines with a diff's marks and own lines taken off, the removed side dropped; whether one was."""
    drop: set[int] = set()
    cut: set[int] = set()
    hunks = [i for i in _holding(numbered, "@@ -") if _HUNK.match(numbered[i][1])] if signs.hunks else []
    for at in hunks:
        _hunk(numbered, at, drop, cut)
    if not hunks:
        for start, end in _added_units(numbered, signs):
            _unit(numbered, start, end, drop, cut)
    if not cut and not drop:
        return numbered, False
    removed = sum(1 for i in drop if numbered[i][1][:1] == "-" and not _FILE_HEAD.match(numbered[i][1]))
    notes.append(f"{len(cut)} line(s) were lines of a diff or a patch (+, -, context), read without the mark"
                 + (f"; {removed} removed ('-') line(s), the output before the change, not read" if removed else "")
                 + (f"; {len(hunks)} hunk header(s) and the diff's own lines skipped" if hunks else ""))
    return [(n, s[1:] if i in cut else s) for i, (n, s) in enumerate(numbered) if i not in drop], True


def _holding(numbered: Numbered, word: str) -> list[int]:
    """Where the lines hold ``word`` (a long text's found in its text: lines.TextLines)."""
    holding = getattr(numbered, "holding", None)
    at = None if holding is None else holding([word])
    return [i for i, (_, s) in enumerate(numbered) if word in s] if at is None else at


def _hunk(numbered: Numbered, at: int, drop: set[int], cut: set[int]) -> None:
    """One hunk: its header and the file lines above it dropped, its lines read by their mark, as many as the
    header counts (a pasted hunk cut short ends at the first line no diff holds)."""
    drop.add(at)
    k = at - 1
    while k >= 0 and _FILE_HEAD.match(numbered[k][1]):
        drop.add(k)
        k -= 1
    m = _HUNK.match(numbered[at][1])
    assert m is not None
    old, new = int(m.group(1) or 1), int(m.group(2) or 1)
    i = at + 1
    while i < len(numbered) and (old > 0 or new > 0):
        s = numbered[i][1]
        mark = s[:1]
        if s == _NO_NEWLINE:
            drop.add(i)
        elif mark in ("", " ", "+", "-") and not (mark == "" and s):
            old -= mark != "+"
            new -= mark != "-"
            if s:
                (drop if mark == "-" else cut).add(i)
        else:
            break
        i += 1


def _added_units(numbered: Numbered, signs: Signs) -> list[tuple[int, int]]:
    """The spans read as a diff without a hunk header: a ```diff block, else the whole paste or a fenced
    block whose every line (blank, a '#' comment, a cut mark aside) is an added one."""
    if signs.first and _all_added(numbered, 0, len(numbered)):
        return [(0, len(numbered))]
    if not signs.fenced:
        return []
    fences = sorted({*_holding(numbered, "```"), *_holding(numbered, "~~~")})
    fences = [i for i in fences if numbered[i][1].lstrip()[:3] in ("```", "~~~")]
    blocks = list(zip(fences[::2], fences[1::2], strict=False))
    tagged = [(a + 1, b) for a, b in blocks if _DIFF_FENCE.match(numbered[a][1])]
    return tagged or [(a + 1, b) for a, b in blocks if _all_added(numbered, a + 1, b)]


def _all_added(numbered: Numbered, start: int, end: int) -> bool:
    first = next((s for _, s in numbered[start:start + 64] if s.strip() and not _aside(s)), "")
    if first[:1] != "+":  # most pastes: one line looked at
        return False
    added = [s for _, s in numbered[start:end] if s.strip() and not _aside(s)]
    return len(added) >= 2 and all(s[:1] == "+" for s in added) and not all(_BORDER.match(s) for s in added)


def _aside(s: str) -> bool:
    """A line a poster puts among a diff's: a comment or a cut mark ('# [cut: …]', '...')."""
    t = s.strip()
    return t[:1] == "#" or t in ("...", "…", "[...]")


def _unit(numbered: Numbered, start: int, end: int, drop: set[int], cut: set[int]) -> None:
    """A diff's lines without hunk headers: its file lines and removed lines dropped, the rest cut."""
    for i in range(start, end):
        s = numbered[i][1]
        if _FILE_HEAD.match(s) or s[:1] == "-":
            drop.add(i)
        elif s[:1] in ("+", " ") and not _aside(s):
            cut.add(i)
