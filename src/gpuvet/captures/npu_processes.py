"""Issue 46 (R14C): the process table ``npu-smi info`` prints under its chip table (Huawei's npu-smi manual: a
'| NPU     Chip | Process id | Process name | Process memory(MB) |' header, then one row per process, '| 7  0 |
37671 | hlt_host_devmm_ | 686 |', or 'No running processes found in NPU 3'). Its rows start with two numbers as a
chip's first row does: read here first, so they are never taken for a chip whose second row is cut. Each process
is put on the chip its row names (a workload the chip runs, as hl-smi's and nvidia-smi's are), never judged here."""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures.marks import holding
from gpuvet.captures.records import ListedParse, SmiProcess
from gpuvet.captures.text import Line

_HEADER = re.compile(r"^\s*\|\s*NPU\s+Chip\s*\|\s*Process id\s*\|\s*Process name\s*\|\s*Process memory")
_ROW = re.compile(r"^\s*\|\s*(\d{1,4})\s+(\d{1,3})\s*\|\s*(\d{1,10})\s*\|\s*([^|]*?)\s*\|\s*([^|]*?)\s*\|\s*$")
# issue 46: a chip running nothing, as Ascend's 310B boards print it ('| 0  0 | - | - | - |'): read, no process
_NONE = re.compile(r"^\s*\|\s*\d{1,4}\s+\d{1,3}\s*\|\s*-{1,2}\s*\|\s*-{1,2}\s*\|\s*-{1,2}\s*\|\s*$")
_BREAK = re.compile(r"^\s*\|\s*(?:NPU\s+Name|NPU\s+Chip\s*\|\s*Bus-Id)")  # another chip table's header


def read(lines: list[Line], out: ListedParse) -> set[int]:
    """The process rows under each process header, claimed; returns their lines. Put on the chips once they are
    listed (``attach``)."""
    if not holding(lines, ("Process id",)):  # its header's words, else no line is tested (issue 43)
        return set()
    rows: set[int] = set()
    under = False
    for ln in lines:
        if _HEADER.match(ln.text):
            under = True
            rows.add(ln.no)
        elif _BREAK.match(ln.text):
            under = False
        elif under and (_ROW.match(ln.text) or _NONE.match(ln.text)):
            rows.add(ln.no)
    out.claimed |= rows
    return rows


def attach(lines: list[Line], rows: set[int], out: ListedParse) -> None:
    """Each process row's process on the chip it names ('NPU 7 chip 0'), in the order printed."""
    procs: dict[str, list[SmiProcess]] = {}
    for ln in lines:
        if ln.no in rows and (m := _ROW.match(ln.text)) is not None:
            memory = f"{m.group(5)} MB" if m.group(5).isdigit() else m.group(5) or None
            procs.setdefault(f"NPU {m.group(1)} chip {m.group(2)}", []).append(
                SmiProcess(m.group(3), name=m.group(4) or None, memory=memory))
    if not procs:
        return
    out.modules = [replace(m, processes=tuple(procs[m.label])) if m.label in procs else m for m in out.modules]
    named = {m.label for m in out.modules}
    if lost := sorted(set(procs) - named):
        out.notes.append(f"npu-smi: process rows name {', '.join(lost)}, which its chip table does not list: not put "
                         "on any module")
    out.notes.append(f"npu-smi: {sum(len(p) for p in procs.values())} process(es) read from its process table "
                     f"on {len(procs)} chip(s)")
