"""Issue 46: the kernel's PCI enumeration lines of a GPU function, read with the kernel log. The function line
('pci 0000:01:00.0: [10de:2204] type 00 class 0x030000') names an NVIDIA or AMD module the driver may never
mention (inventory); a memory BAR the kernel could not give it ('BAR 1 [mem size …]: can't assign; no space',
'failed to assign', or the older 'BAR 1: no space for [mem …]') and did not assign later is a module whose
windows the driver cannot map: the host bridge's window is too small (or above-4G decoding is off). The NVIDIA
driver's own word for it (nv-pci.c: 'NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:' and,
on its next line, indented under whatever prefix the log has, 'NVRM: BAR1 is 0M @ 0x0 (PCI:0000:08:00.0)') is
the same fault named on its module; the failed probe that follows it is its echo, not a second cause."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

KIND = "pci_bar_unassigned"  # kernel_messages.yaml gives its cause (no NVRM pattern reads it: kernel_echoes.DERIVED)
_FN = r"pci ([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): "
# display (0x03xx) and processing-accelerator (0x12xx) classes: not the card's audio or USB functions
_DEVICE = re.compile(_FN + r"\[(10de|1002):[0-9a-fA-F]{4}\] type [0-9a-fA-F]{2} class 0x(?:03|12)[0-9a-fA-F]{4}\b")
_VENDORS = {"10de": "NVIDIA", "1002": "AMD"}
NVRM_KIND = "bar_invalid"  # the NVIDIA driver's 'BARn is 0M @ 0x0 (PCI:…)' (kernel_messages.yaml)
_NVRM_BAR = re.compile(r"NVRM:\s+BAR(\d) is (\d+)M @ 0x[0-9a-fA-F]+ \(PCI:([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:"
                       r"[0-9a-fA-F]{2})(?:\.[0-7])?\)")
SMALL_KIND = "bar_small"  # an NVIDIA GPU's BAR1 of 256 MiB or less: its memory seen through a small window
AMD_SMALL_KIND = "amd_bar_not_resized"  # amdgpu could not resize its VRAM BAR (it works with the small one)
SMALL_BAR = 256 * 2**20  # bytes: BAR1's size on an NVIDIA GPU whose BAR was not resized (the legacy default)
# a memory BAR's window as the kernel lists it: 'BAR 1 [mem 0x…-0x… 64bit pref]' (6.8 and later, ': assigned'
# after a re-assignment) or 'reg 0x14: [mem 0x…-0x… 64bit pref]' (older kernels; 0x14 is an NVIDIA GPU's BAR1)
_BAR1 = re.compile(_FN + r"(?:BAR 1 |reg 0x14: )\[mem (0x[0-9a-fA-F]+)-(0x[0-9a-fA-F]+)\b")
_WINDOW = re.compile(_FN + r"(?:VF )?(?:BAR \d|reg 0x[0-9a-f]{2}:|ROM) ?\[(?:mem|io)\b")  # any window's line
# amdgpu_device_resize_fb_bar: no room for the large BAR, or the resize itself failed ('Problem resizing BAR0')
_AMD_NOT_RESIZED = re.compile(r"Not enough PCI address space for a large BAR|Problem resizing BAR0")
# R3B: i915's and xe's own words for a discrete module's local memory BAR left small (intel_region_lmem.c
# i915_resize_lmem_bar: 'Failed to resize BAR%d to %dM (%pe)', then 'Using a reduced BAR size of %lluMiB. Consider
# enabling 'Resizable BAR' or similar, if available'; xe_vram.c prints the same): Arc needs Resizable BAR
INTEL_REDUCED_KIND = "intel_bar_reduced"
_INTEL_REDUCED = re.compile(r"\b(?:i915|xe) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): (?:\[drm\] )?"
                            r"(?:Using a reduced BAR size of \d+ ?MiB|Failed to resize BAR\d to \d+M)")
GUEST_KIND = "bar_unmapped_guest"  # either of the above where the log shows the kernel runs in a virtual machine
# the guest kernel's own word that it runs under a hypervisor (not Xen: its dom0 is the host of the GPUs)
_GUEST = re.compile(r"Hypervisor detected: (?:KVM|Microsoft Hyper-V|VMware|ACRN|Bhyve)|"
                    r"Booting paravirtualized kernel on (?:KVM|Hyper-V|VMware)|"
                    r"DMI: (?:QEMU |Cloud Hypervisor|Microsoft Corporation Virtual Machine|VMware)")
# what the driver says after refusing the module: its probe failed, no device initialised (kernel.py's kinds)
_ECHOES = frozenset(("probe_failed", "init_failed", "no_adapter"))
# the kernel's two wordings (pci/setup-res.c): 'BAR 1 [mem size …]: can't assign; no space' (6.8 and later)
# and 'BAR 1: no space for [mem size …]' / 'BAR 1: failed to assign [mem …]' / 'BAR 1: assigned [mem …]'
_NEW = re.compile(_FN + r"BAR ([0-5]) \[(mem|io)[^\]]*\]: (can't assign|failed to assign|can't claim|assigned)\b")
_OLD = re.compile(_FN + r"BAR ([0-5]): (no space for|failed to assign|assigned) \[(mem|io)\b")
# issue 46 (PCR): a BAR the firmware placed outside every bridge window, in the older wording (setup-res.c before 6.8:
# 'can't claim BAR 1 [mem …]: no compatible bridge window'; 6.8 and later: _NEW's 'BAR 1 [mem …]: can't claim'); the
# kernel then assigns it anew ('assigned' takes it back); the ROM (BAR 6) is no BAR a driver needs
_CLAIM = re.compile(_FN + r"can't claim BAR ([0-5]) \[(mem|io)\b")


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None,
         candidates: list[int] | None = None) -> KernelParse:
    """``out`` with the GPU functions the enumeration lines name added to its modules, and one event per
    module whose memory BAR stayed unassigned (the first failure line as evidence). ``candidates``: the indices
    of the lines that may name a GPU function ('[10de:' or '[1002:'; kernel_more's one pass), else all lines'."""
    from gpuvet.captures.kernel import KernelEvent, KernelModule, bus

    gpus: dict[str, str] = {}
    named: set[int] = set()
    for i in candidates if candidates is not None else holding(lines, ("[10de:", "[1002:"), marks):
        ln = lines[i]
        if (d := _DEVICE.search(ln.text)) is not None:
            gpus.setdefault(d.group(1).lower(), _VENDORS[d.group(2).lower()])
            out.claimed.add(ln.no)
            out.nvrm_lines += 1  # a line about the module: the log says something of it
            named.add(i)
    # a function a GPU driver's own lines name is a GPU's too (its enumeration line may be cut from the paste)
    driven = {m.module for m in out.modules if m.vendor in ("NVIDIA", "AMD")}
    # issue 43: no GPU function, no BAR of one to read
    failed = _failed(lines, marks, named) if gpus or driven else {}
    failed = {key: ln for key, ln in failed.items() if key[0] in gpus or bus(key[0]) in driven}
    claimed = {ln.no for ln in failed.values()}
    out.claimed |= claimed
    out.nvrm_lines += len(claimed)
    said = {e.module for e in out.events if e.kind == KIND}
    for (fn, _), ln in sorted(failed.items(), key=lambda kv: kv[1].no):
        if bus(fn) not in said:
            said.add(bus(fn))
            out.events.append(KernelEvent(KIND, bus(fn), ln.text.strip()[:240], ln.no))
    known = {m.module for m in out.modules}
    out.modules += [KernelModule(bus(fn), vendor) for fn, vendor in sorted(gpus.items()) if bus(fn) not in known]
    out = _nvrm_bars(lines, out, marks)
    _small_bars(lines, out, marks, {fn for fn, vendor in gpus.items() if vendor == "NVIDIA"})
    return out


def _small_bars(lines: list[Line], out: KernelParse, marks: Marks | None, nvidia: set[str]) -> None:
    """An info event per module whose memory is mapped through a small BAR (Resizable BAR not in effect): an
    NVIDIA GPU function whose BAR1 the kernel last listed at SMALL_BAR or less, and amdgpu's word that it could
    not resize its VRAM BAR; never on a module another event is about (that one is the finding)."""
    from gpuvet.captures.kernel import KernelEvent, bus
    from gpuvet.captures.kernel_places import AMD_NO_BUS, amd_module_of

    sizes: dict[str, tuple[int, Line]] = {}
    for i in holding(lines, ("BAR ", "reg 0x", "ROM ["), marks) if nvidia else []:
        if (fn := _WINDOW.search(lines[i].text)) is not None and fn.group(1).lower() in nvidia:
            out.claimed.add(lines[i].no)  # the GPU function's windows as the kernel lists them: read
        if (m := _BAR1.search(lines[i].text)) is not None and m.group(1).lower() in nvidia:
            sizes[m.group(1).lower()] = (int(m.group(3), 16) - int(m.group(2), 16) + 1, lines[i])
    found = [(bus(fn), ln) for fn, (size, ln) in sizes.items() if 0 < size <= SMALL_BAR]
    amd = [(amd_module_of(lines, i), lines[i]) for i in holding(lines, ("BAR",), marks)
           if "amdgpu" in lines[i].text and _AMD_NOT_RESIZED.search(lines[i].text)]
    intel = [(bus(m.group(1)), lines[i]) for i in holding(lines, ("reduced BAR", "to resize BAR"), marks)
             if (m := _INTEL_REDUCED.search(lines[i].text)) is not None]
    out.claimed |= {ln.no for _, ln in intel}
    judged = {e.module for e in out.events}
    for kind, hits in ((SMALL_KIND, found), (AMD_SMALL_KIND, amd), (INTEL_REDUCED_KIND, intel)):
        for module, ln in hits:
            if module not in judged and (module != AMD_NO_BUS or kind == AMD_SMALL_KIND):
                judged.add(module)
                out.claimed.add(ln.no)
                out.events.append(KernelEvent(kind, module, ln.text.strip()[:240], ln.no))


def _nvrm_bars(lines: list[Line], out: KernelParse, marks: Marks | None) -> KernelParse:
    """``out`` with one event per module whose BAR the NVIDIA driver found invalid (its first such line), the
    module listed, and the driver's failed probe on that module (or on none named) dropped as its echo."""
    from gpuvet.captures.kernel import KernelEvent, KernelModule, bus
    from gpuvet.captures.kernel_places import NO_BUS

    pci = {e.module for e in out.events if e.kind == KIND}  # the PCI core's line names the BAR's size: kept
    said: dict[str, int] = {}  # module -> its event's index
    for i in holding(lines, ("M @ 0x",), marks):
        if (m := _NVRM_BAR.search(lines[i].text)) is None or (module := bus(m.group(3))) in pci:
            continue
        out.claimed.add(lines[i].no)
        if module in said:  # the driver tried again (a probe per boot stage): the same fault, counted
            seen = out.events[said[module]]
            out.events[said[module]] = replace(seen, count=seen.count + 1)
        else:
            said[module] = len(out.events)
            out.events.append(KernelEvent(NVRM_KIND, module, lines[i].text.strip()[:240], lines[i].no))
    causes = set(said) | pci
    if not causes:
        return out
    out.events = [e for e in out.events if not (e.kind in _ECHOES and (e.module in causes or e.module == NO_BUS
                                                                       or e.kind == "no_adapter"))]
    known = {m.module for m in out.modules}
    out.modules += [KernelModule(module, "NVIDIA") for module in sorted(set(said) - known)]
    if any(_GUEST.search(lines[i].text) for i in holding(lines, ("Hypervisor", "paravirtualized", "DMI: "), marks)):
        out.events = [replace(e, kind=GUEST_KIND) if e.kind in (KIND, NVRM_KIND) else e for e in out.events]
    return out


def _failed(lines: list[Line], marks: Marks | None, named: set[int]) -> dict[tuple[str, str], Line]:
    """The first failure line of each memory BAR the lines leave unassigned (a later 'assigned' line takes it
    back), by (function, BAR number); every wording holds 'assign', 'no space for' or "can't claim"."""
    failed: dict[tuple[str, str], Line] = {}
    for i in holding(lines, ("assign", "no space for", "can't claim"), marks):
        if i not in named and (bar := _bar(lines[i].text)) is not None:
            fn, number, assigned = bar
            if assigned:
                failed.pop((fn, number), None)
            else:
                failed.setdefault((fn, number), lines[i])
    return failed


def _bar(text: str) -> tuple[str, str, bool] | None:
    """(function, BAR number, assigned) of a memory BAR's assignment line; None for any other line (an I/O
    BAR a GPU does not need, the ROM)."""
    if (m := _NEW.search(text)) is not None and m.group(3) == "mem":
        return m.group(1).lower(), m.group(2), m.group(4) == "assigned"
    if (m := _OLD.search(text)) is not None and m.group(4) == "mem":
        return m.group(1).lower(), m.group(2), m.group(3) == "assigned"
    if (m := _CLAIM.search(text)) is not None and m.group(3) == "mem":
        return m.group(1).lower(), m.group(2), False
    return None
