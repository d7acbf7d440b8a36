"""Issue 46: a kernel message continued on the next line without a timestamp. Old dmesg (and some consoles)
print a driver prefix alone ('[442366.409593] amdgpu:') and the message on an indented line below it; the
two are one message, read as one line (the prefix's number kept), so the message's words meet its driver.
R10A: old powerplay's pr_fmt tag ('amdgpu: [powerplay] ') before a format that opens with a newline
(smu7_smumgr.c's '\\nfailed to send message %x ret is %d \\n') prints the tag alone and the message on its own
line under the same timestamp, indented by the format's space: one message too."""

from __future__ import annotations

import re

from gpuvet.captures import kernel_amd_power
from gpuvet.captures.text import Line

_PREFIX_ONLY = re.compile(
    r"^[^\[]{0,80}\[\s*(\d+\.\d+)\]\s*[\w.-]{1,32}(?: [0-9a-fA-F]{4,8}:\S+)?:(?: \[\w{1,16}\])?\s*[│┃]?\s*$"
)
_CONTINUED = re.compile(r"^\s+(?!\[\s*\d+\.\d+\])\S")
_SAME_STAMP = re.compile(r"^[^\[]{0,80}\[\s*(\d+\.\d+)\]\s{2,}\S")  # a journal's or a box's prefix before


def _unboxed(text: str) -> str:
    """``text`` without the blanks and a tmux/screen pane's right border after it; in code, linear (REV67a #12: a
    re.sub of blanks, an optional border and blanks retried each split of a long run of blanks)."""
    s = text.rstrip()
    return s[:-1].rstrip() if s.endswith(("│", "┃")) else s


def _wraps(head: Line, below: Line) -> bool:
    """``below`` continues the driver prefix ``head`` leaves alone: indented without a stamp, or under its stamp."""
    m = _PREFIX_ONLY.match(head.text)
    if m is None:
        return False
    if _CONTINUED.match(below.text):
        return True
    same = _SAME_STAMP.match(below.text)
    return same is not None and same.group(1) == m.group(1)


def joined(lines: list[Line], worded: list[tuple[int, Line]]) -> tuple[list[Line], list[tuple[int, Line]]]:
    """``lines`` and ``worded`` with each driver prefix left alone on its line joined to the line that continues
    it; only the worded lines are tested (a bug report's other lines cost nothing)."""
    lines, worded = kernel_amd_power.joined(lines, worded)  # R12D: an SMU message cut inside its words
    wrapped = [
        i
        for i, ln in worded
        if _unboxed(ln.text).endswith((":", "]")) and i + 1 < len(lines) and _wraps(ln, lines[i + 1])
    ]
    if not wrapped:
        return lines, worded
    lines = list(lines)
    for i in wrapped:
        below = _unboxed(lines[i + 1].text).strip()
        if _SAME_STAMP.match(lines[i + 1].text) is not None:
            below = below[below.index("]") + 1 :].strip()
        lines[i] = Line(lines[i].no, _unboxed(lines[i].text) + " " + below)
    return lines, [(i, lines[i]) for i, _ in worded]
