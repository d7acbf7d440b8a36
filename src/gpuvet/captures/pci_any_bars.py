"""Issue 46 (R10A): the PCI core's BAR assignment failures (drivers/pci/setup-res.c, setup-bus.c) on a device the
node needs beyond a GPU's own memory BARs (pci_enum reads those): a NIC's (class 0x02: Ethernet, InfiniBand)
memory BAR 0-5 left unassigned is the same fact as a GPU's (pci_bar_unassigned: its driver cannot map it); an
SR-IOV VF BAR (BAR 7-12, the kernel's numbering of the IOV resources: 'BAR 7: no space for [mem size 0x01000000
64bit pref]', 'BAR 7: failed to assign', 6.8 and later 'BAR 7 [mem size …]: can't assign; no space') of a NIC
or GPU function left unassigned is the device's virtual functions that cannot be enabled (pci_vf_bar_unassigned,
warn): the physical function works. A later 'assigned' line of the same BAR takes the failure back (pci=realloc).
A function of another class (a SATA or USB controller, a bridge) is not judged."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.pci_enum import KIND
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

VF_KIND = "pci_vf_bar_unassigned"  # kernel_messages.yaml gives its cause
KINDS = (VF_KIND,)
_HEAD = 300
_FN = r"pci ([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): "
# the function line of a network (0x02xx) or display/accelerator (0x03xx, 0x12xx) function, any vendor
_FUNCTION = re.compile(_FN + r"\[([0-9a-fA-F]{4}):[0-9a-fA-F]{4}\] type [0-9a-fA-F]{2} class 0x(02|03|12)[0-9a-fA-F]{4}\b")
_NEW = re.compile(_FN + r"BAR (\d{1,2}) \[mem[^\]]*\]: (can't assign|failed to assign|assigned)\b")
_OLD = re.compile(_FN + r"BAR (\d{1,2}): (no space for|failed to assign|assigned) \[mem\b")
_VF_BARS = frozenset(str(n) for n in range(7, 13))  # PCI_IOV_RESOURCES: BAR 7 is VF BAR0 … BAR 12 is VF BAR5
_PF_BARS = frozenset(str(n) for n in range(6))


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one event per NIC function whose memory BAR stayed unassigned, and one per NIC or GPU function
    whose SR-IOV VF BAR did (the first failure line as evidence); nothing where no such function line is read."""
    from gpuvet.captures.kernel import KernelEvent, bus

    functions: dict[str, str] = {}
    for i in holding(lines, (" class 0x02", " class 0x03", " class 0x12"), marks):
        if (f := _FUNCTION.search(lines[i].text[:_HEAD])) is not None:
            functions[f.group(1).lower()] = f.group(3)
    if not functions:
        return out
    failed: dict[tuple[str, str], Line] = {}
    for i in holding(lines, ("assign", "no space for"), marks):
        text = lines[i].text[:_HEAD]
        if (m := _NEW.search(text) or _OLD.search(text)) is None or (fn := m.group(1).lower()) not in functions:
            continue
        number, word = m.group(2), m.group(3)
        if number not in _VF_BARS and (number not in _PF_BARS or functions[fn] != "02"):
            continue  # a GPU's own BARs are pci_enum's; the ROM (6) no driver needs
        if word == "assigned":
            failed.pop((fn, number), None)
        else:
            failed.setdefault((fn, number), lines[i])
    said = {(e.module, e.kind) for e in out.events}
    for (fn, number), ln in sorted(failed.items(), key=lambda kv: kv[1].no):
        kind = VF_KIND if number in _VF_BARS else KIND
        out.claimed.add(ln.no)
        if (bus(fn), kind) not in said:
            said.add((bus(fn), kind))
            out.events.append(KernelEvent(kind, bus(fn), ln.text.strip()[:240], ln.no))
    return out
