"""infiniband-diags' fabric views as people paste them (issue 46, AX3): ``iblinkinfo`` (its node heads 'Switch:
0x… name:' / 'CA: node01 HCA-1:', each port '  12    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>   3   17[  ]
"switch" ( )', -l's line form with both GUIDs and names, the '(Could be 4X Could be 25.78125 Gbps)' it adds where a
link trained below what both its ends support), ``ibnetdiscover`` (its topology: 'Ca 1 "H-…" # "node01 mlx5_0"' /
'[1](…) "S-…"[3] # lid 12 lmc 0 "switch" lid 3 4xEDR'; and -p's port list 'CA 12 1 0x… 4x EDR - SW 3 1 0x… ( 'a' -
'b' )'), ``ibqueryerrors`` ('Errors for "node01 mlx5_0"' / '   GUID 0x… port 1: [SymbolErrorCounter == 56]', -r's
'Link info:' line, its '## Summary') and the older ``ibcheckerrors`` ('#warn: counter SymbolErrors = 13151
(threshold 10) lid 193 port 4' / 'Error check on lid 193 (…) port 4:  FAILED'). Strings as linux-rdma/rdma-core
v64.0-61 prints them (infiniband-diags/iblinkinfo.c, ibdiag_common.c's get_max_msg, ibnetdiscover.c, ibqueryerrors.c;
libibmad/dump.c and fields.c for the widths, speeds, states and counter names).

An HCA's port becomes the NIC record the other RDMA listings give (backends/nic_readings.py), named by its node
description ('node01 mlx5_0'): its state, width and rate, its error counters in sysfs' names, and a link the tool says
runs below what it could (``NicPort.degraded``: iblinkinfo's 'Could be'; a 1x link, or one at SDR/DDR, where most of
the fabric's other links run wider or at FDR and above: the peers inside the capture). A switch's port is one only
where it says something (a degraded link whose HCA side is not listed, a port up but not Active, its errors): an
unused switch port, down with no peer, is not a fault."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from gpuvet.backends.nic_readings import ACTIVE, UNKNOWN, Nic, NicPort
from gpuvet.captures.ib_counters import PORT_COUNTERS
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.nic_tools import IB_DIAGS_WORDS as WORDS
from gpuvet.captures.text import Line

# the lane rates the tools print (libibmad dump.c's signalling rates; ibnetdiscover's names) as ibstat's per-lane Gb/s
LANE = {
    "2.5": 2.5,
    "5.0": 5.0,
    "10.0": 10.0,
    "14.0625": 14.0,
    "25.78125": 25.0,
    "53.125": 50.0,
    "106.25": 100.0,
    "212.5": 200.0,
    "SDR": 2.5,
    "DDR": 5.0,
    "QDR": 10.0,
    "FDR10": 10.0,
    "FDR": 14.0,
    "EDR": 25.0,
    "HDR": 50.0,
    "NDR": 100.0,
    "XDR": 200.0,
}
_STATES = {"Down": "DOWN", "Initialize": "INIT", "Armed": "ARMED", "Active": ACTIVE}
_LINK = re.compile(
    r"^\s*(?:0x(?P<guid>[0-9a-fA-F]{1,16})\s+)?(?:\"\s*(?P<name>[^\"]*?)\s*\"\s+)?(?:Link info:\s*)?"
    r"(?P<lid>\d{1,5})\s+(?P<port>\d{1,3})\[\s*\d*\s*\]\s*==\(\s*(?:(?P<width>\d{1,2})X\s+(?P<speed>[\d.]+)\s*Gbps"
    r"(?:\s*\(FDR10\))?\s+)?(?P<state>[A-Za-z]+|\?\(\d+\))\s*/\s*(?P<phys>[A-Za-z]+|\?\(\d+\))\s*\)"
    r"(?:\s*\(HOQ:\d+ VL_Stall:\d+\))?\s*==>\s*(?P<remote>.*?)\s*$"
)
_REMOTE = re.compile(
    r"^(?:0x[0-9a-fA-F]{1,16}\s+)?(?:(?P<rlid>\d{1,5})\s+(?P<rport>\d{1,3}))?\s*\[\s*\d*\s*\]\s*"
    r"\"(?P<rname>[^\"]*)\"\s*\((?P<msg>.*)\)$"
)
_NODE = re.compile(r"^\s*(?P<type>Switch|CA|Router):\s+(?:0x[0-9a-fA-F]{1,16}\s+)?(?P<name>.*?):\s*$")
# ibnetdiscover: a node's head, a port's line (its comment names the peer, the width and speed), -p's port list
_DISC_NODE = re.compile(
    r"^\s*(?P<type>Switch|Ca|Rt)\s+\d{1,3}\s+\"[SHR?]-[0-9a-fA-F]{1,16}\"\s*"
    r"(?:#\s*\"(?P<desc>[^\"]*)\")?"
)
_DISC_PORT = re.compile(
    r"^\s*\[(?P<port>\d{1,3})\](?:\[[^\]]*\])?(?:\([0-9a-fA-F]{1,16}\))?\s+\"(?P<rid>[SHR?]-"
    r"[0-9a-fA-F]{1,16})\"\[(?P<rport>\d{1,3})\](?:\[[^\]]*\])?(?:\s*\([0-9a-fA-F]{1,16}\))?\s*#\s*"
    r"(?P<comment>.*?)\s*$"
)
_WIDTH_SPEED = re.compile(r"\b(?P<width>\d{1,2})x(?P<speed>SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR)\b")
_DISC_LIST = re.compile(
    r"^\s*(?P<type>CA|SW|RT)\s+(?P<lid>\d{1,5})\s+(?P<port>\d{1,3})\s+0x[0-9a-fA-F]{16}\s+"
    r"(?:(?P<width>\d{1,2})x|\?\?)\s+(?P<speed>[A-Z\d]+|\?\?\?)\s+(?:-\s+(?P<rtype>CA|SW|RT)\s+"
    r"(?P<rlid>\d{1,5})\s+(?P<rport>\d{1,3})\s+0x[0-9a-fA-F]{16}\s+\(\s*'(?P<name>.*?)'\s+-\s+"
    r"'(?P<rname>.*?)'\s*\)|'(?P<alone>.*)')\s*$"
)
_DISC_HEAD = re.compile(
    r"^\s*(?:(?:vendid|devid|sysimgguid|switchguid|caguid|rtguid)=0x[0-9a-fA-F]+|#\s*(?:Topology "
    r"file: generated on|Initiated from node|Reported max hops discovered))"
)
# ibqueryerrors: a node's head, a port's counters over their threshold, its summary
_ERRORS_FOR = re.compile(r"^\s*(?:Errors|Data Counters) for (?:0x[0-9a-fA-F]{1,16} )?\"(?P<name>[^\"]*)\"\s*$")
_ERRORS_PORT = re.compile(
    r"^\s*GUID 0x(?P<guid>[0-9a-fA-F]{1,16}) port (?P<port>\d{1,3}|ALL):(?P<items>(?:\s*\[[^\]]*\])*)\s*$"
)
_ITEM = re.compile(r"\[(?P<name>\w+) == (?P<value>\d{1,20})(?:\s*\([^)]*\))?\]")
_SUMMARY = re.compile(r"^\s*##\s*(?:Summary:|\d+ ports checked|\d+ PMA query failures|Thresholds:|Suppressed:)")
# ibcheckerrors (infiniband-diags' scripts before 1.6): its warnings, its verdict per port
_WARN = re.compile(
    r"^\s*#warn: counter (?P<name>\w+) = (?P<value>\d{1,20})\s*\(threshold \d+\)"
    r"(?:\s*lid (?P<lid>\d{1,5}) port (?P<port>\d{1,3}|all))?\s*$"
)
_CHECK = re.compile(r"^\s*Error check on lid (?P<lid>\d{1,5}) \((?P<name>.*)\) port (?P<port>\d{1,3}|all):\s*FAILED\s*$")
_CHECKED = re.compile(r"^\s*#\s*Checked (?:Switch|CA|Router): nodeguid 0x[0-9a-fA-F]+ with failure")
_OLD_NAMES = {
    "SymbolErrors": "symbol_error",
    "LinkRecovers": "link_error_recovery",
    "LinkDowned": "link_downed",
    "RcvErrors": "port_rcv_errors",
    "RcvRemotePhysErrors": "port_rcv_remote_physical_errors",
    "XmtDiscards": "port_xmit_discards",
    "LinkIntegrityErrors": "local_link_integrity_errors",
    "ExcBufOverrunErrors": "excessive_buffer_overrun_errors",
}
_HCA_NAME = re.compile(r"\bHCA-\d|\b(?:mlx\d|hfi\d|irdma|bnxt_re|qedr|efa|ionic)_?\d*\b")  # an HCA's node description
PEERS_MIN = 3  # other links a fabric's width or speed is taken from
MAX_PORTS = 4096


@dataclass
class _Port:
    """One port as the fabric tools read it: its node, whether that node is an HCA, and what was said of it."""

    device: str
    port: int
    ca: bool | None  # an HCA's (True), a switch's (False), unknown (a line with no head)
    state: str = UNKNOWN
    phys: str = UNKNOWN
    width: int | None = None
    lane: float | None = None
    link: frozenset[tuple[str, int]] | None = None  # its two ends, where the tool names the peer
    peer: str = ""
    degraded: str | None = None
    counters: dict[str, int] = field(default_factory=dict)


@dataclass
class _Reading:
    ports: dict[tuple[str, int], _Port] = field(default_factory=dict)
    kinds: dict[str, None] = field(default_factory=dict)
    claimed: set[int] = field(default_factory=set)

    def port(self, device: str, number: int, ca: bool | None) -> _Port:
        p = self.ports.setdefault((device, number), _Port(device, number, ca))
        p.ca = p.ca if ca is None else ca
        return p


def read(lines: list[Line], marks: Marks | None = None) -> tuple[list[Nic], list[str], set[int]]:
    """The HCA ports (and the switch ports worth a word) the fabric tools in ``lines`` show, the tools, the lines
    read."""
    r = _Reading()
    at = holding(lines, WORDS, marks)
    _iblinkinfo(lines, at, r)
    _ibnetdiscover(lines, at, r)
    _ibqueryerrors(lines, at, r)
    _fabric_peers(r)
    return _nics(r), list(r.kinds), r.claimed


def _iblinkinfo(lines: list[Line], at: list[int], r: _Reading) -> None:
    """Each port line under its node's head (or with its name, -l), and the heads."""
    node: tuple[str, bool | None] | None = None
    for i in at:
        text = lines[i].text
        if (h := _NODE.match(text)) is not None and i + 1 < len(lines) and "==(" in lines[i + 1].text:
            node = (h.group("name").strip(), h.group("type") == "CA")
            r.claimed.add(lines[i].no)
        elif "==(" in text and (m := _LINK.match(text)) is not None and "Link info:" not in text:
            name = m.group("name") or (node[0] if node else f"LID {m.group('lid')}")
            ca = (
                node[1]
                if node and not m.group("name")
                else True
                if m.group("guid") and not node and not m.group("name") or _HCA_NAME.search(name)
                else None
            )
            _link(r.port(name, int(m.group("port")), ca), m, r)
            r.claimed.add(lines[i].no)
            r.kinds["iblinkinfo"] = None


def _link(p: _Port, m: re.Match[str], r: _Reading) -> None:
    """A port line's link: its state, width and lane rate, its peer, the tool's 'Could be'; an HCA at a switch
    port's far end is that HCA's port too (its own line may not be in the paste)."""
    p.state = _STATES.get(m.group("state"), m.group("state"))
    p.phys = m.group("phys")
    p.width = int(m.group("width")) if m.group("width") else p.width
    p.lane = LANE.get(m.group("speed") or "", p.lane)
    if (far := _REMOTE.match(m.group("remote"))) is None:
        return
    p.peer = f"{far.group('rname')} port {far.group('rport')}" if far.group("rport") else far.group("rname")
    if far.group("rlid") and far.group("rport"):
        p.link = frozenset({(m.group("lid"), p.port), (far.group("rlid"), int(far.group("rport")))})
    could = far.group("msg").strip() if "Could be" in far.group("msg") else ""
    p.degraded = _could(m, could, p.peer) if could else p.degraded
    if p.ca is not True and far.group("rport") and _HCA_NAME.search(far.group("rname")):
        hca = _far_hca(r, p, far.group("rname"), int(far.group("rport")))
        hca.degraded = hca.degraded or (_could(m, could, f"{p.device} port {p.port}") if could else None)


def _could(m: re.Match[str], could: str, peer: str) -> str:
    speed = f" at {m.group('speed')} Gbps a lane" if m.group("speed") else ""
    return f"{m.group('width') or '?'}X{speed}, where iblinkinfo says '{could}' (what both ends support; its peer {peer})"


def _far_hca(r: _Reading, near: _Port, device: str, number: int) -> _Port:
    """The HCA port at a switch port's far end, as the switch sees their link (its own line read later, if any, adds
    to it)."""
    hca = r.port(device, number, True)
    hca.width, hca.lane = hca.width or near.width, hca.lane or near.lane
    hca.link, hca.peer = hca.link or near.link, hca.peer or f"{near.device} port {near.port}"
    if hca.state == UNKNOWN:
        hca.state, hca.phys = near.state, near.phys
    return hca


def _ibnetdiscover(lines: list[Line], at: list[int], r: _Reading) -> None:
    """Its topology (node heads, then each port's line) and -p's list; each link's width and speed."""
    node: tuple[str, bool] | None = None
    seen = False
    for i in at:
        text = lines[i].text
        if (h := _DISC_NODE.match(text)) is not None:
            node = (h.group("desc") or "", h.group("type") == "Ca")
        elif node is not None and (m := _DISC_PORT.match(text)) is not None:
            ws = list(_WIDTH_SPEED.finditer(m.group("comment")))
            p = r.port(node[0], int(m.group("port")), node[1])
            peer = re.search(r"\"([^\"]*)\"", m.group("comment"))
            p.peer = f"{peer.group(1) if peer else m.group('rid')} port {m.group('rport')}"
            if ws:
                p.width, p.lane = int(ws[-1].group("width")), LANE[ws[-1].group("speed")]
            p.link = frozenset({(node[0], p.port), (peer.group(1) if peer else m.group("rid"), int(m.group("rport")))})
            if not node[1] and m.group("rid").startswith("H-") and peer is not None:
                _far_hca(r, p, peer.group(1), int(m.group("rport")))
        elif (m := _DISC_LIST.match(text)) is not None:
            _listed_port(m, r)
        else:
            continue
        seen = True
        r.claimed.add(lines[i].no)
        r.kinds["ibnetdiscover"] = None
    for i in at if seen else ():
        if _DISC_HEAD.match(lines[i].text):
            r.claimed.add(lines[i].no)


def _listed_port(m: re.Match[str], r: _Reading) -> None:
    """One of ibnetdiscover -p's rows: the port, its width and speed, its peer ('alone': an unconnected port)."""
    if m.group("alone") is not None:
        return
    p = r.port(m.group("name") or f"LID {m.group('lid')}", int(m.group("port")), m.group("type") == "CA")
    p.width = int(m.group("width")) if m.group("width") else None
    p.lane = LANE.get(m.group("speed"))
    p.peer = f"{m.group('rname')} port {m.group('rport')}"
    p.link = frozenset({(m.group("lid"), p.port), (m.group("rlid"), int(m.group("rport")))})


def _ibqueryerrors(lines: list[Line], at: list[int], r: _Reading) -> None:
    """ibqueryerrors' nodes and ports (each counter over its threshold; a switch's 'port ALL' sums its ports, read
    not kept), -r's link line under a port, its summary; ibcheckerrors' warnings and verdicts."""
    name: str | None = None
    last: _Port | None = None
    pending: list[tuple[str, int]] = []
    for i in at:
        text = lines[i].text
        if (m := _ERRORS_FOR.match(text)) is not None:
            name, last = m.group("name"), None
        elif (m := _ERRORS_PORT.match(text)) is not None:
            last = _errors_port(r, name, m)
            for item in _ITEM.finditer(m.group("items")):
                if last is not None and (key := PORT_COUNTERS.get(item.group("name"))) is not None:
                    last.counters[key] = int(item.group("value"))
        elif last is not None and "Link info:" in text and (m := _LINK.match(text)) is not None:
            _link(last, m, r)
        elif _SUMMARY.match(text) is None and not _old_check(text, pending, r):
            continue
        r.claimed.add(lines[i].no)
        r.kinds["ibcheckerrors" if "#warn" in text or "Error check" in text or "# Checked" in text else "ibqueryerrors"] = (
            None
        )


def _errors_port(r: _Reading, name: str | None, m: re.Match[str]) -> _Port | None:
    """The port an ibqueryerrors line is about: under its node's head, that node's (a switch's 'port ALL' sums the
    ports listed after it: not kept); a line pasted without its head (-c/-s's one line) is named by its GUID, and
    its 'port ALL' (the node's ports summed) kept as port 0, the only reading there is."""
    if name is not None:
        return None if m.group("port") == "ALL" else r.port(name, int(m.group("port")), None)
    if m.group("port") == "ALL":
        return r.port(f"GUID 0x{m.group('guid')} (all ports summed)", 0, None)
    return r.port(f"GUID 0x{m.group('guid')}", int(m.group("port")), None)


def _old_check(text: str, pending: list[tuple[str, int]], r: _Reading) -> bool:
    """ibcheckerrors: a '#warn: counter' line (its port named on it, or by the 'Error check … FAILED' after it)."""
    if (m := _WARN.match(text)) is not None:
        key = _OLD_NAMES.get(m.group("name"))
        if m.group("lid") and m.group("port") != "all":
            if key:
                r.port(f"LID {m.group('lid')}", int(m.group("port")), None).counters[key] = int(m.group("value"))
        elif key and not m.group("lid"):
            pending.append((key, int(m.group("value"))))
        return True
    if (m := _CHECK.match(text)) is not None:
        if m.group("port") != "all":
            p = r.port(f"LID {m.group('lid')}", int(m.group("port")), None)
            p.counters.update(pending)
        pending.clear()
        return True
    return _CHECKED.match(text) is not None


def _fabric_peers(r: _Reading) -> None:
    """The fabric's links against each other (the peers inside the capture): a 1x link where most others run
    wider, or one at SDR/DDR where most run at FDR and above, is degraded, unless the tool said so already."""
    ports = [p for p in r.ports.values() if p.width is not None and p.lane is not None and p.state in (ACTIVE, UNKNOWN)]
    links = {p.link or frozenset({(p.device, p.port)}): (p.width, p.lane) for p in ports}  # each link once
    others = len(links) - 1
    if others < PEERS_MIN:
        return
    ((width, wn),) = Counter(w for w, _ in links.values()).most_common(1)
    ((lane, ln),) = Counter(s for _, s in links.values()).most_common(1)
    for p in ports:
        if p.degraded:
            continue
        if p.width == 1 and width is not None and width > 1 and wn * 2 > others:
            p.degraded = f"1x where {wn} of the fabric's {others} other links run {width}x (its peer {p.peer})"
        elif p.lane is not None and p.lane <= 5.0 and lane is not None and lane >= 14.0 and ln * 2 > others:
            p.degraded = (
                f"{p.lane:g} Gb/s a lane where {ln} of the fabric's {others} other links run {lane:g} (its peer {p.peer})"
            )


def _nics(r: _Reading) -> list[Nic]:
    """An HCA's ports, and a switch's (or an unknown node's) that say something its HCA side does not."""
    said: set[frozenset[tuple[str, int]]] = set()
    out: dict[str, list[NicPort]] = {}
    ordered = sorted(r.ports.values(), key=lambda p: p.ca is not True)  # the HCA side of a link first
    for p in ordered[:MAX_PORTS]:
        if p.ca is not True and not _worth(p, said):
            continue
        if p.link is not None:
            said.add(p.link)
        rate = p.width * p.lane if p.width and p.lane else None
        width = f"{p.width}X" if p.width else None
        out.setdefault(p.device, []).append(
            NicPort(p.port, p.state, p.phys, rate, width, "InfiniBand", dict(p.counters), degraded=p.degraded)
        )
    return [Nic(device, None, None, tuple(sorted(ports, key=lambda q: q.port))) for device, ports in out.items()]


def _worth(p: _Port, said: set[frozenset[tuple[str, int]]]) -> bool:
    """A switch's port is listed where it says what its HCA side has not: its counters, a degraded link, a port
    up but not Active; never an unused one (down, no peer)."""
    if p.counters:
        return True
    if p.link is not None and p.link in said:
        return False
    return bool(p.degraded) or (p.state not in (ACTIVE, "DOWN", UNKNOWN) and bool(p.peer))
