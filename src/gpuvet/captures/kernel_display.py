"""R7B (issue 46): a graphics driver's display-path lines (DisplayPort link training and its repeaters, EDID, a
CRTC's flip that timed out, the display microcontroller's log; kernel_unknown's BENIGN 'display' words) as DRM
prints them under the driver's prefix ('amdgpu 0000:12:00.0: [drm] *ERROR* LTTPR count is nonzero …', 'i915
0000:00:02.0: [drm] *ERROR* Link Training Unsuccessful'), its function tag ('[drm:intel_dp_start_link_train
[i915]] *ERROR* failed to train DP, aborting', '[drm:drm_atomic_helper_wait_for_flip_done [drm_kms_helper]]') or
FreeBSD drm's ('[drm:0xffffffff82a5c1e0] _ERROR_ failed to train DP'): read and said in one note, never judged (a
monitor's or cable's path, not the GPU's compute), so that a log of only them is read, not refused nor warned."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures import kernel_flips, kernel_unknown
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

_DRM = re.compile(r"\[drm(?::[\w.]+(?: \[\w+\])?)?\]")
_HEAD = 400  # characters of a line searched
# an error-level line only (a boot's 'Found ALDERLAKE_P … display version 13.00' is the Intel boot reader's)
_ERRORISH = re.compile(r"ERROR|\berror\b|\bfail|timed out|\bunsuccessful", re.I)


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with the display-path DRM lines claimed and counted in one note."""
    seen = 0
    before = set(out.claimed)
    out = kernel_flips.read(lines, out, marks)  # R9D: flips that time out, repeated: a warn; a one-off: a note
    flips = out.claimed - before
    for i in holding(lines, ("[drm",), marks):
        ln = lines[i]
        if ln.no in flips:
            continue
        head = ln.text[:_HEAD]
        if _DRM.search(head) is None or _ERRORISH.search(head) is None or "nvidia" in head:
            continue  # nvidia-drm's lines: the NVIDIA readers' (a flip error there is read as can't tell)
        found = kernel_unknown.benign(head)
        if found is not None and found.name == "display":
            out.claimed.add(ln.no)
            seen += 1
    if seen:
        out.notes.append(
            f"kernel log: {seen} display-path line(s) of the graphics driver (DisplayPort link training "
            "and repeaters, EDID, a CRTC's flip): the screen's path, not the GPU's compute; read, not "
            "judged"
        )
    return out
