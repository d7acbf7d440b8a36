"""Issue 46: the X server's own line that the NVIDIA module failed to bring a GPU up ('(EE) NVIDIA(GPU-0): Failed
to initialize the NVIDIA GPU at PCI:1:0:0', often relayed by bumblebeed or a journal): the driver's init failure
on that GPU (kernel_messages' init_failed), its bus given as Xorg's decimal bus:device:function."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

_FAILED = re.compile(r"\bNVIDIA\(GPU-\d+\): Failed to initialize the NVIDIA GPU at PCI:(\d{1,3}):(\d{1,2}):(\d)\b")


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one init_failed event (the first line saying it) and the module for each GPU Xorg names."""
    from gpuvet.captures.kernel import KernelEvent, KernelModule, bus

    said = {e.module for e in out.events if e.kind == "init_failed"}
    known = {m.module for m in out.modules}
    for i in holding(lines, ("Failed to initialize the NVIDIA GPU",), marks):
        ln = lines[i]
        if (m := _FAILED.search(ln.text)) is None:
            continue
        module = bus(f"0000:{int(m.group(1)):02x}:{int(m.group(2)):02x}.{m.group(3)}")
        out.claimed.add(ln.no)
        out.nvrm_lines += 1
        if module not in said:
            said.add(module)
            out.events.append(KernelEvent("init_failed", module, ln.text.strip()[:240], ln.no))
        if module not in known:
            known.add(module)
            out.modules.append(KernelModule(module, "NVIDIA"))
    return out
