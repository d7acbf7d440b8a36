"""Issue 46 (PHRM): ethtool's views of an Ethernet port as people paste them. ``ethtool DEV`` (its settings: 'Settings
for enp59s0f0np0:', 'Speed: 100000Mb/s', 'Link detected: yes'), ``ethtool -i DEV`` (the driver's 'driver:',
'firmware-version:' and 'bus-info:' lines) and ``ethtool -S DEV`` (its 'NIC statistics:' counters, or a grep of them
under its command line). Each interface becomes the NIC record the RDMA listings give (backends/nic_readings.py): one
Ethernet port, its state from 'Link detected' (unknown where only the counters are given), its rate from 'Speed', its
bus id and firmware from -i, and its physical-layer error counters (the drivers' own names: mlx5's
'rx_crc_errors_phy', 'rx_symbol_err_phy', 'rx_pcs_symbol_err_phy', 'link_down_events_phy'; bnxt_en's
'rx_fcs_err_frames'; ice's 'rx_crc_errors.nic'), judged by the NIC checks (checks/nics.ethtool_errors). The other
counters are read, not kept: traffic, drops and queue counters say nothing of the link's health alone."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.backends.nic_readings import ACTIVE, ETHTOOL_ERRORS, ETHTOOL_LINK_DOWNS, LINK_UP, UNKNOWN, Nic, NicPort
from gpuvet.captures import ethtool_module
from gpuvet.captures.nic_tools import NicLinesParse
from gpuvet.captures.text import Line

KIND = "ethtool"
UNNAMED = "an Ethernet port (interface not named)"
# its command line as a prompt shows it ("$ ethtool -S enp59s0f0np0 | grep err", "# sudo ethtool -i eth0")
_COMMAND = re.compile(
    r"^\s*(?:[\w@.:~/-]{0,64}[$#]\s*)?(?:sudo\s+)?ethtool\s+(?:(-[iS]|--driver|--statistics)\s+)?"
    r"([A-Za-z][\w.@-]{0,31})(?=\s|$)"
)
_SETTINGS = re.compile(r"^\s*Settings for ([\w.@-]{1,32}):\s*$")
_STATS = re.compile(r"^\s*NIC statistics:\s*$")
_COUNTER = re.compile(r"^\s+([A-Za-z][\w.\[\]-]{0,63}):\s+(\d{1,20})\s*$")
_BARE_COUNTER = re.compile(r"^\s*([A-Za-z][\w.\[\]-]{0,63}):\s+(\d{1,20})\s*$")
_QUEUE_COUNTER = re.compile(r"^\s*(\[\d{1,4}\]: [A-Za-z][\w.-]{0,63}):\s+(\d{1,20})\s*$")  # R11B: bnx2x's queues
_SETTING = re.compile(r"^\s+([A-Za-z][\w -]{0,40}):\s*(.*?)\s*$")
_INFO = re.compile(r"^(driver|version|firmware-version|expansion-rom-version|bus-info|supports-[\w-]+):\s*(.*?)\s*$")
_SPEED = re.compile(r"^(\d{1,7})Mb/s$")
_FW = re.compile(r"^(\S+)")
_BUS = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
MAX_PORTS = 256
# ethtool's own lines where a query of the settings is refused (not run as root, a driver without it): 'Cannot get
# wake-on-lan settings: Operation not permitted', 'Cannot get device settings: …', 'netlink error: …'; the block goes on
_REFUSED = ("Cannot get ", "netlink error:")


@dataclass
class _Port:
    netdev: str
    settings: dict[str, str] = field(default_factory=dict)
    info: dict[str, str] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)


@dataclass
class _Reading:
    ports: dict[str, _Port] = field(default_factory=dict)
    current: str | None = None  # the interface the last command line or block head named
    block: str | None = None  # settings, info, stats: what the lines now read are
    claimed: set[int] = field(default_factory=set)

    def port(self) -> _Port:
        name = self.current or UNNAMED
        return self.ports.setdefault(name, _Port(name))


EthtoolParse = NicLinesParse  # the NIC tools' record and the lines read (nic_tools.NicLinesParse)


def parse(lines: list[Line]) -> EthtoolParse:
    """The interfaces ethtool's output in ``lines`` names, as NIC records, and the lines read."""
    r = _Reading()
    for ln in lines:
        if _line(ln.text, r):
            r.claimed.add(ln.no)
    ports = [p for p in r.ports.values() if p.settings or p.info or p.counters][:MAX_PORTS]
    module = ethtool_module.read(lines, r.claimed)  # R10D: -m, a module's EEPROM
    if not ports:
        return EthtoolParse(kinds=[ethtool_module.KIND], claimed=module) if module else EthtoolParse()
    return EthtoolParse(nics=[_nic(p) for p in ports], kinds=[KIND] + [ethtool_module.KIND] * bool(module),
                        claimed=r.claimed | module)


# what a line outside a block must hold to open one (or be a grep'd error counter): a literal test before any pattern
_OPENERS = ("ethtool", "Settings for", "NIC statistics", "driver:", "_phy", ".nic:", "rx_fcs", "rx_crc")


def _line(text: str, r: _Reading) -> bool:
    """Reads one line into ``r``; whether it was ethtool's own."""
    if r.block is None and not any(w in text for w in _OPENERS):
        return False
    if "ethtool" in text and (c := _COMMAND.match(text)) is not None:
        r.current = c.group(2)
        r.block = {"-i": "info", "--driver": "info", "-S": "stats", "--statistics": "stats"}.get(c.group(1) or "")
        return True
    if (m := _SETTINGS.match(text)) is not None:
        r.current, r.block = m.group(1), "settings"
        return True
    if _STATS.match(text):
        r.block = "stats"
        return True
    if (m := _INFO.match(text)) is not None and (r.block == "info" or m.group(1) == "driver"):
        r.block = "info"
        r.port().info[m.group(1)] = m.group(2)
        return True
    if r.block == "stats" and (m := _BARE_COUNTER.match(text) or _QUEUE_COUNTER.match(text)) is not None:
        r.port().counters[m.group(1)] = int(m.group(2))  # bnx2x's per-queue '[0]: rx_discards: 0' as printed
        return True
    if r.block is None and (m := _COUNTER.match(text)) is not None and m.group(1) in ETHTOOL_ERRORS:
        r.port().counters[m.group(1)] = int(m.group(2))  # a grep of the counters, its command line not pasted
        return True
    if r.block == "settings" and (m := _SETTING.match(text)) is not None:
        r.port().settings[m.group(1).strip()] = m.group(2)
        return True
    if r.block == "settings" and text.startswith(("\t\t", "                ")):  # a list's next line (link modes)
        return True
    if r.block == "settings" and text.startswith(_REFUSED):  # its own word on a query not allowed (not as root)
        return True
    if text.strip():
        r.block = None  # another tool's line, or the prose around: the block is over
    return False


def _nic(p: _Port) -> Nic:
    """One Ethernet port: Active where ethtool detected the link, down where it did not, unknown where not said."""
    detected = p.settings.get("Link detected", "").lower()
    state = ACTIVE if detected == "yes" else "DOWN" if detected == "no" else UNKNOWN
    speed = _SPEED.match(p.settings.get("Speed", ""))
    rate = int(speed.group(1)) / 1000 if speed and state == ACTIVE else None
    bus = p.info.get("bus-info", "")
    fw = _FW.match(p.info.get("firmware-version", ""))
    kept = {k: v for k, v in p.counters.items() if k in ETHTOOL_ERRORS or k in ETHTOOL_LINK_DOWNS}
    port = NicPort(0, state, LINK_UP if state == ACTIVE else UNKNOWN, rate, None, "Ethernet", kept)  # 0: a netdev, no port
    device = f"{p.netdev} ({bus})" if _BUS.match(bus) else p.netdev
    return Nic(
        device,
        None,
        bus if _BUS.match(bus) else None,
        (port,),
        firmware=fw.group(1) if fw else None,
        netdevs=(p.netdev,) if p.netdev != UNNAMED else (),
        read_from=None,
    )
