"""An RDMA port's counters as sysfs keeps them (``/sys/class/infiniband/<dev>/ports/<n>/counters/<name>``),
printed by a shell: ``grep -H . …/counters/*`` (``/sys/class/infiniband/mlx5_1/ports/1/counters/link_downed:255``),
a loop that echoes each file's name then cats it (``=== ./link_downed ===`` / ``255``), ``head``'s ``==> name <==``
heads, or ``name: value`` lines. A bare name takes its device and port from the last counters directory the
text named (a prompt ``…/mlx5_1/ports/1/counters$``, a ``cd``); without one it is an unnamed port's, and a
``name: value`` line is read only where the name is one of sysfs' counters.

Each port becomes the NIC record a live node's sysfs gives (backends/nic_readings.py: its error counters, its
traffic counters), its state unknown: the counters alone do not say it, and the NIC checks judge them as they
judge a live node's (checks/nics.py). hw_counters (the driver's own) are claimed as read, not judged.

perfquery prints the same counters by their PortCounters names, dotted to their value under a title naming the
port by LID (``# Port counters: Lid 21 port 1 (CapMask: 0x1600)`` / ``LinkDownedCounter:...............255``):
read alike, the port's device named 'LID 21' (perfquery names no HCA), its names mapped to sysfs'."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.backends.nic_readings import ERROR_COUNTERS, RDMA_HW_ERRORS, TRAFFIC_COUNTERS, UNKNOWN, Nic, NicPort
from gpuvet.captures.nic_tools import NicToolsParse
from gpuvet.captures.text import Line

KIND = "sysfs IB counters"
PERFQUERY = "perfquery"
UNNAMED = "an RDMA port (device and port not named)"  # its port numbered 0: no HCA's port is
_DIR = r"/sys/class/infiniband/(?P<dev>[\w.-]{1,64})/ports/(?P<port>\d{1,3})/(?P<set>hw_counters|counters)"
# pdsh/clush's 'nodeA: ' before the path (review 56): a host's name, read here (the path after it makes it one even
# where it is a bare word, which decorations leaves on the line)
_PATH_VALUE = re.compile(r"^\s*(?:(?P<host>[A-Za-z0-9][\w.-]{0,62}):\s+)?" + _DIR +
                         r"/(?P<name>\w{1,64})\s*:\s*(?P<value>\d{1,20})\s*$")
_PATH = re.compile(_DIR + r"(?:/(?P<name>\w{1,64}))?/?(?=[\s$#:<=]|$)")  # a prompt, a cd, a head's title
_HEAD = re.compile(r"^\s*(?:===|==>)\s*(?:\./)?(?:" + _DIR + r"/)?(?P<name>\w{1,64})\s*(?:===|<==)\s*$")
_VALUE = re.compile(r"^\s*(\d{1,20})\s*$")
_NAME_VALUE = re.compile(r"^\s*(?:\./)?(?P<name>\w{1,64})\s*:\s*(?P<value>\d{1,20})\s*$")
# perfquery: '# Port counters: Lid 21 port 1', '# Port extended counters: …', then 'Name:......value' lines
_PERFQUERY_HEAD = re.compile(r"^\s*#\s*Port (?:extended )?counters:\s*Lid (\d{1,5}) port (\d{1,3})\b")
_DOTTED = re.compile(r"^\s*(?P<name>[A-Za-z][A-Za-z0-9]{2,40}):\.{2,}\s*(?P<value>0x[0-9a-fA-F]{1,16}|\d{1,20})\s*$")
PORT_COUNTERS = {"SymbolErrorCounter": "symbol_error", "LinkErrorRecoveryCounter": "link_error_recovery",
              "LinkDownedCounter": "link_downed", "PortRcvErrors": "port_rcv_errors",
              "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors", "PortXmitDiscards": "port_xmit_discards",
              "LocalLinkIntegrityErrors": "local_link_integrity_errors",
              "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors", "PortXmitData": "port_xmit_data",
              "PortRcvData": "port_rcv_data"}  # the rest (PortXmitWait, VL15Dropped …) read, not kept
MARKERS = ("/sys/class/infiniband", "===", "==>", ":..")  # and each counter's name: every line read holds one, or is a value
# under a line that did
# the names sysfs' counters directory holds beside the error and traffic counters (read as the port's)
_OTHER = ("port_xmit_wait", "port_xmit_packets", "port_rcv_packets", "unicast_xmit_packets", "unicast_rcv_packets",
          "multicast_xmit_packets", "multicast_rcv_packets", "VL15_dropped", "port_xmit_constraint_errors",
          "port_rcv_constraint_errors", "port_rcv_switch_relay_errors")
NAMES = frozenset((*ERROR_COUNTERS, *TRAFFIC_COUNTERS, *_OTHER))


@dataclass
class _Reading:
    """The parse's place: the port a bare name belongs to, a head waiting for its value, what was read."""

    where: tuple[str, int, str] | None = None  # (device, port, counters or hw_counters)
    pending: tuple[tuple[str, int, str], str] | None = None
    values: dict[tuple[str, int], dict[str, int]] = field(default_factory=dict)
    hosts: dict[tuple[str, int], str] = field(default_factory=dict)  # a port's host, where a prefix named it
    tools: dict[str, None] = field(default_factory=dict)  # the kinds read, in order: sysfs's, perfquery's


def parse(lines: list[Line]) -> tuple[NicToolsParse, set[int]]:
    """The ports' counters in ``lines``, one NIC per device (the NIC tools' record), and the lines read."""
    out, r, claimed = NicToolsParse(), _Reading(), set()
    for ln in lines:
        if _line(ln.text, r):
            claimed.add(ln.no)
    if not r.values:
        return NicToolsParse(), set()
    devices: dict[str, list[NicPort]] = {}
    one_host = len(set(r.hosts.values())) == 1
    for (dev, port), values in r.values.items():
        if one_host and (dev, port) in r.hosts:  # one host named: its ports by their own names
            dev = dev.split(" ", 1)[1]
        errors = {k: v for k, v in values.items() if k in ERROR_COUNTERS or k in RDMA_HW_ERRORS}
        traffic = {k: v for k, v in values.items() if k in TRAFFIC_COUNTERS}
        devices.setdefault(dev, []).append(NicPort(port, UNKNOWN, UNKNOWN, None, None, UNKNOWN, errors, traffic))
    out.kinds = list(r.tools) or [KIND]
    out.nics = [Nic(dev, None, None, tuple(sorted(ports, key=lambda p: p.port))) for dev, ports in devices.items()]
    return out, claimed


def _line(text: str, r: _Reading) -> bool:
    """Reads one line into ``r``; whether it was the counters' own."""
    if ":.." in text or "counters:" in text:
        return _perfquery(text, r)
    if (m := _PATH_VALUE.match(text)) is not None:
        host = m.group("host")
        dev = f"{host} {m.group('dev')}" if host else m.group("dev")  # named alone below if one host only
        _keep(r, (dev, int(m.group("port")), m.group("set")), m.group("name"), int(m.group("value")))
        if host and m.group("set") == "counters":
            r.hosts[(dev, int(m.group("port")))] = host
        return True
    if (m := _HEAD.match(text)) is not None:
        place = (m.group("dev"), int(m.group("port")), m.group("set")) if m.group("dev") else r.where
        r.pending = (place or (UNNAMED, 0, "counters"), m.group("name"))
        return True
    if r.pending is not None and (v := _VALUE.match(text)) is not None:
        _keep(r, r.pending[0], r.pending[1], int(v.group(1)))
        r.pending = None
        return True
    if (m := _NAME_VALUE.match(text)) is not None and (r.where is not None or m.group("name") in NAMES):
        _keep(r, r.where or (UNNAMED, 0, "counters"), m.group("name"), int(m.group("value")))
        return True
    if (m := _PATH.search(text)) is not None:  # a prompt or a cd: the directory the names after it are in
        r.where = (m.group("dev"), int(m.group("port")), m.group("set"))
        if m.group("name"):  # a head's title naming one file: its value is the next line
            r.pending = (r.where, m.group("name"))
        return True
    return False


def _perfquery(text: str, r: _Reading) -> bool:
    """perfquery's title (the port it names by LID) or one of its dotted counters, under a title or not."""
    if (m := _PERFQUERY_HEAD.match(text)) is not None:
        r.where = (f"LID {m.group(1)}", int(m.group(2)), "counters")
        return True
    if (m := _DOTTED.match(text)) is None:
        return False
    name = PORT_COUNTERS.get(m.group("name"))
    if name is not None and not m.group("value").startswith("0x"):
        _keep(r, r.where or (UNNAMED, 0, "counters"), name, int(m.group("value")), PERFQUERY)
    return True


def _keep(r: _Reading, place: tuple[str, int, str], name: str, value: int, tool: str = KIND) -> None:
    # hw_counters: the driver's own, its transport error counters kept (RDMA_HW_ERRORS, R3C), the rest read not judged
    if place[2] == "counters" or name in RDMA_HW_ERRORS:
        values = r.values.setdefault((place[0], place[1]), {})
        values[name] = max(value, values.get(name, value))  # read twice (two hosts' lines peeled): the worst kept
        r.tools[tool] = None
