"""Issue 46 (R10D): Huawei's ``npu-smi info -l`` (a 'Total Count' line, then an 'NPU ID' / 'Chip Count' block per
NPU) and ``npu-smi info -t TYPE -i N [-c C]``'s ``Key : value`` lines under their command line (-t memory's 'HBM
Capacity(MB)', -t board's, -t usages'). Each NPU is keyed by its own id (never one per repeated key, as the -q
reader did before); the chips' other figures are said in a note, not judged. -t health is read by npu_smi."""

from __future__ import annotations

import re

from gpuvet.captures.marks import holding
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

KIND_L, KIND_T = "npu-smi info -l", "npu-smi info -t"
_KV = re.compile(r"^\s*([A-Za-z][\w ()./%-]{0,60}?)\s*:\s*(\S.{0,120}?)\s*$")
_COMMAND = re.compile(r"npu-smi\s+info\s+(?:-l\b|-t\s+(\w+)(?=[^\n]*\s-i\s+(\d{1,4})))")


def read(lines: list[Line], out: ListedParse) -> None:
    """The NPUs -l lists (by id) and the lines of each -t TYPE view under its command line, claimed in ``out``."""
    if not holding(lines, ("npu-smi",)):
        return
    view: tuple[str, str] | None = None  # (-l or the -t type, the NPU id -i names)
    total: int | None = None
    listed: list[str] = []
    said: list[str] = []
    for ln in lines:
        if (c := _COMMAND.search(ln.text)) is not None:
            view = ("l", "") if c.group(1) is None else (c.group(1), c.group(2))
            out.claimed.add(ln.no)
            continue
        kv = _KV.match(ln.text) if view is not None else None
        if kv is None:
            if ln.text.strip() and view is not None and not ln.text.lstrip().startswith("`"):
                view = None
            continue
        if view is None or (view[0] == "health"):
            continue
        key, value = kv.group(1), kv.group(2)
        if view[0] == "l" and key == "Total Count" and value.isdigit():
            total = int(value)
        elif view[0] == "l" and key == "NPU ID" and value.isdigit():
            listed.append(value)
        elif view[0] != "l" and len(said) < 24:
            said.append(f"NPU {view[1]} {key} {value}")
        elif view[0] == "l" and key != "Chip Count":
            continue
        out.claimed.add(ln.no)
    _finish(out, total, listed, said)


def _finish(out: ListedParse, total: int | None, listed: list[str], said: list[str]) -> None:
    """One module per NPU id -l names; the count it gives beside how many it lists; the -t views' figures noted."""
    known = {m.label for m in out.modules}
    out.modules += [ListedModule(f"NPU {n}", tool=KIND_L) for n in dict.fromkeys(listed) if f"NPU {n}" not in known]
    if listed or total is not None:
        out.kinds.append(KIND_L)
    if total is not None and total > len(set(listed)):
        out.notes.append(f"npu-smi info -l: 'Total Count : {total}' but the paste lists {len(set(listed))} NPU(s): "
                         "the others are not in the capture (cut); nothing is judged of them")
    if said:
        out.kinds.append(KIND_T)
        out.notes.append("npu-smi info -t: " + "; ".join(said) + " (said, not judged)")
