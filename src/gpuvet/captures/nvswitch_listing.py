"""Issue 46 (R14E): the NVSwitches and the Fabric Manager version a log names, for the inventory: the nvidia-nvswitch
kernel module's probe line at boot ('nvidia-nvswitch: Probing device 0000:83:00.0, Vendor Id = 0x10de, Device Id =
0x22a3, Class = 0x68000'), the Fabric Manager log's lines naming a switch ('… on NVSwitch pci bus id
00000000:83:00.0 physical id 0 port 34') and its start line ('Fabric Manager version 535.161.08 is running with the
following configuration options'). Said as a note, read beside the readers that judge these lines (kernel log,
fabric manager log): nothing claimed, nothing judged."""

from __future__ import annotations

import re

from gpuvet.captures.bench_results import BenchResults
from gpuvet.captures.text import Line

_PROBE = re.compile(r"nvidia-nvswitch: Probing device ([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]), "
                    r"Vendor Id = 0x10de, Device Id = (0x[0-9a-fA-F]{4})")
_FM_SWITCH = re.compile(r"\bNVSwitch pci bus id ([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
                        r"(?: physical id (\d{1,3}))?")
_FM_VERSION = re.compile(r"\bFabric Manager version (\d{2,4}\.\d{1,3}(?:\.\d{1,3})?) is running\b")
MARKS = ("nvidia-nvswitch: Probing", "NVSwitch pci bus id", "Fabric Manager version")


def parse(lines: list[Line]) -> BenchResults:
    """The switches by bus id (the device id its probe line gives, the physical id FM gives) and FM's last
    version, as one note; nothing claimed."""
    switches: dict[str, list[str]] = {}
    versions: list[str] = []
    for ln in lines:
        text = ln.text[:400]
        if (p := _PROBE.search(text)) is not None:
            _said(switches, p.group(1), f"device {p.group(2).lower()}")
        elif (s := _FM_SWITCH.search(text)) is not None:
            _said(switches, s.group(1), f"physical id {s.group(2)}" if s.group(2) else "")
        elif (v := _FM_VERSION.search(text)) is not None:
            versions.append(v.group(1))
    out = BenchResults()
    if switches:
        out.notes.append(f"{len(switches)} NVSwitch(es) named: " + ", ".join(
            f"{bus}" + (f" ({', '.join(w)})" if w else "") for bus, w in sorted(switches.items())))
    if versions:
        out.notes.append(f"Fabric Manager {versions[-1]}" + (
            f" (earlier in the log: {', '.join(dict.fromkeys(versions[:-1]))})" if len(set(versions)) > 1 else ""))
    return out


def _said(switches: dict[str, list[str]], bus: str, what: str) -> None:
    words = switches.setdefault(f"{int(bus[:-8], 16):04x}:{bus[-7:].lower()}", [])  # FM's 00000000: is 0000:
    if what and what not in words:
        words.append(what)
