"""Issue 46 (R13D): the kernel lines of two edge accelerators' PCIe drivers, each the module's own: Hailo's
hailo_pci (Hailo-8/8L: 'hailo 0000:01:00.0: …'; the Hailo-10H/15 driver 'hailo1x') and Google Coral's apex driver
on the gasket framework ('apex 0000:01:00.0: …'). Neither is a GPU driver, and before this their lines were "none
from a GPU, NIC-to-GPU or driver module" or a line no reader claimed.

Read from the drivers' own words (hailo-ai/hailort-drivers linux/pcie/src/pcie.c and fw_operation.c;
google/gasket-driver src/gasket_page_table.c, apex_driver.c): the board did not come up where its probe failed,
its BARs or PCIe resources could not be set up, or its interrupts (MSI) could not be enabled - the probe then
returns the error and no /dev/hailoN exists (critical, driver_init_failed); the board was added without its
firmware, which no inference runs without (warn, accel_firmware_missing); the Edge TPU's MMU faulted on a
mapping ('Fault VA', 'Failing in first (simple) read access': warn, a page fault). Other error lines of the two
drivers are an unnamed lead (kernel_unknown.UNNAMED); the probe's steps a healthy boot prints are the module's
presence only."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures import kernel_failed, kernel_unknown
from gpuvet.captures.kernel_phrases import KernelMessage
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

WORDS = ("hailo", "apex ", "OC ALARM")  # every line this reader reads holds one
_LINE = lazy(
    r"(?:^|[\s\]>:;])(?P<drv>hailo1x|hailo|apex) (?P<bus>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):"
)
FIRMWARE_MISSING = "accel_firmware_missing"
PAGE_FAULT = "accel_page_fault"
SOCTHERM_OC = "jetson_soctherm_oc_alarm"
KINDS = (FIRMWARE_MISSING, PAGE_FAULT, SOCTHERM_OC)  # kernel_messages.yaml gives each its cause (and driver_init_failed's)
# each kind's words, from the drivers' dev_err/hailo_err calls (hailort-drivers v5.3.0 45e5fc5, linux/pcie/src;
# gasket-driver 5815ee3, src/gasket_core.c, gasket_interrupt.c, apex_driver.c): the probe's own failures and the
# firmware that did not load leave no usable board; a missing firmware file is the board added without it
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        kernel_failed.INIT_FAILED,
        lazy(
            # hailo: interrupts (MSI) not enabled, BARs/resources not set up, the board not added
            r"\bFailed (?:Enabling|to enable) (?:interrupts|MSI)\b|\bFailed init pcie resources\b|"
            r"\bError allocating bars\b|\bFailed reading device BARs\b|\bFailed calling pci_enable_device\b|"
            r"\bFailed to allocate memory for device extension\b|\bFailed activating board\b|"
            r"\bCannot add the device to the system\b|\bFailed creating device /dev/|\bprobe (?:with driver \S+ )?failed\b|"
            # hailo: its firmware did not load or boot
            r"\bFirmware load failed\b|\bFailed writing (?:SOC )?firmware\b|\bFailed loading NNC firmware\b|"
            r"\bFailed validating fw (?:header|certificate)\b|\bFailed parsing firmware file\b|"
            r"\bTimeout waiting for firmware file\b|\bcouldn't wait for bootloader\b|"
            r"\bFailed to load and cache firmware\b|\bTimeout waiting for vDMA boot data\b|"
            # gasket/apex: the PCI device, its BARs, page table or MSI-X table not set up
            r"\berror (?:enabling|adding) (?:PCI|gasket) device\b|\b[Cc]annot get (?:PCI )?BAR\d+ base address\b|"
            r"\b(?:Page table|MSI-X table) init timed out\b|\bCouldn't reinit interrupts\b",
            re.I,
        ),
    ),
    (FIRMWARE_MISSING, lazy(r"\bFirmware file not found\b", re.I)),
    # the Edge TPU's MMU fault dump (the apex build of a Raspberry Pi kernel: 'Fault VA: 0x…', 'Failing in first
    # (simple) read access', 'Computed Failing Bus Addr'; not in gasket-driver's tree)
    (
        PAGE_FAULT,
        lazy(r"\bFault VA\b|\bFailing in (?:first|second|\w+) \(|\bpage fault\b|\bComputed Failing Bus Addr\b", re.I),
    ),
)
# Jetson's SoC thermal/over-current unit (drivers/thermal/tegra/soctherm.c, soctherm_oc_int_work_func: 'soctherm: OC
# ALARM 0x%08x'): an over-current interrupt, which throttles the CPU and GPU clocks (most often a supply that
# sags under load: an under-rated power adapter or cable); no device named, the SoC's
_SOCTHERM = lazy(r"\bsoctherm: OC ALARM 0x([0-9a-fA-F]{1,8})\b")
SOC = "Jetson SoC (soctherm; no device in the line)"
SAID = (KernelMessage(SOCTHERM_OC, re.compile(r"\bsoctherm: OC ALARM 0x[0-9a-fA-F]{1,8}\b"), "soctherm"),)
_VENDOR = {"hailo": "Hailo", "hailo1x": "Hailo", "apex": "Google"}
SHOWN = 3


def kind_of(text: str) -> str | None:
    """The kind a Hailo or apex line says, or None (a probe step, a mapping, or an unnamed line)."""
    return next((kind for kind, pattern in _KINDS if pattern.search(text)), None)


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with the Hailo and Coral boards listed and their faults as events, one per kind and board, the
    strongest first; an error line no kind names a lead unless a named kind is about the same board."""
    from gpuvet.captures.kernel import KernelEvent, KernelModule

    found: dict[tuple[str, str], list[Line]] = {}
    boards: dict[str, str] = {}
    for i in holding(lines, WORDS, marks):
        ln = lines[i]
        if (m := _LINE.search(ln.text[:400])) is None:
            if _SOCTHERM.search(ln.text[:400]) is not None:
                found.setdefault((SOCTHERM_OC, SOC), []).append(ln)
                out.claimed.add(ln.no)
            continue
        bus = m.group("bus") if m.group("bus").count(":") == 2 else f"0000:{m.group('bus')}"
        out.claimed.add(ln.no)
        boards.setdefault(bus, _VENDOR[m.group("drv")])
        text = ln.text[:1000]
        if (kind := kind_of(text)) is not None:
            found.setdefault((kind, bus), []).append(ln)
        elif (kernel_unknown.error_worded(text) or "unhealthy" in text) and kernel_unknown.benign(text) is None:
            found.setdefault((kernel_unknown.UNNAMED, bus), []).append(ln)
    named = {bus for kind, bus in found if kind != kernel_unknown.UNNAMED}
    have = {k.module for k in out.modules}
    out.modules += [KernelModule(b, v) for b, v in boards.items() if b not in have]
    for (kind, bus), said in found.items():
        if kind == kernel_unknown.UNNAMED and bus in named:
            continue  # beside a named fault of the same board: its context
        shown = tuple(ln.text.strip()[:240] for ln in said[:SHOWN])
        drv = m.group("drv") if (m := _LINE.search(said[0].text[:400])) is not None else "soctherm"
        out.events.append(
            KernelEvent(kind, bus, said[0].text.strip()[:240], said[0].no, count=len(said), driver=drv, shown=shown)
        )
    return out
