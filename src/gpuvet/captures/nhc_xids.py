"""Issue 46 (R14D): the Xids a node health check reports finding, in its own words: a site's NHC Xid check
(``Found XID errors: 63``, ``Found XID errors: 48, 79``), Azure's azurehpc-health-checks (``XID error(s) found:
79``), a script's ``Xid errors found: 94``. Each number is one Xid of the driver's catalogue on the node's GPUs:
read as the Xid it is (its meaning and severity the catalogue's), on the module the line names by bus id, else
"bus id not in the log". A count of zero or a 'no Xid errors' line is none, and so is a number that words follow
(a count: 'Found Xid errors: 2 in the last 24h')."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.kernel_places import NO_BUS
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import XidLine
from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key as bus

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

WORDS = ("XID", "Xid", "xid")
_FOUND = re.compile(r"\b(?:Found (?:XID|Xid|xid) errors?(?: on (?P<on>\S+))?|(?:XID|Xid|xid) errors?(?:\(s\))? found"
                    r"(?: on (?P<on2>\S+))?)\s*:\s*(?P<codes>\d{1,3}(?:\s*[, ]\s*\d{1,3}){0,15})\b"
                    r"(?=\s*[.;]?\s*$|\s+(?:on |at )?(?:GPU |PCI:?)?\S*[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\b)")
# the codes are the line's last words, or a bus id follows them (review 67b F7): 'Found Xid errors: 2 in the last
# 24h' is a count, not Xid 2
_BDF = re.compile(r"\b((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b")


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one Xid per code and module a health check's line reports."""
    if marks is not None and not any(marks.may(w) for w in WORDS):
        return out
    seen = {(x.bus_id, x.code) for x in out.xids}
    for i in holding(lines, WORDS, marks):
        ln = lines[i]
        if (m := _FOUND.search(ln.text)) is None:
            continue
        out.claimed.add(ln.no)
        place = _BDF.search(ln.text)
        module = (bus(place.group(1)) or NO_BUS) if place else NO_BUS
        for code in (int(c) for c in re.findall(r"\d{1,3}", m.group("codes"))):
            if code and (module, code) not in seen:
                seen.add((module, code))
                out.xids.append(XidLine(module, code, ln.text.strip()[:240], line=ln.no))
    return out
