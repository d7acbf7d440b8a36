"""Issue 46 (R14C): ``npu-smi info -m``, the mapping of each NPU's chips to the logic ids the runtime numbers
devices by (Huawei's npu-smi manual: a header 'NPU ID  Chip ID  Chip Logic ID  Chip Name', on Atlas A2/A3 with
'Chip Phy-ID' before the name, then one row per chip, '0  0  0  Ascend 910A'). A card's MCU has a row too
('1  2  -  Mcu'): no logic id, not a compute chip, left out of the modules and counted in the note. Each chip is
listed as 'NPU n chip c' (npu-smi info's own label), by name only: the mapping prints no bus id, memory or health."""

from __future__ import annotations

import re

from gpuvet.captures.marks import holding
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

KIND = "npu-smi info -m"
_HEADER = re.compile(r"^\s*NPU ID\s+Chip ID\s+Chip Logic ID\s+(?:Chip Phy-ID\s+)?Chip Name\s*$")
_ROW = re.compile(r"^\s*(\d{1,4})\s+(\d{1,3})\s+(\d{1,4}|-)\s+(?:(\d{1,4}|-)\s+)?(\S.{0,60}?)\s*$")
MAX_CHIPS = 4096


def read(lines: list[Line], out: ListedParse) -> None:
    """The chips under each -m header (rows until the first line that is not one), claimed and listed in ``out``."""
    if not holding(lines, ("Chip Logic ID",)):  # its header's words, else no line is tested (issue 43)
        return
    found: list[ListedModule] = []
    logic: list[str] = []
    others: list[str] = []
    under = False
    for ln in lines:
        if _HEADER.match(ln.text):
            under = True
            out.claimed.add(ln.no)
            continue
        row = _ROW.match(ln.text) if under else None
        if row is None:
            under = under and not ln.text.strip() == ""  # a blank line ends the table
            continue
        out.claimed.add(ln.no)
        label = f"NPU {row.group(1)} chip {row.group(2)}"
        if row.group(3) == "-":
            others.append(f"{label} ({row.group(5)})")
        elif len(found) < MAX_CHIPS:
            found.append(ListedModule(label, name=row.group(5), tool=KIND))
            logic.append(f"{label} = logic id {row.group(3)}")
    if not found and not others:
        return
    out.modules += found
    out.kinds.append(KIND)
    out.notes.append(f"{KIND}: {len(found)} chip(s) mapped ({'; '.join(logic[:16])}"
                     + (f"; +{len(logic) - 16} more" if len(logic) > 16 else "") + ")"
                     + (f"; not compute chips (no logic id): {', '.join(others[:8])}" if others else "")
                     + "; it prints no bus id, memory or health")


def adopt(mapped: ListedParse, out: ListedParse) -> ListedParse:
    """The mapping's chips where the file's other npu-smi views listed none; beside a chip table (which names the
    same chips with their bus ids), only its note and its lines: one list of modules, never two."""
    out.claimed |= mapped.claimed
    out.notes += mapped.notes
    if mapped.modules and not out.modules:
        out.modules += mapped.modules
    if mapped.kinds:
        out.kinds += [k for k in mapped.kinds if k not in out.kinds]
    return out
