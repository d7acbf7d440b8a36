"""xmrig's GPU health lines: one line per card of its OpenCL backend, each health print a miner makes
(its timestamp, the backend, the card's index and bus, then power, temperature, fan and clocks):

    [2021-01-28 15:10:16.306]  opencl   #0 03:00.0  94W 55C 1904RPM 1080/2040MHz

xmrig reads these through amdgpu's sysfs (its OpenCL backend drives AMD cards), so each line lists an AMD card
by its bus. A line of zeros in every field is a reading the miner did not get (its sysfs lookup failed for the
card), not a card at 0 C and 0 W: the card is listed, its readings left unknown and the lines named in a note,
never a fault. xmrig's CUDA lines (NVML's readings of NVIDIA cards) are not read here."""

from __future__ import annotations

import re

from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import MAX_MODULES, Line, ranges

TOOL = "xmrig GPU health"
_HEALTH = re.compile(r"\bopencl\s+#(\d{1,3})\s+((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
                     r"(\d{1,4})W\s+(\d{1,3})C\s+(\d{1,5})RPM\s+(\d{1,5})/(\d{1,5})MHz\s*$")


def parse(lines: list[Line]) -> ListedParse:
    """The cards xmrig's OpenCL health lines name (the last line of each kept), the zero ones named in a note."""
    out = ListedParse()
    cards: dict[str, ListedModule] = {}
    blank: list[int] = []
    for ln in lines:
        if "opencl" not in ln.text or (m := _HEALTH.search(ln.text)) is None:
            continue
        out.claimed.add(ln.no)
        read = any(int(v) for v in m.groups()[2:])
        blank += [] if read else [ln.no]
        address = m.group(2).upper()
        cards[m.group(1)] = ListedModule(f"GPU #{m.group(1)}", bus_id=address if len(address) > 7 else f"0000:{address}",
                                         temperature_c=float(m.group(4)) if read else None, tool=TOOL)
    out.modules = list(cards.values())[:MAX_MODULES]
    if out.modules:
        out.kinds.append(TOOL)
        out.notes.append(f"{TOOL}: {len(out.modules)} card(s) listed by xmrig's OpenCL backend (AMD cards, by bus)")
    if blank:
        out.notes.append(f"{TOOL}: line(s) {ranges(blank)} read 0 in every field (power, temperature, fan, clocks): "
                         "the miner got no reading for those cards (its sysfs lookup), not a card at 0 C; "
                         "their readings are left unknown, no fault is read from them")
    return out
