"""Issue 46 (R4B): an i915/xe GPU hang whose reset crashed the kernel. After 'GPU HANG: ecode …, action: reset'
the driver resets the engine or the chip (i915_handle_error -> i915_reset -> reset_common_ring; later
intel_gt_handle_error -> intel_gt_reset, xe's xe_gt_reset); where the kernel then panics or oopses with those frames
in its trace (Linux's 'BUG: unable to handle …', 'Oops:', 'general protection fault'; FreeBSD's 'Fatal trap 12: page
fault while in kernel mode' and ddb's 'Stopped at reset_common_ring+0xc9'), the reset never completed: the host
went down with it (critical), not the hang the reset recovered (module_ring_reset_recovered, warn)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

HANG, KIND = "intel_gpu_hang", "intel_reset_crashed"  # kernel_messages.yaml gives their causes
WORDS = ("Fatal trap", "BUG: unable to handle", "Oops", "general protection fault", "Kernel panic", "panic:")
_CRASH = re.compile(
    r"\bFatal trap \d+\b|\bBUG: unable to handle\b|\bOops\b|\bgeneral protection fault\b|"
    r"\bKernel panic\b|\bpanic: "
)
_RESET_FRAME = re.compile(
    r"\b(?:reset_common_ring|i915_gem_reset\w*|i915_reset\w*|i915_handle_error|"
    r"intel_gt_reset\w*|__intel_gt_reset|intel_gt_handle_error|intel_engine_reset\w*|"
    r"gen\d+_reset_engine\w*|xe_gt_reset\w*)\b"
)
_AFTER = 60  # lines after the hang a crash and its trace are read in
_TRACE = 40  # lines after the crash its trace's frames are read in


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with each Intel hang event that a kernel crash in the reset path follows made this reader's kind,
    the crash line quoted after the hang's and claimed."""
    hangs = [e for e in out.events if e.kind == HANG]
    if not hangs:
        return out
    crashes = [i for i in holding(lines, WORDS, marks) if _CRASH.search(lines[i].text[:300]) is not None]
    if not crashes:
        return out
    at = {ln.no: i for i, ln in enumerate(lines)}
    for e in hangs:
        start = at.get(e.line)
        crash = next((i for i in crashes if start is not None and start < i <= start + _AFTER and _in_reset(lines, i)), None)
        if crash is None:
            continue
        said = lines[crash].text.strip()[:240]
        out.events = [replace(x, kind=KIND, shown=(x.text[:240], said)) if x is e else x for x in out.events]
        out.claimed.add(lines[crash].no)
    return out


def _in_reset(lines: list[Line], i: int) -> bool:
    """The crash's trace (its own line and the lines after it) names a frame of the driver's reset path."""
    return any(_RESET_FRAME.search(lines[j].text) is not None for j in range(i, min(len(lines), i + _TRACE)))
