"""FreeBSD's drm-kmod port names a GPU by its driver instance (``drmn0:``), never by bus id: the lines that
place it are FreeBSD's own. ``drmn0: <drmn> on vgapci0`` ties drmn0 to the PCI function vgapci0, and pciconf -l
(``vgapci0@pci0:1:0:0:``, decimal domain:bus:slot:function) places vgapci0 on the bus. The kernel's probe line
(``vgapci0: <VGA-compatible display> … on pci1``) names the PCI bus unit, not always the bus number: not read."""

from __future__ import annotations

import re

from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key

_DRMN_ON = re.compile(r"\b(drmn\d+): <[^>]*> on (vgapci\d+)")
_VGAPCI_AT = re.compile(r"\b(vgapci\d+)@pci(\d+):(\d+):(\d+):(\d+)\b")
DRMN_NAME = re.compile(r"\b(drmn\d+): ")
_PLACED = re.compile(r"[0-9A-F]{4,8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-7]")


def devices(lines: list[Line], worded: list[tuple[int, Line]]) -> dict[str, str]:
    """Each drm-kmod device the log names (drmn0) -> the bus id pciconf -l gives its vgapci parent, or its
    own name where no line places it. ``worded``: the lines holding a driver's word (kernel._worded)."""
    names = list(dict.fromkeys(n.group(1) for _, ln in worded if "drmn" in ln.text
                               and (n := DRMN_NAME.search(ln.text)) is not None))
    if not names:
        return {}
    parent = {m.group(1): m.group(2) for _, ln in worded if "drmn" in ln.text and (m := _DRMN_ON.search(ln.text))}
    at = {m.group(1): bus_key(f"{int(m.group(2)):04x}:{int(m.group(3)):02x}:{int(m.group(4)):02x}.{int(m.group(5))}")
          for ln in lines if "vgapci" in ln.text and (m := _VGAPCI_AT.search(ln.text)) is not None}
    return {d: at.get(parent.get(d, ""), d) for d in names}


def placed(text: str, found: dict[str, str]) -> str | None:
    """The bus id of the drm-kmod device a message line names (or of the log's only device), None where no
    line places it."""
    named = DRMN_NAME.search(text)
    device = named.group(1) if named else next(iter(found)) if len(found) == 1 else None
    where = found.get(device or "", "")
    return where if _PLACED.fullmatch(where) else None


def unplaced(said: list[str], found: dict[str, str]) -> list[str]:
    """The devices messages came from (the lines ``said``; the log's only device when they name none) whose
    bus id no line gives: listed by the driver's name for them."""
    named = {n.group(1) for text in said if (n := DRMN_NAME.search(text)) is not None}
    named = named or (set(found) if len(found) == 1 else set())
    return [d for d in found if d in named and not _PLACED.fullmatch(found[d])]
