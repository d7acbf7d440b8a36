"""R5A (issue 46): a HIP program whose code objects hold no target for the GPU it runs on. ROCm's CLR prints it as
'Error: The program ISA amdgcn-amd-amdhsa--gfx942 is not compatible with the device ISA
amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-' (rocclr/device/devprogram.cpp, at AMD_LOG_LEVEL 1 and above), then its
follow-ups ('Error: create kernel metadata map using COMgr', 'Cannot Find Global Var Sizes', 'Cannot create
kernels.'), and the call returns hipErrorNoBinaryForGpu ('no kernel image is available for execution on the
device'), which a library may wrap ('[hiperror](209) fail to call hipModuleLoadData(…)'). The application's build,
not the module: hip_errors reads them as one kind (doctor: application_build_lacks_target, info)."""

from __future__ import annotations

import re

from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

KIND = "hip_no_binary_for_gpu"
_ISA = re.compile(r"\bThe program ISA (\S+) is not compatible with the device ISA (\S+)")
_NO_BINARY = re.compile(r"\bhipErrorNoBinaryForGpu\b")
# CLR's own lines after the mismatch (devprogram.cpp): the kernels it could not make from the code object
_AFTER = re.compile(
    r"^\s*(?:Error: )?(?:create kernel metadata map using COMgr|Cannot Find Global Var Sizes|"
    r"Cannot create kernels\.?)\s*$"
)
_WORDS = ("program ISA", "NoBinaryForGpu")  # as CLR and HIP print them: a line holding neither is not searched


def judged(lines: list[Line], errors: list[AppError], claimed: set[int]) -> list[AppError]:
    """``errors`` with one hip_no_binary_for_gpu error for the program's missing target (the ISAs named where CLR's
    line gives them) in place of hip_errors' own; the lines read added to ``claimed``."""
    found = [
        ln for ln in lines if any(w in ln.text for w in _WORDS) and (_ISA.search(ln.text) or _NO_BINARY.search(ln.text))
    ]
    if not found:
        return errors
    isa = next((m for ln in found if (m := _ISA.search(ln.text)) is not None), None)
    at = {ln.no for ln in found}
    claimed |= at | {ln.no for ln in lines if _AFTER.match(ln.text) and any(0 < ln.no - n <= 4 for n in at)}
    meaning = (
        "the program holds no code object for this GPU (hipErrorNoBinaryForGpu): it was built for other "
        "targets"
        + (f" ({isa.group(1)}; the device is {isa.group(2)})" if isa else "")
        + ", the application's build, not the module"
    )
    first = found[0]
    kept = [e for e in errors if e.kind not in ("hip_no_binary", KIND, "hip_error") or e.line not in at]
    return [*kept, AppError(KIND, first.no, first.text.strip()[:300], None, "ROCm/HIP", times=len(found), meaning=meaning)]
