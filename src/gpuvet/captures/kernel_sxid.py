"""The NVSwitch driver's SXid lines in a kernel log (``nvidia-nvswitchN: SXid (PCI:0000:04:00.0): 22013,
Non-fatal, Link 44 …``). One event spans a summary line that says Fatal or Non-fatal and detail lines
('Data {…}', 'Severity N …'); an excerpt may hold only a detail line, whose fatality NVIDIA's lists of fatal
and non-fatal SXids then give (knowledge: faults.yaml, sxids)."""

from __future__ import annotations

import re

from gpuvet.knowledge import sxid_fatal

_BUS = r"([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})"
SXID = re.compile(r"(nvidia-nvswitch\d+|nvswitch\d*)\S*: SXid \(PCI:" + _BUS + r"(?:\.\d)?\): (\d+),\s*(.*)")
_FATALITY = re.compile(r"^(Non-?fatal|Fatal)\b", re.I)


def sxid_kind(code: str, rest: str) -> tuple[str, bool]:
    """The fault kind of one SXid line and whether the line says its fatality itself (a summary line):
    a detail line is judged by NVIDIA's lists, one in neither list as non-fatal (the switch reported it,
    its fatality unknown)."""
    said = _FATALITY.match(rest)
    if said is not None:
        return ("nvswitch_sxid_fatal" if said.group(1).lower() == "fatal" else "nvswitch_sxid"), True
    return ("nvswitch_sxid_fatal" if sxid_fatal(int(code)) else "nvswitch_sxid"), False
