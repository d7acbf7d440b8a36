"""One spelling of a PCI address, so that a module named by NVML (``00000000:2A:00.0``), lspci or
nvidia-smi -q (``0000:2a:00.0``) and the driver's Xid lines (``PCI:0000:2a:00``) is one module:
domain as four hex digits (more only past 0xFFFF), upper case, function ``.0`` when none is given."""

from __future__ import annotations

import re

_BDF = re.compile(r"^(?:([0-9A-Fa-f]{1,8}):)?([0-9A-Fa-f]{1,2}):([0-9A-Fa-f]{1,2})(?:\.([0-7]))?$")


def bus_key(text: str) -> str:
    """``0000:2A:00.0`` for any spelling of that address; text that is no bus id (the driver's
    ``GPU6``, a rank's ``0x16``) comes back as given, stripped."""
    s = text.strip()
    m = _BDF.match(s)
    if m is None:
        return s
    domain, bus, device, function = m.groups()
    return f"{int(domain or '0', 16):04X}:{int(bus, 16):02X}:{int(device, 16):02X}.{function or '0'}"
