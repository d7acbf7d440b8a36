"""FX68F (issue 46): nvidia-smi's lost handle of a GPU the driver never started. 'Unable to determine the device
handle for GPU …: Unknown Error' alone reads as a module lost from the bus; it is not one where the same text shows
the module was never identified ('Model: Unknown' in /proc/driver/nvidia/gpus/<bus>/information, the driver's own
page of a module it probed) or that the node is a virtual machine guest the GPU is passed through to (Kata's or
QEMU's words, virtio devices, the kernel's 'Hypervisor detected', or the GPU on the root bus, 0000:00:08.0, where
a VMM's PCI host bridge puts a passed-through device; a bare-metal discrete GPU sits behind a root port, bus 01 or
later). In a guest the driver could not start the passed-through GPU (its ROM, its BARs in the guest's MMIO
window, a consumer card hiding from a hypervisor on an old driver): GUEST_KIND, the passthrough's fix. Without a
guest, 'Model: Unknown' is a module the driver lists but never initialised (NOT_STARTED_KIND)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelEvent, KernelParse

GUEST_KIND = "guest_gpu_not_started"
NOT_STARTED_KIND = "smi_handle_not_found"
_LOST = "smi_no_handle"
_INFO = re.compile(r"/proc/driver/nvidia/gpus/([0-9a-fA-F]{4,8})\\?:([0-9a-fA-F]{2})\\?:([0-9a-fA-F]{2})\.([0-7])"
                   r"/information")
_MODEL_UNKNOWN = re.compile(r"^\s*Model:\s+Unknown\s*$")
_FIELD = re.compile(r"^\s*[A-Z][A-Za-z0-9 ]{1,24}:\s")  # the information page's other fields (IRQ, GPU UUID, …)
_GUEST = re.compile(r"\bkata[- ](?:containers?|runtime|agent|shim)\b|\bQEMU\b|\bvirtio\b|Hypervisor detected|"
                    r"\bKVM virtual machine\b|Cloud Hypervisor|\bFirecracker\b", re.I)
_GUEST_WORDS = ("ata", "QEMU", "irtio", "ypervisor", "KVM", "Firecracker")
_ROOT_BUS = re.compile(r"^(?:[0-9A-F]{4,8}:)?00:(?!00)[0-9A-F]{2}\.[0-7]$")
_PAGE = 12  # lines: the information page's fields after its Model line


def started(lines: Sequence[Line], out: KernelParse) -> KernelParse:
    """The lost handles of modules never started (in a guest, or never identified) relabelled; the information
    page's lines read."""
    if not any(e.kind == _LOST for e in out.events):
        return out
    unknown = _unidentified(lines, out)
    guest = any(_GUEST.search(ln.text) for ln in lines if any(w in ln.text for w in _GUEST_WORDS))
    events: list[KernelEvent] = []
    for e in out.events:
        if e.kind == _LOST and (guest or _ROOT_BUS.match(e.module)):
            e = replace(e, kind=GUEST_KIND)
        elif e.kind == _LOST and e.module in unknown:
            e = replace(e, kind=NOT_STARTED_KIND)
        events.append(e)
    if unknown:
        out.notes.append("/proc/driver/nvidia/gpus: 'Model: Unknown' for " + ", ".join(sorted(unknown)) +
                         ": the driver probed the module but never identified it")
    return replace(out, events=events)


def _unidentified(lines: Sequence[Line], out: KernelParse) -> set[str]:
    """The bus ids whose information page says 'Model: Unknown' (the page's lines claimed)."""
    found: set[str] = set()
    for i, ln in enumerate(lines):
        if "/information" not in ln.text or (m := _INFO.search(ln.text)) is None:
            continue
        nxt = next((j for j in range(i + 1, min(i + 3, len(lines))) if lines[j].text.strip()), None)
        if nxt is None or not _MODEL_UNKNOWN.match(lines[nxt].text):
            continue
        found.add(f"{m.group(1).upper()[-4:].rjust(4, '0')}:{m.group(2).upper()}:{m.group(3).upper()}.{m.group(4)}")
        out.claimed |= {ln.no, lines[nxt].no}
        for j in range(nxt + 1, min(nxt + 1 + _PAGE, len(lines))):
            if not _FIELD.match(lines[j].text):
                break
            out.claimed.add(lines[j].no)
    return found
