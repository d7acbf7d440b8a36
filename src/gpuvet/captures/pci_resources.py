"""Issue 46 (PCR): the PCI core's lines about a GPU beyond its BARs' assignment (pci_enum reads those). A function
the kernel reset or resumed that never answered again ('not ready 1023ms after resume; giving up', pci.c's
pci_dev_wait; probe.c's 'not ready after 60000ms; giving up'), and a hot-plug slot, a DPC-capable port or a link
the kernel's quirk could not retrain above a GPU ('pciehp: Slot(1): Link Down', 'Card not present', 'DPC:
containment event', quirks.c's 'retraining failed'): the module left the bus. A port's line is placed on the GPU
below it by the port's 'PCI bridge to [bus 01]' enumeration line; a port no such line ties to a GPU is not judged.
A GPU's memory BAR its driver could not reserve ('vfio-pci 0000:01:00.0: BAR 1: can't reserve [mem …]'): another
driver holds that window, most often the host's boot framebuffer (efifb, simplefb, vesafb) on a GPU passed through.

And the healthy lines of the same class that a GPU's boot prints, read so that a log of only them is read, not
refused: x86's 'resource sanity check: requesting [mem …], which spans more than PCI Bus …' with its 'caller
_nv000908rm+0x…/0x… [nvidia] mapping multiple BARs' (the NVIDIA driver mapping the legacy VGA window: noise, not
a fault), x86/PAT's memory-type notes, a ROM with 'No more image', a reset's 'not ready …; waiting' / 'ready …
after', a slot's 'Link Up' / 'Card present', a bridge window's 'add_size', an I/O BAR, a ROM or a bridge window
the kernel could not place or claim (a GPU needs none of them), the BARs' 'assigned' and 'releasing' lines (a
resize) and the driver's 'enabling device (0000 -> 0003)'."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.kernel_phrases import KernelMessage
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.pci_enum import AMD_SMALL_KIND, KIND, SMALL_KIND
from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key as bus

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

NOT_READY = "pci_not_ready"  # kernel_messages.yaml gives their causes
LEFT_SLOT = "pci_slot_link_down"
CONTAINED = "pci_dpc_contained"
NOT_RETRAINED = "pci_link_retrain_failed"
HELD = "pci_bar_held"
KINDS = (NOT_READY, LEFT_SLOT, CONTAINED, NOT_RETRAINED, HELD)
_HEAD = 400  # characters of a line searched
_BDF = r"(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_GIVING_UP = re.compile(
    r"(?:^|[\s\]:])(?:pci|nvidia|amdgpu|vfio-pci|i915|xe) (" + _BDF + r"): "
    r"not ready (?:\d+ms after [\w ]+|after \d+ms); giving up"
)
# a driver that could not reserve a memory BAR of the function (pci.c's __pci_request_region: 'BAR 1: can't reserve
# [mem …]', 6.8 and later 'BAR 1 [mem …]: can't reserve'): another driver holds the window (the boot framebuffer)
_RESERVE = re.compile(
    r"(?:^|[\s\]:])(?:pci|nvidia|amdgpu|vfio-pci) (" + _BDF + r"): "
    r"BAR \d(?:: can't reserve \[mem\b| \[mem [^\]]*\]: can't reserve\b)"
)
# a port's line: 'pcieport 0000:00:01.1: ', or before 4.19 its service's own device ('pciehp 0000:00:1c.0:pcie004: ',
# 'dpc 0000:00:1c.0:pcie008: ')
_PORT = r"(?:^|[\s\]:])(?:pcieport|pci|pciehp|dpc) (" + _BDF + r")(?::pcie\d{2,3})?: "
_LINK_DOWN = re.compile(
    _PORT + r"(?:pciehp: )?(?:Slot\(\S{1,12}\): (?:Link Down|Card not present)\b|Card not present on Slot\()"
)
_DPC = re.compile(_PORT + r"DPC:? containment event\b")
_RETRAIN_FAILED = re.compile(_PORT + r"retraining failed\b")
_BRIDGE = re.compile(_PORT + r"PCI bridge to \[bus ([0-9a-fA-F]{2})(?:-([0-9a-fA-F]{2}))?\]")
# the healthy lines of the class (the module docstring): read, no event
_BENIGN = re.compile(
    r"\bresource sanity check: requesting \[mem |\bcaller \S+ \[(?:nvidia|amdgpu)\w*\] mapping multiple BARs|"
    r"\bx86/PAT: (?:\S+ conflicting memory types|reserve_memtype failed|\S+ map pfn expected mapping type)|"
    r"\bNo more image in the PCI ROM\b|\bnot ready \d+ms after [\w ]+; waiting|: ready \d+ms after |"
    r"pciehp: Slot\(\S{1,12}\): (?:Link Up|Card present)\b|\bbridge window \[[^\]]*\] to \[bus [^\]]*\] add_size|"
    r"\bBAR \d+ \[io [^\]]*\]: (?:can't assign|failed to assign)|\bBAR \d+: (?:no space for|failed to assign) \[io |"
    r"\bbridge window \[(?:io|mem)[^\]]*\]: (?:can't assign|failed to assign|assigned)|"
    r"\bBAR \d+ \[(?:mem|io)[^\]]*\]: assigned|\bBAR \d+: assigned \[|"
    r"\bROM \[[^\]]*\]: (?:can't assign|failed to assign|can't claim|assigned)|\bcan't claim BAR 6 |"
    r"\bBAR 6: (?:no space for|failed to assign|assigned) |\bBAR \d+: releasing \[|\bBAR \d+ \[[^\]]*\]: releasing\b|"
    r"(?:^|[\s\]:`'\"])(?:nvidia|amdgpu|vfio-pci) " + _BDF + r": enabling device \("
)
_WORDS = (
    "not ready",
    "Slot(",
    "containment event",
    "retraining failed",
    "PCI bridge to",
    "sanity check",
    "mapping multiple",
    "x86/PAT",
    "No more image",
    ": ready ",
    "add_size",
    "assign",
    "no space for",
    "can't claim",
    "enabling device (",
    "can't reserve",
    "releasing",
)
# the lines of the class a poster quotes in a sentence (quoted.py reads them where nothing else was read): a function
# that never came back, a memory BAR with no space, a BAR another driver holds, each on the bus id it prints
SAID = (
    KernelMessage(
        NOT_READY,
        re.compile(
            r"\b(?:pci|nvidia|amdgpu|vfio-pci) " + _BDF + r": not ready (?:\d+ms after "
            r"[\w ]+|after \d+ms); giving up"
        ),
        "pci",
    ),
    KernelMessage(
        KIND,
        re.compile(
            r"\bpci " + _BDF + r": BAR [0-5](?: \[mem [^\]]*\]: can't assign; no space|: no "
            r"space for \[mem )"
        ),
        "pci",
    ),
    KernelMessage(
        HELD,
        re.compile(
            r"\b(?:pci|nvidia|amdgpu|vfio-pci) " + _BDF + r": BAR [0-5](?:: can't reserve "
            r"\[mem\b| \[mem [^\]]*\]: can't reserve\b)"
        ),
        "pci",
    ),
)
# R7B: a bridge's 64-bit prefetchable window the PCI core could not place (setup-bus.c/setup-res.c: 6.8 and later
# 'bridge window [mem size 0xc00000000 64bit pref]: can't assign; no space' / 'failed to assign', before them
# 'BAR 15: no space for [mem size …]' / 'BAR 15: failed to assign [mem size …]'), of a GPU's size: the large BAR
# of the device below it (a GPU's VRAM aperture) gets no window; a later 'assigned' of that bridge's window (the
# kernel's retry with the windows released) makes it the healthy boot's notice
_WINDOW_FAILED = re.compile(
    r"(?:^|[\s\]:])(?:pci|pcieport) (" + _BDF + r"): (?:bridge window \[mem (?:size )?(0x[0-9a-fA-F]+)"
    r"(?:-(0x[0-9a-fA-F]+))?[^\]]*64bit pref\]: (?:can't assign|failed to assign)|BAR 15: (?:no space for|failed "
    r"to assign) \[mem (?:size )?(0x[0-9a-fA-F]+)(?:-(0x[0-9a-fA-F]+))?[^\]]*64bit pref\])"
)
_WINDOW_ASSIGNED = re.compile(
    r"(?:^|[\s\]:])(?:pci|pcieport) (" + _BDF + r"): (?:bridge window \[mem 0x[0-9a-fA-F]+-0x[0-9a-fA-F]+ 64bit "
    r"pref\]: assigned|BAR 15: assigned \[mem 0x[0-9a-fA-F]+-0x[0-9a-fA-F]+ 64bit pref\])"
)
_GPU_WINDOW = 256 << 20  # bytes: a window this large is a GPU's or an accelerator's aperture (a NIC's is smaller)
_NOTES = (SMALL_KIND, AMD_SMALL_KIND)  # pci_enum's info notes of a small BAR
_GPU_WORD = re.compile(r"\[(?:nvidia|amdgpu)\w*\]|(?:^|[\s\]:])(?:nvidia|amdgpu) " + _BDF + ": ")


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one event per GPU whose function the kernel gave up on or whose port lost its link, and the
    class's healthy lines claimed (counted as driver lines where they name a GPU driver: the log speaks of it)."""
    from gpuvet.captures.kernel import KernelEvent

    found = holding(lines, _WORDS, marks)
    if not found:
        return out
    gpus = {m.module for m in out.modules}
    below = _ports(lines, found, gpus)
    # a module another reader judged already: its fault is that one (a small BAR's note is no judgment: replaced)
    judged = {e.module for e in out.events if e.kind not in _NOTES} | {x.bus_id for x in out.xids}
    said: set[tuple[str, str]] = set()
    unplaced = _windows(lines, found, below)
    for i in found:
        ln = lines[i]
        head = ln.text[:_HEAD]
        kind, module = (KIND, unplaced[i]) if i in unplaced else _event(head, gpus, below)
        if kind is not None and module is not None:
            out.claimed.add(ln.no)
            if module not in judged and (kind, module) not in said:
                said.add((kind, module))
                out.events.append(KernelEvent(kind, module, ln.text.strip()[:240], ln.no))
        elif _BENIGN.search(head):
            out.claimed.add(ln.no)
            out.nvrm_lines += _GPU_WORD.search(head) is not None
    out.events = [e for e in out.events if not (e.kind in _NOTES and any(e.module == m for _, m in said))]
    return out


def _event(head: str, gpus: set[str], below: dict[str, str]) -> tuple[str | None, str | None]:
    """(kind, module) of a line that says a GPU left the bus; (None, None) for any other line."""
    if (m := _GIVING_UP.search(head)) is not None:
        fn = bus(m.group(1))
        named = any(w in m.group(0) for w in ("nvidia ", "amdgpu ", "i915 ", "xe "))
        return (NOT_READY, fn) if fn in gpus or named else (None, None)
    if (m := _RESERVE.search(head)) is not None:
        fn = bus(m.group(1))
        named = any(w in m.group(0) for w in ("nvidia ", "amdgpu ")) or _aperture(head, m)
        return (HELD, fn) if fn in gpus or named else (None, None)
    for kind, pat in ((LEFT_SLOT, _LINK_DOWN), (CONTAINED, _DPC), (NOT_RETRAINED, _RETRAIN_FAILED)):
        if (m := pat.search(head)) is not None:
            return kind, below.get(bus(m.group(1)))
    return None, None


# AGX2: a window a boot framebuffer can hold: a prefetchable memory BAR of 64 MiB or more (a GPU's VRAM aperture;
# a NIC's or an NVMe drive's BARs are smaller or not prefetchable)
_WINDOW = re.compile(r"\[mem 0x([0-9a-f]+)-0x([0-9a-f]+)(?: 64bit)? pref\]")
_FRAMEBUFFER_MIN = 64 << 20


def _aperture(head: str, m: re.Match[str]) -> bool:
    """vfio-pci's BAR another driver holds is a passed-through GPU's where the BAR is a large prefetchable window."""
    w = _WINDOW.search(head, m.start()) if m.group(0).lstrip(" ]:").startswith("vfio-pci ") else None
    return w is not None and int(w.group(2), 16) - int(w.group(1), 16) + 1 >= _FRAMEBUFFER_MIN


def _ports(lines: list[Line], found: list[int], gpus: set[str]) -> dict[str, str]:
    """Each port whose bridge line's bus range holds a GPU function, to that GPU (the first, by bus id)."""
    ports: dict[str, str] = {}
    for i in found:
        if (m := _BRIDGE.search(lines[i].text[:_HEAD])) is None:
            continue
        first, last = int(m.group(2), 16), int(m.group(3) or m.group(2), 16)
        held = sorted(g for g in gpus if g.count(":") == 2 and first <= int(g.split(":")[1], 16) <= last)
        if held:
            ports[bus(m.group(1))] = held[0]
    return ports


def _windows(lines: list[Line], found: list[int], below: dict[str, str]) -> dict[int, str]:
    """The lines of a bridge's large 64-bit prefetchable window the kernel could not place and never assigned
    later, each to the GPU below the bridge (by its 'PCI bridge to' line) or, where none is named, the bridge."""
    failed: dict[str, list[int]] = {}
    for i in found:
        head = lines[i].text[:_HEAD]
        if "assign" not in head and "no space" not in head:
            continue
        if (m := _WINDOW_FAILED.search(head)) is not None and _size(m) >= _GPU_WINDOW:
            failed.setdefault(bus(m.group(1)), []).append(i)
        elif (m := _WINDOW_ASSIGNED.search(head)) is not None:
            failed.pop(bus(m.group(1)), None)  # placed on the retry: the earlier failure was the boot's notice
    return {i: below.get(port, port) for port, at in failed.items() for i in at[:1]}


def _size(m: re.Match[str]) -> int:
    """The window's size: 'size 0x…' as printed, or a range's end less its start plus one."""
    first, last = (m.group(2), m.group(3)) if m.group(2) else (m.group(4), m.group(5))
    return int(last, 16) - int(first, 16) + 1 if last else int(first, 16)
