"""Issue 46 (R3C): a PCIe device's link as the kernel's sysfs keeps it (drivers/pci/pci-sysfs.c: current_link_speed
'16.0 GT/s PCIe', current_link_width '8', max_link_speed, max_link_width), printed the ways people paste it: ``tail -v
-n +1 …/*_link_*`` and ``head`` (``==> /sys/bus/pci/devices/0000:01:00.0/current_link_width <==`` then the value),
``grep . …/*_link_*`` / ``grep -H`` (``/sys/bus/pci/devices/0000:01:00.0/current_link_width:8``), or ``cat PATH`` with
the value on the next line. The device is the last bus id in the path (a /sys/devices/pci0000:00/… walk names the
chain), or the DRM card (/sys/class/drm/card1/device/…).

Each device read becomes the link record lspci's LnkSta/LnkCap give (records.PcieLink), judged as those are
(doctor/capture_checks: narrower than its maximum is a link trained down; slower at full width is an idle link's
power saving). A paste naming more than MAX_JUDGED devices is a glob over the whole bus: a root or switch port's
maximum is its own, not the card's behind it (an x4 NVMe under an x16 port), so it is read, not judged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.links import LspciParse
from gpuvet.captures.pcie_values import rate_fault, width_fault
from gpuvet.captures.records import PcieLink
from gpuvet.captures.text import Line

KIND = "sysfs PCIe link"
MARK = "_link_"  # every line read holds one of the four files' names, or is the value under one that did
MAX_JUDGED = 4
_BUS = r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_FILE = re.compile(r"(?P<path>/sys/\S*?)/(?P<attr>(?:current|max)_link_(?:speed|width))\b(?:\s*<==|\s*:(?P<value>.*))?")
_LAST_BUS = re.compile(_BUS + r"(?!.*" + _BUS + ")")
_CARD = re.compile(r"/drm/(card\d{1,3})\b")
_SPEED = re.compile(r"^\s*(\d{1,2}(?:\.\d{1,3})?)\s*GT/s\b")
_WIDTH = re.compile(r"^\s*x?(\d{1,2})\s*$")


@dataclass
class _Reading:
    values: dict[str, dict[str, float]] = field(default_factory=dict)  # device -> attr -> figure
    pending: tuple[str, str] | None = None  # (device, attr) a head or cat line named, its value not yet read
    claimed: set[int] = field(default_factory=set)


def parse(lines: list[Line]) -> LspciParse | None:
    """The devices' links the sysfs files in ``lines`` give; None where none is read."""
    r = _Reading()
    for ln in lines:
        if _line(ln.text, r):
            r.claimed.add(ln.no)
    if not r.values:
        return None
    out = LspciParse(claimed=r.claimed)
    for device, v in r.values.items():
        speed, cap_speed = v.get("current_link_speed"), v.get("max_link_speed")
        width, cap_width = _int(v.get("current_link_width")), _int(v.get("max_link_width"))
        faults = [f for f in (rate_fault(speed), rate_fault(cap_speed), width_fault(width), width_fault(cap_width)) if f]
        if faults:
            out.notes.append(f"sysfs PCIe link of {device} not read: {'; '.join(faults)}")
            continue
        if (speed is None or cap_speed is None) and (width is None or cap_width is None):
            continue  # no pair of current and maximum: nothing to hold against each other
        out.links.append(
            PcieLink(
                device,
                f"{device} (sysfs *_link_* files)",
                cap_speed,
                cap_width,
                speed,
                width,
                speed is not None and cap_speed is not None and speed < cap_speed,
                width is not None and cap_width is not None and width < cap_width,
            )
        )
    if len(out.links) > MAX_JUDGED:
        out.notes.append(
            f"sysfs PCIe link files of {len(out.links)} devices read, not judged: a port's maximum is its "
            "own, not the card's behind it; give lspci -vvv -s BUS of the GPU and its upstream port"
        )
        out.links = []
    return out


def _line(text: str, r: _Reading) -> bool:
    """Reads one line into ``r``; whether it was a link file's name or value."""
    if MARK not in text:
        if r.pending is None or not text.strip():
            return False
        device, attr = r.pending
        r.pending = None
        return _value(device, attr, text, r)
    if (m := _FILE.search(text)) is None:
        return False
    path = m.group("path")
    bus, card = _LAST_BUS.search(path), _CARD.search(path)
    device = bus.group(0).lower() if bus else card.group(1) if card else path
    if len(device) == 7:  # '01:00.0': domain 0 as lspci prints it without -D
        device = "0000:" + device
    value = m.group("value")
    if value is not None and value.strip():
        r.pending = None
        return _value(device, m.group("attr"), value, r)
    r.pending = (device, m.group("attr"))
    return True


def _value(device: str, attr: str, text: str, r: _Reading) -> bool:
    """One file's value ('16.0 GT/s PCIe', '8'); 'Unknown' (a link down) is read as no figure."""
    m = (_SPEED if attr.endswith("speed") else _WIDTH).match(text)
    if m is None:
        return "Unknown" in text
    figure = float(m.group(1))
    if figure > 0:
        r.values.setdefault(device, {})[attr] = figure
    return True


def _int(figure: float | None) -> int | None:
    return None if figure is None else int(figure)
