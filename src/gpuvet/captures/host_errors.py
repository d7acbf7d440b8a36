"""The host's own hardware error reports in a kernel log (EDAC memory errors, APEI/GHES records, machine
checks): read and said in one note, with the device and vendor an APEI PCIe record gives and the corrected
memory errors EDAC counts per DIMM. A module's finding comes only from its driver's lines, so a DIMM's or an
NVMe drive's error is never a GPU's (split from kernel.py, issue 46). HM1: a host DIMM's own memory errors
are its finding, placed on the DIMM by its label ('host DIMM <label>', never a bus id): uncorrected ones, or
corrected ones repeated (knowledge/faults.yaml thresholds host_memory_ce_reports, host_memory_ce_count)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from gpuvet.captures.text import Line, ranges
from gpuvet.knowledge import threshold

_HOST_ERROR = re.compile(r"\bEDAC\b.*\b(?:UE|CE|error)|\[Hardware Error\]|\bmce: |\bMachine check events|"
                         r"\bmc_event: .*\berror", re.I)
_HOST_DEVICE = re.compile(r"\bdevice_id: ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
_HOST_VENDOR = re.compile(r"\bvendor_id: (0x[0-9a-fA-F]{4})")
_HOST_SEVERITY = re.compile(r"\bevent severity: (\w+)", re.I)  # an APEI/GHES record's: corrected, recoverable, fatal
# linux drivers/edac/edac_mc.c (edac_ce_error/edac_ue_error, every EDAC driver and ghes_edac print through it):
# 'EDAC MC1: 262 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 …)', 'EDAC MC0: 1 CE
# single-symbol chipkill ECC on P0_Node0_Channel5_Dimm0 DIMMF1 (node:0 …)', '… 1 UE memory read error on …';
# kernels before 3.5: 'EDAC MC0: CE page 0x1a, offset 0x0, grain 8, syndrome 0x5, row 1, channel 0, label
# "DIMM_B1": …' and 'UE page …, labels "DIMM_A1": …'; with no location: 'EDAC MC0: CE - no information available'
_EDAC_NOW = re.compile(r"\bEDAC MC\d+: (\d+) (CE|UE)\b(?: .*?)? on (.{1,80}?)(?: \(|\s*$)")
_EDAC_OLD = re.compile(r"\bEDAC MC\d+: (CE|UE) (?:page 0x[0-9a-fA-F]+\b.*?labels? \"([^\"]{0,80})\"|- no information)")
# rasdaemon's mc_event (ras-mc-handler.c): '… mc_event: 2024-05-01 10:00:00 +0000 1 Corrected error: memory read
# error on CPU_SrcID#0_Ha#0_Chan#0_DIMM#0 (mc: 0 location: …)'; x86 mce/core.c: 'mce: Uncorrected hardware memory
# error in user-access at 2ecf3fa400' (a poisoned page: the DIMM not named)
_RAS = re.compile(r"\bmc_event: .*?\b(\d+) (Corrected|Uncorrected|Deferred|Fatal) errors?:.*? on (.{1,80}?)(?: \(|\s*$)",
                  re.I)
_MCE_UE = re.compile(r"\bmce: Uncorrected hardware memory error\b", re.I)
_UNNAMED = ("", "any memory", "unknown memory", "unknown", "N/A")  # edac_mc.c's words where no DIMM is known
NOT_NAMED = "host memory (DIMM not named)"
UNCORRECTED, CE_REPEATED = KINDS = ("host_memory_uncorrected", "host_memory_ce_repeated")  # kernel_messages.yaml's
# the EDAC core's and drivers' set-up lines ('EDAC MC: Ver: 3.0.0', 'EDAC MC0: Giving out device to module skx_edac
# …', 'EDAC amd64: Node 0: DRAM ECC enabled.', 'EDAC sbridge: Seeking for: PCI ID 8086:2fbd', 'ghes_edac: GHES probing
# device list...'): the host's memory controllers registered, no memory error
_EDAC_SETUP = re.compile(r"^(?:.*[\s\]:])?(?:EDAC(?: [\w.]+)?|[a-z0-9]+_edac)\s?: ")
# an EDAC driver's own set-up failure (edac_printk at KERN_ERR, as amd64_edac's amd64_err prints: 'EDAC amd64: Error:
# F0 not found, device 0x1460 (broken BIOS?)', 'EDAC amd64: Error: Error probing instance: 0'): the driver did not
# register a controller, no memory error (a report is the MC's: 'EDAC MC0: 1 CE …'); set-up, for every reader
_SETUP_ERROR = re.compile(r"\bEDAC [a-z0-9_]+: Error: (?!.*\b(?:CE|UE)\b)")
_SETUP_SAID = ("kernel log: {} line(s) of the EDAC drivers' set-up (the host's memory controllers), no host memory "
               "error among them")
_GPU_VENDORS = {"0x10de": "NVIDIA", "0x1002": "AMD", "0x19e5": "Huawei"}


@dataclass(frozen=True)
class DimmErrors:
    """One host DIMM's memory errors that make its finding: the kind (captures/kernel_messages.yaml), the
    place ('host DIMM <label>'), the first report's line, how many reports and errors the log counts."""

    kind: str  # host_memory_uncorrected, host_memory_ce_repeated
    place: str
    text: str
    line: int
    reports: int
    errors: int


def read(lines: list[Line]) -> tuple[set[int], str | None, list[DimmErrors]]:
    """EDAC's, APEI's and the machine check handler's memory errors (_edac), with host_ras' machine check records,
    rasdaemon's ras-mc-ctl and the memory's ECC type (R9B): the lines read, one note, the findings."""
    from gpuvet.captures import host_mce_logged, host_ras  # they import this module's kinds

    claimed, said, dimms = _edac(lines)
    more, notes, found = host_ras.read(lines)
    found += host_mce_logged.read(lines, found) if said else []  # R12D: 'Machine check events logged' alone
    return claimed | more, "; ".join(n for n in (said, *notes) if n) or None, dimms + found


def _edac(lines: list[Line]) -> tuple[set[int], str | None, list[DimmErrors]]:
    """The lines read, the note that says them (None: no host hardware error line) and the DIMMs' findings; the
    EDAC drivers' set-up lines are read too (said in a note where no error line is), never judged."""
    seen = [ln for ln in lines if ("EDAC" in ln.text or "rror" in ln.text or "mce" in ln.text)
            and _HOST_ERROR.search(ln.text) and not setup_only(ln.text)]
    setup = {ln.no for ln in lines if ("EDAC" in ln.text or "edac" in ln.text) and _EDAC_SETUP.search(ln.text)}
    if not seen:
        return setup, (_SETUP_SAID.format(len(setup)) if setup else None), []
    return {ln.no for ln in seen} | setup, _note(seen), dimm_findings(seen)


def setup_only(text: str) -> bool:
    """Whether ``text`` is an EDAC driver's set-up failure ('EDAC amd64: Error: F0 not found …'), no error record."""
    return "Error: " in text and _SETUP_ERROR.search(text) is not None


def _note(seen: list[Line]) -> str:
    devices = list(dict.fromkeys(d.group(1) for ln in seen if (d := _HOST_DEVICE.search(ln.text))))
    vendors = list(dict.fromkeys(v.group(1).lower() for ln in seen if (v := _HOST_VENDOR.search(ln.text))))
    named = ", ".join(f"{v} ({_GPU_VENDORS.get(v, 'not a GPU vendor')})" for v in vendors) or "not given"
    memory = sum(1 for ln in seen if "EDAC" in ln.text and re.search(r"\bUE\b|uncorrect", ln.text, re.I))
    rated = Counter(m.group(1).lower() for ln in seen if (m := _HOST_SEVERITY.search(ln.text)) is not None)
    severity = "; firmware-first (APEI/GHES) event(s): " + ", ".join(f"{n} {s}" for s, n in rated.items()) \
        if rated else ""
    return (f"kernel log: {len(seen)} host hardware error line(s) (EDAC, APEI/GHES, machine check) at "
            f"line(s) {ranges([ln.no for ln in seen])}: {memory} uncorrectable host-memory report(s)"
            f"{_corrected(seen)}; PCIe device(s) {', '.join(devices) or 'not named'}, vendor {named}{severity}; "
            "no GPU driver line names them")


def _report(text: str) -> tuple[bool, int, str] | None:
    """One memory error report: (uncorrected, errors, the DIMM's place), None for another host line."""
    if "EDAC" in text and (m := _EDAC_NOW.search(text)) is not None:
        return m.group(2) == "UE", int(m.group(1)), _place(m.group(3))
    if "EDAC" in text and (m := _EDAC_OLD.search(text)) is not None:
        return m.group(1) == "UE", 1, _place(m.group(2) or "")
    if "mc_event" in text and (m := _RAS.search(text)) is not None:
        return m.group(2).lower() != "corrected", int(m.group(1)), _place(m.group(3))
    if "mce" in text and _MCE_UE.search(text) is not None:
        return True, 1, NOT_NAMED
    return None


def quoted(lines: list[Line]) -> tuple[list[DimmErrors], set[int]]:
    """HM1: the host DIMMs' findings from a poster's sentences that quote the kernel's report whole (a report of
    their own system: app_errors.reported), where nothing else in the file was read (captures/quoted.py)."""
    from gpuvet.captures.app_errors import reported

    found = []
    for ln in lines:
        if ("EDAC" in ln.text or "mc_event" in ln.text or "mce" in ln.text) and _report(ln.text) is not None:
            m = _EDAC_NOW.search(ln.text) or _EDAC_OLD.search(ln.text) or _RAS.search(ln.text) or _MCE_UE.search(ln.text)
            if m is not None and reported(ln.text, m.start(), m.end()):
                found.append(ln)
    findings = dimm_findings(found)
    from gpuvet.captures import host_ras  # R9B: a machine check record quoted whole, judged as host_ras reads it

    more, said = host_ras.quoted(lines, reported)
    return findings + more, ({ln.no for ln in found} if findings else set()) | said


def _place(label: str) -> str:
    label = label.strip().strip("\"'")
    return NOT_NAMED if label in _UNNAMED else f"host DIMM {label}"


def dimm_findings(seen: list[Line]) -> list[DimmErrors]:
    """Per DIMM: its uncorrected errors (critical), else its corrected ones where repeated (warn); a single
    corrected report stays in the note. The same line pasted twice is one report."""
    reports: dict[tuple[bool, str], list[tuple[Line, int]]] = {}
    texts: set[str] = set()
    for ln in seen:
        if (got := _report(ln.text)) is not None and ln.text.strip() not in texts:
            texts.add(ln.text.strip())
            reports.setdefault((got[0], got[2]), []).append((ln, got[1]))
    for ln, uncorrected, place in ([] if reports else _apei(seen)):  # ghes_edac's own lines say the same records
        reports.setdefault((uncorrected, place), []).append((ln, 1))
    out = []
    for (uncorrected, place), found in reports.items():
        errors = sum(n for _, n in found)
        if not uncorrected and ((True, place) in reports or (len(found) < threshold("host_memory_ce_reports")
                                                           and errors < threshold("host_memory_ce_count"))):
            continue  # the DIMM's uncorrected errors say it; a single corrected report: the note's
        first = found[0][0]
        out.append(DimmErrors(UNCORRECTED if uncorrected else CE_REPEATED, place,
                              first.text.strip()[:240], first.no, len(found), errors))
    return out


# drivers/firmware/efi/cper.c (cper_print_mem, cper_dimm_err_location) under ghes.c's '{N}[Hardware Error]: ' prefix:
# a firmware-first record's 'event severity: corrected|recoverable|fatal', its 'section_type: memory error' and
# 'DIMM location: <label>' ('DIMM location: not present. DMI handle: 0x…' where the firmware names none)
_APEI = re.compile(r"\{(\d{1,10})\}\[Hardware Error\]:\s*(.*?)\s*$")
_APEI_DIMM = re.compile(r"\bDIMM location: (?!not present)(.{1,80}?)(?: page:| DMI handle|\s*$)")


def _apei(seen: list[Line]) -> list[tuple[Line, bool, str]]:
    """The firmware-first memory error records, one per record number: (its first line, uncorrected, the place)."""
    records: dict[str, list[tuple[Line, str]]] = {}
    for ln in seen:
        if "[Hardware Error]" in ln.text and (m := _APEI.search(ln.text)) is not None:
            records.setdefault(m.group(1), []).append((ln, m.group(2)))
    out = []
    for said in records.values():
        words = " | ".join(t for _, t in said)
        severity = _HOST_SEVERITY.search(words)
        if "section_type: memory error" not in words or severity is None:
            continue
        dimm = next((d.group(1) for _, t in said if (d := _APEI_DIMM.search(t)) is not None), "")
        out.append((said[0][0], severity.group(1).lower() != "corrected", _place(dimm)))
    return out


def _corrected(seen: list[Line]) -> str:
    """EDAC's corrected host-memory errors, summed per DIMM as it names them ('' when it counts none)."""
    per: Counter[str] = Counter()
    for ln in seen:
        if (got := _report(ln.text)) is not None and not got[0]:
            per[got[2].removeprefix("host DIMM ")] += got[1]
    if not per:
        return ""
    dimms = ", ".join(f"{n} on {dimm}" for dimm, n in per.most_common(4))
    return f", {sum(per.values())} corrected host-memory error(s) counted by EDAC ({dimms}: a host DIMM)"
