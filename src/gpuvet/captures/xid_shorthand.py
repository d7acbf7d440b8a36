"""Issue 46: Xid lines a poster shortened inside a kernel log the driver's own lines already make one ('Xid 31
PCI:0000:f0:00 pid=477448 ...', or 'Xid (PCI:0000:f0:00): 31, ...' with 'NVRM:' left out): the same event as
the driver's line, read with its module, so a burst over many modules is seen whole. Outside such a log a
shortened line is a poster's words (captures/quoted.py reads those)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.records import XidLine
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

_BUS = r"([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-7])?"
# the line's own start (a time or dmesg stamp at most before it), never a sentence that mentions one
_LEAD = r"^\s*(?:\[[^\]]{1,40}\]\s*|[\d:.,T+-]{5,32}\s+)*"
_CODE_FIRST = re.compile(_LEAD + r"Xid:? (\d{1,3}),? \(?PCI:" + _BUS + r"\)?[\s,:]")
_BUS_FIRST = re.compile(_LEAD + r"Xid \(PCI:" + _BUS + r"\): (\d{1,3})\b")
# a user's condensed record of one (a summary table's row: '08-04 06:43:55 Xid 31 GPC1 GPCCLIENT_T1_9 @ 0x…
# FAULT_PDE ACCESS_TYPE_VIRT_READ'): the Xid and its number first, the MMU's own fault type (FAULT_PDE,
# FAULT_PTE …) later on the line; no bus id, so its module is unnamed. Read in any log: the fault word is the
# driver's, never a poster's sentence
_CONDENSED = re.compile(_LEAD + r"Xid (\d{1,3})\b[^?]{0,200}?\bFAULT_[A-Z][A-Z_]{2,40}\b")
CONDENSED_WORD = "FAULT_"  # every condensed line holds it: a text without it is never searched for one


def wanted(out: KernelParse) -> bool:
    """Whether the log read a driver Xid line (outside such a log no shortened line with a bus id is read)."""
    return any(not x.quoted for x in out.xids)


def read(lines: list[Line], out: KernelParse, candidates: list[int] | None = None) -> KernelParse:
    """``out`` with the shortened Xid lines added (and their modules), where it read a driver Xid line, and the
    condensed ones in any log. ``candidates``: the indices of the lines that may hold 'Xid' (kernel_more's one
    pass; issue 43), else all."""
    from gpuvet.captures.kernel import NO_BUS, KernelModule, bus

    driver = wanted(out)
    known = {m.module for m in out.modules}
    for ln in (lines[i] for i in candidates) if candidates is not None else lines:
        s = ln.text
        if "Xid" not in s or ln.no in out.claimed or "NVRM" in s or s.rstrip().endswith("?"):
            continue
        if driver and (m := _CODE_FIRST.match(s)) is not None:
            key, code = bus(m.group(2)), int(m.group(1))
        elif driver and (m := _BUS_FIRST.match(s)) is not None:
            key, code = bus(m.group(1)), int(m.group(2))
        elif CONDENSED_WORD in s and (m := _CONDENSED.match(s)) is not None:
            key, code = NO_BUS, int(m.group(1))
        else:
            continue
        out.xids.append(XidLine(key, code, s.strip()[:240], line=ln.no))
        out.claimed.add(ln.no)
        out.nvrm_lines += 1
        if key not in known and key != NO_BUS:
            known.add(key)
            out.modules.append(KernelModule(key, "NVIDIA"))
    return out


def asked(s: str, xid: re.Pattern[str]) -> bool:
    """Review 56 (16): a poster's question about the Xid line it quotes ('what does NVRM: Xid (…): 79, … mean?':
    plain words before it, a '?' closing the line, which no kernel line does): read_quoted's, not the driver's.
    ``xid``: the driver's Xid line (kernel._XID)."""
    m = xid.search(s) if s.rstrip().endswith("?") else None
    return m is not None and re.search(r"[A-Za-z][a-z']+ [a-z']+", s[max(0, m.start() - 300):m.start()]) is not None
