"""Issue 46: nouveau's faults of a channel, in its own words (drivers/gpu/drm/nouveau/nvkm/engine/fifo and gr,
subdev/fault, subdev/fb). nvkm prints them under the module's prefix and the unit's name ('nouveau 0000:01:00.0:
fifo: DMA_PUSHER - ch 4 [sddm-greeter[429]] … (err: INVALID_CMD)'): the channel and the process that owns it
named, at error level but in words kernel_unknown's failure words miss ('err: INVALID_CMD', 'PBDMA0: 00800000
[PBENTRY]', 'ILLEGAL_MTHD', 'TRAP'). They are the same channel errors the NVIDIA driver reports as Xids 13, 31 and
32: the pushbuffer, a method or a shader of one process' channel went wrong, and nouveau skipped the command or
tore the channel down; most often the application's or the user-space driver's (Mesa's nouveau), not the
module's (warn). Two kinds (kernel_messages.yaml): an MMU fault (Xid 31's kind: module_page_fault) and any other
channel error. The module's own failures (an init that failed) stay kernel_failed's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

WORDS = ("nouveau",)  # every line read holds it
MMU_FAULT = "nouveau_mmu_fault"
CHANNEL_ERROR = "nouveau_channel_error"
KINDS = (MMU_FAULT, CHANNEL_ERROR)
_HEAD = 400  # characters of a line searched
# the module's prefix and an engine unit of nvkm ('fifo:', 'gr:', 'fault:', 'fb:', 'mmu:'; newer nvkm names the
# channel after the unit: 'fifo:000000:0004:0004:[Xorg[1000]]')
_LINE = lazy(r"\bnouveau (?P<bus>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): "
             r"(?:fifo|gr|fault|fb|mmu|ce\d*|sec2?|msvld|mspdec|msppp|nvdec\d*|nvenc\d*)[:\[]")
# fifo/gk104.c, tu102 fault: 'fault 01 [VIRT_WRITE] at 0000000000400000 engine 00 [GR] … on channel 2 […]';
# fb/nv50.c: 'trapped read at 0x…'; a fault the unit dropped
_MMU = lazy(r"\bfault \d?:? ?[0-9a-fA-F]{2} \[\w+\] at [0-9a-fA-F]+|\btrapped (?:read|write) at\b|"
            r"\bDROPPED_MMU_FAULT\b|\bMMU_FAULT\b")
# fifo/nv04.c, nv40.c: DMA_PUSHER, CACHE_ERROR; gk104 and later: PBDMA%d's interrupt, SCHED_ERROR, BIND_ERROR,
# CHSW_ERROR, a channel errored and torn down ('errored - disabling channel', 'rc scheduled', 'killed');
# gr/nv50.c, gf100.c: DATA_ERROR, ILLEGAL_MTHD, ILLEGAL_CLASS, TRAP, an SM trap ('GPC0/TPC0/MP trap'), a
# ctxsw timeout
_CHANNEL = lazy(r"\bDMA_PUSHER\b|\bCACHE_ERROR\b|\bPBDMA\d+: [0-9a-fA-F]{8} \[|\b(?:SCHED|BIND|CHSW|"
                r"DATA|PIO|LB)_ERROR\b|\bILLEGAL_(?:MTHD|CLASS|NOTIFY)\b|\bTRAP(?:_\w+)?\b|\bMP trap\b|"
                r"\berrored - disabling channel\b|\brc scheduled\b|\bchannel \d+: killed\b|"
                r"\bCTXSW_TIMEOUT\b|\(err: [A-Z_]+\)")
SHOWN = 3  # lines quoted in an event


def kind_of(text: str) -> str | None:
    """The kind a nouveau engine line says (an MMU fault before a channel error), or None."""
    head = text[:_HEAD]
    if _MMU.search(head) is not None:
        return MMU_FAULT
    return CHANNEL_ERROR if _CHANNEL.search(head) is not None else None


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one event per kind and module of nouveau's channel faults (the first line quoted, the lines
    counted), those lines claimed."""
    from gpuvet.captures.kernel import KernelEvent, bus

    found: dict[tuple[str, str], list[Line]] = {}
    for i in holding(lines, WORDS, marks):
        ln = lines[i]
        if (m := _LINE.search(ln.text[:_HEAD])) is None or (kind := kind_of(ln.text)) is None:
            continue
        out.claimed.add(ln.no)
        found.setdefault((kind, bus(m.group("bus"))), []).append(ln)
    for (kind, module), said in found.items():
        out.events.append(KernelEvent(kind, module, said[0].text.strip()[:240], said[0].no, count=len(said),
                                      driver="nouveau", shown=tuple(ln.text.strip()[:240] for ln in said[:SHOWN])))
    return out
