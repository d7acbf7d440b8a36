"""Which module a kernel message is about (captures/kernel.py): the bus id its own line names, or the nearest
line of the same driver, or the driver's index resolved through a nearby ``RmInitAdapter`` line; a label that
says so where no line places it, never an invented bus id. Kept apart from the messages so each file has one job."""

from __future__ import annotations

import re

from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key as bus

_BUS = r"([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})"
NEARBY = 6  # lines: a message without a bus id takes the bus id a line this close names
NO_BUS = "bus id not in the log"  # the module of a message that no line near it places
AMD_NO_BUS = "an AMD module, " + NO_BUS  # an amdgpu message no line near it places: the vendor is still known
INTEL_NO_BUS = "an Intel module, " + NO_BUS  # an i915/xe message no line near it places
LINE_BUS = re.compile(r"(?:NVRM: GPU |PCI:|nvidia |NVIDIA GPU |GPU at |probe of )" + _BUS)
RM_INDEX = re.compile(r"NVRM: (GPU\d+) ")
INTEL_BUS = re.compile(r"\b(?:i915|xe)(?:: probe of)? " + _BUS + r"\.\d")
# amdgpu's dev_printk prefix, or the PCI core's 'amdgpu: probe of …'; or a pasted line cut inside dev_printk's
# driver name ('dgpu 0000:2b:00.0: amdgpu: …'): a tail of 'amdgpu' opening the line, its bus id, then the
# driver's own 'amdgpu:' or '[drm]'
AMD_BUS = re.compile(r"(?:\bamdgpu(?:: probe of)? |^\s*(?=(?:mdgpu|dgpu|gpu|pu|u)? ?[0-9a-fA-F]{4,8}:\S+ "
                     r"(?:amdgpu:|\[drm\]))(?:mdgpu|dgpu|gpu|pu|u)? ?)" + _BUS + r"\.\d")


def intel_module_of(lines: list[Line], i: int) -> str:
    """The bus id the i915/xe prefix gives on the line or the nearest line that has one."""
    for d in range(NEARBY):
        for j in (i + d, i - d):
            if 0 <= j < len(lines) and (b := INTEL_BUS.search(lines[j].text)) is not None:
                return bus(b.group(1))
    return INTEL_NO_BUS


def index_buses(lines: list[Line]) -> dict[str, str]:
    """The driver's 'GPU6' -> the bus id an adjacent line of the same message names."""
    out: dict[str, str] = {}
    for i, ln in enumerate(lines):
        idx = RM_INDEX.search(ln.text) if "NVRM: GPU" in ln.text else None
        if idx is None or idx.group(1) in out:
            continue
        for other in lines[i + 1:i + NEARBY]:
            if (b := LINE_BUS.search(other.text)) is not None and "RmInitAdapter" in other.text:
                out[idx.group(1)] = bus(b.group(1))
                break
    return out


def module_of(lines: list[Line], i: int, index_bus: dict[str, str]) -> str:
    """An NVRM message's module: its own bus id, its index's, the nearest driver line's, else its index."""
    if (b := LINE_BUS.search(lines[i].text)) is not None:
        return bus(b.group(1))
    idx = RM_INDEX.search(lines[i].text)
    if idx is not None and idx.group(1) in index_bus:
        return index_bus[idx.group(1)]
    for d in range(1, NEARBY):  # the bus id the nearest driver line names (a message printed over several lines)
        for j in (i + d, i - d):
            if 0 <= j < len(lines) and any(w in lines[j].text for w in ("NVRM", "nvidia ", "probe of")) \
                    and (b := LINE_BUS.search(lines[j].text)):
                return bus(b.group(1))
    return idx.group(1) if idx is not None else NO_BUS


def amd_module_of(lines: list[Line], i: int) -> str:
    """The bus id of ``amdgpu 0000:28:00.0:`` on the line, or on the nearest amdgpu line that has one; past
    those, the next amdgpu line of the same burst that names one (a MES or KFD failure is printed without a
    bus id, and the reset it leads to names the device a few lines on)."""
    for d in range(NEARBY):
        for j in (i + d, i - d):
            if 0 <= j < len(lines) and (b := AMD_BUS.search(lines[j].text)) is not None:
                return bus(b.group(1))
    for other in lines[i + NEARBY:i + 3 * NEARBY]:
        if "amdgpu" not in other.text:
            break  # the burst ended: another driver's lines, or none
        if (b := AMD_BUS.search(other.text)) is not None:
            return bus(b.group(1))
    return AMD_NO_BUS
