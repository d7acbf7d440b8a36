"""The modules a benchmark log names on its device lines (nccl-tests, rccl-tests:
``#  Rank  0 Group  0 Pid 4021 on dgx01 device  0 [0x18] NVIDIA H100 80GB HBM3``), so its
results can be judged against what those modules reach."""

from __future__ import annotations

import re

from gpuvet.captures.text import Line

DEVICE_LINE = re.compile(r"^#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+"
                         r"\[(?:0x)?[0-9a-fA-F:.]+\]\s+(.+?)\s*$")


def device_models(lines: list[Line]) -> tuple[str, ...]:
    """The module name of each device line, in order (one per rank; a rank printed twice counts once)."""
    seen: dict[tuple[str, str], str] = {}
    for ln in lines:
        if "device" in ln.text and (m := DEVICE_LINE.match(ln.text.strip())) is not None:
            seen.setdefault((m.group(2), m.group(1)), m.group(4)[:120])
    return tuple(seen.values())


_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(sum|prod|max|min|avg|none|mulsum)\s+(-?\d+)\s")
_TYPE_BYTES = {"int8": 1, "uint8": 1, "char": 1, "half": 2, "float16": 2, "bfloat16": 2, "bf16": 2, "int32": 4,
               "uint32": 4, "int": 4, "float": 4, "float32": 4, "int64": 8, "uint64": 8, "double": 8, "float64": 8}


def op_from_rows(lines: list[Line], first_row: int | None) -> str:
    """The collective a table's first row shows when nothing names it: all_reduce is the one whose
    count is the whole size with a reduction and no root (reduce_scatter and all_gather count a
    rank's share; broadcast and reduce have a root); "unknown" where the row does not tell."""
    for ln in lines:
        if first_row is not None and ln.no < first_row:
            continue
        m = _ROW.match(ln.text)
        if m is None:
            continue
        size, count, dtype, redop, root = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4), int(m.group(5))
        width = _TYPE_BYTES.get(dtype.lower())
        if width and redop != "none" and root == -1 and count * width == size:
            return "all_reduce"
        return "unknown"
    return "unknown"
