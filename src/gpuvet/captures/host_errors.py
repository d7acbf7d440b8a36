"""The host's own hardware error reports in a kernel log (EDAC memory errors, APEI/GHES records, machine
checks): read and said in one note, with the device and vendor an APEI PCIe record gives and the corrected
memory errors EDAC counts per DIMM. A module's finding comes only from its driver's lines, so a DIMM's or an
NVMe drive's error is never a GPU's (split from kernel.py, issue 46)."""

from __future__ import annotations

import re
from collections import Counter

from gpuvet.captures.text import Line, ranges

_HOST_ERROR = re.compile(r"\bEDAC\b.*\b(?:UE|CE|error)|\[Hardware Error\]|\bmce: |\bMachine check events", re.I)
_HOST_DEVICE = re.compile(r"\bdevice_id: ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
_HOST_VENDOR = re.compile(r"\bvendor_id: (0x[0-9a-fA-F]{4})")
_HOST_SEVERITY = re.compile(r"\bevent severity: (\w+)", re.I)  # an APEI/GHES record's: corrected, recoverable, fatal
# EDAC's count of corrected errors and where (sb_edac/skx_edac: 'EDAC MC1: 262 CE memory read error on
# CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (…)'; ghes_edac/amd64_edac: 'EDAC MC0: 1 CE … on DIMM_A1 (…)')
_EDAC_CE = re.compile(r"\bEDAC MC\d+: (\d+) CE\b.*?\bon (\S+)")
_GPU_VENDORS = {"0x10de": "NVIDIA", "0x1002": "AMD", "0x19e5": "Huawei"}


def note(lines: list[Line]) -> tuple[set[int], str | None]:
    """The lines read and the note that says them (None: the log holds no host hardware error line)."""
    seen = [ln for ln in lines if ("EDAC" in ln.text or "rror" in ln.text or "mce" in ln.text)
            and _HOST_ERROR.search(ln.text)]
    if not seen:
        return set(), None
    devices = list(dict.fromkeys(d.group(1) for ln in seen if (d := _HOST_DEVICE.search(ln.text))))
    vendors = list(dict.fromkeys(v.group(1).lower() for ln in seen if (v := _HOST_VENDOR.search(ln.text))))
    named = ", ".join(f"{v} ({_GPU_VENDORS.get(v, 'not a GPU vendor')})" for v in vendors) or "not given"
    memory = sum(1 for ln in seen if "EDAC" in ln.text and re.search(r"\bUE\b|uncorrect", ln.text, re.I))
    rated = Counter(m.group(1).lower() for ln in seen if (m := _HOST_SEVERITY.search(ln.text)) is not None)
    severity = "; firmware-first (APEI/GHES) event(s): " + ", ".join(f"{n} {s}" for s, n in rated.items()) \
        if rated else ""
    return {ln.no for ln in seen}, (
        f"kernel log: {len(seen)} host hardware error line(s) (EDAC, APEI/GHES, machine check) at "
        f"line(s) {ranges([ln.no for ln in seen])}: {memory} uncorrectable host-memory report(s){_corrected(seen)}; "
        f"PCIe device(s) {', '.join(devices) or 'not named'}, vendor {named}{severity}; no GPU driver line names them")


def _corrected(seen: list[Line]) -> str:
    """EDAC's corrected host-memory errors, summed per DIMM as it names them ('' when it counts none)."""
    per: Counter[str] = Counter()
    for ln in seen:
        if (m := _EDAC_CE.search(ln.text)) is not None:
            per[m.group(2)] += int(m.group(1))
    if not per:
        return ""
    dimms = ", ".join(f"{n} on {dimm}" for dimm, n in per.most_common(4))
    return f", {sum(per.values())} corrected host-memory error(s) counted by EDAC ({dimms}: a host DIMM)"
