"""Issue 46 (R12D): amdgpu's 'ASIC reset failed with error, %d for drm dev, %s' weighed by what the driver printed
next. amdgpu_device.c (amdgpu_do_asic_reset) prints it where the ASIC's reset callback returned an error; a reset
path that then goes on to 'GPU reset succeeded, trying to resume' on the same module did reset it after all (an
ASIC whose callback is not implemented returns -ENOSYS, -38: a driver reset-path bug the kernel's patch 'reset
error before proceeding' names): the outcome is the later line's, judged as a reset the driver recovered from
(amd_hang_outcome: warn), and the failed line is said in its evidence. A failed reset with no success after it on
its module stays amd_reset_failed (critical)."""

from __future__ import annotations

import re
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
    """``events`` with each 'ASIC reset failed' amd_reset_failed whose module the driver then says reset
    (``_LATER`` within ``_WINDOW`` lines) dropped, and the module's resumed reset saying the failed line."""
    out = list(events)
    for e in events:
        if e.kind != "amd_reset_failed" or (m := _ASIC.search(e.text)) is None:
            continue
        after = [
            ln for ln in lines if e.line < ln.no <= e.line + _WINDOW and _LATER.search(ln.text) and _same(ln.text, e.module)
        ]
        resumed = [r for r in out if r.kind == "amd_reset_resumed" and r.module == e.module]
        if not after or not resumed:
            continue
        out.remove(e)
        said = f" (after line {e.line}'s 'ASIC reset failed with error, {m.group(1)}': a reset-path error it outlived)"
        out[out.index(resumed[0])] = replace(resumed[0], text=resumed[0].text[: 199 - len(said)] + said)
    return out


def _same(text: str, module: str) -> bool:
    """Whether ``text`` names ``module`` or no module at all (a bus-less line of a one-module log)."""
    b = AMD_BUS.search(text[:400])
    return b is None or bus_key(b.group(1)) == module
