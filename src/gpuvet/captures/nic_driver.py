"""Issue 46 (ZX1): a NIC driver's kernel lines that say it failed its card. mlx5_core
(drivers/net/ethernet/mellanox/mlx5/core: main.c's 'mlx5_load_one failed with error code -22', 'init_one failed',
'handle_hca_cap failed'; health.c's "device's health compromised", 'Fatal error … detected'; events.c's
'High temperature on sensors' and 'Detected insufficient power on the PCIe slot'), the driver core's
'mlx5_core: probe of 0000:03:00.0 failed with error -22' (newer kernels: '… probe with driver X failed with
error -N'), and the same core lines of the other RDMA/NIC drivers (mlx4_core, bnxt_en, ice, i40e, irdma, efa).
A card whose driver cannot probe or keep it is a fault of that NIC, named by its bus id: the node's fabric
boundary, never a GPU's. The driver's other lines of that card (firmware version, enabling device) are read
with it; a card whose lines say no failure is left to the other readers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

_DRIVERS = r"mlx5_core|mlx4_core|bnxt_en|ice|i40e|irdma|efa"
_BDF = r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_HEAD = 600  # characters of a line searched
# the driver's own prefix ('mlx5_core 0000:03:00.0: …'), or the driver core's probe line ('mlx5_core: probe of …')
_PREFIX = re.compile(r"(?:^|[\s\]:])(" + _DRIVERS + r") (" + _BDF + r"):? ")
_PROBE = re.compile(r"(?:^|[\s\]:])(" + _DRIVERS + r"): probe of (" + _BDF + r") failed with error (-?\d+)")
# what the driver prints when it fails its card (mlx5 main.c, health.c, events.c; the driver core's probe line)
_FAILED = re.compile(r"probe with driver \S+ failed with error -?\d+|\b(?:mlx5_load_one|mlx5_init_one|init_one|"
                     r"handle_hca_cap|mlx5_function_setup|mlx5_cmd_init|ice_init_hw|bnxt_init_one)\b[^\n]{0,40}?"
                     r"\bfailed\b|device's health compromised|\bFatal error \d+ detected|High temperature on sensors|"
                     r"insufficient power on the PCIe slot|firmware over temperature|\bFW_FATAL\b")
_FW = re.compile(r"firmware version: (\d+\.\d+\.\d+)")
# the drivers' names as their lines hold them: a line without one is none of theirs (formats.py's markers too).
# ice and efa are short words inside common ones ('device 0000:', 'service:'): their marks hold the space before
# the name and what follows it, or every bug report's every 'device' line is searched (issue 43's reading speed)
MARKS = ("mlx5_core", "mlx4_core", "bnxt_en", " ice 0000:", " ice: probe", "i40e", "irdma", " efa 0000:",
         " efa: probe")


@dataclass(frozen=True)
class NicDriverFailure:
    """A NIC whose driver said it failed it: the first failure line and how many the card's lines hold."""

    bus_id: str  # 0000:03:00.0, as the line prints it
    driver: str  # mlx5_core
    line: int
    text: str
    count: int
    firmware: str | None  # the version the driver's own line read from the card ('firmware version: 14.32.1010')


@dataclass
class NicDriverParse:
    failures: list[NicDriverFailure] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)


# words every failure line above holds one of: only lines holding one are searched for a failure, then only the
# failing cards' lines (by bus id) are read whole (a DGX bug report holds ~28k healthy mlx5_core lines)
_FAIL_WORDS = ("failed", "health compromised", "Fatal error", "High temperature", "insufficient power",
               "over temperature", "FW_FATAL")


def parse(lines: list[Line], marks: Marks | None = None) -> NicDriverParse:
    """The NICs a driver failed, each with every line of its driver about it claimed (only the lines holding a
    failure word are searched for a failure, and only the failing cards' lines are read whole)."""
    first: dict[str, tuple[str, Line]] = {}
    counts: dict[str, int] = {}
    for i in holding(lines, _FAIL_WORDS, marks):
        head = lines[i].text[:_HEAD]
        probe = _PROBE.search(head)
        m = probe or _PREFIX.search(head)
        if m is not None and (probe is not None or _FAILED.search(head[m.end():]) is not None):
            bus = m.group(2).lower()
            first.setdefault(bus, (m.group(1), lines[i]))
            counts[bus] = counts.get(bus, 0) + 1
    out = NicDriverParse()
    for bus, (driver, ln) in first.items():
        own = [j for j in holding(lines, (bus, bus.upper()), marks) if _owned(lines[j].text[:_HEAD], bus)]
        fw = next((f.group(1) for j in own if (f := _FW.search(lines[j].text[:_HEAD])) is not None), None)
        out.failures.append(NicDriverFailure(bus, driver, ln.no, ln.text.strip()[:240], counts[bus], fw))
        out.claimed |= {lines[j].no for j in own}
    return out


def _owned(head: str, bus: str) -> bool:
    """Whether the line is the card's own driver's (its prefix, or the driver core's probe line for it)."""
    m = _PROBE.search(head) or _PREFIX.search(head)
    return m is not None and m.group(2).lower() == bus
