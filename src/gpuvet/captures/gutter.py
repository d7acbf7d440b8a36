"""Issue 46 (batch Z): a paste copied from an editor or a pager that numbers its lines (vim's ':set number',
'cat -n', 'less -N', a numbered code view): every line of a block led by its line number, counted from 1 one by
one and aligned in one column, then the tool's own line. The numbers are the editor's, not the tool's: taken off,
said. A block must open the text, a fence or follow a blank line, hold MIN_RUN lines and number a line of words
or a blank one, so that a tool's own rows numbered 1, 2, 3 … (a list, a table's index) are not mistaken for one."""

from __future__ import annotations

import re

MIN_RUN = 6  # lines: a numbered run shorter than this is left as it is
PASTE = 5000  # lines of a text looked at
_GUTTER = re.compile(r"^( {0,8})(\d{1,6})(?:[ \t](.*))?$")


def ungutter(numbered: list[tuple[int, str]], notes: list[str]) -> list[tuple[int, str]]:
    """The lines with each editor's line-number gutter taken off; a note says how many. Only a paste's first
    PASTE lines are looked at (a long log is the tool's own file, not an editor's view of it)."""
    starts = [k for k, (_, s) in enumerate(numbered[:PASTE]) if s.lstrip(" ")[:2] in ("1", "1 ", "1\t")]
    if not starts:
        return numbered
    out = list(numbered)
    taken, past = 0, -1
    for k in starts:
        if k <= past or not _opens(out, k) or len(run := _run(out, k)) < MIN_RUN or not _worded(run):
            continue
        for j, rest in run:
            out[j] = (out[j][0], rest)
        taken, past = taken + len(run), run[-1][0]
    if not taken:
        return numbered
    notes.append(f"{taken} line(s) were led by an editor's line numbers (1, 2, 3 …), read without them")
    return out


def _opens(lines: list[tuple[int, str]], at: int) -> bool:
    """Whether the line before ``at`` opens a block: none, a blank line or a code fence. A tool's own rows
    numbered from 1 sit under its header (TransferBench's 'NumCUs …'), a table's rows 1 … under its row 0."""
    before = lines[at - 1][1].strip() if at else ""
    return not before or before.startswith(("```", "~~~"))


def _worded(run: list[tuple[int, str]]) -> bool:
    """Whether a line of the run holds words after its number (or nothing): an editor numbers every line of a
    paste, titles and blank lines too; a table's rows of figures alone are the tool's own index."""
    return any(not rest.strip() or rest.strip()[0].isalpha() for _, rest in run)


def _run(lines: list[tuple[int, str]], at: int) -> list[tuple[int, str]]:
    """The lines from ``at`` numbered 1, 2, 3 … in one right-aligned column: (index, the line after its number)."""
    run: list[tuple[int, str]] = []
    end = None
    for k in range(at, len(lines)):
        m = _GUTTER.match(lines[k][1])
        if m is None or int(m.group(2)) != len(run) + 1:
            break
        column = len(m.group(1)) + len(m.group(2))
        if end is not None and column != end:
            break
        end = column
        run.append((k, m.group(3) or ""))
    return run
