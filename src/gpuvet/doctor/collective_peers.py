"""Runs of one test a file holds side by side (issue 46, AX2): a poster who ran the same command twice (the same
binary, sizes and GPU list, captures/nccl_legacy.py reads each run under its command line) and got a fraction of
the first run's bus bandwidth compares the node with itself. The faster run is what that node (or the cards it
held then) reached with that command, so the slower run is judged against it where the model cannot price it
(no module named, or one the catalog lacks): the basis is that run, named by its line, never the model."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.doctor.collective_expect import SLOW, Judged

if TYPE_CHECKING:
    from gpuvet.captures.records import NcclResult, NcclRow

_RUN = re.compile(r", the run at line (\d+): (.+)$")  # bench._runs' name of a run under its command line
_LEAST_BYTES = 2**20  # below 1 MiB a run's time is mostly latency: two runs' ratio says little of the path


def peer_judged(results: list[NcclResult], judged: list[Judged]) -> list[Judged]:
    """The runs (less those the model priced among ``judged``) whose busbw at their largest size is under SLOW of the
    best run of the same command at that size, judged against it."""
    told = {
        i
        for i, r in enumerate(results)
        if (row := _largest(r)) is not None
        and any(j.expected is not None and j.op == r.op and j.size_bytes == row.size_bytes for j in judged)
    }
    groups: dict[tuple[str, str, int], list[tuple[int, NcclResult, NcclRow, int]]] = {}
    for i, r in enumerate(results):
        row = _largest(r)
        run = _RUN.search(r.where)
        if row is None or run is None or row.busbw is None or row.size_bytes < _LEAST_BYTES:
            continue
        groups.setdefault((r.op, run.group(2), row.size_bytes), []).append((i, r, row, int(run.group(1))))
    out: list[Judged] = []
    for (_, command, _size), runs in groups.items():
        best_i, _, best, line = max(runs, key=lambda x: x[2].busbw or 0.0)
        top = best.busbw or 0.0
        for i, r, row, _ in runs:
            if i != best_i and i not in told and row.busbw is not None and top > 0 and row.busbw < SLOW * top:
                out.append(
                    Judged(
                        r.op,
                        row.size_bytes,
                        row.busbw,
                        top,
                        f"the same command ('{command}') reached in the run at line {line} of this "
                        "file (the file's own runs compared; the model names no figure for them)",
                    )
                )
    return out


def _largest(r: NcclResult) -> NcclRow | None:
    rows = [row for row in r.rows if row.busbw is not None and row.size_bytes > 0]
    return max(rows, key=lambda row: (row.size_bytes, row.busbw or 0.0)) if rows else None
