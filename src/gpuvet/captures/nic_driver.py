"""Issue 46 (ZX1, PHRM): a NIC driver's kernel lines about its card, as the drivers print them. mlx5_core
(drivers/net/ethernet/mellanox/mlx5/core) says it failed the card at probe or load (main.c's 'mlx5_load_one failed
with error code -22', 'handle_hca_cap failed', 'enable hca failed', 'Firmware over 120000 MS in pre-initializing
state, aborting'; the driver core's 'probe of 0000:03:00.0 failed with error -22' / 'probe with driver X failed with
error -N'), that the card's firmware stopped (health.c's "device's health compromised", 'Fatal error N detected',
'synd 0x1: firmware internal error', 'health recovery failed'; cmd.c's 'ACCESS_REG(0x805) timeout. Will cause a leak
of a command resource', 'No done completion'), or that the card raised an alarm (events.c's 'High temperature on
sensors', 'Detected insufficient power on the PCIe slot', a cable module's 'Port module event[error]: module 0, Cable
error, Power budget exceeded' or 'Cable unplugged'); bnxt_en, ice, i40e, mlx4_core, irdma and efa the same. Each
card's failures are read per kind (failed, fatal, alarm) by its bus id, the first line cited; a line of the driver
without one ('mlx5_core: …', a poster's edit) is its driver's card, bus id not in the log.

R14E: two of events.c's lines are no alarm of their own. mlx5_pcie_event's 'Detected insufficient power on the PCIe
slot (27W)' repeats the slot power limit the platform firmware advertises to the card (its Slot Capabilities), said
on every boot of servers that set it low while the card runs (kind slot_power); port_module_event's 'Cable unplugged'
at the port's bring-up (the log holds its probe, 'firmware version: …', and no link up before the event) is a port
with no cable, an unused port (kind port_unused). A cable unplugged after the port's link was up, or in a log that
shows nothing else of the port, stays an alarm.

Also read here: the card's interfaces' carrier ('mlx5_core 0000:3b:00.0 enp59s0f0np0: Link down', 'NIC Link is
Down'): a link that went down after it was up and stayed down, or went down and back three times; the net core's
'NETDEV WATCHDOG: enp59s0f0np0 (mlx5_core): transmit queue 5 timed out' and mlx5e's 'TX timeout on queue' (the card
stopped sending); and the RDMA stack's completion errors on a device ('infiniband mlx5_0: …: WC error: 12, Message:
transport retry counter exceeded'). A card whose lines say none of these is left to the other readers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures import carrier_lines, mlx5_cmd
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

_DRIVERS = r"mlx5_core|mlx4_core|bnxt_en|ice|i40e|irdma|efa"
_BDF = r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_HEAD = 600  # characters of a line searched
_OPEN = r"(?:^|[\s\]:;'\"`(])"  # before a driver's name: the line's start, a stamp, a journal's 'kernel:', a quote,
# /dev/kmsg's record prefix ('6,3973,227996631,-;mlx5_core …')
# the driver's own prefix ('mlx5_core 0000:03:00.0: …', an interface's 'mlx5_core 0000:3b:00.0 enp59s0f0np0: …'),
# the driver core's probe line ('mlx5_core: probe of …'), a line of the driver naming no card ('mlx5_core: …')
_PREFIX = re.compile(_OPEN + r"(" + _DRIVERS + r") (" + _BDF + r")(?: ([\w.@-]{1,32}))?:? ")
_PROBE = re.compile(_OPEN + r"(" + _DRIVERS + r"): probe of (" + _BDF + r") failed with error (-?\d+)")
_NO_BUS = re.compile(_OPEN + r"(" + _DRIVERS + r"): ")
_CALLER = re.compile(r"^[a-z_][\w.]{0,60}:\d{1,5}:\(pid \d{1,9}\): ")  # mlx5_core_err's 'poll_health:800:(pid 0): '
# the driver failed its card at probe or load (mlx5 main.c, the driver core, ice, bnxt_en)
_FAILED = re.compile(
    r"probe with driver \S+ failed with error -?\d+|\b(?:mlx5_load_one|mlx5_init_one|init_one|"
    r"mlx5_pci_init|mlx5_function_setup|mlx5_function_enable|mlx5_cmd_init|mlx5_health_init|"
    r"handle_hca_cap(?:_atomic)?|set_hca_ctrl|ice_init_hw|bnxt_init_one)\b[^\n]{0,40}?\bfailed\b|"
    r"\b(?:enable|init|query) hca failed|\bfailed to set issi|\bfailed to allocate (?:boot|init) pages|"
    r"\bFirmware over \d+ MS in (?:pre-)?initializing state|\bFailed initializing command interface|"
    r"\bCannot enable PCI device, aborting|\berror requesting BARs|\bFailed mapping initialization "
    r"segment|\bFirmware recovery mode detected"
)
# the card's firmware stopped (health.c's poll and recovery, cmd.c's timeouts, bnxt_en's fatal reset): critical
_FATAL = re.compile(
    r"device's health compromised|\bFatal error \d+ detected|\bHealth issue observed, |"
    r"^synd 0x[0-9a-fA-F]{1,2}: |\bPCI slot is unavailable|health recovery flow aborted|health recovery "
    r"failed|Driver is in error state|\bNIC IFC still \d+ after|timeout\. Will cause a leak of a "
    r"command resource|\bNo done completion|Firmware fatal reset event|\bFW_FATAL\b"
)
# a command answered late or recovered, a transmit queue the card stopped serving: the firmware stalled (warn)
_STALL = re.compile(r"recovered after timeout|Command completion arrived after timeout|\bTX timeout on queue")
_RECOVERED = "health recovery succeeded"
# the card's own alarms (events.c): its temperature, its slot's power, a cable module pulled out or failed
_ALARM = re.compile(
    r"High temperature on sensors|insufficient(?:/unadvertised)? power on the PCIe slot|firmware over "
    r"temperature|Port module event\[error\]: module \d+|Port module event: module \d+, Cable "
    r"(?:unplugged|disabled)"
)
_WATCHDOG = re.compile(r"NETDEV WATCHDOG: ([\w.@-]{1,32}) \((" + _DRIVERS + r")\): transmit queue \d+ timed out")
_UP = re.compile(r"^(?:Link up|NIC Link is [Uu]p\b)")
_DOWN = re.compile(r"^(?:Link down|NIC Link is Down)\s*$")
FLAPS = 3  # downs after the link first came up that make a flapping link, not one lost and found
# the RDMA core's device ('infiniband mlx5_0: mlx5_handle_error_cqe:333:(pid 0): …', older 'mlx5_0:func:333:(pid 0): ')
_WC = re.compile(
    r"(?:infiniband ([\w.-]{1,32}): (?:[a-z_]\w*:\d+:\(pid \d+\): )?|"
    + _OPEN
    + r"([\w.-]{1,32}):[a-z_]\w*:\d+:\(pid \d+\): )WC error: (\d{1,3}), Message: ([A-Za-z][A-Za-z ]{2,60}[a-z])"
)
_FW = re.compile(r"firmware version: (\d+\.\d+\.\d+)")
_NAMES = tuple(_DRIVERS.split("|"))
FAILED, FATAL, ALARM = "failed", "fatal", "alarm"
SLOT_POWER, PORT_UNUSED = "slot_power", "port_unused"  # R14E: the slot's advertised power; a port never cabled
# mlx5_pcie_event's report of the slot's advertised power limit (events.c; 'insufficient/unadvertised' in older ones)
_SLOT_POWER = re.compile(r"insufficient(?:/unadvertised)? power on the PCIe slot")
_UNPLUGGED = re.compile(r"Port module event: module \d+, Cable unplugged")
# mlx5_pcie_event's other reports, at info: the slot's power read and enough, or not advertised (read, nothing said)
_SLOT_FINE = re.compile(r"PCIe slot advertised sufficient power \(\d+W\)|PCIe slot power capability was not advertised")
LOST, FLAPPING = "lost", "flapping"
# the drivers' names as their lines hold them: a line without one is none of theirs (formats.py's markers too).
# ice and efa are short words inside common ones ('device 0000:', 'service:'): their marks hold what is around the
# name ('\n' opens a line in the joined text), or every bug report's every 'device' line is searched (issue 43)
MARKS = (
    "mlx5_core",
    "mlx4_core",
    "bnxt_en",
    *(f"{c}{name} 0000:" for name in ("ice", "efa") for c in " \n'`\""),
    " ice: probe",
    "i40e",
    "irdma",
    " efa: probe",
    "WC error",
    "NETDEV WATCHDOG",
    *carrier_lines.MARKS,  # R11B: an IPoIB interface's carrier, as systemd-networkd or NetworkManager log it
)


@dataclass(frozen=True)
class NicDriverFailure:
    """A card its driver said failed, stopped or alarmed (``kind``): the first such line and how many the card holds."""

    bus_id: str | None  # 0000:03:00.0, as the line prints it; None: the lines name no card
    driver: str  # mlx5_core
    line: int
    text: str
    count: int
    firmware: str | None  # the version the driver's own line read from the card ('firmware version: 14.32.1010')
    kind: str = FAILED  # failed (probe, load), fatal (the firmware stopped or stalled), alarm, slot_power, port_unused
    severe: bool = True  # fatal: the card stopped (health, a command never answered), not only stalled and recovered
    netdev: str | None = None  # its interface, where a line names only that (NETDEV WATCHDOG)


@dataclass(frozen=True)
class NicLinkChange:
    """An interface of a card whose carrier went down after it was up (lost) or down and back FLAPS times."""

    bus_id: str
    driver: str
    netdev: str | None
    kind: str  # lost, flapping
    line: int  # the first down after the link was up
    text: str
    downs: int


@dataclass(frozen=True)
class NicCompletionError:
    """The RDMA core's work completion with error on a device (mlx5_ib's 'WC error: 12, Message: …')."""

    device: str
    status: int
    message: str
    line: int
    text: str
    count: int


@dataclass
class NicDriverParse:
    failures: list[NicDriverFailure] = field(default_factory=list)
    links: list[NicLinkChange] = field(default_factory=list)
    completions: list[NicCompletionError] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)  # R9C: the commands the firmware refused for their caller


# words every line read here holds one of: only lines holding one are searched, then only the failing cards' lines (by
# bus id) are read whole (a DGX bug report holds ~28k healthy mlx5_core lines)
_WORDS = (
    "failed",
    "health",
    "Fatal error",
    "synd 0x",
    "PCI slot",
    "error state",
    "NIC IFC",
    "timeout",
    "No done",
    "fatal reset",
    "FW_FATAL",
    "High temperature",
    "insufficient",
    "sufficient power",
    "firmware version",
    "not advertised",
    "over temperature",
    "Port module event",
    "aborting",
    "hca failed",
    "issi",
    "recovery mode",
    "Link up",
    "Link down",
    "Link is",
    "WATCHDOG",
    "WC error",
)


@dataclass
class _Card:
    driver: str
    lines: dict[str, list[Line]] = field(default_factory=dict)  # by kind
    severe: list[int] = field(default_factory=list)  # the severe fatal lines' numbers
    recovered: int = 0  # the last 'health recovery succeeded' line's number
    carrier: dict[str | None, list[tuple[Line, bool]]] = field(default_factory=dict)  # by interface: (line, up)
    netdev: str | None = None
    probed: bool = False  # R14E: the log holds its bring-up ('firmware version: …')


def parse(lines: list[Line], marks: Marks | None = None) -> NicDriverParse:
    """The cards a driver failed, stopped or alarmed, their links lost or flapping, the RDMA completion errors: each
    with every line of its driver about it claimed (only the lines holding one of _WORDS are searched)."""
    cards: dict[str | None, _Card] = {}
    completions: dict[tuple[str, int], list[Line]] = {}
    watchdogs: list[tuple[str, str, Line]] = []
    refused: list[mlx5_cmd.Refusal] = []
    fine: set[int] = set()  # R14E: mlx5's slot power read and enough: its lines read, nothing said
    for i in holding(lines, _WORDS, marks):
        ln = lines[i]
        head = ln.text[:_HEAD]
        if mlx5_cmd.WORD in head and (r := mlx5_cmd.refusal(ln)) is not None:  # R9C: the caller's request, read
            refused.append(r)
        elif "WC error" in head and (w := _WC.search(head)) is not None:
            completions.setdefault(((w.group(1) or w.group(2)), int(w.group(3))), []).append(ln)
        elif "WATCHDOG" in head and (d := _WATCHDOG.search(head)) is not None:
            watchdogs.append((d.group(1), d.group(2), ln))
        elif "slot" in head and _SLOT_FINE.search(head) is not None and _PREFIX.search(head) is not None:
            fine.add(ln.no)
        elif any(name in head for name in _NAMES):  # a literal test before the driver's patterns
            _card_line(ln, head, cards)
    _watchdogs(lines, watchdogs, cards, marks)
    out = NicDriverParse(claimed={r.line for r in refused} | fine, notes=[mlx5_cmd.note(refused)] if refused else [])
    for bus, card in cards.items():
        _report(lines, bus, card, out, marks)
    _daemon_carrier(lines, out, marks)
    for (device, status), seen in completions.items():
        first = seen[0]
        message = m.group(4) if (m := _WC.search(first.text[:_HEAD])) else ""
        out.completions.append(NicCompletionError(device, status, message, first.no, first.text.strip()[:240], len(seen)))
        out.claimed |= {s.no for s in seen}
    return out


def _card_line(ln: Line, head: str, cards: dict[str | None, _Card]) -> None:
    """One line of a driver about its card (or about no card named), kept by its kind."""
    probe = _PROBE.search(head)
    m = probe or _PREFIX.search(head) or _NO_BUS.search(head)
    if m is None:
        return
    bus = m.group(2).lower() if m.re is not _NO_BUS else None
    said = _CALLER.sub("", head[m.end() :].strip())
    netdev = m.group(3) if m.re is _PREFIX else None
    card = cards.setdefault(bus, _Card(m.group(1)))
    if probe is not None or _FAILED.search(said):
        card.lines.setdefault(FAILED, []).append(ln)
    elif _FATAL.search(said):
        card.lines.setdefault(FATAL, []).append(ln)
        card.severe.append(ln.no)
    elif _STALL.search(said):
        card.lines.setdefault(FATAL, []).append(ln)
    elif _ALARM.search(said):
        card.lines.setdefault(_alarm_kind(said, card), []).append(ln)
    elif said.startswith("firmware version: "):
        card.probed = True
    elif said.startswith(_RECOVERED):
        card.recovered = ln.no
    elif (up := _UP.match(said)) is not None or _DOWN.match(said):
        card.carrier.setdefault(netdev, []).append((ln, up is not None))


def _alarm_kind(said: str, card: _Card) -> str:
    """R14E: the slot's advertised power (slot_power); a cable unplugged at the port's bring-up, its link never up
    before it (port_unused); else the card's alarm."""
    if _SLOT_POWER.search(said):
        return SLOT_POWER
    if _UNPLUGGED.search(said) and card.probed and not any(up for seq in card.carrier.values() for _, up in seq):
        return PORT_UNUSED
    return ALARM


def _watchdogs(
    lines: list[Line], found: list[tuple[str, str, Line]], cards: dict[str | None, _Card], marks: Marks | None
) -> None:
    """The net core's transmit timeouts, on the card whose driver's line names the interface (else on the interface)."""
    for netdev, driver, ln in found:
        named = (
            m
            for j in holding(lines, (f" {netdev}:",), marks)
            if (m := _PREFIX.search(lines[j].text[:_HEAD])) and m.group(3) == netdev
        )
        bus = next((m.group(2).lower() for m in named), None)
        card = cards.setdefault(bus if bus is not None else f"netdev {netdev}", _Card(driver, netdev=netdev))
        card.lines.setdefault(FATAL, []).append(ln)


def _report(lines: list[Line], key: str | None, card: _Card, out: NicDriverParse, marks: Marks | None) -> None:
    """The card's failures by kind, its carrier's changes, and its driver's other lines claimed where it failed."""
    bus = key if key is not None and not key.startswith("netdev ") else None
    own = [j for j in holding(lines, (bus, bus.upper()), marks) if _owned(lines[j].text[:_HEAD], bus)] if bus else []
    fw = next((f.group(1) for j in own if (f := _FW.search(lines[j].text[:_HEAD])) is not None), None)
    for kind in (FAILED, FATAL, ALARM, SLOT_POWER, PORT_UNUSED):
        seen = card.lines.get(kind)
        if not seen:
            continue
        severe = kind == FATAL and any(no > card.recovered for no in card.severe)
        out.failures.append(
            NicDriverFailure(
                bus, card.driver, seen[0].no, seen[0].text.strip()[:240], len(seen), fw, kind, severe, card.netdev
            )
        )
        out.claimed |= {ln.no for ln in seen}
    if card.lines and bus:
        out.claimed |= {lines[j].no for j in own}
    for netdev, seq in card.carrier.items():
        if bus is not None and (change := _carrier(bus, card.driver, netdev, seq)) is not None:
            out.links.append(change)
            out.claimed |= {ln.no for ln, _ in seq}


def _carrier(bus: str, driver: str, netdev: str | None, seq: list[tuple[Line, bool]]) -> NicLinkChange | None:
    """Lost: down after it was up, and not up again; flapping: FLAPS downs or more after it was first up. A link never
    up (a port unused since boot) and one down and back once or twice say nothing of the card."""
    first_up = next((i for i, (_, up) in enumerate(seq) if up), None)
    if first_up is None:
        return None
    downs = [ln for ln, up in seq[first_up:] if not up]
    if not downs:
        return None
    if len(downs) >= FLAPS:
        return NicLinkChange(bus, driver, netdev, FLAPPING, downs[0].no, downs[0].text.strip()[:240], len(downs))
    if not seq[-1][1]:
        return NicLinkChange(bus, driver, netdev, LOST, downs[-1].no, downs[-1].text.strip()[:240], len(downs))
    return None


def _daemon_carrier(lines: list[Line], out: NicDriverParse, marks: Marks | None) -> None:
    """R11B: an IPoIB interface's carrier lost or flapping as its network daemon logs it (captures/carrier_lines)."""
    for netdev, seq in carrier_lines.read(lines, marks).items():
        if (said := carrier_lines.change(seq, FLAPS)) is not None:
            kind, ln, downs = said
            daemon = "NetworkManager" if "carrier: link" in ln.text else "systemd-networkd"
            out.links.append(NicLinkChange(netdev, daemon, None, kind, ln.no, ln.text.strip()[:240], downs))
        out.claimed |= {ln.no for ln, _ in seq}


def _owned(head: str, bus: str) -> bool:
    """Whether the line is the card's own driver's (its prefix, or the driver core's probe line for it)."""
    m = _PROBE.search(head) or _PREFIX.search(head)
    return m is not None and m.group(2).lower() == bus
