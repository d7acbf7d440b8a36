"""Link state captures: `nvidia-smi nvlink -s` / `-e`, `dcgmi nvlink --link-status`, and the
NVIDIA devices of `lspci -vvv` (LnkCap against LnkSta, AER status bits)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.fabric_manager import without_switches
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.lines import TextLines, walk
from gpuvet.captures.records import NvLinkErrors, NvLinkState, PcieLink
from gpuvet.captures.text import Line, number
from gpuvet.node.catalog import find_model

_GPU = lazy(r"^GPU (\d+): (.+?)(?: \(UUID: ([^)]*)\))?\s*$")
_LINK_S = lazy(r"^Link (\d+): (?:([-+]?[\d.]+(?:[eE][-+]?\d+)?) GB/s|(<[^>]+>|[A-Za-z ]+))\s*$")
MAX_LINK_GBPS = 1000.0  # per link: 20x an NVLink 5 link (50 GB/s); more, or below 0, is not a reading
_LINK_E = lazy(r"^Link (\d+): ([A-Za-z ]+?) Errors?: (-?\d+)\s*$")
_ALL_INACTIVE = lazy(r"^NVML: Unable to retrieve NVLink information as all links are in ?active", re.I)
_DCGM_GPU = lazy(r"^gpuId (\d+):\s*$")
_DCGM_STATES = lazy(r"^([UDX_](?:\s+[UDX_])*)\s*$")


@dataclass
class NvLinkParse:
    states: list[NvLinkState] = field(default_factory=list)
    errors: list[NvLinkErrors] = field(default_factory=list)
    products: dict[str, str] = field(default_factory=dict)  # "GPU 0" -> the product name its line gives (design)
    twice: dict[str, list[bool]] = field(default_factory=dict)  # a GPU's links given again: whether each differed
    seen: dict[tuple[str, int], NvLinkState] = field(default_factory=dict)  # each link's first state read
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def parse_nvlink(lines: list[Line]) -> NvLinkParse:
    out = NvLinkParse()
    gpu: str | None = None
    gpu_line = -1
    dcgm_gpu: str | None = None
    for ln in lines:
        if gpu is None and dcgm_gpu is None and "GPU " not in ln.text and "gpuId " not in ln.text:
            continue  # no GPU's links being read, and no GPU named here
        s = ln.text.strip()
        if (g := _GPU.match(s)) is not None:
            gpu, gpu_line, dcgm_gpu = f"GPU {g.group(1)}", ln.no, None
            out.products[gpu] = g.group(2).strip()
            continue  # claimed only if links follow
        if gpu and (e := _LINK_E.match(s)) is not None:
            out.errors.append(NvLinkErrors(gpu, int(e.group(1)), e.group(2).strip(), int(e.group(3))))
            out.claimed.update({ln.no, gpu_line})
        elif gpu and (m := _LINK_S.match(s)) is not None:
            _state(out, gpu, m, ln.no)
            out.claimed.update({ln.no, gpu_line})
        elif gpu and _ALL_INACTIVE.match(s):  # nvidia-smi's line in place of the links when none is active
            _all_inactive(out, gpu, ln.no)
            out.claimed.update({ln.no, gpu_line})
        elif (d := _DCGM_GPU.match(s)) is not None:
            dcgm_gpu, gpu = f"gpuId {d.group(1)}", None
            out.claimed.add(ln.no)
        elif dcgm_gpu and (st := _DCGM_STATES.match(s)) is not None:
            for k, c in enumerate(st.group(1).split()):
                if c != "_":
                    out.states.append(NvLinkState(dcgm_gpu, k, c == "U", None, "" if c == "U" else c))
            out.claimed.add(ln.no)
            dcgm_gpu = None
    _dcgm_box(lines, out)
    _twice_notes(out)
    return out


def _state(out: NvLinkParse, gpu: str, m: re.Match[str], line: int) -> None:
    """One `Link N: …` line: a speed outside 0-MAX_LINK_GBPS is no reading (noted, its state not known); a
    link given again (the GPU's block pasted twice) keeps its first state and is counted for a note."""
    speed = number(m.group(2)) if m.group(2) else None
    if m.group(2) and (speed is None or not 0 <= speed <= MAX_LINK_GBPS):
        out.notes.append(f"nvlink -s line {line}: {gpu} link {m.group(1)} at '{m.group(2)} GB/s' is not a plausible "
                         f"link speed (0-{MAX_LINK_GBPS:,.0f} GB/s): left out, its state not known")
        return
    state = NvLinkState(gpu, int(m.group(1)), speed is not None and speed > 0, speed,
                        "" if speed else (m.group(3) or "0 GB/s").strip())
    first = out.seen.setdefault((gpu, state.link), state)
    if first is state:
        out.states.append(state)
    else:
        out.twice.setdefault(gpu, []).append(first != state)


def _all_inactive(out: NvLinkParse, gpu: str, line: int) -> None:
    """Every link of the module inactive. On a module built into an NVLink fabric (the catalog's model with
    NVLink, not a card that takes a bridge) that is every link of its design down; on a card without a
    bridge, or a model the catalog does not know, it is how nvidia-smi says there is no NVLink: noted."""
    product = out.products.get(gpu, "")
    model = find_model(product)
    if model is None or model.fabric != "nvlink" or not model.fabric_links or without_switches([product]):
        out.notes.append(f"nvlink -s line {line}: all of {gpu}'s links are inactive ({product or 'model not named'}"
                         "): a card without an NVLink bridge or fabric says so; not judged as links down")
        return
    for k in range(model.fabric_links):
        state = NvLinkState(gpu, k, False, None, "all links inActive")
        if out.seen.setdefault((gpu, k), state) is state:
            out.states.append(state)


def _twice_notes(out: NvLinkParse) -> None:
    for gpu, differ in out.twice.items():
        said = "some with another state (the first kept)" if any(differ) else "the same states"
        out.notes.append(f"nvlink -s: {gpu}'s links are listed again ({len(differ)} link line(s) repeated, {said}): "
                         "each link read once")


_BOX = ("+---", "|  NvLink Link Status", "|", "GPUs:", "NvSwitches:", "No NvSwitches", "Key: Up=U")


def _dcgm_box(lines: list[Line], out: NvLinkParse) -> None:
    """The frame around `dcgmi nvlink --link-status` belongs to it."""
    ids = [i for i, ln in enumerate(lines) if "gpuId " in ln.text and _DCGM_GPU.match(ln.text.strip())]
    if not ids:
        return
    i = ids[0] - 1
    while i >= 0 and lines[i].text.strip().startswith(_BOX):
        out.claimed.add(lines[i].no)
        i -= 1
    for ln in lines[ids[-1] + 1:]:
        s = ln.text.strip()
        if s and not s.startswith(_BOX) and ln.no not in out.claimed:
            break
        if s:
            out.claimed.add(ln.no)


# --- lspci -vvv -----------------------------------------------------------------------------
_DEV = lazy(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) ([^\"].*)$")  # -m's quoted: lspci_list
# a device line pasted after prose ('here is my card 62:00.0 VGA compatible controller: NVIDIA …'): the bus id,
# then a PCI class name and its colon, as lspci prints them
_DEV_IN_PROSE = lazy(r"\s((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) "
                     r"((?:VGA compatible|3D|Display) controller: .+)$")
_GPU_CLASS = lazy(r"(VGA compatible controller|3D controller|Display controller)", re.I)
# a NIC function: its trained link is judged by the NIC rule (checks/nics.pcie: what the link carries against its
# port's rate), never as a module's; other functions (bridges, storage, USB, accelerators) are not judged here
# a GPU card's other functions, by class: HDMI/DP audio, a Turing card's USB-C controller and UCSI serial bus
_COMPANION = lazy(r"^(Audio device|Multimedia audio controller|USB controller|Serial bus controller)\b", re.I)
_NIC_CLASS = lazy(r"^(?:Ethernet|Infiniband|Network) controller: ", re.I)
# the GPU vendors lspci names (pci.ids): NVIDIA's; AMD's graphics, 'Advanced Micro Devices, Inc. [AMD/ATI]' (or
# 'ATI Technologies Inc' in older pci.ids)
_GPU_VENDORS = (("NVIDIA", lazy(r"\bNVIDIA\b")), ("AMD", lazy(r"\[AMD/ATI\]|\bATI Technologies\b")))
# Intel's GPU functions, by class and pci.ids' vendor words (Intel's NICs and bridges are other classes)
_INTEL_GPU = lazy(r"^(?:VGA compatible controller|3D controller|Display controller|Processing accelerators): "
                  r"Intel Corporation\b")
_VENDOR_WORDS = lazy(r"^.*?(?:NVIDIA Corporation|\[AMD/ATI\]|ATI Technologies Inc\.?|Intel Corporation)\s*"
                     r"|\s*\((?:rev \w+|prog-if [^()]*(?:\[[^\]]*\])?)\)")  # the vendor, '(rev c0)', '(prog-if 00 …)'

# newer pciutils mark each half '(ok)' or '(downgraded)'; a speed the kernel cannot name prints 'Speed unknown'
_LNK = lazy(r"Speed (?:(\d+(?:\.\d+)?)GT/s|unknown)( \(downgraded\)| \(ok\))?, Width x(\d+)( \(downgraded\)| \(ok\))?")
NO_DEVICE_LINE = "device line not in the excerpt"
_HEX = frozenset("0123456789abcdefABCDEF")  # what a device line (_DEV) starts with
# issue 46 (batch U): a function whose revision reads ff: its config space reads all ones, the device no longer
# answers on the bus (fallen off it, or powered off under the slot); pci.ids names it from the ids lspci cached
REV_FF = lazy(r"\(rev ff\)\s*$", re.I)
# 'sudo lspci -s 2f:00.0 -vv | grep …': a command line choosing one device; the fields printed after it are its own
_SELECT = lazy(r"\blspci\b[^|]*?\s-s\s*((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b")


@dataclass
class LspciParse:
    links: list[PcieLink] = field(default_factory=list)
    nics: list[PcieLink] = field(default_factory=list)  # NIC functions' links, for the NIC rule (checks/nics.pcie)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    gpus: list[tuple[str, str]] = field(default_factory=list)  # every NVIDIA GPU function listed: (bus id, name)
    listed: list[ListedGpu] = field(default_factory=list)  # every GPU function of a vendor gpuvet reads (NVIDIA, AMD)
    smi_none: int | None = None  # the line of nvidia-smi's 'No devices were found': the driver brought up none
    not_enabled: list[NotEnabled] = field(default_factory=list)  # GPU functions no driver has enabled (BusMaster-)
    gone: list[ListedGpu] = field(default_factory=list)  # GPU functions reading '(rev ff)': off the bus (REV_FF)
    others: list[PcieLink] = field(default_factory=list)  # any other endpoint (NVMe, RAID, switch) at a narrower width


@dataclass(frozen=True)
class NotEnabled:
    """A GPU function whose Control line reads BusMaster- with no driver in use named: no driver has enabled it
    (a driver's probe turns bus mastering on; vfio-pci's, held for a VM, is left out). MSI's state and the IRQ
    are what the excerpt shows of it (MSI Enable-, IRQ 255: no interrupt set up either)."""

    bus_id: str
    vendor: str
    model: str
    msi: str | None  # 'Enable+' / 'Enable-' as lspci prints it
    irq: int | None


@dataclass(frozen=True)
class ListedGpu:
    """A GPU function lspci lists: its bus id, vendor, model words (pci.ids' name without the vendor and
    revision) and its link as trained and as capable, where the excerpt has them."""

    bus_id: str
    vendor: str
    model: str
    link: PcieLink | None


@dataclass
class _Dev:
    device: str
    name: str | None
    nvidia: bool  # a GPU function of a vendor gpuvet reads (NVIDIA or AMD), or a NIC: its link is read
    vendor: str | None = None
    nic: bool = False
    cap: tuple[float | None, int | None] = (None, None)
    sta: tuple[float | None, int | None, bool, bool] | None = None
    ue: tuple[str, ...] = ()
    ce: tuple[str, ...] = ()
    lines: list[int] = field(default_factory=list)
    master: bool | None = None  # the Control line's BusMaster+ / BusMaster-
    msi: str | None = None
    irq: int | None = None
    driver: str | None = None  # 'Kernel driver in use'
    regions: list[str] = field(default_factory=list)  # 'Region 2 128G': each memory BAR and its size
    numa: str | None = None  # 'NUMA node: 0'
    reports_dl: bool = False  # LnkCap's LLActRep+: the port reports its data link layer's state (R4B)
    dl_down: bool = False  # LnkSta's DLActive-: the data link layer is not up


# nvidia-smi's whole answer when the driver brought up no module, as posters paste it: alone on its line (a quote's
# '> ', markdown emphasis or code marks around it), inside an inline code span or quotes in a sentence
# ('… with the following error: `"No devices were found"`'), closing a sentence after a colon, or right after
# the verb saying the tool printed it, or a shell variable set to it (a script's set -x trace, R6B)
_SMI_NONE = lazy(r"^[\s>*_`\"'\u201c]*No devices were found\.?[\s*_`\"'\u201d]*$|=\s*'No devices were found\.?'|"
                 r"[`\"\u201c]\s*No devices were found\.?\s*[`\"\u201d]|:\s*No devices were found\.?\s*$"
                 r"|\b(?:prints?|printed|says?|said|shows?|showed|returns?|returned|outputs?|gives?|gave|fails? with|"
                 r"failed with)\s+No devices were found\b")  # a code span's marks removed (decorations.py)


def smi_none(s: str) -> bool:
    """Whether the line holds nvidia-smi's 'No devices were found' as the tool's answer (a sentence that only
    names the words, 'in case of No devices were found we …', is not)."""
    return _SMI_NONE.search(s) is not None


def _who(vendor: str | None, device: str) -> str:
    """A device as its lines name it (R8C: a vendor the excerpt does not give is never invented)."""
    if vendor:
        return f"{vendor} device {device}"
    return "the device (its vendor not in the excerpt)" if device == NO_DEVICE_LINE else f"device {device}"


def parse_lspci(lines: list[Line]) -> LspciParse:
    out = LspciParse()
    devs: list[_Dev] = []
    cur: _Dev | None = None
    chosen: str | None = None  # the device an 'lspci -s BUS' command line chose: the fields after it are its
    for ln in walk(lines, lambda: cur is not None, _lspci_candidates(lines)):  # noqa: B023 (cur as it is now)
        s = ln.text
        if cur is None and s[:1] not in _HEX and "lspci" not in s and "No devices were found" not in s \
                and "controller: " not in s and "Sta:" not in s and "LnkCap:" not in s:
            continue  # no device line, field, 'lspci -s' command or nvidia-smi answer (each holds one of these words, or
            # a device line's leading hex digit): most of a bug report, passed over without a regex or a call
        if "lspci" in s and (c := _SELECT.search(s)) is not None:
            chosen, cur = c.group(1).upper(), None
            continue
        if "No devices were found" in s and smi_none(s):  # nvidia-smi: the driver has no module
            out.smi_none = out.smi_none or ln.no
            out.claimed.add(ln.no)
            continue
        if (d := _device_line(out, s, ln.no)) is not None:
            vendor = _gpu_vendor(d.group(2)) or ("Intel" if intel_gpu(d.group(2)) else None)
            nic = vendor is None and bool(_NIC_CLASS.match(d.group(2)))
            cur = _Dev(d.group(1).upper(), d.group(2), vendor not in (None, "Intel") or nic, vendor, nic=nic)
            devs.append(cur)
            cur.lines.append(ln.no)
            continue
        body = s.strip()
        known = body.startswith(("LnkCap:", "LnkSta:", "UESta:", "CESta:"))
        if cur is not None and (not body or not s[:1].isspace() and not known):
            cur = None  # lspci indents its fields (tabs, or spaces once a paste expanded them), a blank line ends it
            continue
        if known and cur is None:
            cur = _selected(devs, chosen) if chosen else _half(devs, body)
            if cur is None:
                cur = _Dev(chosen or NO_DEVICE_LINE, None, True)
                devs.append(cur)
        if cur is None:
            continue
        cur.lines.append(ln.no)
        _field(cur, body)
    for dev in _once(devs, out):
        link = None
        if dev.vendor == "NVIDIA" and dev.device != NO_DEVICE_LINE:
            out.gpus.append((dev.device, dev.name or ""))
        if dev.nvidia and (dev.sta is not None or dev.cap != (None, None) or dev.ue or dev.ce):
            out.claimed.update(dev.lines)
            sta = dev.sta or (None, None, False, False)
            link = PcieLink(dev.device, dev.name, dev.cap[0], dev.cap[1], sta[0], sta[1], sta[2], sta[3], dev.ue, dev.ce,
                            link_inactive=dev.reports_dl and dev.dl_down)
            (out.nics if dev.nic else out.links).append(link)
        elif dev.nvidia and dev.lines and not dev.nic and not REV_FF.search(dev.name or ""):
            out.claimed.update(dev.lines)
            out.notes.append(f"lspci: {_who(dev.vendor, dev.device)} has no LnkCap/LnkSta lines (cut, or "
                             "lspci run without root): its link cannot be judged")
        if dev.vendor is not None and dev.device != NO_DEVICE_LINE:
            out.claimed.update(dev.lines if dev.vendor == "Intel" else ())  # listed only, its link not read
            _enabled(out, dev)
            _said(out, dev)
            out.listed.append(ListedGpu(dev.device, dev.vendor, _VENDOR_WORDS.sub("", dev.name or "").strip(), link))
            _gone(out, dev)
    return _others(_companions(out, devs), devs)


def _companions(out: LspciParse, devs: list[_Dev]) -> LspciParse:
    """Issue 46 (BJ): a GPU card's other functions (its HDMI/DP audio at .1, a Turing card's USB-C and UCSI at .2,
    .3) belong to the GPU at function 0 of the same slot: said with it (passed through to a VM together, one IOMMU
    group), never a module and never skipped."""
    gpus = {d.device[:-2]: d.device for d in devs if d.vendor in ("NVIDIA", "AMD") and d.device != NO_DEVICE_LINE}
    for dev in devs:
        slot, name = dev.device[:-2], dev.name or ""
        kind = _COMPANION.match(name) if dev.vendor is None and gpus.get(slot, dev.device) != dev.device else None
        if kind is None or not any(p.search(name) for _, p in _GPU_VENDORS):
            continue
        out.claimed.update(dev.lines)
        what = _VENDOR_WORDS.sub("", name.split(": ", 1)[-1]).strip()
        out.notes.append(f"lspci: {dev.device} ({what}) is a function of the GPU card at {gpus[slot]} (its "
                         f"{kind.group(1).lower()} function): part of that GPU, not a module")
    return out


# a bridge's port: its LnkCap is the port's own, and a narrower device below it is no fault
_BRIDGE = lazy(r"^(?:PCI|Host|ISA|CardBus) bridge\b", re.I)


def _others(out: LspciParse, devs: list[_Dev]) -> LspciParse:
    """R12B: a width downgrade on any other endpoint the node has (NVMe, a RAID card, an FPGA): its link judged
    as a GPU's is (doctor: pcie_link_downgraded on its bus id); once a device."""
    seen: set[str] = set()
    for dev in devs:
        if dev.nvidia or dev.device in seen or not _narrower(dev):
            continue
        seen.add(dev.device)
        out.claimed.update(dev.lines)
        sta = dev.sta or (None, None, False, False)
        out.others.append(PcieLink(dev.device, dev.name, dev.cap[0], dev.cap[1], sta[0], sta[1], sta[2], sta[3],
                                   dev.ue, dev.ce, link_inactive=dev.reports_dl and dev.dl_down))
    return out


def _narrower(dev: _Dev) -> bool:
    """An endpoint (not a bridge's port) whose link trained narrower than it can (LnkSta below LnkCap)."""
    width = dev.sta[1] if dev.sta else None
    return (dev.device != NO_DEVICE_LINE and not _BRIDGE.match(dev.name or "") and width is not None
            and dev.cap[1] is not None and 0 < width < dev.cap[1])


_LSPCI_WORDS = ["lspci", "No devices were found", "controller: ", "Sta:", "LnkCap:"]  # parse_lspci's first test


def _lspci_candidates(lines: list[Line]) -> list[int] | None:
    """Where a long text's lines are places in it (lines.TextLines), the positions of those parse_lspci's first
    test keeps while no device is open (a leading hex digit, or one of its words): the others are never made
    (issue 43). None for any other list: each line is tested."""
    if not isinstance(lines, TextLines) or (worded := lines.holding(_LSPCI_WORDS)) is None:
        return None
    return sorted({*lines.starting("".join(sorted(_HEX))), *worded})


def _device_line(out: LspciParse, s: str, no: int) -> re.Match[str] | None:
    """A device line: flush left, or after other words on the line (noted)."""
    d = _DEV.match(s) if not s[:1].isspace() else None
    if d is None and "controller: " in s and (d := _DEV_IN_PROSE.search(s)) is not None:
        out.notes.append(f"lspci: line {no}: the device line of {d.group(1)} follows other words on the line "
                         f"({s[:d.start(1)].strip()[:60]!r}): read from its bus id on")
    return d


def _selected(devs: list[_Dev], bus: str) -> _Dev | None:
    """The device an 'lspci -s BUS' line chose, where its device line was given before (domain or not)."""
    key = bus[-7:]
    return next((d for d in devs if d.device[-7:] == key), None)


def _gpu_vendor(text: str) -> str | None:
    """The vendor of a GPU function's device line ('VGA compatible controller: Advanced Micro Devices, Inc.
    [AMD/ATI] Navi 48 …' -> AMD); None for any other device (a bridge, an audio function, another vendor)."""
    if not _GPU_CLASS.search(text):
        return None
    return next((name for name, pattern in _GPU_VENDORS if pattern.search(text)), None)


def intel_gpu(text: str) -> bool:
    """An Intel GPU function's device line ('VGA compatible controller: Intel Corporation Device e223'): listed
    for inventory, its link not judged (an integrated GPU has none; module_lists drops them beside another
    vendor's GPUs, where they are the host's display)."""
    return _INTEL_GPU.match(text) is not None


def _once(devs: list[_Dev], out: LspciParse) -> list[_Dev]:
    """Each bus id once: a device listed again (lspci pasted twice) keeps its first reading, its lines are
    the capture's, and a note says so and whether the two readings differ."""
    first: dict[str, _Dev] = {}
    kept: list[_Dev] = []
    for dev in devs:
        was = first.setdefault(dev.device, dev) if dev.device != NO_DEVICE_LINE else dev
        if was is dev:
            kept.append(dev)
            continue
        if was.vendor is None and dev.vendor is not None and not was.lines[1:]:  # 'lspci -n' (class and ids alone)
            kept[kept.index(was)] = first[dev.device] = dev  # then lspci's words for it: the words name the GPU
            continue
        if dev.nvidia:
            out.claimed.update(dev.lines)
            same = (was.cap, was.sta, was.ue, was.ce) == (dev.cap, dev.sta, dev.ue, dev.ce)
            out.notes.append(f"lspci: device {dev.device} listed again at line {dev.lines[0]} "
                             f"({'the same readings' if same else 'with other readings: the first kept'}): read once")
    return kept


_CONTROL = lazy(r"^Control:.*\bBusMaster([+-])")
_MSI = lazy(r"^Capabilities: \[\w+\] MSI: (Enable[+-])")
_IRQ = lazy(r"^Interrupt: pin \w routed to IRQ (\d+)")
_REGION = lazy(r"^Region (\d): Memory at .*\[size=(\d+[KMGT]?)\]")


def _enabled(out: LspciParse, dev: _Dev) -> None:
    """A GPU function lspci shows with bus mastering off and no driver in use named (an NVIDIA or AMD one; one held
    by vfio-pci for a VM names it, and its guest's driver enables it)."""
    if dev.master is False and dev.driver is None and dev.vendor in ("NVIDIA", "AMD"):
        out.not_enabled.append(NotEnabled(dev.device, dev.vendor, _VENDOR_WORDS.sub("", dev.name or "").strip(),
                                          dev.msi, dev.irq))
        out.claimed.update(dev.lines)


def _gone(out: LspciParse, dev: _Dev) -> None:
    """A GPU function whose device line reads '(rev ff)' (REV_FF): no longer answering on the bus."""
    if REV_FF.search(dev.name or ""):
        out.gone.append(out.listed[-1])
        out.claimed.update(dev.lines)


def _half(devs: list[_Dev], body: str) -> _Dev | None:
    """A device-less LnkCap that a poster's sentence parted from its LnkSta ('it has: LnkCap … and: LnkSta …'): the
    field the last device-less reading lacks is that reading's, not a second device's."""
    last = devs[-1] if devs and devs[-1].device == NO_DEVICE_LINE else None
    if last is not None and (body.startswith("LnkSta:") and last.sta is None
                             or body.startswith("LnkCap:") and last.cap == (None, None)):
        return last
    return None


def _said(out: LspciParse, dev: _Dev) -> None:
    """A GPU function's memory regions (an NVIDIA GPU's largest is BAR1, the host's window onto its memory) and
    NUMA node, as lspci -vvv prints them: said for inventory, not judged."""
    if dev.vendor in ("NVIDIA", "AMD") and (dev.regions or dev.numa is not None):
        out.notes.append(f"lspci: {dev.vendor} {dev.device}: " + "; ".join(
            ([f"memory regions {', '.join(dev.regions)}"] if dev.regions else []) +
            ([f"NUMA node {dev.numa}"] if dev.numa is not None else [])))


def _field(dev: _Dev, body: str) -> None:
    if body.startswith(("Control:", "Capabilities:", "Interrupt:", "Kernel driver in use:", "Region ", "NUMA node:")):
        _setup(dev, body)
    elif body.startswith("LnkCap:") and (m := _LNK.search(body)) is not None:
        dev.cap = (float(m.group(1)) if m.group(1) else None, int(m.group(3)))
    elif body.startswith("LnkSta:") and (m := _LNK.search(body)) is not None:
        dev.sta = (float(m.group(1)) if m.group(1) else None, int(m.group(3)), m.group(2) == " (downgraded)",
                   m.group(4) == " (downgraded)")
    elif "LLActRep+" in body or "DLActive-" in body:  # LnkCap's and LnkSta's second lines (PCIe's DLL Link Active)
        dev.reports_dl, dev.dl_down = dev.reports_dl or "LLActRep+" in body, dev.dl_down or "DLActive-" in body
    elif body.startswith("UESta:"):
        dev.ue = tuple(re.findall(r"(\w+)\+", body.partition(":")[2]))
    elif body.startswith("CESta:"):
        dev.ce = tuple(re.findall(r"(\w+)\+", body.partition(":")[2]))


def _setup(dev: _Dev, body: str) -> None:
    """What a driver sets up on the function: bus mastering, MSI, its IRQ, and the driver named in use."""
    if (m := _CONTROL.match(body)) is not None:
        dev.master = m.group(1) == "+"
    elif (m := _MSI.match(body)) is not None:
        dev.msi = m.group(1)
    elif (m := _IRQ.match(body)) is not None:
        dev.irq = int(m.group(1))
    elif body.startswith("Kernel driver in use:"):
        dev.driver = body.partition(":")[2].strip() or None
    elif (m := _REGION.match(body)) is not None:
        dev.regions.append(f"Region {m.group(1)} {m.group(2)}")
    elif body.startswith("NUMA node:"):
        dev.numa = body.partition(":")[2].strip() or None
