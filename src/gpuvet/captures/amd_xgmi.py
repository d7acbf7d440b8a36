"""``amd-smi xgmi`` (``--metric``)'s LINK METRIC TABLE as people paste it: a header naming ``bdf bit_rate
max_bandwidth link_type`` and one column per GPU (by ``GPUn`` or by bus id), then per GPU a row with its bus
id, its link rate, its bandwidth and its link type, and its ``Read``/``Write`` rows of the data moved to each
peer. The modules are listed with their bus ids; the rates are said, not judged. A GPU without xGMI links
(a Radeon, a Navi) prints N/A, or, in amd-smi before the fix of rocm-systems' #2053, the largest 16- and 32-bit
numbers (65535 Gb/s, 4294967295 Gb/s): the tool's "no value", never a link's rate.
"""

from __future__ import annotations

import re

from gpuvet.captures.marks import holding
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

MARKERS = ("LINK METRIC TABLE",)
_BDF = r"(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_TITLE = re.compile(r"^\s*LINK METRIC TABLE:\s*$")
_HEADER = re.compile(r"^\s*bdf\s+bit_rate\s+max_bandwidth\s+link_type\b(.*)$")
_ROW = re.compile(r"^\s*GPU(\d{1,4})(?:\s+(" + _BDF + r")\b(.*))?\s*$")
_TRAFFIC = re.compile(r"^\s*(?:Read|Write)\b")
_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*Gb/s")
_NO_VALUE = {"65535", "4294967295"}  # UINT16_MAX, UINT32_MAX: amd-smi's unset fields printed as numbers


def read(lines: list[Line], out: ListedParse) -> None:
    """Each LINK METRIC TABLE in the lines: its modules listed, its lines claimed, a cut table said. Only the
    lines holding the title are tested (marks.holding: a long text's others are never made, issue 43)."""
    i = 0
    for at in holding(lines, MARKERS):
        if at >= i and _TITLE.match(lines[at].text):
            out.claimed.add(lines[at].no)
            i = _table(lines, at + 1, out)
            if "amd-smi xgmi" not in out.kinds:
                out.kinds.append("amd-smi xgmi")


def _table(lines: list[Line], i: int, out: ListedParse) -> int:
    """The header and rows after the title; the index after the table."""
    while i < len(lines) and not lines[i].text.strip():
        i += 1
    if i >= len(lines) or (head := _HEADER.match(lines[i].text)) is None:
        out.notes.append(f"amd-smi xgmi: the LINK METRIC TABLE at line {lines[i - 1].no} is cut before its header: "
                         "no link read")
        return i
    out.claimed.add(lines[i].no)
    title_at, rows, cut, no_value = lines[i].no, 0, [], []
    i += 1
    while i < len(lines) and (lines[i].elision or _ROW.match(lines[i].text) or _TRAFFIC.match(lines[i].text)):
        ln = lines[i]
        out.claimed.add(ln.no)
        m = _ROW.match(ln.text)
        if m is not None and m.group(2) is None:
            cut.append(f"GPU{m.group(1)}")
        elif m is not None:
            rows += 1
            out.modules.append(ListedModule(f"GPU {m.group(1)}", bus_id=m.group(2).upper(), tool="amd-smi"))
            no_value += [f"GPU{m.group(1)}"] if set(_RATE.findall(m.group(3))) & _NO_VALUE else []
        i += 1
    _said(out, title_at, head.group(1).split(), rows, cut, no_value)
    return i


def _said(out: ListedParse, at: int, columns: list[str], rows: int, cut: list[str], no_value: list[str]) -> None:
    """The table's notes: a table cut after its header, a row cut before its bus id, the tool's no-value rates."""
    if not rows:
        out.notes.append(f"amd-smi xgmi: the LINK METRIC TABLE (header at line {at}, {len(columns)} GPU column(s)) "
                         "is cut after its header: no module's links read, nothing judged")
    if cut:
        out.notes.append(f"amd-smi xgmi: row(s) {', '.join(cut)} cut before their bus id: not listed")
    if no_value:
        out.notes.append(f"amd-smi xgmi: {', '.join(no_value)} print 65535 Gb/s / 4294967295 Gb/s, the largest 16- "
                         "and 32-bit numbers: amd-smi's value for a GPU without xGMI links (N/A in later amd-smi), "
                         "not a link's rate")
