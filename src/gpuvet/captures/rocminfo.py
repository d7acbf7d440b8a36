"""``rocminfo``'s agents as people paste them: the whole listing (``Agent 3`` / ``Name: gfx942`` /
``Uuid: GPU-…`` / ``Marketing Name: AMD Instinct MI300X`` / ``Device Type: GPU``) or grepped to its
names (``rocminfo | grep -E 'Name|Marketing Name'``). A GPU agent is one whose Name is its gfx
target; the host CPUs (Name and Marketing Name both the CPU's brand) and the ISA lines under a GPU
(``Name: amdgcn-amd-amdhsa--gfx942:…``) are not modules. The modules are listed by their marketing name, with the
bus id its BDFID gives, gfx target and compute units said (R14C: captures/rocminfo_agent.py), and the memory of
their first GLOBAL pool (the agent's VRAM: 'Segment: GLOBAL; FLAGS: COARSE GRAINED' / 'Size: 16760832(0xffc000)
KB', issue 46); the CPU agents' marketing names are the host's CPUs. Read only where no other AMD tool listed any."""

from __future__ import annotations

import re

from gpuvet.captures import rocminfo_agent
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import holding
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

TOOL = "rocminfo"
_NAME = lazy(r"^\s*Name:\s+(gfx[0-9a-f]{3,5})\s*$")
_MARKETING = re.compile(r"^\s*Marketing Name:\s+(\S.{0,119}?)\s*$")
_UUID = lazy(r"^\s*Uuid:\s+(GPU-[0-9A-Za-z]{1,40})\s*$")
_OTHER = lazy(r"^\s*(Name|Marketing Name|Uuid|Device Type|Vendor Name):\s")
_FIELDS = 12  # lines after a gfx Name where its Marketing Name and Uuid stand (rocminfo prints them next)
_AGENT = lazy(r"^\s*Agent \d{1,3}\s*$")  # an agent's head ('Agent 2' between two rules of '*')
_HEAD = 4  # lines above an agent's Name its head stands within
_DEVICE_TYPE = lazy(r"^\s*Device Type:\s+(CPU|GPU|DSP|AIE)\s*$")
# an agent's tail alone (R4A) is known by rocminfo's own words: the same words gate its reader (_read_tail)
_OWN = ("Pool Info:", "uCode::", "Alloc Granule:", "Accessible by all:", "Max fbarriers/Workgrp:")  # rocminfo's alone
CPU_MARKERS = ("HSA Agents", "Device Type:", *_OWN)


def read(lines: list[Line], out: ListedParse) -> None:
    """The GPU agents of a rocminfo listing, added to ``out`` where no other AMD tool listed a module. Where
    the file holds the whole listing (its 'Agent N' heads), a gfx Name under no head is a grep's echo of one
    of those agents (`rocminfo | grep gfx` pasted before it), not one more GPU."""
    if out.modules or not any("Name:" in ln.text and _NAME.match(ln.text) for ln in lines):
        return
    headed = {i for i, ln in enumerate(lines) if "Name:" in ln.text and _NAME.match(ln.text)
              and any(_AGENT.match(before.text) for before in lines[max(0, i - _HEAD):i])}
    found: list[ListedModule] = []
    said: list[str] = []
    for i, ln in enumerate(lines):
        if "Name:" not in ln.text or (m := _NAME.match(ln.text)) is None:
            continue
        if headed and i not in headed:
            out.claimed.add(ln.no)  # the grep's echo of a headed agent
            continue
        name, uuid = m.group(1), None
        for after in lines[i + 1:i + 1 + _FIELDS]:
            if _NAME.match(after.text):
                break
            if (mk := _MARKETING.match(after.text)) is not None:
                name = mk.group(1)
                out.claimed.add(after.no)
            elif (u := _UUID.match(after.text)) is not None:
                uuid = u.group(1)
        out.claimed.add(ln.no)
        more = rocminfo_agent.detail(lines, i)
        out.claimed |= more.lines
        pool = _pool_kb(lines, i)
        found.append(ListedModule(f"GPU {len(found)} (rocminfo's GPU agents in order)", name=name, uuid=uuid,
                                  tool=TOOL, bus_id=more.bus_id, device_id=more.chip_id,
                                  memory_mib=pool / 1024 if pool else None))
        said.append(f"{name}: {m.group(1)}, {more.compute_units or 'n/a'} compute units, "
                    f"bus {more.bus_id or 'not printed'}, GLOBAL pool {f'{pool} KB' if pool else 'not printed'}")
    out.claimed |= {ln.no for ln in lines if _OTHER.match(ln.text)}
    out.modules += found
    out.kinds.append(TOOL)
    cpus = cpu_agents(lines)
    out.host_cpus += [c for c in cpus if c not in out.host_cpus]
    rocminfo_agent.said(lines, out)
    out.notes.append(f"rocminfo: {len(found)} GPU agent(s) listed ({'; '.join(said)})"
                     + (f"; CPU agent(s): {', '.join(cpus)}" if cpus else ""))


_POOL_SPAN = 400  # lines below a GPU agent's Name its pools stand within (its ISA blocks follow them)
_MAX_POOL_KB = 2**34  # 16 TiB: no agent's memory; a larger size is a corrupt reading, not read


def _pool_kb(lines: list[Line], at: int) -> int | None:
    """The size of the first GLOBAL pool of the agent whose Name stands at ``at`` (its VRAM), up to the next agent."""
    span = lines[at + 1:at + 1 + _POOL_SPAN]
    for k, ln in enumerate(span):
        if rocminfo_agent.agent_end(ln.text):
            return None
        if "GLOBAL" in ln.text and _GLOBAL_POOL.match(ln.text):
            size = next((m.group(1) for after in span[k + 1:k + 3] if (m := _POOL_SIZE.match(after.text))), None)
            return int(size) if size is not None and len(size) <= 12 and 0 < int(size) <= _MAX_POOL_KB else None
    return None


def cpu_agents(lines: list[Line]) -> list[str]:
    """The marketing names of the CPU agents (their 'Device Type: CPU' a few lines below it), each once."""
    names: dict[str, None] = {}
    for i in holding(lines, ("Device Type:",)):
        t = _DEVICE_TYPE.match(lines[i].text)
        if t is None or t.group(1) != "CPU":
            continue
        for before in reversed(lines[max(0, i - _CPU_SPAN):i]):
            if rocminfo_agent.agent_end(before.text):
                break
            if (mk := _MARKETING.match(before.text)) is not None:
                names[mk.group(1)] = None
                break
    return list(names)


_CPU_SPAN = 16  # lines above a CPU agent's Device Type its Marketing Name stands within


def read_cpu_only(lines: list[Line], out: ListedParse) -> None:
    """A rocminfo listing whose agents are all CPUs (the runtime found no GPU, or the paste stops before one):
    read as rocminfo, no module listed, said (never refused: it is the tool's own answer)."""
    if out.modules or TOOL in out.kinds:
        return
    types = [(lines[i].no, t.group(1)) for i in holding(lines, ("Device Type:",))  # only the lines holding the
             if (t := _DEVICE_TYPE.match(lines[i].text))]  # words are tested (marks.holding; issue 43: no walk)
    heads = bool(holding(lines, ("HSA Agents",))) or any(_AGENT.match(lines[i].text) for i in holding(lines, ("Agent ",)))
    if not types or not heads or any(kind != "CPU" for _, kind in types):
        _read_cut_agents(lines, out)
        if TOOL not in out.kinds:
            _read_tail(lines, out)
        return
    names = [m.group(1) for ln in lines if (m := _MARKETING.match(ln.text)) is not None]
    out.host_cpus += [c for c in cpu_agents(lines) if c not in out.host_cpus]
    out.claimed |= {ln.no for ln in lines if _OTHER.match(ln.text) or _AGENT.match(ln.text) or "HSA Agents" in ln.text}
    out.kinds.append(TOOL)
    rocminfo_agent.said(lines, out)
    out.notes.append(f"rocminfo: {len(types)} agent(s) listed, all CPU ({', '.join(dict.fromkeys(names)) or 'unnamed'}): "
                     "no GPU agent in the listing (the runtime saw none, or the paste stops before it)")


# the fields rocminfo prints inside a GPU agent only (its kernel agent's properties): a block cut above its Name
# still holds them around its 'Device Type: GPU'
_AGENT_FIELD = lazy(r"^\s*(Chip ID|BDFID|Compute Unit|SIMDs per CU|Shader Engines|Max Clock Freq\. \(MHz\)|"
                    r"Wavefront Size|Queue Type|Internal Node ID):\s+(\S+)")
_MIN_FIELDS = 3  # of those around one Device Type line: three make it rocminfo's agent, not a sentence
_CHIP = lazy(r"^\d+\((0x[0-9a-fA-F]{1,4})\)$")


def _read_cut_agents(lines: list[Line], out: ListedParse) -> None:
    """GPU agents of a listing cut above their Name (a paste that starts inside an agent): each is read by the
    fields it still holds (Chip ID, BDFID as the bus id, compute units), never refused: rocminfo's healthy
    answer, which names no fault. Only where no gfx Name and no other AMD tool listed a module."""
    if out.modules or any(_NAME.match(lines[i].text) for i in holding(lines, ("Name:",))):
        return  # only the lines holding a field's name are tested (marks.holding; issue 43: no walk)
    gpus = [i for i in holding(lines, ("Device Type:",))
            if (t := _DEVICE_TYPE.match(lines[i].text)) is not None and t.group(1) == "GPU"]
    found: list[ListedModule] = []
    for i in gpus:
        near = {m.group(1): (ln.no, m.group(2)) for ln in lines[max(0, i - 8):i + 24]
                if (m := _AGENT_FIELD.match(ln.text)) is not None}
        if len(near) < _MIN_FIELDS:
            continue
        out.claimed |= {no for no, _ in near.values()} | {lines[i].no}
        chip = _CHIP.match(near.get("Chip ID", (0, ""))[1])
        found.append(ListedModule(f"GPU {len(found)} (rocminfo's GPU agents in order)", bus_id=_bus(near.get("BDFID")),
                                  name=f"AMD GPU, chip id {chip.group(1)}" if chip else None,
                                  device_id=chip.group(1) if chip else None, tool=TOOL))
    if not found:
        return
    out.modules += found
    out.kinds.append(TOOL)
    rocminfo_agent.said(lines, out)
    said = {key: [m.group(2) for i in holding(lines, (f"{key}:",))
                  if (m := _AGENT_FIELD.match(lines[i].text)) and m.group(1) == key]
            for key in ("Compute Unit", "Max Clock Freq. (MHz)")}
    out.notes.append(f"rocminfo: {len(found)} GPU agent(s) read from a listing cut above their Name (no marketing "
                     f"name or gfx target in the paste; compute units: {', '.join(said['Compute Unit']) or 'not shown'}; "
                     f"max clock (MHz): {', '.join(said['Max Clock Freq. (MHz)']) or 'not shown'})")


def _bus(bdfid: tuple[int, str] | None) -> str | None:
    """rocminfo's BDFID (bus << 8 | device << 3 | function, in decimal) as a bus id, domain 0 (it prints none)."""
    if bdfid is None or not bdfid[1].isdigit() or int(bdfid[1]) > 0xFFFF:
        return None
    v = int(bdfid[1])
    return f"0000:{v >> 8:02X}:{(v >> 3) & 0x1F:02X}.{v & 7}"


# R4A: the fields rocminfo prints below an agent's identity (rocminfo.cc: its dispatch limits, firmware versions and the
# memory pools of 'Pool Info:'), and the x/y/z rows of its '… per Dimension:' blocks: a paste of an agent's tail alone
_TAIL_FIELD = lazy(r"^\s*(?:(Pool Info|Segment|Size|Allocatable|Alloc Granule|Alloc Recommended Granule|Alloc Alignment|"
                   r"Accessible by all|Packet Processor uCode:|SDMA engine uCode:|IOMMU Support:|Max Waves Per CU|"
                   r"Max Work-item Per CU|Grid Max Size(?: per Dimension)?|Workgroup Max Size(?: per Dimension)?|"
                   r"Max fbarriers/Workgrp|Pool \d{1,2})(?::|\s*$)|[xyz]\s+\d+\(0x[0-9a-fA-F]+\)\s*$)")
_GLOBAL_POOL = re.compile(r"^\s*Segment:\s+GLOBAL;")
_POOL_SIZE = re.compile(r"^\s*Size:\s+(\d+)\(0x[0-9a-fA-F]+\)\s*KB\s*$")
_MIN_TAIL = 4  # tail fields, one of them rocminfo's own, make a paste rocminfo's agent tail, not a sentence


def _read_tail(lines: list[Line], out: ListedParse) -> None:
    """An agent's tail pasted without its head (its limits, firmware and pools, cut above Name and Device Type):
    read as rocminfo, no module listed (it names none), the GLOBAL pool's size said; never refused."""
    if out.modules or not any(own in lines[i].text for i in holding(lines, _OWN) for own in _OWN):
        return
    read = [ln for ln in lines if _TAIL_FIELD.match(ln.text)]
    if len(read) < _MIN_TAIL:
        return
    out.claimed |= {ln.no for ln in read}
    out.kinds.append(TOOL)
    sizes = [m.group(1) for i, ln in enumerate(lines) if _GLOBAL_POOL.match(ln.text)
             for after in lines[i + 1:i + 3] if (m := _POOL_SIZE.match(after.text)) is not None]
    more = rocminfo_agent.detail(lines, -1)  # R14C: its compute units and BDFID, where the cut left them
    out.claimed |= more.lines
    rocminfo_agent.said(lines, out)
    out.notes.append(f"rocminfo: an agent's fields and memory pools read, cut above its name (no module named; GLOBAL "
                     f"pool size: {', '.join(f'{s} KB' for s in sizes) or 'not shown'}; compute units: "
                     f"{more.compute_units or 'not shown'}; BDFID as bus id: {more.bus_id or 'not shown'})")
