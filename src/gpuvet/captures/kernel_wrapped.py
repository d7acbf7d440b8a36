"""Issue 46: a kernel message continued on the next line without a timestamp. Old dmesg (and some consoles)
print a driver prefix alone ('[442366.409593] amdgpu:') and the message on an indented line below it; the
two are one message, read as one line (the prefix's number kept), so the message's words meet its driver."""

from __future__ import annotations

import re

from gpuvet.captures.text import Line

_PREFIX_ONLY = re.compile(r"^\s*\[\s*\d+\.\d+\]\s*[\w.-]{1,32}(?: [0-9a-fA-F]{4,8}:\S+)?:\s*$")
_CONTINUED = re.compile(r"^\s+(?!\[\s*\d+\.\d+\])\S")


def joined(lines: list[Line], worded: list[tuple[int, Line]]) -> tuple[list[Line], list[tuple[int, Line]]]:
    """``lines`` and ``worded`` with each driver prefix left alone on its line joined to the indented line
    below it; only the worded lines are tested (a bug report's other lines cost nothing)."""
    wrapped = [i for i, ln in worded if ln.text.rstrip().endswith(":") and i + 1 < len(lines)
               and _PREFIX_ONLY.match(ln.text) and _CONTINUED.match(lines[i + 1].text)]
    if not wrapped:
        return lines, worded
    lines = list(lines)
    for i in wrapped:
        lines[i] = Line(lines[i].no, lines[i].text.rstrip() + " " + lines[i + 1].text.strip())
    return lines, [(i, lines[i]) for i, _ in worded]
