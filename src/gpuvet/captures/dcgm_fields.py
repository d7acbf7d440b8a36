"""DCGM field values as a monitor's log prints them, one a line per GPU by DCGM's field tag and type
(``GPU 0 power_usage (FP64), value: 35.274``: IBM CSM's compute daemon at debug, under its own prefix). The
readings are put where nvidia-smi -q prints the same ones, so every check judges them alike; a field the
client could not decode (``GPU 0 nvlink_bandwidth_l0 unexpected case!``, ``… fieldType = 105 status = -6``) is
the client's, left unknown and named in a note, never a fault of the GPU."""

from __future__ import annotations

import re

from gpuvet.captures.records import UNNAMED, SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import MAX_MODULES, Line, ranges

_VALUE = re.compile(r"\bGPU (\d{1,4}) ([a-z][a-z0-9_]{1,60}) \((STR|STRING|FP64|DOUBLE|INT64|INT32|TIMESTAMP)\), "
                    r"value: (.{0,200}?)\s*$")
_UNDECODED = re.compile(r"\bGPU (\d{1,4}) ([a-z][a-z0-9_]{1,60}) (?:unexpected case!|version = \d{1,12} fieldId = "
                        r"\d{1,6} fieldType = \d{1,4} status = -?\d{1,4})\s*$")
# DCGM's field tags -> the -q field nvidia-smi prints for the same reading, and its unit
_TAGS = {"power_usage": ("GPU Power Readings/Power Draw", " W"), "gpu_temp": ("Temperature/GPU Current Temp", " C"),
         "gpu_utilization": ("Utilization/Gpu", " %"), "mem_copy_utilization": ("Utilization/Memory", " %"),
         "serial_number": ("Serial Number", "")}
_FIGURE = re.compile(r"^-?\d+(?:\.\d+)?$")


def parse(lines: list[Line]) -> SmiText:
    """Every GPU's field values in the lines (possibly none)."""
    out = SmiText()
    by: dict[str, SmiTextModule] = {}
    undecoded: list[int] = []
    for ln in lines:
        if "GPU " not in ln.text:
            continue
        if ", value: " in ln.text and (m := _VALUE.search(ln.text)) is not None:
            module = by.get(m.group(1)) or by.setdefault(m.group(1), _module(m.group(1), len(by)))
            if m.group(2) in _TAGS and (m.group(3) in ("STR", "STRING") or _FIGURE.match(m.group(4))):
                path, unit = _TAGS[m.group(2)]
                module.fields[path] = f"{m.group(4)}{unit}"
            out.claimed.add(ln.no)
        elif (u := _UNDECODED.search(ln.text)) is not None and u.group(1) in by:
            undecoded.append(ln.no)
            out.claimed.add(ln.no)
    out.modules = list(by.values())[:MAX_MODULES]
    if out.modules:
        out.notes.append(f"DCGM field values: {len(out.claimed) - len(undecoded)} line(s) of {len(out.modules)} "
                         "GPU(s) read by their field tags (power_usage, gpu_temp, …); no bus id in them")
    if undecoded:
        out.notes.append(f"DCGM field values: line(s) {ranges(undecoded)} are the client's own warnings on fields it "
                         "could not decode ('unexpected case', a field type or version it does not know): left "
                         "unknown, not a fault of the GPU")
    return out


def _module(index: str, k: int) -> SmiTextModule:
    return SmiTextModule(UNNAMED if k == 0 else f"{UNNAMED} #{k + 1}", "", {"Index": index})
