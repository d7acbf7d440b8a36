"""Issue 46: gnif's vendor-reset, the reset quirk for AMD GPUs passed through to a virtual machine. It prints
through the device vfio-pci holds, tagged with the ASIC ('vfio-pci 0000:2f:00.0: AMD_NAVI10: performing reset',
'… begin psp mode 1 reset', '… reset result = 0'), each time the VM starts or stops and QEMU resets the function.
A module whose resets all report result 0 (or were cut before their result) was reset for its VM as designed: an
info on the passthrough, counted, not a fault. A failed reset (a non-zero result, a failure or SMU error line)
is not read here: the driver's unnamed error lines (kernel_unknown) judge it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key as bus

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

KIND = "vendor_reset_passthrough"  # the kind (kernel_messages.yaml) read here
_HEAD = 400  # characters of a line searched
# its lines, tagged with the ASIC, and its SMU's untagged answer ('vfio-pci 0000:0c:00.0: SMU error 0xfd')
_LINE = re.compile(r"\bvfio-pci ((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): "
                   r"(?:AMD_[A-Z0-9_]+: (.*)|(SMU error.*))")
_RESULT = re.compile(r"^reset result = (-?\d+)")
_FAILED = re.compile(r"fail|error|timed? ?out|not ready|unable", re.I)


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one event per module vendor-reset reset without a failure: the first reset's line, and how many
    resets began (a PSP mode 1 reset is one way of the same reset, not a second)."""
    from gpuvet.captures.kernel import KernelEvent

    seen: dict[str, list[tuple[Line, str]]] = {}  # a module's lines, each with what vendor-reset said
    for i in holding(lines, ("AMD_", "SMU error"), marks):
        if (m := _LINE.search(lines[i].text[:_HEAD])) is not None and (where := bus(m.group(1))) is not None:
            seen.setdefault(where, []).append((lines[i], m.group(2) or m.group(3)))
    for where, own in seen.items():
        results = [int(r.group(1)) for _, s in own if (r := _RESULT.match(s))]
        began = [ln for ln, s in own if s.startswith("performing reset")]
        if not began or any(results) or any(_FAILED.search(s) for _, s in own):
            continue
        out.events.append(KernelEvent(KIND, where, began[0].text.strip()[:240], began[0].no, len(began)))
        out.claimed.update(ln.no for ln, _ in own)
    return out
