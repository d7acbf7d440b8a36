"""Issue 46: the kernel's Xids and the NVIDIA driver's messages (kernel.NVRM_MESSAGES) as a poster's words name
them ('dmesg shows Xid 79 on 0000:3b:00.0', 'the log says "RmInitAdapter failed"'), read only where
nothing in a file is a tool's own line (formats.read_quoted), as app_errors.quoted reads the runtimes' messages."""

from __future__ import annotations

import re

from gpuvet.captures.app_errors import reported
from gpuvet.captures.kernel import NO_BUS, NVRM_MESSAGES, KernelEvent, bus
from gpuvet.captures.records import XidLine
from gpuvet.captures.text import Line

# an Xid a poster's sentence names ('dmesg shows Xid 79 on 0000:3b:00.0', '"Xid (PCI:0000:3b:00): 79"')
_XID_SAID = re.compile(r"\bXid\s*(?:\((?:PCI:)?[0-9a-fA-F:.]{7,16}\)\s*:?\s*|(?:error\s*)?(?:code\s*)?#?\s*)(\d{1,3})\b")


def quoted_xids(lines: list[Line]) -> tuple[list[XidLine], set[int]]:
    """The Xids a poster's words report (app_errors.reported: their system showed it), each marked ``quoted``;
    read only where nothing in the file is a tool's own line (formats.read_quoted). One per module and code;
    the lines read."""
    out: dict[tuple[str, int], XidLine] = {}
    claimed: set[int] = set()
    for ln in lines:
        m = _XID_SAID.search(ln.text) if "Xid" in ln.text else None
        if m is not None and reported(ln.text, m.start(), m.end()):
            where = _XID_BUS.search(ln.text)
            key = (bus(where.group(1)) if where else NO_BUS, int(m.group(1)))
            out.setdefault(key, XidLine(*key, ln.text.strip()[:300], quoted=True))
            claimed.add(ln.no)
    return list(out.values()), claimed


_XID_BUS = re.compile(r"\b([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-7])?\b")  # with its domain: no clock


def quoted_messages(lines: list[Line]) -> tuple[list[KernelEvent], set[int]]:
    """The NVIDIA driver's messages a poster's words name, as quoted_xids reads Xids: one per module and kind,
    marked ``quoted``; the lines read."""
    out: dict[tuple[str, str], KernelEvent] = {}
    claimed: set[int] = set()
    for ln in lines:
        for message in NVRM_MESSAGES:
            if (m := message.pattern.search(ln.text)) is not None and reported(ln.text, m.start(), m.end()):
                where = _XID_BUS.search(ln.text)
                key = (message.kind, bus(where.group(1)) if where else NO_BUS)
                out.setdefault(key, KernelEvent(*key, ln.text.strip()[:240], ln.no, quoted=True))
                claimed.add(ln.no)
                break
    return list(out.values()), claimed
