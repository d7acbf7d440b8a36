"""Issue 46: a GPU page fault on an Intel module, in the xe and i915 drivers' own words. xe answers a fault it
could not service with 'Fault response: Unsuccessful -ENOENT' (drivers/gpu/drm/xe/xe_gt_pagefault.c, later
xe_pagefault.c: '%pe' of the error, older kernels '%d'), after the fault's dump ('Faulted Address: 0x…'); the GuC
reports a fault in a context that cannot take one as 'Engine memory CAT error' (xe_guc_submit.c); i915 dumps
'Unexpected fault' with the address (gt/intel_gt.c). The work of a process touched an address it had no mapping
for: the application's or the user-space driver's (Level Zero, Mesa) most often, as on any vendor's GPU
(module_page_fault, warn). The engine reset xe or i915 does next on that module ('Engine reset: engine_class=ccs',
a GPU HANG) is that fault's consequence, not a hang of its own: it is folded into the fault's event."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.kernel_places import intel_module_of
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

KIND = "intel_page_fault"  # kernel_messages.yaml gives its cause
WORDS = ("Fault response", "CAT error", "Unexpected fault", "Faulted Address")  # every line read holds one
_HEAD = 400  # characters of a line searched
_DRIVER = re.compile(r"\b(?:xe|i915) [0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:|\[drm:(?:xe|i915|intel)_")
_FAULT = re.compile(r"\bFault response: Unsuccessful\b|\bEngine memory CAT error\b|\bUnexpected fault\b|"
                    r"\bFaulted Address: 0x[0-9a-fA-F]+")
CONSEQUENCE = ("intel_gpu_hang",)  # the kinds a fault before them on the same module explains
SHOWN = 3  # lines quoted in the event


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
    resets = [e for e in out.events if e.kind in CONSEQUENCE and e.module in faults
              and e.line > faults[e.module][0].no]
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
