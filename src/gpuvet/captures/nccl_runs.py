"""nccl-tests runs that are not one job: a build without MPI=1 started by mpirun or srun prints one
header per process, each process 'Rank 0' of a job of one (``Rank  0 Group  0 Pid 544816 on dgx01
device  0``), and several runs pasted into one file each bring their own header and summary. The
first is a finding (the job measured nothing between GPUs); the second is read as separate runs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuvet.captures.text import Line

RANK_LINE = re.compile(r"^#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)")
_HEADER = re.compile(r"^#?\s*nThread\s+\d+\s+nGpus\s+\d+")
_SUMMARY = re.compile(r"^#?\s*Avg bus bandwidth\s*:")


@dataclass(frozen=True)
class AloneRuns:
    """Processes that each listed themselves as rank 0, and only rank 0."""

    processes: int
    hosts: tuple[str, ...]
    line: int  # the first rank line
    text: str


def alone(lines: list[Line]) -> AloneRuns | None:
    """Two or more processes (host, pid) that each list only rank 0: nccl-tests built without MPI=1. A
    process listing ranks 0..n-1 (-g n) is one job of n ranks, not this."""
    ranks: dict[tuple[str, str], set[int]] = {}
    first: Line | None = None
    for ln in lines:
        if "Rank" in ln.text and (m := RANK_LINE.match(ln.text.strip())) is not None:
            ranks.setdefault((m.group(3), m.group(2)), set()).add(int(m.group(1)))
            first = first or ln
    if len(ranks) < 2 or first is None or any(r != {0} for r in ranks.values()):
        return None
    hosts = tuple(dict.fromkeys(host for host, _ in ranks))
    return AloneRuns(len(ranks), hosts, first.no, first.text.strip()[:240])


def separate(lines: list[Line]) -> list[list[Line]]:
    """The file cut at each run's header when it holds two or more runs, each with its own header and
    summary (a per-process output, or runs pasted one after another); one part otherwise."""
    heads = [i for i, ln in enumerate(lines) if "nThread" in ln.text and _HEADER.match(ln.text.strip())]
    summaries = sum(1 for ln in lines if "Avg bus" in ln.text and _SUMMARY.match(ln.text.strip()))
    if len(heads) < 2 or summaries < 2:
        return [lines]
    cuts = [0, *heads[1:], len(lines)]
    return [lines[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if b > a]
