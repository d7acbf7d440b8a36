"""iproute2's ``rdma`` tool and rdma-core's device listings as people paste them (issue 46, AX3): ``rdma link``
('link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state DOWN physical_state POLLING',
'link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev enp59s0f0np0'; before iproute2 5.x '1/1: mlx5_0/1: …'; -j's
objects), ``rdma dev`` ('0: mlx5_0: node_type ca fw 20.31.1014 node_guid …'), ``rdma statistic show`` and ``rdma
resource`` (the driver's hw counters and the resources in use: read, not judged), ``ibv_devices``' table and
``sminfo``'s answer. Strings as iproute2 rdma/link.c, dev.c, res.c and stat.c print them (v7.1.0-55), and
rdma-core's libibverbs/examples/device_list.c and infiniband-diags/sminfo.c (v64.0-61).

Each port becomes the NIC record the other RDMA listings give (backends/nic_readings.py): its state and physical
state in sysfs' words (DOWN / Polling), its link layer (a LID is InfiniBand's: iproute2 prints it only for an
InfiniBand port; a port without one, naming a netdev, is RoCE's Ethernet), its netdev. A port listed again (the
poster ran ``rdma link`` twice) keeps its last state and the earlier ones it went through (``NicPort.seen``): a port
read DOWN then ACTIVE went down and came back (checks/nics.py)."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from itertools import accumulate

from gpuvet.backends.nic_readings import ACTIVE, RDMA_HW_ERRORS, UNKNOWN, Nic, NicPort
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.nic_tools import RDMA_WORDS as WORDS
from gpuvet.captures.text import Line

# a link, statistic or resource line ('link mlx5_0/1 …'; iproute2 before 5.x: '1/1: mlx5_0/1: …'), after an optional
# pdsh/clush host ('nodeA: link …')
_LINK = re.compile(
    r"^\s*(?:(?P<host>[A-Za-z][\w.-]{0,62}):\s+)?(?:link\s+|\d{1,4}/\d{1,3}:\s+)"
    r"(?P<dev>[A-Za-z][\w.-]{0,63})/(?P<port>\d{1,3}):?\s+(?P<rest>\S.*?)\s*$"
)
_QUOTED = re.compile(
    r"(?:^|[\s`'\"(:])link\s+(?P<dev>[A-Za-z][\w.-]{0,63})/(?P<port>\d{1,3})\s+(?P<rest>(?:subnet_prefix|"
    r"state)\s.*)$"
)
_DEV = re.compile(
    r"^\s*(?:(?P<host>[A-Za-z][\w.-]{0,62}):\s+)?(?:dev\s+)?\d{1,4}:\s+(?P<dev>[A-Za-z][\w.-]{0,63}):\s+"
    r"(?P<rest>\S.*?)\s*$"
)
_CAPS = re.compile(r"^\s*caps:\s*<[\w, ]*>\s*$")  # -d's capability line under a link or dev line
# link_state_to_str / phys_state_to_str (rdma/link.c) -> sysfs' words; NOP and UNKNOWN say nothing
_STATES = {"DOWN": "DOWN", "INIT": "INIT", "ARMED": "ARMED", "ACTIVE": ACTIVE, "ACTIVE_DEFER": ACTIVE}
_PHYS = {
    "SLEEP": "Sleep",
    "POLLING": "Polling",
    "DISABLED": "Disabled",
    "ARMED": "PortConfigurationTraining",
    "LINK_UP": "LinkUp",
    "LINK_ERROR_RECOVER": "LinkErrorRecovery",
    "PHY_TEST": "PhyTest",
    "OPA_OFFLINE": "Offline",
}
_LINK_KEYS = frozenset(("subnet_prefix", "lid", "sm_lid", "lmc", "state", "physical_state", "netdev", "netdev_index"))
_RES_KEYS = frozenset(("lqpn", "rqpn", "cqn", "mrn", "pdn", "cm-idn", "ctxn", "srqn", "cntn", "qp-type", "comm", "pid"))
_SUMMARY_KEYS = frozenset(("pd", "cq", "qp", "cm_id", "mr", "ctx", "srq"))  # rdma resource's per-device counts
_DEVICES_HEAD = re.compile(r"^\s*device\s+node GUID\s*$")  # ibv_devices
_DEVICES_ROW = re.compile(r"^\s*([A-Za-z][\w.-]{0,63})\s+([0-9a-fA-F]{16})\s*$")
_SMINFO = re.compile(
    r"^\s*sminfo: (?:sm lid \d{1,5} sm guid 0x[0-9a-fA-F]{1,16}, activity count \d+ priority \d+ "
    r"state \d \w+|iberror: .*)$"
)
_JSON_OBJECT = re.compile(r"\{[^{}]*\"ifname\"[^{}]*\}")
MAX_PORTS = 1024


@dataclass
class _Port:
    states: list[tuple[str, str]] = field(default_factory=list)  # (state, physical state) as read, in order
    layer: str = UNKNOWN
    netdev: str | None = None
    counters: dict[str, int] = field(default_factory=dict)  # rdma statistic's transport errors (RDMA_HW_ERRORS, R3C)


@dataclass
class _Reading:
    ports: dict[tuple[str, str, int], _Port] = field(default_factory=dict)  # (host, device, port)
    devices: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)  # (host, device): fw, node_guid
    kinds: dict[str, None] = field(default_factory=dict)
    claimed: set[int] = field(default_factory=set)


def read(lines: list[Line], marks: Marks | None = None) -> tuple[list[Nic], list[str], set[int]]:
    """The RDMA devices and ports ``lines`` hold, the tools that printed them, and the lines read."""
    r = _Reading()
    last = -2
    for i in holding(lines, WORDS, marks):
        ln = lines[i]
        if _line(ln.text, r) or (i == last + 1 and _CAPS.match(ln.text)):
            r.claimed.add(ln.no)
            last = i
    _devices_table(lines, r, marks)
    if holding(lines, ('"ifname"',), marks):
        _json(lines, r)
    return _nics(r), list(r.kinds), r.claimed


def _line(text: str, r: _Reading) -> bool:
    if (m := _LINK.match(text)) is not None:
        pairs = _pairs(m.group("rest"))
        if pairs is not None and _link_line(m.group("host") or "", m.group("dev"), int(m.group("port")), pairs, r):
            return True
    if "physical_state" in text and (q := _QUOTED.search(text)) is not None:  # a poster's sentence quoting one
        pairs = _leading(q.group("rest"))
        return "physical_state" in pairs and _link_line("", q.group("dev"), int(q.group("port")), pairs, r)
    if (m := _DEV.match(text)) is not None and (pairs := _pairs(m.group("rest"))) is not None:
        return _dev_line(m.group("host") or "", m.group("dev"), pairs, r)
    if "sminfo" in text and _SMINFO.match(text):
        r.kinds["sminfo"] = None
        return True
    return False


def _pairs(rest: str) -> dict[str, str] | None:
    """'key value key value …' as iproute2 prints a line; None where it is not that (an odd count, a sentence)."""
    words = rest.split()
    if len(words) < 2 or len(words) % 2:
        return None
    pairs = dict(zip(words[::2], words[1::2], strict=True))
    return pairs if all(re.fullmatch(r"[a-z][\w-]{0,40}", k) for k in pairs) else None


def _leading(rest: str) -> dict[str, str]:
    """The link line's pairs a sentence quotes, up to the first word that is none of them (its closing quote
    and punctuation left out)."""
    words = rest.split()
    pairs: dict[str, str] = {}
    for key, value in zip(words[::2], words[1::2], strict=False):
        if key not in _LINK_KEYS:
            break
        pairs[key] = value.rstrip("`'\".,;:)")
        if value != pairs[key]:
            break
    return pairs


def _link_line(host: str, dev: str, port: int, pairs: dict[str, str], r: _Reading) -> bool:
    """A link line (its state), a statistic line (counters: all numbers) or a resource line (a QP, a CM id): the
    first read as the port's, the others claimed, not judged (the driver's hw counters, the resources in use)."""
    state = pairs.get("state", "")
    if "physical_state" in pairs or (state in _STATES and not _RES_KEYS & pairs.keys() and pairs.keys() <= _LINK_KEYS):
        p = r.ports.setdefault((host, dev, port), _Port())
        p.states.append((_STATES.get(state, UNKNOWN), _PHYS.get(pairs.get("physical_state", ""), UNKNOWN)))
        p.layer = (
            "InfiniBand"
            if "lid" in pairs or "subnet_prefix" in pairs
            else "Ethernet"
            if "netdev" in pairs and not pairs["netdev"].startswith("ib")
            else "InfiniBand"
            if "netdev" in pairs
            else p.layer
        )
        p.netdev = pairs.get("netdev", p.netdev)
        r.kinds["rdma link"] = None
        return True
    if _RES_KEYS & pairs.keys():
        r.kinds["rdma resource"] = None
        return True
    if all(v.isdigit() for v in pairs.values()) and len(pairs) >= 2:
        r.kinds["rdma statistic"] = None
        if errors := {k: int(v) for k, v in pairs.items() if k in RDMA_HW_ERRORS}:  # R3C: judged as hw_counters' are
            r.ports.setdefault((host, dev, port), _Port()).counters.update(errors)
        return True
    return False


def _dev_line(host: str, dev: str, pairs: dict[str, str], r: _Reading) -> bool:
    """'0: mlx5_0: node_type ca fw … node_guid …' (rdma dev), or '0: mlx5_0: pd 3 cq 5 qp 2 …' (rdma resource)."""
    if "node_type" in pairs or "fw" in pairs:
        r.devices[(host, dev)] = {k: pairs[k] for k in ("fw", "node_guid") if k in pairs}
        r.kinds["rdma dev"] = None
        return True
    if pairs.keys() <= _SUMMARY_KEYS and all(v.isdigit() for v in pairs.values()):
        r.devices.setdefault((host, dev), {})
        r.kinds["rdma resource"] = None
        return True
    return False


def _devices_table(lines: list[Line], r: _Reading, marks: Marks | None) -> None:
    """ibv_devices: its header, its rule, then one device and node GUID a row."""
    for at in holding(lines, ("node GUID",), marks):
        if not _DEVICES_HEAD.match(lines[at].text):
            continue
        r.claimed.add(lines[at].no)
        r.kinds["ibv_devices"] = None
        for ln in lines[at + 1 : at + 1 + MAX_PORTS]:
            if set(ln.text.strip()) <= set("- \t") and ln.text.strip():
                r.claimed.add(ln.no)
            elif (m := _DEVICES_ROW.match(ln.text)) is not None:
                r.devices.setdefault(("", m.group(1)), {"node_guid": m.group(2)})
                r.claimed.add(ln.no)
            else:
                break


def _json(lines: list[Line], r: _Reading) -> None:
    """rdma -j's objects (one line, or -p's over several): a link's, a device's, a statistic's."""
    text = "\n".join(ln.text for ln in lines)
    starts = list(accumulate((len(ln.text) + 1 for ln in lines), initial=0))  # each line's first character
    for m in _JSON_OBJECT.finditer(text):
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("ifname"), str):
            continue
        dev, _, port = obj["ifname"].partition("/")
        pairs = {str(k): str(v) for k, v in obj.items() if k not in ("ifname", "ifindex", "port", "caps")}
        number = obj.get("port", port)
        if (
            (isinstance(number, int) or str(number).isdigit())
            and _link_line("", dev, int(number), pairs, r)
            or _dev_line("", dev, pairs, r)
        ):
            first, last = bisect_right(starts, m.start()) - 1, bisect_right(starts, m.end() - 1) - 1
            r.claimed |= {ln.no for ln in lines[first : last + 1]}


def _nics(r: _Reading) -> list[Nic]:
    hosts = {h for h, _, _ in r.ports} | {h for h, _ in r.devices}
    one = len(hosts) <= 1

    def name(host: str, dev: str) -> str:
        return dev if one or not host else f"{host} {dev}"

    out: dict[str, Nic] = {}
    for (host, dev), values in r.devices.items():
        out[name(host, dev)] = Nic(name(host, dev), None, None, (), values.get("fw"), values.get("node_guid"))
    for (host, dev, number), p in list(r.ports.items())[:MAX_PORTS]:
        state, phys = p.states[-1] if p.states else (UNKNOWN, UNKNOWN)  # a statistic line alone: its state not said
        seen = tuple(f"{s}/{ph}" for s, ph in _runs(p.states[:-1])) if len(set(p.states)) > 1 else ()
        port = NicPort(number, state, phys, None, None, p.layer, p.counters, seen=seen)
        nic = out.get(name(host, dev)) or Nic(name(host, dev), None, None, ())
        netdevs = (*nic.netdevs, p.netdev) if p.netdev and p.netdev not in nic.netdevs else nic.netdevs
        out[nic.device] = replace(nic, ports=(*nic.ports, port), netdevs=netdevs)
    return list(out.values())


def _runs(states: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The states read, each run of one state once (DOWN/Polling twice, then DOWN/LinkUp: two)."""
    return [s for i, s in enumerate(states) if i == 0 or states[i - 1] != s]
