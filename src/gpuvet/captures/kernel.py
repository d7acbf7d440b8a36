"""Kernel log lines from the NVIDIA driver: Xid errors, and a GPU that fell off the bus without
one (newer drivers print that as a multi-line NVRM message)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.records import XidLine
from gpuvet.captures.text import Line

_XID = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.\d)?\): (\d+),")
_FALLEN = re.compile(r"NVRM: The NVIDIA GPU ([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})")
_NVIDIA_MODULE = re.compile(r"\bnvidia\b.*(kernel|module|probe)")


@dataclass
class KernelParse:
    xids: list[XidLine] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def bus(text: str) -> str:
    return text.upper()[-10:] if len(text) > 7 else text.upper()


def parse(lines: list[Line]) -> KernelParse:
    out = KernelParse()
    fallen: str | None = None
    for ln in lines:
        s = ln.text
        if "NVRM" not in s and "nvidia" not in s:
            continue
        if (m := _XID.search(s)) is not None:
            out.xids.append(XidLine(bus(m.group(1)), int(m.group(2)), s.strip()))
            out.claimed.add(ln.no)
        elif (m := _FALLEN.search(s)) is not None:
            fallen = m.group(1)
            out.claimed.add(ln.no)
        elif "NVRM:" in s or _NVIDIA_MODULE.search(s):
            out.claimed.add(ln.no)
            if fallen and "fallen off the bus" in s:
                out.xids.append(XidLine(bus(fallen), 79, f"GPU {fallen} has fallen off the bus (no Xid line)"))
                out.notes.append(f"GPU {fallen} 'fallen off the bus' without an Xid line: read as Xid 79")
                fallen = None
    return out
