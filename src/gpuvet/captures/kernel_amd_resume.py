"""R6C (issue 46): amdgpu re-initialising a module while the node ran. amdgpu_smu.c's smu_resume prints 'SMU is
resumed successfully!' when the module comes back from a suspend, a runtime power-down or a reset (its bring-up at
boot says 'initialized' instead): a fact said in a note with the uptime its line gives, never a finding (a resume
is no fault; a reset is judged by its own lines, which the note names when they are there)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.kernel_places import AMD_BUS
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

_RESUMED = re.compile(r"\bSMU is resumed successfully\b")
_STAMP = re.compile(r"^\s*\[\s*(\d{1,9})\.\d+\]")
_RESET = ("amd_gpu_reset", "amd_reset_resumed", "amd_hang_recovered", "amd_hang_outcome_cut", "amd_reset_failed",
          "amd_recovery_failed", "amd_ring_timeout", "amd_ring_recovered", "amd_reset_dumped")


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with a note per module amdgpu resumed: where, when (the uptime its line gives) and whether a reset
    of that module is in the log."""
    at = [lines[i] for i in holding(lines, ("SMU is resumed",), marks) if _RESUMED.search(lines[i].text)]
    said: dict[str, str] = {}
    for ln in at:
        m = AMD_BUS.search(ln.text[:400])
        module = bus_key(m.group(1)) if m else "a module (no bus id on the line)"
        stamp = _STAMP.match(ln.text)
        when = f"at uptime {int(stamp.group(1))} s" if stamp else "(no time stamp)"
        reset = any(e.kind in _RESET and e.module == module for e in out.events)
        said.setdefault(module, f"amdgpu re-initialised {module} while the node ran {when} (line {ln.no}: 'SMU is "
                        "resumed successfully!'): " + ("after its reset, judged by the reset's own lines" if reset
                                                       else "a resume (runtime power management or a suspend); no "
                                                       "reset line beside it"))
    out.notes += list(said.values())
    out.claimed.update(ln.no for ln in at)
    return out
