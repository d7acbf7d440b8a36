"""hccn_tool's answers about an NPU port's network, read and said (issue 46, R6C): -ip -g ('ipaddr:' and 'netmask:'
as one address with its prefix), -lldp -g (the switch port the NPU's port is cabled to: 'Port ID TLV' then
'Ifname: 400GE1/1/20:2', the switch's 'System Name TLV'), -route -g's table ('Routing table:', then route's own
header and rows) and -stat -g's '[devid N] name: count' counters. None of them is a fault: said, never judged."""

from __future__ import annotations

import ipaddress
import re

from gpuvet.captures.text import Line

_IP = re.compile(r"^\s*ipaddr\s*:\s*(\d{1,3}(?:\.\d{1,3}){3})\s*$")
_MASK = re.compile(r"^\s*netmask\s*:\s*(\d{1,3}(?:\.\d{1,3}){3})\s*$")
_TLV = re.compile(
    r"^\s*(?:Chassis ID|Port ID|Time to Live|Port Description|System Name|System Description|"
    r"System Capabilities|Management Address|Maximum Frame Size|End of LLDPDU|[\w -]{2,40}) TLV\s*$"
)
_IFNAME = re.compile(r"^\s*Ifname:\s*(\S{1,40})\s*$")
_ROUTE_HEAD = re.compile(r"^\s*(?:Routing table:|Destination\s+Gateway\s+Genmask\s+Flags\b.*)\s*$")
_ROUTE = re.compile(
    r"^\s*(?:default|\d{1,3}(?:\.\d{1,3}){3})\s+\d{1,3}(?:\.\d{1,3}){3}\s+\d{1,3}(?:\.\d{1,3}){3}\s+"
    r"[UGHRDMA!]+\s+\d+\s+\d+\s+\d+\s+\S+\s*$"
)
_COUNTER = re.compile(r"^\s*\[devid \d{1,3}\]\s*[a-z][a-z0-9_]{1,40}\s*:\s*\d+\s*$")


def read(lines: list[Line]) -> tuple[set[int], list[str]]:
    """The lines read and the notes that say them (none where the text holds no such answer)."""
    claimed: set[int] = set()
    notes: list[str] = []
    ips = [(ln, m.group(1)) for ln in lines if "ipaddr" in ln.text and (m := _IP.match(ln.text))]
    masks = [(ln, m.group(1)) for ln in lines if "netmask" in ln.text and (m := _MASK.match(ln.text))]
    if ips:
        claimed |= {ln.no for ln, _ in ips} | {ln.no for ln, _ in masks}
        said = [
            _with_prefix(ip, mask) for (_, ip), mask in zip(ips, [*(m for _, m in masks), *[""] * len(ips)], strict=False)
        ]
        notes.append(f"hccn_tool -ip: {', '.join(said)}")
    if tlv := {ln.no for ln in lines if "TLV" in ln.text and _TLV.match(ln.text)}:
        claimed |= tlv
        peers = [(ln, m.group(1)) for ln in lines if "Ifname" in ln.text and (m := _IFNAME.match(ln.text))]
        claimed |= {ln.no for ln, _ in peers}
        notes.append(
            f"hccn_tool -lldp: the switch port cabled to it: {', '.join(p for _, p in peers) or 'not in the paste'}"
        )
    heads = {ln.no for ln in lines if ("Routing" in ln.text or "Genmask" in ln.text) and _ROUTE_HEAD.match(ln.text)}
    rows = {ln.no for ln in lines if "." in ln.text and _ROUTE.match(ln.text)}
    if heads or rows:
        claimed |= heads | rows
        notes.append(f"hccn_tool -route: {len(rows)} route(s) read")
    claimed |= {ln.no for ln in lines if "[devid" in ln.text and _COUNTER.match(ln.text)}
    return claimed, notes


def _with_prefix(ip: str, mask: str) -> str:
    """'ip/prefix' where the netmask is one (contiguous ones, each octet ≤ 255); else the mask as printed."""
    if not mask:
        return ip
    try:
        return f"{ip}/{ipaddress.IPv4Network(f'0.0.0.0/{mask}').prefixlen}"
    except ValueError:  # 255.0.255.0, 999.255.0.0: no netmask, said as the tool printed it
        return f"{ip} netmask {mask} (not a netmask)"
