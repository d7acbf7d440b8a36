"""Issue 46: a GPU page fault on an Intel module, in the xe and i915 drivers' own words. xe answers a fault it
could not service with 'Fault response: Unsuccessful -ENOENT' (drivers/gpu/drm/xe/xe_gt_pagefault.c, later
xe_pagefault.c: '%pe' of the error, older kernels '%d'), after the fault's dump ('Faulted Address: 0x…'); the GuC
reports a fault in a context that cannot take one as 'Engine memory CAT error' (xe_guc_submit.c); i915 dumps
'Unexpected fault' with the address (gt/intel_gt.c). The work of a process touched an address it had no mapping
for: the application's or the user-space driver's (Level Zero, Mesa) most often, as on any vendor's GPU
(module_page_fault, warn). The engine reset xe or i915 does next on that module ('Engine reset: engine_class=ccs',
a GPU HANG) is that fault's consequence, not a hang of its own: it is folded into the fault's event, where it
comes within RESET_AFTER_S of a fault (a reset later, or of another process, is a hang of its own)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.kernel_places import intel_module_of
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelEvent, KernelParse

KIND = "intel_page_fault"  # kernel_messages.yaml gives its cause
WORDS = ("Fault response", "CAT error", "Unexpected fault", "Faulted Address")  # every line read holds one
_HEAD = 400  # characters of a line searched
_DRIVER = re.compile(r"\b(?:xe|i915) [0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:|\[drm:(?:xe|i915|intel)_")
_FAULT = re.compile(r"\bFault response: Unsuccessful\b|\bEngine memory CAT error\b|\bUnexpected fault\b|"
                    r"\bFaulted Address: 0x[0-9a-fA-F]+")
CONSEQUENCE = ("intel_gpu_hang",)  # the kinds a fault before them on the same module explains
SHOWN = 3  # lines quoted in the event
# A fault's reset comes within seconds: the faulting job stalls and is reset by its scheduler's timeout (xe's default
# job timeout 5 s, XE_HW_ENGINE_JOB_TIMEOUT; i915's heartbeat of 2.5 s declares a hang in a few beats); twice xe's
# timeout leaves room for the reset's own work. A reset later than that, after other work, is a hang of its own.
RESET_AFTER_S = 10.0
RESET_AFTER_LINES = 20  # where the lines carry no dmesg stamp: a reset this close after a fault line is its own
_UPTIME = re.compile(r"^\s*(?:<\d>)?\[\s*(\d{1,9}\.\d{1,9})\]")  # dmesg's stamp: seconds since boot


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one page-fault event per Intel module whose fault lines it holds (the first quoted, the
    faults counted), those lines claimed; an engine reset of the same module after its first fault is dropped as
    the fault's consequence, its lines quoted with the fault's."""
    from gpuvet.captures.kernel import INTEL_NO_BUS, KernelEvent, KernelModule

    faults: dict[str, list[Line]] = {}
    for i in holding(lines, WORDS, marks):
        ln = lines[i]
        head = ln.text[:_HEAD]
        if _DRIVER.search(head) is None or _FAULT.search(head) is None:
            continue
        out.claimed.add(ln.no)
        faults.setdefault(intel_module_of(lines, i), []).append(ln)
    if not faults:
        return out
    resets = [e for e in out.events if e.kind in CONSEQUENCE and e.module in faults and _follows(e, faults[e.module])]
    out.events = [e for e in out.events if e not in resets]
    have = {k.module for k in out.modules}
    out.modules += [KernelModule(m, "Intel") for m in faults if m not in have and m != INTEL_NO_BUS]
    for module, said in faults.items():
        after = [e.text for e in resets if e.module == module]
        shown = [said[0].text.strip(), *after[:1], *(ln.text.strip() for ln in said[1:])][:SHOWN]
        out.events.append(KernelEvent(KIND, module, said[0].text.strip()[:240], said[0].no, count=len(said),
                                      driver="xe" if "xe " in said[0].text or "[drm:xe_" in said[0].text
                                      else "i915", shown=tuple(s[:240] for s in shown)))
    return out


def _follows(reset: KernelEvent, faults: list[Line]) -> bool:
    """Whether the reset comes right after one of the module's faults: within RESET_AFTER_S by their dmesg stamps,
    or, where either has none, within RESET_AFTER_LINES lines."""
    at = _uptime(reset.text)
    for ln in faults:
        if ln.no >= reset.line:
            break
        t = _uptime(ln.text)
        if (reset.line - ln.no <= RESET_AFTER_LINES) if at is None or t is None else (0 <= at - t <= RESET_AFTER_S):
            return True
    return False


def _uptime(text: str) -> float | None:
    m = _UPTIME.match(text)
    return float(m.group(1)) if m else None
