"""The PCI core's link status line, printed when a driver binds a device whose path trains below what
it can do (drivers/pci/pci.c, __pcie_print_link_status): 'nvidia 0000:41:00.0: 63.008 Gb/s available
PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:40:01.1 (capable of 252.048 Gb/s with 16.0
GT/s PCIe x16 link)'. The limiting link may be the device's own or one above it (the port named after
'at'): either way it is the device's path as trained. Read for the GPU drivers (nvidia, amdgpu) as
the device's PCIe link, judged as lspci's LnkSta against LnkCap is; a NIC driver's (mlx5_core, mlx4_core, bnxt_en,
ice, i40e: issue 46, PHRM) as that NIC's link, judged by the NIC rule (checks/nics.pcie); another driver's (nvme) is
that device's, not a GPU's or a NIC's, and is left unread."""

from __future__ import annotations

import re

from gpuvet.captures.links import LspciParse
from gpuvet.captures.pcie_values import rate_fault, width_fault
from gpuvet.captures.records import PCIE_STATUS, PcieLink
from gpuvet.captures.text import Line

KIND = PCIE_STATUS
_GPU_DRIVERS = ("nvidia", "amdgpu")
_NIC_DRIVERS = ("mlx5_core", "mlx4_core", "bnxt_en", "ice", "i40e", "mqnic")  # R8C: Corundum's FPGA NIC
_STATUS = re.compile(r"\b([\w-]{1,32}) ((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): [\d.]+ Gb/s available "
                     r"PCIe bandwidth, limited by (\d+(?:\.\d+)?) GT/s PCIe x(\d{1,2}) link at (\S+?) "
                     r"\(capable of [\d.]+ Gb/s with (\d+(?:\.\d+)?) GT/s PCIe x(\d{1,2}) link\)")


def read(lines: list[Line]) -> tuple[LspciParse | None, tuple[str, ...]]:
    """This line's links and the sysfs link files' (R3C: pcie_sysfs.py), one record, and the kinds read."""
    from gpuvet.captures import pcie_sysfs

    got, files = parse(lines), pcie_sysfs.parse(lines) if any(pcie_sysfs.MARK in ln.text for ln in lines) else None
    kinds = (*((KIND,) if got else ()), *((pcie_sysfs.KIND,) if files else ()))
    if got is None or files is None:
        return got or files, kinds
    got.links += files.links
    got.notes += files.notes
    got.claimed |= files.claimed
    return got, kinds


def parse(lines: list[Line]) -> LspciParse | None:
    """Each GPU driver's link status line as the device's link (the first line per device kept)."""
    out = LspciParse()
    seen: set[str] = set()
    for ln in lines:
        if "available PCIe bandwidth" not in ln.text or (m := _STATUS.search(ln.text)) is None:
            continue
        driver, bus = m.group(1), m.group(2).upper()
        if bus in seen:
            continue
        if driver not in _GPU_DRIVERS + _NIC_DRIVERS:  # R8C: another device's path (nvme, an FPGA): said, not judged
            seen.add(bus)
            out.notes.append(f"line {ln.no}: {driver} {m.group(2)} (not a GPU's or NIC's driver) trained at {m.group(3)} "
                             f"GT/s x{m.group(4)} (limited at {m.group(5)}), capable of {m.group(6)} GT/s x{m.group(7)}: "
                             "that device's link, not judged")
            out.claimed.add(ln.no)
            continue
        seen.add(bus)
        speed, width, cap_speed, cap_width = float(m.group(3)), int(m.group(4)), float(m.group(6)), int(m.group(7))
        faults = [f for f in (rate_fault(speed), width_fault(width), rate_fault(cap_speed), width_fault(cap_width)) if f]
        if faults:  # a corrupt line is no link that trained down: left unread, said
            out.notes.append(f"line {ln.no}: {driver} {bus}'s link status line is not read: {'; '.join(faults)} "
                             "(a corrupt or edited line; give the kernel log as dmesg printed it)")
            continue
        if driver in _NIC_DRIVERS:  # named as the NIC rule names a card it reads from lspci ('class: name')
            out.nics.append(PcieLink(bus, f"NIC: {driver} {m.group(2)}", cap_speed, cap_width,
                                     speed, width, speed < cap_speed, width < cap_width))
        else:
            out.links.append(PcieLink(bus, f"{driver} (limited at {m.group(5)})", cap_speed, cap_width, speed, width,
                                      speed < cap_speed, width < cap_width))
        out.claimed.add(ln.no)
    _probe_links(lines, out, seen)
    return out if out.links or out.nics or out.notes else None


# R8C: Corundum's mqnic prints the link itself at probe (modules/mqnic/mqnic_main.c: 'Link capability: gen %d x%d',
# 'Link status: gen %d x%d'), its NIC's link as the PCI core's line would say it
_PROBE = re.compile(r"\bmqnic ((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):\s+[*_]*Link (capability|status): "
                    r"gen ([1-6]) x(\d{1,2})(?!\d)")
_GEN_GTS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}


def _probe_links(lines: list[Line], out: LspciParse, seen: set[str]) -> None:
    """mqnic's own capability and status lines, one NIC link per device that printed both."""
    got: dict[str, dict[str, tuple[int, int, int]]] = {}
    for ln in lines:
        if "Link " in ln.text and "mqnic" in ln.text and (m := _PROBE.search(ln.text)) is not None:
            got.setdefault(m.group(1).upper(), {})[m.group(2)] = (int(m.group(3)), int(m.group(4)), ln.no)
    for bus, both in got.items():
        if bus in seen or len(both) < 2 or width_fault(both["status"][1]) or width_fault(both["capability"][1]):
            continue
        (cap_gen, cap_width, cap_no), (gen, width, no) = both["capability"], both["status"]
        speed, cap_speed = _GEN_GTS[gen], _GEN_GTS[cap_gen]
        out.nics.append(PcieLink(bus, f"NIC: mqnic {bus.lower()}", cap_speed, cap_width, speed, width,
                                 speed < cap_speed, width < cap_width))
        out.claimed |= {cap_no, no}
