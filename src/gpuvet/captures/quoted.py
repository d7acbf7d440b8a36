"""Issue 46: the kernel's Xids and the NVIDIA driver's messages (kernel.NVRM_MESSAGES) as a poster's words name
them ('dmesg shows Xid 79 on 0000:3b:00.0', 'the log says "RmInitAdapter failed"'), read only where
nothing in a file is a tool's own line (formats.read_quoted), as app_errors.quoted reads the runtimes' messages."""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures import host_errors, kernel_edge_accel, pci_resources, smi_messages
from gpuvet.captures.app_errors import in_quotes, reported, said
from gpuvet.captures.kernel import NO_BUS, NVRM_MESSAGES, KernelEvent, KernelMessage, KernelParse, bus
from gpuvet.captures.kernel_echoes import handle_kind
from gpuvet.captures.records import XidLine
from gpuvet.captures.text import Line

# an Xid a poster's sentence names ('dmesg shows Xid 79 on 0000:3b:00.0', '"Xid (PCI:0000:3b:00): 79"')
# (each optional part carries its own leading blanks: no two adjacent \s* to retry on a long run of blanks)
_XID_SAID = re.compile(r"\bXid(?:\s*\((?:PCI:)?[0-9a-fA-F:.]{7,16}\)(?:\s*:)?|(?:\s*error)?(?:\s*code)?(?:\s*#)?)\s*"
                       r"(\d{1,3})\b")


def quoted_xids(lines: list[Line]) -> tuple[list[XidLine], set[int]]:
    """The Xids a poster's words report (app_errors.reported: their system showed it), each marked ``quoted``;
    read only where nothing in the file is a tool's own line (formats.read_quoted). One per module and code;
    the lines read."""
    out: dict[tuple[str, int], XidLine] = {}
    claimed: set[int] = set()
    for ln in lines:
        for m in said(_XID_SAID, ln.text) if "Xid" in ln.text else ():
            if reported(ln.text, m.start(), m.end()):
                key = (nearest_bus(ln.text, m.start(), m.end()), int(m.group(1)))
                out.setdefault(key, XidLine(*key, ln.text.strip()[:300], quoted=True))
                claimed.add(ln.no)
    got, reports = _windows(lines)  # issue 46 (WIN): nvlddmkm's Event 13 a poster quotes
    for x in (x for x in got.xids if x.line in reports):
        out.setdefault((x.bus_id, x.code), replace(x, quoted=True))
        claimed.add(x.line)
    if not out:  # R4B: a report's Xids no sentence says 'shows' beside (a summary, a title, a list under its lead)
        from gpuvet.captures import xid_reports
        said_xids, read = xid_reports.read(lines, claimed)
        out.update({(x.bus_id, x.code): x for x in said_xids})
        claimed |= read
    return list(out.values()), claimed


def _windows(lines: list[Line]) -> tuple[KernelParse, set[int]]:
    """Windows' records a poster's words quote (captures/windows.py: a TDR, a display driver's event, a bug check,
    a Device Manager code), and the lines whose words report them (app_errors.reported)."""
    from gpuvet.captures import windows

    got = windows.parse(lines)
    texts = {ln.no: ln.text for ln in lines if ln.no in got.claimed}
    spans = {no: (q.start(), q.end()) if (q := _QUOTED.search(t)) else (0, len(t)) for no, t in texts.items()}
    return got, {no for no, (a, b) in spans.items() if reported(texts[no], a, b)}


# with its domain: no clock; R9A: or glued to the word by nvidia-smi ('device handle for GPU0000:4F:00.0')
_XID_BUS = re.compile(r"(?:\b|(?<=GPU))([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-7])?\b")


# NBF1: nvidia-smi's answer for a module it cannot open, anywhere in the poster's sentence (its own reader
# takes it only at a line's start or as the tool's output); AX1, PCR; R13D: Jetson's soctherm OC alarm
_SAID_MESSAGES = NVRM_MESSAGES + (KernelMessage("smi_no_handle", re.compile(
    r"Unable to (?:determine|detect) the device handle for (?:GPU\s*(?:\d{1,3}:\s+)?)?(?:PCI:)?[0-9a-fA-F]{0,8}:?"
    r"[0-9a-fA-F]{2}:[0-9a-fA-F]{2}"), "nvidia-smi"),) + smi_messages.SAID + pci_resources.SAID + kernel_edge_accel.SAID


def quoted_messages(lines: list[Line]) -> tuple[list[KernelEvent], set[int]]:
    """The NVIDIA driver's messages a poster's words name, as quoted_xids reads Xids: one per module and kind,
    marked ``quoted``; the lines read."""
    out: dict[tuple[str, str], KernelEvent] = {}
    claimed: set[int] = set()
    for ln in lines:
        for message in _SAID_MESSAGES:
            for m in said(message.pattern, ln.text):
                if _your_words(ln.text, m) or not reported(ln.text, m.start(), m.end()):
                    continue
                kind = handle_kind(ln.text[m.start():m.end() + 120]) if message.kind == "smi_no_handle" else message.kind
                key = (kind, nearest_bus(ln.text, m.start(), m.end()))
                out.setdefault(key, KernelEvent(*key, ln.text.strip()[:240], ln.no, quoted=True))
                claimed.add(ln.no)
    dimms, host_lines = host_errors.quoted(lines)  # HM1: a host DIMM's memory errors, the kernel's line quoted whole
    for d in dimms:
        out.setdefault((d.kind, d.place), KernelEvent(d.kind, d.place, d.text, d.line, count=d.reports, quoted=True))
    claimed |= host_lines
    got, reports = _windows(lines)  # issue 46 (WIN)
    for e in (e for e in got.events if e.line in reports):
        out.setdefault((e.kind, e.module), replace(e, quoted=True))
        claimed.add(e.line)
    return list(out.values()), claimed


# review 55 (F8): a driver message worded in a few everyday lower-case words ('it needs to be reset') is the
# poster's own phrasing unless they quote it
_PLAIN = re.compile(r"[a-z']+(?: [a-z']+){0,4}")


def _your_words(text: str, m: re.Match[str]) -> bool:
    return _PLAIN.fullmatch(m.group()) is not None and not in_quotes(text[max(0, m.start() - 300):m.start()])


# review 55 (F20): where one clause ends and the next begins: a comma or semicolon, a sentence's end, 'but', 'while'
_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"|“[^”]*”")
_CLAUSE_END = re.compile(r"[,;](?=\s)|[.?!](?=\s|$)|\s(?:but|while|whereas|although|though)\s", re.I)


def nearest_bus(text: str, start: int, end: int) -> str:
    """The bus id a message at text[start:end] is on: the one nearest it in its own clause (in it, or the nearest
    before or after: 'Xid 79 on 0000:3b:00.0', 'GPU 0000:3b:00.0 got Xid 79'), never another clause's; else NO_BUS."""
    lo, hi = max(0, start - 300), min(len(text), end + 300)
    plain = _QUOTED.sub(lambda q: "x" * len(q.group()), text[lo:hi])  # a quote's '!' or ',' ends no clause
    first, last = lo, hi
    for cut in _CLAUSE_END.finditer(plain, 0, start - lo):
        first = lo + cut.end()
    if (tail := _CLAUSE_END.search(plain, end - lo)) is not None:
        last = lo + tail.start()
    lo, hi = first, last
    found = [(max(where.start() - end, start - where.end(), 0), where.start() < start, where.group(1))
             for where in _XID_BUS.finditer(text, lo, hi)]
    return bus(min(found)[2]) if found else NO_BUS
