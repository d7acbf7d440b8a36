"""The host platform's RAS lines beside the GPUs (issue 46, R9B): the kernel's machine check records, rasdaemon's
ras-mc-ctl (--errors, --summary, --status), mcelog's and dmidecode's 'Error Correction Type'. A machine check is
decoded from its MCi_STATUS word (Intel SDM vol. 3B 16.3.2.2 / AMD PPR MCA_STATUS: VAL 63, OVER 62, UC 61, EN 60,
MISCV 59, ADDRV 58, PCC 57, AMD's Deferred 44); a record of a memory-controller bank (AMD's Unified Memory
Controller, Intel's compound code 0000 0000 1MMM CCCC) is a host DIMM's (host_errors' kinds), any other bank the
host CPU's. One fact, one verdict, as host_errors judges EDAC's: uncorrected critical, corrected repeated warn
(knowledge thresholds host_memory_ce_reports, host_memory_ce_count), a corrected record once a note. A host fault
is the node's ('host …' places), never a GPU's. Memory without ECC is a fact said in a note, never a failure."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from gpuvet.captures.host_errors import CE_REPEATED, UNCORRECTED, DimmErrors
from gpuvet.captures.marks import holding
from gpuvet.captures.text import Line
from gpuvet.knowledge import threshold

MCE, MCE_REPEATED = KINDS = ("host_machine_check", "host_machine_check_repeated")  # kernel_messages.yaml's: a CPU bank's
# linux arch/x86/kernel/cpu/mce/core.c print_mce: 'mce: [Hardware Error]: CPU 9: Machine Check: 0 Bank 5:
# bea0000000000108' (' Exception' where MCG_STATUS.MCIP: the exception being handled, a panic's)
_KERNEL = re.compile(
    r"\bCPU (\d{1,4}): Machine Check(?: Exception)?: [0-9a-fA-F]{1,16} Bank (\d{1,3}): ([0-9a-fA-F]{1,16})\b"
)
# drivers/edac/mce_amd.c decode_smca_error / amd_decode_mce: 'CPU:0 (17:31:0) MC17_STATUS[-|CE|MiscV|AddrV|-|-|SyndV
# |CECC|-|-|-]: 0x9c2040000000011b' and its bank's name ('Unified Memory Controller Ext. Error Code: 0, DRAM ECC error.')
_AMD = re.compile(r"\bCPU:(\d{1,4}) \([0-9a-fA-F:]{1,20}\) MC(\d{1,3})_STATUS\[[^\]]{0,80}\]: 0x([0-9a-fA-F]{1,16})\b")
# mcelog --ascii / its log: 'CPU 1 BANK 8' opens a record, 'STATUS 8c00004000010091 MCGSTATUS 0' gives its word
_MCELOG_AT = re.compile(r"^\s*CPU (\d{1,4}) BANK (\d{1,3})\b")
_MCELOG_STATUS = re.compile(r"^\s*STATUS ([0-9a-fA-F]{1,16}) MCGSTATUS\b")
# rasdaemon util/ras-mc-ctl.in --errors: 'MCE events:' then '1 2024-12-19 03:52:38 +0000 error: Corrected error, no
# action required., CPU 2, bank Unified Memory Controller (bank=17), mcg mcgstatus=0, mci CECC, memory_channel=0,
# csrow=1, mcgcap=…, status=0x9c2040000000011b, addr=…, bank=0x00000011'; 'Memory controller events:' then '1 <time>
# 3 Corrected error(s): memory read error at <label> location: 0:0:0:-1 …'; --summary: '\tCorrected on DIMM Label(s):
# '<label>' location: 0:0:0:-1 errors: 3' and under 'MCE records summary:' '\t4 Corrected error, … errors'
# (its time column empty or '..' where rasdaemon's database kept none: '1 .. error: Corrected error, …')
_STAMP = r"^\s*\d{1,9}(?: \d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[ ]?[+-]\d{4})?| \.{2,3})?"
_RAS_MCE = re.compile(_STAMP + r" error: (.{0,120}?)(?:, CPU (\d{1,4}))?, (?:bank (.{1,60}?), )?mcg\b")
_RAS_MC = re.compile(
    _STAMP + r" (\d{1,9}) (Corrected|Uncorrected|Deferred|Fatal) error\(s\): .*?(?: at (.{1,80}?))?"
    r" location: ([\d:-]{1,24})"
)
_RAS_DIMM = re.compile(r"^\s*(Corrected|Uncorrected|Deferred|Fatal) on DIMM Label\(s\): '([^']{0,80})'.*? errors: (\d{1,9})")
_RAS_ROW = re.compile(r"^\s+(\d{1,9}) (.{0,80}?\b[Ee]rror\b.{0,80}?) errors\s*$")  # under 'MCE records summary:'
_RAS_QUIET = re.compile(
    r"^\s*(?:No [\w ]{1,40} errors\.|ras-mc-ctl: drivers (?:are |not )?loaded\.?|Label\s+CE\s+UE|"
    r"(?:MCE|Memory controller|PCIe AER|Memory failure|Extlog|Devlink|Disk|ARM processor|SIGNAL|"
    r"CXL[\w ]{0,30}) (?:events|records|errors)(?: summary)?:)\s*$"
)
_FIELD = re.compile(r"\b(status|bank|memory_channel|csrow|cpu)=(0x[0-9a-fA-F]{1,16}|\d{1,9})")
_MEMORY = re.compile(r"Memory Controller|\bUMC\b|DRAM ECC|memory_channel=", re.I)
# dmidecode -t memory's 'Error Correction Type: None' (or Single-bit ECC, Multi-bit ECC, CRC)
_ECC_TYPE = re.compile(r"^\s*Error Correction Type:\s*(\S.{0,30}?)\s*$", re.I)  # a poster's 'No ECC': unread_leads'

_WORDS = (
    "Machine Check",
    "_STATUS[",
    "BANK",
    "MCGSTATUS",
    "error",
    "ras-mc-ctl",
    "summary:",
    "events:",
    "Label",
    "Correction Type",
)


@dataclass(frozen=True)
class _Record:
    """One machine check or rasdaemon record: its source (counts are kept per source, the same record printed by
    two of them is one), uncorrected, a memory controller's, the place, the line, the errors it counts."""

    source: str
    uncorrected: bool
    memory: bool
    place: str
    line: Line
    errors: int = 1
    record: str = ""  # a machine check's CPU, bank and status word: the kernel's print_mce and its decoder's alike


def decode(status: int) -> tuple[bool, str]:
    """(uncorrected, the bits said): UC set is uncorrected; PCC says the processor's context is lost."""
    bits = [
        name
        for bit, name in (
            (63, "VAL"),
            (62, "OVER"),
            (61, "UC"),
            (60, "EN"),
            (59, "MISCV"),
            (58, "ADDRV"),
            (57, "PCC"),
            (44, "Deferred"),
        )
        if status >> bit & 1
    ]
    uc = "UC" in bits
    said = (
        "uncorrected" + (", processor context corrupt" if "PCC" in bits else "")
        if uc
        else "deferred"
        if "Deferred" in bits
        else "corrected"
    )
    return uc, f"{', '.join(bits) or 'no bit'}: {said}"


def _memory_code(status: int) -> bool:
    """Intel's compound error code for a memory controller: 0000 0000 1MMM CCCC."""
    return (status & 0xEF80) == 0x0080


def read(lines: list[Line]) -> tuple[set[int], list[str], list[DimmErrors]]:
    """The lines read, the notes that say them, the findings (host DIMMs' and host CPUs')."""
    records: list[_Record] = []
    claimed: set[int] = set()
    notes: list[str] = []
    decoded: list[str] = []
    section, mcelog_at = "", None
    ecc: list[Line] = []
    for i in holding(lines, _WORDS):  # REVFIX65: the lines holding a word, in order (no pass of its own per line)
        ln = lines[i]
        s = ln.text
        if "Correction Type" in s and _ECC_TYPE.search(s) is not None:
            ecc.append(ln)
            continue
        got = _one(s, ln, section, mcelog_at, _near(lines, i))
        if got is None:
            continue
        section, mcelog_at, rec, said = got
        claimed.add(ln.no)
        if rec is not None:
            records.append(rec)
        if said:
            decoded.append(said)
    if ecc:
        claimed |= {ln.no for ln in ecc}
        types = sorted({m.group(1) for ln in ecc if (m := _ECC_TYPE.search(ln.text)) is not None})
        notes.append(
            f"host memory's error correction: {', '.join(types)} (line(s) "
            f"{', '.join(str(ln.no) for ln in ecc[:6])}): a fact of the host's memory, not a failure; "
            "without ECC its memory errors go unreported"
        )
    if decoded:
        notes.append(f"host machine check record(s) decoded: {'; '.join(list(dict.fromkeys(decoded))[:6])}")
    records = _one_fault(records)
    return claimed, notes + _once(records), _findings(records)


def _near(lines: list[Line], i: int) -> str:
    """AMD's decoder's MCi_STATUS line and the three after it, where it prints the bank's name (read and quoted
    alike); any other line alone (print_mce's record takes its decoder's place: _one_fault)."""
    s = lines[i].text
    return " ".join(o.text for o in lines[i : i + 4]) if "_STATUS[" in s else s


def _one_fault(records: list[_Record]) -> list[_Record]:
    """One machine check record printed by the kernel's print_mce and by AMD's mce_amd decoder is one fault,
    placed where the decoder's bank name puts it (a memory controller's, or the CPU's)."""
    decoded = {r.record: r for r in records if r.source == "amd" and r.record}
    return [
        replace(r, memory=d.memory, place=d.place)
        if r.source == "kernel" and (d := decoded.get(r.record)) is not None
        else r
        for r in records
    ]


def _one(
    s: str, ln: Line, section: str, mcelog_at: tuple[str, str] | None, near: str
) -> tuple[str, tuple[str, str] | None, _Record | None, str] | None:
    """One line: (the section it leaves open, mcelog's open record, its record or None, its decode), None: not ours."""
    if ("Machine Check" in s or "_STATUS[" in s) and (m := _KERNEL.search(s) or _AMD.search(s)) is not None:
        source = "amd" if m.re is _AMD else "kernel"
        return section, mcelog_at, *_status(source, m.group(1), m.group(2), m.group(3), ln, _MEMORY.search(near) is not None)
    if "BANK" in s and (m := _MCELOG_AT.search(s)) is not None:
        return section, (m.group(1), m.group(2)), None, ""
    if mcelog_at is not None and "MCGSTATUS" in s and (m := _MCELOG_STATUS.search(s)) is not None:
        return section, None, *_status("mcelog", mcelog_at[0], mcelog_at[1], m.group(1), ln, False)
    if " error: " in s and "mcg" in s and (m := _RAS_MCE.search(s)) is not None:
        return "mce", mcelog_at, _ras_mce(m, s, ln), ""
    if "error(s):" in s and (m := _RAS_MC.search(s)) is not None:
        place = _dimm(m.group(3) or f"location {m.group(4)}")
        return (
            section,
            mcelog_at,
            _Record("ras", m.group(2) in ("Uncorrected", "Fatal"), True, place, ln, int(m.group(1))),
            "",
        )
    if "DIMM Label" in s and (m := _RAS_DIMM.search(s)) is not None:
        return (
            section,
            mcelog_at,
            _Record("ras", m.group(1) in ("Uncorrected", "Fatal"), True, _dimm(m.group(2)), ln, int(m.group(3))),
            "",
        )
    if (":" in s or "No " in s or "Label" in s) and _RAS_QUIET.search(s) is not None:
        return ("summary" if s.strip().startswith("MCE records summary") else ""), mcelog_at, None, ""
    if s.rstrip().endswith(" errors") and (m := _RAS_ROW.search(s)) is not None:  # its header unworded (kernel.py)
        uc = re.search(r"\b(?:Uncorrected|Fatal)\b", m.group(2), re.I) is not None
        return (
            section,
            mcelog_at,
            _Record(
                "ras",
                uc,
                _MEMORY.search(m.group(2)) is not None,
                "host CPU or memory (rasdaemon's MCE summary: bank not given)",
                ln,
                int(m.group(1)),
            ),
            "",
        )
    return None


def quoted(lines: list[Line], reported: Callable[[str, int, int], bool]) -> tuple[list[DimmErrors], set[int]]:
    """A poster's sentences quoting a machine check record whole (app_errors.reported: their own system's), judged
    as the record itself (host_errors.quoted, where nothing else in the file was read)."""
    records = []
    for i in holding(lines, ("Machine Check", "_STATUS[")):
        ln = lines[i]
        s = ln.text
        if (m := _KERNEL.search(s) or _AMD.search(s)) is not None and reported(s, m.start(), m.end()):
            source = "amd" if m.re is _AMD else "kernel"
            near = _MEMORY.search(_near(lines, i)) is not None
            records.append(_status(source, m.group(1), m.group(2), m.group(3), ln, near)[0])
    found = _findings(_one_fault(records))
    return found, {r.line.no for r in records} if found else set()


def _status(source: str, cpu: str, bank: str, word: str, ln: Line, dram: bool) -> tuple[_Record, str]:
    status = int(word, 16)
    uc, said = decode(status)
    memory = dram or (source != "amd" and _memory_code(status))
    place = f"host memory controller (MCA bank {bank})" if memory else f"host CPU {cpu} (MCA bank {bank})"
    record = f"{int(cpu)}:{int(bank)}:{status:x}"
    return _Record(source, uc, memory, place, ln, record=record), f"CPU {cpu} bank {bank} status {word.lower()} ({said})"


def _ras_mce(m: re.Match[str], s: str, ln: Line) -> _Record:
    """A ras-mc-ctl --errors MCE event: its status word where printed, else its own words."""
    fields = {k: v for k, v in _FIELD.findall(s)}
    uc = re.search(r"\b(?:Uncorrected|Fatal)\b", m.group(1), re.I) is not None
    if "status" in fields:
        uc = decode(int(fields["status"], 16))[0]
    memory = _MEMORY.search(s) is not None
    bank = str(_number(fields["bank"])) if "bank" in fields else (m.group(3) or "?")
    cpu = m.group(2) or (str(_number(fields["cpu"])) if "cpu" in fields else "?")
    if memory and "memory_channel" in fields:
        place = f"host memory channel {fields['memory_channel']} csrow {fields.get('csrow', '?')} (MCA bank {bank})"
    else:
        place = f"host memory controller (MCA bank {bank})" if memory else f"host CPU {cpu} (MCA bank {bank})"
    return _Record("ras", uc, memory, place, ln)


def _once(records: list[_Record]) -> list[str]:
    """The places with corrected records below the thresholds: said, not judged (one corrected error is a stray bit
    flip until it repeats); a bank's overflow bit (OVER, rasdaemon's 'Error_overflow') says more errors came."""
    per: dict[str, list[_Record]] = {}
    for r in records:
        if not r.uncorrected:
            per.setdefault(r.place, []).append(r)
    out = []
    for place, rs in per.items():
        if len(rs) >= threshold("host_memory_ce_reports") or sum(r.errors for r in rs) >= threshold("host_memory_ce_count"):
            continue
        over = any("overflow" in r.line.text.lower() or " OVER" in r.line.text for r in rs)
        out.append(
            f"{place}: {sum(r.errors for r in rs)} corrected error(s) (line(s) {', '.join(str(r.line.no) for r in rs[:4])})"
            + ("; its bank's overflow bit says more came than were recorded" if over else "")
            + ": corrected, a note until it repeats (a host fault, not a GPU)"
        )
    return out[:4]


def _number(value: str) -> int:
    return int(value, 16) if value.startswith("0x") else int(value)


def _dimm(label: str) -> str:
    label = label.strip().strip("\"'")
    return f"host DIMM {label}" if label else "host memory (DIMM not named)"


def _findings(records: list[_Record]) -> list[DimmErrors]:
    """Per place: uncorrected records critical, corrected ones repeated warn (each source counted alone, the most
    taken: a record the kernel and its decoder both print is one); a single corrected record stays a note."""
    per: dict[tuple[bool, bool, str], dict[str, list[_Record]]] = {}
    for r in records:
        per.setdefault((r.uncorrected, r.memory, r.place), {}).setdefault(r.source, []).append(r)
    out = []
    for (uc, memory, place), sources in per.items():
        found = max(sources.values(), key=len)
        errors = max(sum(r.errors for r in rs) for rs in sources.values())
        if not uc and len(found) < threshold("host_memory_ce_reports") and errors < threshold("host_memory_ce_count"):
            continue
        kind = (UNCORRECTED if memory else MCE) if uc else (CE_REPEATED if memory else MCE_REPEATED)
        out.append(DimmErrors(kind, place, found[0].line.text.strip()[:240], found[0].line.no, len(found), errors))
    return out
