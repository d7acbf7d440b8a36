"""Issue 46 (R10D): MetaX's ``mx-smi`` table (MetaX System Management Interface), nvidia-smi's layout: a title box
('MX-SMI 2.1.12  Kernel Mode Driver Version: …', 'MACA Version: …  BIOS Version: …'), then two rows per GPU, the
first 'index NAME | Bus-id | GPU-Util', the second 'Temp Pwr:Usage/Cap | Memory-Usage'. Each GPU is keyed by its own
index and bus id, never paired with another's row (npu-smi's reader had taken GPU 1's row as GPU 0's second row)."""

from __future__ import annotations

import re

from gpuvet.captures.marks import holding
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import TEMP_C, Line, reading

KIND = "mx-smi"
MARKS = ("MetaX System Management Interface", "MX-SMI", "mx-smi")
_BUS = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_FIRST = re.compile(r"^\s*\|\s*(\d{1,4})\s+(\S.{0,60}?)\s*\|\s*(\S+)\s*\|")
_SECOND = re.compile(r"^\s*\|\s*(-?\d{1,4})C\s+[^|]*\|\s*(\d{1,9})\s*/\s*(\d{1,9})\s*MiB\s*\|")
_VERSIONS = re.compile(r"(MX-SMI|Kernel Mode Driver Version|MACA Version|BIOS Version):?\s+([\w.+-]{1,40})")
_ATTACHED = re.compile(r"^\s*Attached GPUs\s*:\s*(\d{1,5})\s*$")
_OWN = re.compile(r"^\s*(?:[+|][-=+| ]*|\|\s*(GPU\s+NAME|Temp\s+Pwr)\b.*|=+ MetaX System Management Interface Log =+"
                  r"|mx-smi\s+version:.*|mx-smi\s*|Timestamp\s+:.*)\s*$")


def parse(lines: list[Line]) -> ListedParse | None:
    """The GPUs of an mx-smi table, or None where the text holds none of mx-smi's own marks."""
    if not holding(lines, MARKS):  # its own marks, searched once (marks.holding)
        return None
    out = ListedParse()
    versions: dict[str, str] = {}
    attached: int | None = None
    last: int | None = None
    for ln in lines:
        if (f := _FIRST.match(ln.text)) is not None and _BUS.match(f.group(3)):
            out.modules.append(ListedModule(f"GPU {f.group(1)}", name=f.group(2), bus_id=f.group(3).upper(), tool=KIND))
            last = len(out.modules) - 1
        elif (s := _SECOND.match(ln.text)) is not None and last is not None:
            bad: list[str] = []
            m = out.modules[last]
            out.modules[last] = ListedModule(m.label, name=m.name, bus_id=m.bus_id, tool=KIND,
                                             temperature_c=reading(s.group(1), TEMP_C, "Temp", bad),
                                             memory_mib=float(s.group(3)) if int(s.group(3)) > 0 else None)
            out.notes += [f"mx-smi: {m.label}: {b}" for b in bad]
            last = None
        elif (a := _ATTACHED.match(ln.text)) is not None:
            attached = int(a.group(1))
        elif found := _VERSIONS.findall(ln.text):
            versions.update(found)
        elif not _OWN.match(ln.text):
            continue
        out.claimed.add(ln.no)
    if not out.modules:
        return None
    out.kinds.append(KIND)
    if versions:
        out.notes.append("mx-smi: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    if attached is not None and attached > len(out.modules):
        out.notes.append(f"mx-smi: 'Attached GPUs : {attached}' but the paste lists {len(out.modules)}: the other "
                         f"{attached - len(out.modules)} are not in the capture (cut); nothing is judged of them")
    return out
