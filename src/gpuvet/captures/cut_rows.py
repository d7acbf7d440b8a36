"""A table row that ends before its columns do: the paste was cut mid-line (issue 46, batch Q: an
rccl-tests row cut after its algbw, read through an older layout, made its busbw a '#wrong' column).
Posters cut anywhere, so a short row at the end of its table (the file's last line, or one followed by a
cut mark or prose) is said in a note and never judged: a missing cell is never zero, never 'wrong', never
'failed'. A row merely missing a blank cell (rocm-smi's empty Perf) still reaches the table's last column."""

from __future__ import annotations

import re


def _columns(text: str, header: bool) -> tuple[int, int]:
    """A line's cell count and where its last cell begins; a header's columns are set apart by two blanks or
    more ('SCLK OD', one column of two words)."""
    body = text.rstrip()
    cells = [c for c in (re.split(r"\s{2,}", body.strip()) if header else body.split()) if c]
    return len(cells), (len(body) - len(cells[-1]) if cells else 0)


def short(rows: list[tuple[int, str]], header: str | None = None, read: int | None = None) -> dict[int, tuple[int, int]]:
    """The rows (line number, text) cut short: at the end of a run of rows, with fewer cells than the table's
    widest row (a table of one row: its header's columns), ending before that line's last cell begins, and
    (``read``: the cells the reader uses) missing one the reader would read. Line -> (cells kept, columns)."""
    model = max((text for _, text in rows), key=lambda t: len(t.split()), default="")
    by_header = len(rows) == 1 and header is not None
    full, last = _columns(header if by_header and header is not None else model, by_header)
    ends = [(no, text) for k, (no, text) in enumerate(rows) if k + 1 == len(rows) or rows[k + 1][0] != no + 1]
    return {no: (len(text.split()), full) for no, text in ends
            if len(text.split()) < min(full, read or full) and len(text.rstrip()) < last}


def note(tool: str, cut: dict[int, tuple[int, int]]) -> str:
    """The note for the cut rows: which line, how many of the columns it kept."""
    said = ", ".join(f"line {no}: {n} of {full} columns" for no, (n, full) in sorted(cut.items()))
    last = "the last row is cut" if len(cut) == 1 else f"{len(cut)} rows are cut"
    return f"{tool}: {last} ({said}): not read — a cell the paste lost is not judged"
