"""Issue 46 (R4A): amd-smi's throttle status where a paste quotes it rather than prints its blocks. amd-smi metric
--power prints THROTTLE_STATUS: THROTTLED for any non-zero throttle_status (amdsmi_cli/subcommands/metric.py), and
the kernel sets one bit per throttler the firmware reports (amd/pm/swsmu: *_get_throttler_status: TEMP_HOTSPOT, PPT0,
TDC …); some firmware keeps a bit set at idle. So the word THROTTLED, and a table of the bits per state, are read
(claimed, the bits said) and judged at nothing: a throttle is judged from a tool's own sample of clocks under load
against its limits, not from this flag."""

from __future__ import annotations

import re

from gpuvet.captures.records import ListedParse
from gpuvet.captures.text import Line

MARKERS = ("THROTTLE_STATUS", "throttle_status")
TOOL = "amd-smi"
_STATUS = re.compile(
    r"\b(?:THROTTLE_STATUS|throttle_status)\b`?\s*[:=|]?\s*`?(UN)?THROTTLED\b|"
    r"\bthrottle_status\b.{0,40}\b0x[0-9a-fA-F]{1,8}\b"
)
_BITS = re.compile(r"\b(TEMP_[A-Z_]+|PPT\d|TDC_[A-Z]+|FIT|PROCHOT[A-Z_]*|APCC|VR_[A-Z_]+)\b")
_ROW = re.compile(r"^\s*\|.*\|\s*$")  # a markdown table's row
_VALUE = re.compile(r"`?0x[0-9a-fA-F]{1,8}`?")


def read(lines: list[Line], out: ListedParse) -> None:
    """The lines quoting amd-smi's throttle status, and the rows of a table of it (a row holding a status value),
    claimed; the bits named said in a note; no module listed (a quote names none) and nothing judged."""
    said = [ln for ln in lines if ("HROTTLE" in ln.text or "hrottle" in ln.text) and _STATUS.search(ln.text)]
    if not said:
        return
    header = next((i for i, ln in enumerate(lines) if "throttle_status" in ln.text and _ROW.match(ln.text)), None)
    rows = []
    if header is not None:
        for ln in lines[header + 1 :]:
            if not _ROW.match(ln.text):
                break
            rows.append(ln)
    read = said + [ln for ln in rows if _VALUE.search(ln.text)]
    if header is not None:
        read.append(lines[header])
    out.claimed |= {ln.no for ln in read} | {ln.no for ln in rows}
    bits = dict.fromkeys(m.group(1) for ln in read for m in _BITS.finditer(ln.text))
    if TOOL not in out.kinds:
        out.kinds.append(TOOL)
    out.notes.append(
        f"amd-smi: its throttle status quoted ({len(read)} line(s); bits named: {', '.join(bits) or 'none'}): THROTTLED "
        "is any non-zero throttle_status bit, a bit the firmware keeps set at idle included; not judged (a throttle is "
        "read from clocks sampled under load against their limits)"
    )
