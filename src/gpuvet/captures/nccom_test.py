"""AWS Neuron's nccom-test (Trainium, Inferentia): its collective benchmark table, read as a collective run
(issue 46, R14B). The Neuron tools guide (NCCOM-TEST User Guide) documents it:

    nccom-test -r 2 allr
         size(B)    count(elems)     type    time(us)    algbw(GB/s)    busbw(GB/s)
        33554432        33554432    uint8         768          40.69          40.69
    Avg bus bandwidth:      40.6901GB/s

one row per size; no redop, root or #wrong column (nccl-tests' table has them), the time an integer of
microseconds. The operation is the command line's (allr, allg, redsct, alltoall, permute, sendrecv); the ranks its
``-r``. gpuvet's performance model has no Neuron device, so its rows are read and never judged against an expected
figure: a note says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.records import NcclResult, NcclRow
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.bench import NcclParse

_HEADER = lazy(r"^\s*size\(B\)\s+count\(elems\)\s+type\s+time\(us\)\s+algbw\(GB/s\)\s+busbw\(GB/s\)")
_ROW = lazy(r"^\s*(\d{1,15})\s+(\d{1,15})\s+([a-z]{2,8}\d{0,2})\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s+"
            r"(\d+(?:\.\d+)?)(?:\s|$)")
_AVG = lazy(r"^\s*Avg bus bandwidth:\s*(\d+(?:\.\d+)?)\s*GB/s\s*$")
_COMMAND = lazy(r"\bnccom-test\b(?P<args>.*)$")
_RANKS = lazy(r"(?:^|\s)(?:-r|--nworkers)[\s=](\d{1,6})\b")
_OPS = {"allr": "all_reduce", "all_reduce": "all_reduce", "allg": "all_gather", "all_gather": "all_gather",
        "redsct": "reduce_scatter", "reduce_scatter": "reduce_scatter", "alltoall": "alltoall",
        "sendrecv": "sendrecv", "permute": "sendrecv"}
MARKS = ("count(elems)",)
UNPRICED = ("nccom-test (AWS Neuron: Trainium/Inferentia): no expected figure for this hardware (gpuvet's performance "
            "model has no Neuron device): its rows are read, not judged")


def parse(lines: list[Line], where: str, out: NcclParse) -> bool:
    """Whether ``lines`` hold nccom-test's table: its rows, summary and command line then go into ``out``."""
    head = next((ln for ln in lines if "count(elems)" in ln.text and _HEADER.match(ln.text)), None)
    if head is None:
        return False
    rows, avg, op, ranks = [], None, "unknown", None
    out.claimed.add(head.no)
    for ln in lines:
        if (m := _ROW.match(ln.text)) is not None and ln.no > head.no:
            size, t, alg, bus = int(m.group(1)), float(m.group(4)), float(m.group(5)), float(m.group(6))
            rows.append(NcclRow(size, t, alg, bus, None))
        elif "Avg bus" in ln.text and (a := _AVG.match(ln.text)) is not None:
            avg = float(a.group(1))
        elif "nccom-test" in ln.text and (c := _COMMAND.search(ln.text)) is not None:
            op = next((_OPS[w] for w in c.group("args").split() if w in _OPS), op)
            ranks = int(r.group(1)) if (r := _RANKS.search(c.group("args"))) is not None else ranks
        else:
            continue
        out.claimed.add(ln.no)
    out.results.append(NcclResult(op, ranks, rows, avg, where))
    largest = max(rows, key=lambda r: r.size_bytes) if rows else None
    read = (f"{len(rows)} row(s), {op.replace('_', '-')} busbw {largest.busbw:g} GB/s at {largest.size_bytes} B"
            if largest is not None else "its header, no result row (cut before the table?)")
    out.notes.append(f"{UNPRICED}; read {read}")
    return True
