"""Issue 46 (R3C): a node's network interfaces as ifconfig and ip print them, with their kernel counters
(struct rtnl_link_stats64, since the interface came up). net-tools 2.10's ifconfig ('eth3: flags=6211<UP,BROADCAST,
RUNNING,SLAVE,MULTICAST>  mtu 4200', 'RX errors 0  dropped 0  overruns 0  frame 0', 'TX errors 0  dropped 0 overruns 0
carrier 0  collisions 0'), its older form ('eth0      Link encap:Ethernet  HWaddr …', 'UP BROADCAST RUNNING SLAVE
MULTICAST  MTU:1500  Metric:1', 'RX packets:1 errors:0 dropped:0 overruns:0 frame:0') and iproute2's ``ip -s link``
('2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 … master bond0 state UP', then 'RX: bytes  packets  errors
dropped …' over its figures).

Each interface becomes an Ethernet/IPoIB NIC record (backends/nic_readings.py), its state unknown (UP is the
administrative flag, not the link). RX/TX errors are kept on the interfaces a GPU node's collectives run over (a
bond, its slaves, an IPoIB or RDMA-named one): errors there are frames the NIC or the link damaged, judged by the NIC
checks (checks/nics.ethtool_errors); drops alone are the stack's (no buffer, an unknown protocol), read, not judged.
Loopback, bridges and container veths are read as nothing: they say nothing of the node's network."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.backends.nic_readings import NETDEV_ERRORS, UNKNOWN, Nic, NicPort
from gpuvet.captures.nic_tools import NicLinesParse
from gpuvet.captures.text import Line

KIND = "ifconfig / ip -s link"
MARKS = ("flags=", "encap:", "> mtu ")  # every interface head holds one; the lines under it follow a head
_NEW_HEAD = re.compile(r"^([A-Za-z][\w.:@-]{0,31}): flags=\d{1,6}<([A-Z_,]*)>\s+mtu (\d{1,6})")
_OLD_HEAD = re.compile(r"^([A-Za-z][\w.:@-]{0,31})\s+Link encap:\s?(\S+)")
_IP_HEAD = re.compile(r"^\d{1,6}: ([A-Za-z][\w.@-]{0,31})(?:@\S+)?: <([A-Z_,]*)> mtu (\d{1,6})\b(.*)$")
_NEW_ERRS = re.compile(r"^\s+([RT]X) errors (\d{1,20})\s+dropped (\d{1,20})")
_OLD_ERRS = re.compile(r"^\s+([RT]X) packets:\d{1,20} errors:(\d{1,20}) dropped:(\d{1,20})")
_OLD_FLAGS = re.compile(r"^\s+((?:[A-Z]+ )+)\s*MTU:(\d{1,6})")
_IP_STATS_HEAD = re.compile(r"^\s+([RT]X):\s+(bytes\s+packets\s+errors\s+dropped.*)$")
_FIGURES = re.compile(r"^\s+(\d{1,20}(?:\s+\d{1,20}){3,})\s*$")
_SKIP = re.compile(r"^(?:lo|docker\d|veth|virbr|br-|cni|flannel|cali|tun|tap|vnet)")
_INFINIBAND = ("infiniband", "(InfiniBand)", "link/infiniband", "UNSPEC")


@dataclass
class _Iface:
    name: str
    flags: set[str] = field(default_factory=set)
    mtu: int | None = None
    layer: str = "Ethernet"
    master: bool = False  # ip's 'master bondN'
    errors: dict[str, int] = field(default_factory=dict)


@dataclass
class _Reading:
    ifaces: dict[str, _Iface] = field(default_factory=dict)
    current: _Iface | None = None
    stats: str | None = None  # 'RX' or 'TX': ip -s link's head waiting for its figures
    claimed: set[int] = field(default_factory=set)


NetdevParse = NicLinesParse  # the NIC tools' record and the lines read (nic_tools.NicLinesParse)


def parse(lines: list[Line]) -> NetdevParse:
    """The interfaces ``lines`` list, as NIC records (errors kept where judged), and the lines read."""
    r = _Reading()
    for ln in lines:
        if _line(ln.text, r):
            r.claimed.add(ln.no)
    ifaces = [i for i in r.ifaces.values() if not _SKIP.match(i.name)]
    if not r.claimed or not r.ifaces:
        return NetdevParse()
    return NetdevParse(nics=[_nic(i) for i in ifaces], kinds=[KIND], claimed=r.claimed)


def _line(text: str, r: _Reading) -> bool:
    """Reads one line into ``r``; whether it was the tools' own."""
    head = any(w in text for w in MARKS)
    if head and (m := _NEW_HEAD.match(text) or _IP_HEAD.match(text)) is not None:
        r.current = r.ifaces.setdefault(m.group(1), _Iface(m.group(1)))
        r.current.flags, r.current.mtu, r.stats = set(m.group(2).split(",")), int(m.group(3)), None
        r.current.master = m.re is _IP_HEAD and " master " in m.group(4)
        return True
    if head and (m := _OLD_HEAD.match(text)) is not None:
        r.current = r.ifaces.setdefault(m.group(1), _Iface(m.group(1)))
        r.current.layer = "InfiniBand" if m.group(2).lower() in ("infiniband", "unspec") else "Ethernet"
        return True
    if r.current is None:
        return False
    if not text.strip():  # the block is over (ifconfig parts interfaces by a blank line)
        r.current = r.stats = None
        return False
    if any(w in text for w in _INFINIBAND):
        r.current.layer = "InfiniBand"
    if (m := _NEW_ERRS.match(text) or _OLD_ERRS.match(text)) is not None:
        r.current.errors[f"{m.group(1)} errors"] = int(m.group(2))
        return True
    if (m := _OLD_FLAGS.match(text)) is not None:
        r.current.flags, r.current.mtu = set(m.group(1).split()), int(m.group(2))
        return True
    if (m := _IP_STATS_HEAD.match(text)) is not None:
        r.stats = m.group(1)
        return True
    if r.stats is not None and (m := _FIGURES.match(text)) is not None:
        r.current.errors[f"{r.stats} errors"] = int(m.group(1).split()[2])  # bytes, packets, errors, dropped …
        r.stats = None
        return True
    return text.startswith((" ", "\t"))  # the block's other lines (inet, ether, packets)


def _nic(i: _Iface) -> Nic:
    """One interface; its errors kept where it is a bond, a bond's slave or an InfiniBand one."""
    judged = (
        i.master or bool(i.flags & {"MASTER", "SLAVE"}) or i.name.startswith(("bond", "ib")) or (i.layer == "InfiniBand")
    )
    kept = {k: v for k, v in i.errors.items() if k in NETDEV_ERRORS} if judged else {}
    port = NicPort(0, UNKNOWN, UNKNOWN, None, None, i.layer, kept)
    return Nic(i.name, None, None, (port,), netdevs=(i.name,), read_from=None)
