"""NCCL's topology XML (the file NCCL_TOPO_DUMP_FILE names): ``<system>``, a ``<cpu numaid=…>`` per NUMA node,
``<pci busid=…>`` bridges and devices under it, a ``<gpu dev=… sm=…>`` inside its PCI device with one ``<nvlink
target=… count=…>`` per peer, and ``<nic>``/``<net>`` elements. It is NCCL's view of the node, not a reading of
its state: the GPUs are listed (bus id, PCI id, NUMA node) and the NVLinks, NICs and NUMA nodes said as
printed, never judged (an NVLink count per pair is the board's design, a DGX-1's cube-mesh mixes 1 and 2).
Pastes are often cut mid-element: what stands before the cut is read, the cut said."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.records import SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import MAX_MODULES, Line
from gpuvet.node.catalog import pci_product

KIND = "NCCL topology XML"
MARKERS = ("<system version=", "<gpu dev=", "<nvlink target=")
_SYSTEM = re.compile(r"^\s*<system\s+version=\"\d+\"\s*>")
_CPU = re.compile(r"^\s*<cpu\s[^>]*?\bnumaid=\"(?P<numa>-?\d{1,4})\"")
_PCI = re.compile(r"^\s*<pci\s[^>]*?\bbusid=\"(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\"")
_GPU = re.compile(r"^\s*<gpu\s[^>]*?\bdev=\"(?P<dev>\d{1,4})\"")
_NVLINK = re.compile(r"^\s*<nvlink\s[^>]*?\btarget=\"(?P<target>[0-9a-fA-F:.]{7,16})\"[^>]*?\bcount=\"(?P<count>\d{1,3})\"")
_NIC = re.compile(r"^\s*<net\b(?:[^>]*?\bname=\"(?P<name>[^\"]{1,40})\")?")  # a <nic>'s ports
_TAG = re.compile(r"^\s*</?(?:system|cpu|pci|gpu|nvlink|nic|net|c2c)\b")
_ATTR = re.compile(r"\b(vendor|device|link_speed|link_width)=\"([^\"]{1,20})\"")


@dataclass
class _Gpu:
    bus: str
    dev: str
    numa: str | None
    pci_id: str
    links: list[tuple[str, int]] = field(default_factory=list)


def parse(lines: list[Line]) -> SmiText:
    """The GPUs of NCCL's topology dump as a module list, what it names beside them in notes (none without
    its ``<system>`` root)."""
    out = SmiText()
    if not any("<system" in ln.text and _SYSTEM.match(ln.text) for ln in lines):
        return out
    gpus, numas, nics = _walk(lines, out)
    for g in gpus[:MAX_MODULES]:
        known = pci_product(g.pci_id) if g.pci_id else None
        product = known.product if known is not None else (f"PCI device {g.pci_id}" if g.pci_id else "")
        out.modules.append(SmiTextModule(g.bus.upper(), product, {"Product Name": product} if product else {}))
    out.notes.append(_said(gpus, numas, nics))
    return out


def _walk(lines: list[Line], out: SmiText) -> tuple[list[_Gpu], list[str], list[str]]:
    """The GPUs (each under the PCI device that holds it), the NUMA nodes and the NICs, lines claimed."""
    gpus: list[_Gpu] = []
    numas: list[str] = []
    nics: list[str] = []
    numa: str | None = None
    pci: tuple[str, str] | None = None  # the innermost PCI device opened: bus id, vendor:device
    for ln in lines:
        text = ln.text
        if "<" not in text or not _TAG.match(text):
            continue
        out.claimed.add(ln.no)
        if (c := _CPU.match(text)) is not None:
            numa = c.group("numa")
            numas.append(numa)
        elif (p := _PCI.match(text)) is not None:
            attrs = dict(_ATTR.findall(text))
            vendor, device = attrs.get("vendor", "")[-4:], attrs.get("device", "")[-4:]
            pci = (p.group("bus"), f"{vendor}:{device}".lower() if vendor and device else "")
        elif (g := _GPU.match(text)) is not None and pci is not None:
            gpus.append(_Gpu(pci[0], g.group("dev"), numa, pci[1]))
        elif (n := _NVLINK.match(text)) is not None and gpus:
            gpus[-1].links.append((n.group("target"), int(n.group("count"))))
        elif (nic := _NIC.match(text)) is not None:
            nics.append(nic.group("name") or (pci[0] if pci else "unnamed"))
    return gpus, list(dict.fromkeys(numas)), list(dict.fromkeys(nics))


def _said(gpus: list[_Gpu], numas: list[str], nics: list[str]) -> str:
    """What the dump names, as printed: each GPU with its NUMA node and NVLink peers, the NICs, the NUMA nodes."""
    parts = []
    for g in gpus[:MAX_MODULES]:
        links = ", ".join(f"{t} x{c}" for t, c in g.links) or "none listed"
        parts.append(f"GPU {g.dev} at {g.bus} (NUMA {g.numa if g.numa is not None else 'not given'}; NVLinks to {links})")
    gpus_said = "; ".join(parts) if parts else "no GPU element before the end of the excerpt"
    return (f"{KIND} (NCCL_TOPO_DUMP_FILE): NCCL's view of the node, not its state (not judged): {gpus_said}; "
            f"NUMA node(s) {', '.join(numas) or 'none named'}; NIC(s) {', '.join(nics) or 'none in the excerpt'}")
