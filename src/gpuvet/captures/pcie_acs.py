"""PCIe Access Control Services as ``lspci -vvv`` prints them (pciutils ls-ecaps.c, cap_acs: ``ACSCap:`` and
``ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-``), whole or as
``lspci -vvv | grep ACSCtl`` leaves them (issue 46, R6A).

ACS on a bridge (a root port, a switch's downstream port) sends the peer-to-peer requests of the devices below it up
to the root complex (Request/Completion Redirect), or checks their source there (Source Validation): GPUDirect P2P
between GPUs and GPUDirect RDMA between a GPU and a NIC slow down or, with the IOMMU on, fail and hang. NVIDIA's NCCL
troubleshooting guide and AMD's ROCm guides say to disable it for those (NCCL's guide reads any ``SrcValid+`` as ACS
on). Judged as an engineer reads it: a switch port (or a bridge whose type is not shown) with a control bit on is
a warning, with the bits it sets; a port lspci names a Root Port a note (Linux enables ACS on every root port whenever
the IOMMU is on, and P2P between root ports crosses the root complex anyway: the IOMMU's mode matters); ACSCtl all
'-' is healthy; an endpoint's ACS (a multi-function card's own) is not a path between devices and is left alone. A
grep'd paste names no device: its lines are the bridges' (ACS is a port's capability; the few multi-function
endpoints that have it are said to be possible). A host that passes devices to VMs needs ACS on for isolation, so the
action says so."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

MARKS = ("ACSCtl:", "ACSCap:")
REDIRECT = "pcie_acs_redirect"  # ReqRedir+, CmpltRedir+ or EgressCtrl+: peer requests sent up to the root complex
SOURCE = "pcie_acs_source_valid"  # SrcValid+ (or TransBlk+) alone: ACS on, no redirect bit
ROOT = "pcie_acs_root_port"  # on a port lspci names a Root Port: the kernel sets it whenever the IOMMU is on
_BITS = re.compile(r"\b(SrcValid|TransBlk|ReqRedir|CmpltRedir|UpstreamFwd|EgressCtrl|DirectTrans)([+-])")
_CTL = re.compile(r"^\s*(?:[>|]\s*)?ACS(Ctl|Cap):\s")
# lspci's device line: '0000:40:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Starship/Matisse GPP Bridge'
_DEVICE = re.compile(r"^(?P<bus>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) (?P<cls>[^:]{3,60}):")
_PORT = re.compile(r"Express \(v\d\) (Root Port|Downstream Port|Upstream Port|Endpoint|Legacy Endpoint)")
_REDIRECTS = ("ReqRedir", "CmpltRedir", "EgressCtrl")
_ON = ("SrcValid", "TransBlk", "UpstreamFwd", *_REDIRECTS)  # DirectTrans+ lets translated P2P go direct: not judged
_TEXT = 240


@dataclass
class _Walk:
    bus: str | None = None
    bridge: bool | None = None  # None: no device line above (a grep'd paste)
    root: bool = False  # lspci's Express line names it a Root Port
    on: list[tuple[Line, str | None, tuple[str, ...]]] = field(default_factory=list)
    off: int = 0
    endpoints: int = 0
    claimed: set[int] = field(default_factory=set)


def parse(lines: list[Line]) -> AppErrorsParse:
    """Every ACSCtl line read: the bridges with ACS on (one record a bridge, or one for a paste naming none), a note
    for those with it off."""
    walk = _Walk()
    for ln in lines:
        if "ACS" in ln.text or ln.text[:1] in "0123456789abcdefABCDEF" or "Express (" in ln.text:
            _line(walk, ln)
    out = AppErrorsParse(claimed=walk.claimed)
    out.errors = _records(walk)
    if walk.off or walk.endpoints:
        out.notes.append(
            f"lspci ACS: {walk.off} port(s) with ACS off (ACSCtl all '-')"
            + (
                f"; {walk.endpoints} endpoint(s) with ACS on, not a path between devices: not judged"
                if walk.endpoints
                else ""
            )
        )
    return out


def _line(walk: _Walk, ln: Line) -> None:
    if (d := _DEVICE.match(ln.text)) is not None:
        walk.bus, walk.bridge, walk.root = d.group("bus").upper(), "bridge" in d.group("cls").lower(), False
        return
    if (p := _PORT.search(ln.text)) is not None:
        walk.bridge = p.group(1).endswith("Port")  # lspci's device type: a port is a bridge, an endpoint is not
        walk.root = p.group(1) == "Root Port"
        return
    if (c := _CTL.match(ln.text)) is None:
        return
    bits = dict(_BITS.findall(ln.text))
    if len(bits) < 3:  # a sentence's 'ACSCtl: SrcValid+' is no line of lspci's
        return
    walk.claimed.add(ln.no)
    if c.group(1) == "Cap":
        return  # what the port can do, not what it does
    on = tuple(b for b in _ON if bits.get(b) == "+")
    if not on:
        walk.off += 1
    elif walk.bridge is False:
        walk.endpoints += 1
    else:
        walk.on.append((ln, walk.bus if walk.bridge else None, ("Root Port",) + on if walk.root else on))
    if walk.bus is None:  # a grep'd paste: the next ACSCtl line's type is its own Express line's, or not shown
        walk.bridge, walk.root = None, False


def _records(walk: _Walk) -> list[AppError]:
    """One record a named bridge; the unnamed ones (a grep'd paste) as one, counted, with their bits."""
    out = [
        AppError(_kind(on), ln.no, f"{bus}: {ln.text.strip()}"[:_TEXT], module=bus, tool="lspci -vvv")
        for ln, bus, on in walk.on
        if bus is not None
    ]
    unnamed = [(ln, on) for ln, bus, on in walk.on if bus is None]
    roots = [(ln, on) for ln, on in unnamed if "Root Port" in on]  # each line judged by its own port type
    others = [(ln, on) for ln, on in unnamed if "Root Port" not in on]  # a switch port, or its type not shown
    return out + [_unnamed(group, len(unnamed) + walk.off) for group in (roots, others) if group]


def _unnamed(group: list[tuple[Line, tuple[str, ...]]], lines: int) -> AppError:
    """The unnamed bridges of one port type (a grep'd paste) as one record, counted, with their bits."""
    redirect = sum(1 for _, on in group if any(b in on for b in _REDIRECTS))
    bits = ", ".join(f"{b}+" for b in _ON if any(b in on for _, on in group))
    said = (
        f"ACS on in {len(group)} of {lines} ACSCtl line(s) ({bits}; {redirect} of them "
        "redirect peer requests to the root complex), their devices not in the paste; first: "
    )
    first = max(group, key=lambda u: any(b in u[1] for b in _REDIRECTS))[0]
    return AppError(
        _kind(tuple(b for _, on in group for b in on)),
        first.no,
        (said + first.text.strip())[:_TEXT],
        tool="lspci -vvv",
        times=len(group),
    )


def _kind(on: tuple[str, ...]) -> str:
    """A root port's ACS is the kernel's default under the IOMMU and P2P across root ports crosses the root complex
    anyway: a note (its own cause); a switch port's (or an unnamed bridge's) redirects P2P that would stay below it."""
    if "Root Port" in on:
        return ROOT
    return REDIRECT if any(b in on for b in _REDIRECTS) else SOURCE
