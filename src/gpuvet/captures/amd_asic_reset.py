"""Issue 46 (R12D): amdgpu's 'ASIC reset failed with error, %d for drm dev, %s' weighed by what the driver printed
next. amdgpu_device.c (amdgpu_do_asic_reset) prints it where the ASIC's reset callback returned an error; a reset
path that then goes on to 'GPU reset succeeded, trying to resume' on the same module did reset it after all (an
ASIC whose callback is not implemented returns -ENOSYS, -38: a driver reset-path bug the kernel's patch 'reset
error before proceeding' names): the outcome is the later line's, judged as a reset the driver recovered from
(amd_hang_outcome: warn), and the failed line is said in its evidence. A failed reset with no success after it on
its module stays amd_reset_failed (critical)."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.kernel_places import AMD_BUS
from gpuvet.node.bus import bus_key

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelEvent
    from gpuvet.captures.text import Line

_ASIC = re.compile(r"\bASIC reset failed with error,?\s*(-?\d+)", re.I)
_LATER = re.compile(r"\bGPU reset(?:\(\d+\))? succeeded\b", re.I)
_WINDOW = 40  # lines: the success of the same recovery follows its failed ASIC reset within a screen


def weighed(lines: list[Line], events: list[KernelEvent]) -> list[KernelEvent]:
    """``events`` with each 'ASIC reset failed' amd_reset_failed whose module the driver then says reset (``_LATER``
    within ``_WINDOW`` lines after it) dropped, and that resumed reset
    saying the failed line. A success line naming no bus speaks for the failed module only where the events name
    one AMD module (two or more: whose success it is is not known)."""
    out = list(events)
    modules = {e.module for e in events if e.kind.startswith("amd_")}
    for e in events:
        if e.kind != "amd_reset_failed" or (m := _ASIC.search(e.text)) is None:
            continue
        at = bisect_right(lines, e.line, key=lambda ln: ln.no)  # the window after the failure, scanned alone
        window = (lines[k] for k in range(at, min(at + _WINDOW, len(lines))))
        after = [
            ln
            for ln in window
            if ln.no <= e.line + _WINDOW and _LATER.search(ln.text) and _same(ln.text, e.module, len(modules) == 1)
        ]
        resumed = [r for r in out if r.kind == "amd_reset_resumed" and r.module == e.module]
        if not after or not resumed:
            continue
        out.remove(e)
        said = f" (after line {e.line}'s 'ASIC reset failed with error, {m.group(1)}': a reset-path error it outlived)"
        out[out.index(resumed[0])] = replace(resumed[0], text=resumed[0].text[: 199 - len(said)] + said)
    return out


def _same(text: str, module: str, lone: bool) -> bool:
    """Whether ``text`` names ``module``, or no module at all where the log names one (``lone``)."""
    b = AMD_BUS.search(text[:400])
    return lone if b is None else bus_key(b.group(1)) == module
