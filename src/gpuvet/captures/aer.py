"""PCIe AER lines of the Linux kernel (drivers/pci/pcie/aer.c): each error is a 'PCIe Bus Error:
severity=…, type=…' line of the device that reports it, then its 'device [vvvv:dddd] error
status/mask=…' line and one '[bit] Name' line per error; a root port also says which device sent the
message ('… error message received from 0000:03:00.0', 'Multiple Corrected error received: …').
Read per reporting device, with its driver (pcieport, nvme, nvidia …) and vendor, so an NVMe drive's
errors are never a GPU's."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import GPU_DRIVERS as GPU_DRIVERS  # its readers' and doctor's (records: no parser)
from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key

# a domain of four hex digits, or up to eight (Linux prints %04x: a VMD controller's domains are 10000 and up)
_DEV = r"([\w.-]{1,32}) ([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): (?:AER: )?"
_ERROR = re.compile(_DEV + r"PCIe Bus Error: severity=([A-Za-z]+(?: \([A-Za-z-]+\))?), type=([A-Za-z ]+?),")
_DEVICE = lazy(_DEV + r"\s*device \[([0-9a-fA-F]{4}):[0-9a-fA-F]{4}\] error status/mask=")
_BIT = lazy(_DEV + r"\s*\[\s*\d+\s*\] ([A-Za-z][\w ]*?)\s*(?:\(First\))?\s*$")
# older kernels name the source by its requester id ('received: id=00e8': bus << 8 | device << 3 | function)
_FROM = lazy(_DEV + r"(?:AER: )?(Multiple )?((?:Corrected|Correctable|Uncorrected|Uncorrectable|Fatal|"
             r"Non-?fatal)[\w ()-]*?) (?:error )?(?:message )?received(?: from)?:? "
             r"(?:([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])|id=([0-9a-fA-F]{4})\b)")
NVIDIA = "10de"
ATI = "1002"  # AMD's graphics vendor id: its GPUs, their HDMI audio functions and the PCIe switches on their cards
RECEIVER_ERRORS = ("RxErr", "Receiver Error")  # the correctable Physical Layer bit, as kernels name it
# the kernel's recovery after an uncorrectable error: a device whose driver cannot take part, a port that gave up
_RECOVERY = lazy(_DEV + r"(?:AER: )?(can't recover|device recovery failed|device recovery successful)", re.I)
# older kernels' word for a device the port's error broadcast reached that has no error handler (newer ones say
# "can't recover (no error_detected callback)"): a device below the port, lost with it if its recovery fails
_NO_HANDLER = lazy(_DEV + r"device has no AER-aware driver")
_BUS_SAID = lazy(r"[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]: ")  # the end of _DEV
_LONGEST = 400  # characters: the kernel prints every AER line short (a longer line is something else)
# lines between two corrected errors of one undated burst: the kernel prints each in a few (its message, severity,
# device, bits, 'can't find device'); a longer gap is other output between them, so no longer one burst
_BURST_GAP = 10
_UPTIME = lazy(r"^\s*(?:<\d>)?\[\s*(\d{1,9}\.\d{1,9})\]")  # dmesg's stamp: seconds since boot
# a clock's stamp, where no dmesg one is: dmesg -T's '[Mon Dec  1 10:00:00 2026]', and syslog's 'Dec 01 10:00:00'
# or RFC 3339's '2026-12-01T10:00:00' where the line keeps them (decorations.peel takes a prefix every line of a run
# carries off first: such a journal is undated here): seconds, so errors days apart are read as days apart (a
# year's turn is read wrong at most: its two sides are far apart, never one burst)
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                                       "Dec"))}
_CLOCK = lazy(r"^\s*(?:<\d>)?\[?(?:[A-Z][a-z]{2} )?(?:(?P<mon>[A-Z][a-z]{2}) {1,2}(?P<day>\d{1,2}) |"
              r"\d{4}-(?P<mnum>\d{2})-(?P<dnum>\d{2})[T ])(?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2}(?:[.,]\d{1,9})?)")


@dataclass
class AerDevice:
    """One device that reported AER errors: how many, of which severities and names."""

    bus: str
    driver: str
    vendor: str | None = None
    correctable: int = 0
    uncorrectable: int = 0
    kinds: list[str] = field(default_factory=list)  # 'Data Link Layer: Timeout', in order first seen
    sources: list[str] = field(default_factory=list)  # for a port: the devices it says sent the messages
    first_line: int = 0
    fatal: int = 0  # uncorrectable errors the kernel called Fatal (the link is reset to recover)
    unrecovered: bool = False  # the kernel said recovery failed (the port) or can't recover (a device)
    recovered: bool = False  # the kernel said the link's recovery succeeded (the last word on it)
    said: list[str] = field(default_factory=list)  # a port's 'Uncorrected (Fatal) error received' severities
    messages: int = 0  # corrected error messages the port says it received ('Multiple …' is two at least)
    # each corrected error it reported, with its dmesg time (None: no stamp): a message it received from itself
    # ('Multiple': two), and each severity line no such message came just before (its own line is the report)
    corrected_at: list[tuple[float | None, int, int]] = field(default_factory=list)  # (time, errors, line)
    pending: int = 0  # its own messages whose severity lines have not come yet (the kernel prints them after)

    @property
    def receiver_errors_only(self) -> bool:
        """Only corrected Physical Layer receiver errors (RxErr): the lane's signal, fixed by the link's own
        retry before any packet is lost; a port's Data Link Layer errors (BadTLP, BadDLLP, replay Timeout)
        are packets it had to replay, and an uncorrectable error is a failed transaction."""
        return not self.uncorrectable and bool(self.kinds) and all(
            k == "Physical Layer" or k.rpartition(": ")[2] in RECEIVER_ERRORS for k in self.kinds)


@dataclass
class AerParse:
    devices: dict[str, AerDevice] = field(default_factory=dict)
    claimed: set[int] = field(default_factory=set)
    host: str | None = None  # the host whose lines these are, in a log of several (captures/hosted.py)
    hosted: list[AerParse] = field(default_factory=list)  # there: each host's devices, read from its lines alone
    unhandled: dict[str, str] = field(default_factory=dict)  # bus -> driver: reached by a broadcast, no handler
    notes: list[str] = field(default_factory=list)  # issue 46 (WIN): what Windows' WHEA records said (whea.py)
    # R5B: a device's error bits whose severity line the excerpt cut (bus -> 'driver: bits'): an endpoint that logged
    stray: dict[str, str] = field(default_factory=dict)

    def gpu(self, bus: str) -> bool:
        """The device is a GPU module or one of its functions: a GPU's audio, USB-C and UCSI functions share its
        link, so a link error on any of them is the GPU's link. NVIDIA's by its vendor id or its driver's name;
        AMD's by amdgpu, or an ATI-vendor (1002) function other than a port behind a port (bus not 00: the old
        ATI south bridges' functions sit on bus 00; the PCIe switch ports on an AMD card are ports, not it);
        any function in the slot of a GPU function named so."""
        return bus in self.devices and any(self._gpu_function(d) for d in self.devices.values()
                                           if d.bus.rpartition(".")[0] == bus.rpartition(".")[0])

    @staticmethod
    def _gpu_function(d: AerDevice) -> bool:
        return d.vendor == NVIDIA or d.driver in GPU_DRIVERS or (
            d.vendor == ATI and d.driver != "pcieport" and d.bus.split(":")[-2] != "00")

    def undated(self, bus: str) -> bool:
        """Whether a corrected error of the device has no stamp (dmesg's or a clock's): corrected_within then
        counts runs of lines, not seconds."""
        return any(t is None for t, _, _ in self.devices[bus].corrected_at)

    def corrected_within(self, bus: str, seconds: float) -> int:
        """The most corrected errors the device reported within any ``seconds`` of its stamps (dmesg's, or a
        journal's or syslog's clock); an excerpt without any (peeled): the most in one run of its lines, each within
        _BURST_GAP lines of the last (the kernel prints a burst back to back: an assumption, faults.yaml
        pcie_aer_flood)."""
        events = self.devices[bus].corrected_at
        best = run = start = 0
        if self.undated(bus):
            last = None
            for _, n, no in sorted(events, key=lambda e: e[2]):
                run = run + n if last is not None and no - last <= _BURST_GAP else n
                best, last = max(best, run), no
            return best
        timed = sorted((t, n) for t, n, _ in events if t is not None)
        for t, n in timed:
            run += n
            while timed[start][0] < t - seconds:
                run -= timed[start][1]
                start += 1
            best = max(best, run)
        return best


def parse(lines: list[Line], marks: Marks | None = None) -> AerParse:
    """Each device's AER lines; an error bit named before its device's severity line (an excerpt that starts
    inside the kernel's block) is that device's once the severity line comes. ``marks``: the whole text's."""
    out = AerParse()
    early: dict[str, list[tuple[Line, str]]] = {}
    for ln in _candidates(lines, marks):
        s = ln.text
        if (m := _ERROR.search(s)) is not None:
            d = _device(out, m, ln)
            if m.group(3).lower().startswith("correct"):
                d.correctable += 1
                d.pending, alone = max(d.pending - 1, 0), not d.pending
                d.corrected_at += [(_uptime(ln), 1, ln.no)] if alone else []
            else:
                d.uncorrectable += 1
                fatal = "fatal" in m.group(3).lower() and "non" not in m.group(3).lower()
                d.fatal += fatal
                d.recovered = d.recovered and not fatal  # a recovery is the last word only until the next fatal
            d.kinds.append(m.group(4).strip())
        elif (m := _DEVICE.search(s)) is not None:
            _device(out, m, ln).vendor = m.group(3).lower()
        elif (m := _FROM.search(s)) is not None:
            d = _device(out, m, ln)
            src = bus_key(m.group(5) or _requester(d.bus, m.group(6)))
            d.sources += [] if src in d.sources else [src]
            d.said.append(m.group(4).strip())
            corrected = (2 if m.group(3) else 1) if m.group(4).lower().startswith("correct") else 0
            d.messages += corrected
            if corrected and src == d.bus:  # its own error: counted here, its severity lines (after it) are this
                d.corrected_at.append((_uptime(ln), corrected, ln.no))
                d.pending += 1
        elif (m := _RECOVERY.search(s)) is not None:
            d = _device(out, m, ln)
            d.recovered, d.unrecovered = (True, d.unrecovered) if m.group(3).endswith("successful") else (False, True)
            _recover_sources(out, d)
        elif (m := _NO_HANDLER.search(s)) is not None:
            out.unhandled.setdefault(bus_key(m.group(2)), m.group(1))
            out.claimed.add(ln.no)
        elif (m := _BIT.search(s)) is not None and bus_key(m.group(2)) in out.devices:
            d = _device(out, m, ln)
            layer = d.kinds.pop() if d.kinds and ":" not in d.kinds[-1] else ""
            d.kinds.append(f"{layer}: {m.group(3).strip()}" if layer else m.group(3).strip())
        elif m is not None:
            early.setdefault(bus_key(m.group(2)), []).append((ln, m.group(3).strip()))
    for bus, bits in early.items():
        if bus in out.devices:
            out.devices[bus].kinds += [name for _, name in bits]
            out.claimed.update(ln.no for ln, _ in bits)
        elif out.devices and (m := _BIT.search(bits[0][0].text)) is not None:  # an endpoint's bits, its head cut
            out.stray.setdefault(bus, f"{m.group(1)}: {', '.join(dict.fromkeys(name for _, name in bits))}")
            out.claimed.update(ln.no for ln, _ in bits)
    for d in out.devices.values():
        d.kinds = list(dict.fromkeys(d.kinds))
    _said_alone(out)
    out.notes += [_lone(d) for d in out.devices.values() if _is_lone(d)]
    return out


def _is_lone(d: AerDevice) -> bool:
    """R7B: a port's one corrected receiver error, its own: below the burst doctor judges (pcie_aer_port_burst), so
    no finding, yet read and said (a note) rather than silent."""
    own = set(d.sources) <= {d.bus}
    return d.driver == "pcieport" and own and d.receiver_errors_only and max(d.correctable, d.messages) == 1


def _lone(d: AerDevice) -> str:
    vendor = f" (vendor {d.vendor})" if d.vendor else ""
    return (f"kernel AER: port {d.bus}{vendor} logged 1 corrected PCIe error ({', '.join(d.kinds)}): a lane's "
            "signal the link retried, nothing lost; one alone is no burst and names no GPU (said, not judged)")


def _said_alone(out: AerParse) -> None:
    """A port's 'Uncorrected (Fatal) error received: BDF' with no severity line of its own or of that source
    after it (an excerpt, a grep for 'AER'): the message's severity is the port's error, counted once. A
    corrected one alone stays a source named (corrected errors count only from their severity lines)."""
    for d in list(out.devices.values()):
        counted = [x for x in (d, *(out.devices.get(s) for s in d.sources)) if x is not None
                   and (x.correctable or x.uncorrectable)]
        if counted or not d.said:
            continue
        failed = [said for said in d.said if not said.lower().startswith(("correct", "multiple corrected"))]
        for said in failed:
            d.uncorrectable += 1
            d.fatal += "fatal" in said.lower() and "non" not in said.lower()
        d.kinds += list(dict.fromkeys(f"{said} error received" for said in failed))


_WORDS = ("PCIe Bus Error: severity=", "error status/mask=", "received", "recover", "AER-aware")  # _candidates' literals
_NAMING = (_ERROR, _DEVICE, _FROM, _RECOVERY)  # the patterns that name a device (a bit's line needs one named)
# what a _BIT line holds past its device's bus id (the other three patterns each hold a literal: see _candidates)
_BIT_HINT = lazy(r": (?:AER: )?\s*\[\s*\d+\s*\] [A-Za-z]")


def _candidates(lines: list[Line], marks: Marks | None = None) -> list[Line]:
    """The lines one of the four patterns can match, found with literal tests first (each pattern's own words:
    a bug report's dmesg is mostly other drivers' lines, and four regex searches of each cost seconds); every
    AER line names its device's bus, 'dev:fn: ' (a dmesg stamp's '] ' alone is no hint). A bit's line is a
    device's only once a line of the others names one, and each of those holds one of _WORDS: where no line
    holding one does (a bug report's 'recover' is the NVIDIA driver's Xid 154), none is read and no line is
    tested for a bit's hint (issue 43: that test of every line was most of a bug report's AER time)."""
    named = [lines[i] for i in holding(lines, _WORDS, marks)]  # the words the whole text lacks: not tested
    if not any(p.search(ln.text) for ln in named if len(ln.text) <= _LONGEST for p in _NAMING):
        return []
    return [ln for ln in lines if len(s := ln.text) <= _LONGEST
            and ("PCIe Bus Error: severity=" in s or "error status/mask=" in s or "received" in s or "recover" in s
                 or "AER-aware" in s                 or s.find("[", s.find(": ")) >= 0 and _BIT_HINT.search(s) is not None)
            and ("AER" in s or "PCIe Bus Error" in s or "error status" in s
                 or "] " in s and _BUS_SAID.search(s) is not None)]


def _uptime(ln: Line) -> float | None:
    """The line's dmesg stamp in seconds, else its clock's (seconds counted from the year's start), else None."""
    if (m := _UPTIME.match(ln.text)) is not None:
        return float(m.group(1))
    if (c := _CLOCK.match(ln.text)) is None:
        return None
    month = _MONTHS.get(c["mon"], -1) if c["mon"] else int(c["mnum"]) - 1
    if month < 0:
        return None
    day = int(c["day"] or c["dnum"])
    return (((month * 31 + day) * 24 + int(c["h"])) * 60 + int(c["m"])) * 60 + float(c["s"].replace(",", "."))


def _recover_sources(out: AerParse, port: AerDevice) -> None:
    """The kernel prints a link's successful recovery on the port that reported the error, never on the
    endpoint: it is the last word on the devices that port named as the errors' sources too."""
    if port.recovered:
        for src in port.sources:
            if src in out.devices and src != port.bus:
                out.devices[src].recovered = True


def _requester(port: str, rid: str) -> str:
    """The bus id an older kernel's 'id=XXXX' names: bus, device and function of the requester id, in the
    domain of the port that received the message."""
    n = int(rid, 16)
    return f"{port.rpartition(':')[0].rpartition(':')[0]}:{n >> 8:02X}:{(n >> 3) & 0x1F:02X}.{n & 7}"


def _device(out: AerParse, m: re.Match[str], ln: Line) -> AerDevice:
    bus = bus_key(m.group(2))
    d = out.devices.setdefault(bus, AerDevice(bus, m.group(1).rstrip(":"), first_line=ln.no))
    out.claimed.add(ln.no)
    return d
