"""`nvidia-smi -q` text, whole or in excerpts, from drivers 340 to 580.

Nested ``Key : value`` lines are flattened to ``Section/Sub/Key``. An excerpt that starts inside a
section keeps the path it can see, so fields are matched on the end of their path. Section names
that changed between drivers (``Clocks Throttle Reasons`` → ``Clocks Event Reasons``, ``Pending Page
Blacklist`` → ``Pending Page Retirement``) are read under either name. A known section name
printed flush left (older drivers, or a paste that lost its indent) is still a section, and an
operator's marker after a value (``Pending : Yes   <===``) is removed, each with a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures import nv_driver_faults, smi_fabric
from gpuvet.captures.dedupe import merge_smi
from gpuvet.captures.lines import TextLines, starting, walk
from gpuvet.captures.records import AMBIGUOUS_ECC, UNNAMED, ModuleHealth, SmiProcess, SmiTextModule
from gpuvet.captures.smi_q_marks import q_marked
from gpuvet.captures.text import CLOCK_MHZ, MAX_MODULES, TEMP_C, Line, integer, number, ranges, reading
from gpuvet.errors import CaptureError

_GPU = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")
# the key ends on a non-blank: the blanks before ':' are never split with it (quadratic on a long line, review 55)
_KV = re.compile(r"^(\s*)([^\s\"{\[|+#<](?:[^:]*?[^\s:])?)\s+:(?:\s+(.*))?$")
_SECTION = re.compile(r"^(\s+)((?:[A-Z]|vGPU )[\w .()/-]{1,60})$")  # and -q's vGPU sections (vGPU Software Licensed Product)
_TOP = re.compile(r"^(=+NVSMI LOG=+|Timestamp\s+:|Driver Version\s+:|CUDA Version\s+:|Attached GPUs\s+:)")
# a flush-left section name (each further word capitalised, not prose) between the top fields and the first GPU
_NODE_SECTION = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?: [A-Z][\w()/-]*){0,6}$")
# the sections -q prints at a GPU block's own indent (drivers 340-580): a paste that lost that indent prints them flush
# left, inside the block (one module, never one per section: issue 46, nvidia-docker#1146 split one GPU into five)
_LICENSED = "vGPU Software Licensed Product"  # a vGPU guest's: its Product Name is the licensed edition, no GPU model
_BLOCK_SECTIONS = ("Driver Model", "Inforom Version", "GPU Operation Mode", "GPU Virtualization Mode", "IBMNPU",
                   "GPU Reset Status", "FB Memory Usage", "BAR1 Memory Usage", "Conf Compute Protected Memory Usage",
                   "Encoder Stats", "FBC Stats", "Default Applications Clocks", "Deferred Clocks",
                   "Max Customer Boost Clocks", "Clock Policy", "GPU Memory Power Readings", "Module Power Readings",
                   "Power Smoothing", "Workload Power Profiles", "Supported Clocks", _LICENSED)
_EVENT_SECTIONS = ("Clocks Event Reasons", "Clocks Throttle Reasons", "Clock Throttle Reasons")
_KNOWN_SECTIONS = {s.lower() for s in (*_EVENT_SECTIONS, "Clocks", "Max Clocks", "Applications Clocks", "Temperature",
                                        "ECC Mode", "ECC Errors", "Remapped Rows", "Retired Pages", "Power Readings",
                                        "GPU Power Readings", "PCI", "Performance", "Clocks Event Reasons Counters",
                                        "Fabric", *_BLOCK_SECTIONS)}
# what a line _step reads while no block (nor the log's header) is open can start with: a GPU heading, a top field, a
# section name printed flush left (either case); any other line (a dmesg line, lspci's, prose) ends a block, and does
# nothing when none is open
_OPENERS = frozenset("G=TDCA" + "".join(k[0] + k[0].upper() for k in _KNOWN_SECTIONS))
_OPENING = "".join(sorted(_OPENERS)) + " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"  # (str.isspace's ASCII; '\n': an empty line)
_MARKER = re.compile(r"(?<!\s)\s+(?:<[=-]{2,}|<{2,}|←|-+>|=+>|\*{2,}|!{2,}|#+\s).*$")


@dataclass
class SmiText:
    modules: list[SmiTextModule] = field(default_factory=list)
    driver: str | None = None
    cuda: str | None = None
    cuda_runtime: str | None = None  # deviceQuery's 'Runtime Version' (the CUDA the sample was built with)
    attached: int | None = None  # the header's 'Attached GPUs': how many the node has, whatever the paste lists
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def bus(text: str) -> str:
    return text.upper()[-12:]


@dataclass
class _Reader:
    """The state of one pass over the lines: the block being read and what was noted on the way."""

    out: SmiText = field(default_factory=SmiText)
    current: SmiTextModule | None = None
    stack: list[tuple[int, str]] = field(default_factory=list)
    run: list[int] = field(default_factory=list)  # line numbers of the block being read
    marked: list[int] = field(default_factory=list)  # values that carried an operator's marker
    flush: list[int] = field(default_factory=list)  # section names printed flush left
    kv_in_run: int = 0
    cut: bool = False  # a poster's cut ('[...]') inside the current block: what follows may be another GPU's
    header: bool = False  # the log's top fields were read and no GPU line has followed yet
    node_section: bool = False  # inside a header section (vGPU Driver Capability): the node's fields, no GPU's


def parse(lines: list[Line], where: str = "nvidia-smi -q") -> SmiText:
    """Every `nvidia-smi -q` block in the lines (possibly none). Raises CaptureError past MAX_MODULES GPUs."""
    _bound(lines, where)
    r = _Reader()
    idle = True  # no block or header open: only _step opens or closes one, so it is asked again after each
    opening = starting(lines, _OPENING)  # a long text's lines (lines.TextLines): those the test below can pass
    for ln in walk(lines, lambda: not idle, opening):  # noqa: B023 (idle as it is now) over are not made while idle
        if idle and (c := ln.text[:1]) and c not in _OPENERS and not c.isspace() and not ln.elision:
            continue  # and this line opens none (a bug report's kernel log: most of its lines)
        _step(r, ln)
        idle = r.current is None and not r.header and not (r.run or r.stack or r.kv_in_run)
    _close(r.out, r.run, r.kv_in_run)
    return _finish(r)


def _step(r: _Reader, ln: Line) -> None:
    """One line: a GPU heading, a top field, a key/value, a section name, a gap, or the end of a block."""
    s = ln.text
    gpu = _GPU.match(s)
    kv = _KV.match(s)
    if gpu:
        r.current = SmiTextModule(bus(gpu.group(1)), "", {})
        r.out.modules.append(r.current)
        r.stack, r.run, r.cut, r.header, r.node_section = [], r.run + [ln.no], False, False, False
    elif _TOP.match(s.strip()) or s.strip().startswith("=="):
        _top_field(r.out, s)
        r.run.append(ln.no)
        r.kv_in_run += 1
        r.header = True
    elif r.header and _NODE_SECTION.match(s) and s.strip().lower() not in _KNOWN_SECTIONS:  # the node's section
        r.current, r.stack, r.node_section = None, [], True
        r.run.append(ln.no)
    elif kv and kv.group(1) and r.node_section and r.current is None:
        r.run.append(ln.no)
        r.kv_in_run += 1
    elif kv and (kv.group(1) or r.current is not None or kv.group(2).strip() in _OPENS):  # a flush-left
        _key_value(r, ln, kv)  # excerpt of Processes, or of a block from its first key (a paste dedented), starts one
    elif s.strip().lower() in _KNOWN_SECTIONS and not s[:1].isspace():
        # flush left: an older driver's (or a flattened paste's) section name; an excerpt may begin
        # with one (no GPU line above it): its key/value lines make the unnamed module
        r.stack = [(0, s.strip())]
        r.flush.append(ln.no)
        r.run.append(ln.no)
    elif sec := _SECTION.match(s):  # a section name: part of the block if key/value lines follow it
        indent = len(sec.group(1))
        while r.stack and r.stack[-1][0] >= indent:
            r.stack.pop()
        r.stack.append((indent, sec.group(2).strip()))
        r.run.append(ln.no)
    elif not s.strip() or ln.elision or s == "--" and r.current is not None:  # grep -A's separator: a cut
        if r.run:
            r.run.append(ln.no)
        r.cut = r.cut or ln.elision or s == "--"  # a key read again after it is the next GPU's, else the same one's
    else:
        _close(r.out, r.run, r.kv_in_run)
        r.run, r.current, r.stack, r.kv_in_run = [], None, [], 0


def _key_value(r: _Reader, ln: Line, kv: re.Match[str]) -> None:
    """A `Key : value` line; a key read again after a cut starts the next GPU's block, whose line was cut away."""
    if r.current is None or ((r.current.bus_id.startswith(UNNAMED) or r.cut) and _repeats(r.current, r.stack, kv)):
        r.cut = False
        r.current = SmiTextModule(_unnamed(r.out), "", {})
        r.out.modules.append(r.current)
    value = (kv.group(3) or "").strip()
    bare = _MARKER.sub("", value)
    if bare != value:
        r.marked.append(ln.no)
    _add(r.current, r.stack, len(kv.group(1)), kv.group(2).strip(), bare)
    r.run.append(ln.no)
    r.kv_in_run += 1


def _finish(r: _Reader) -> SmiText:
    """The modules that hold fields, merged where -q was printed twice, with the notes of the pass."""
    out = r.out
    read = [m for m in out.modules if m.fields and not _stray_pid(m)  # R10D: a block without its GPU line by -q's names
            and (not m.bus_id.startswith(UNNAMED) or q_marked(list(m.fields)))]
    out.notes += _named_by_bus_field(read)
    out.notes += _cut(read)
    out.modules, twice = merge_smi(read)  # -q twice (bug reports): one module
    out.notes += twice
    out.notes += smi_fabric.domains(out.modules)  # FX68E: the NVLink domain each module joined
    out.notes += _virtualized(out.modules)  # issue 46 (BJ): a vGPU host's GPU, or a vGPU guest's, said
    if out.attached is not None and out.modules and len(out.modules) < out.attached:
        out.notes.append(f"nvidia-smi -q: 'Attached GPUs : {out.attached}' but the paste lists {len(out.modules)} GPU "
                         f"block(s): {out.attached - len(out.modules)} module(s) of the node are not in the capture "
                         "(cut, or -q -i one GPU); nothing is judged of them")
    if r.marked:
        out.notes.append(f"nvidia-smi -q: a marker after the value (e.g. '<===') removed at line(s) {ranges(r.marked)}")
    if r.flush:
        out.notes.append(f"nvidia-smi -q: section name(s) printed flush left at line(s) {ranges(r.flush)}: read as sections")
    return out


def _virtualized(modules: list[SmiTextModule]) -> list[str]:
    """Each module -q says is virtualized (GPU Virtualization Mode: Host VGPU with its Host VGPU Mode, VGPU in a guest,
    Pass-Through): a setting of the node, said, not judged."""
    notes = []
    for m in modules:
        mode = get(m.fields, "GPU Virtualization Mode/Virtualization Mode")
        if mode is None or mode.strip().lower() in ("none", "n/a", ""):
            continue
        host = get(m.fields, "GPU Virtualization Mode/Host VGPU Mode")
        said = f"{mode.strip()} ({host.strip()})" if host and host.strip().lower() not in ("n/a", "") else mode.strip()
        notes.append(f"nvidia-smi -q: {m.bus_id} GPU Virtualization Mode: {said}")
    return notes


_BUS_VALUE = re.compile(r"^([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])$")


def _named_by_bus_field(modules: list[SmiTextModule]) -> list[str]:
    """An excerpt cut below its 'GPU xxxx' line that still holds the PCI section's 'Bus Id' names its module by
    it, as the GPU line would (one Bus Id per block: -q prints it once); a bus id another block names is left."""
    named = {m.bus_id for m in modules if not m.bus_id.startswith(UNNAMED)}
    notes: list[str] = []
    for m in modules:
        ids = {v.strip() for p, v in m.fields.items() if p.rsplit("/", 1)[-1] == "Bus Id"}
        if m.bus_id.startswith(UNNAMED) and len(ids) == 1 and (b := _BUS_VALUE.match(ids.pop())) is not None \
                and bus(b.group(1)) not in named:
            notes.append(f"nvidia-smi -q: a block without its 'GPU …' line named by its Bus Id field ({b.group(1)})")
            m.bus_id = bus(b.group(1))
            named.add(m.bus_id)
    return notes


def _bound(lines: list[Line], where: str) -> None:
    """The bound -q -x and the AMD listings keep (docs/limits.md), counted on the GPU lines before any block is read."""
    places = starting(lines, "G")  # a long text's (lines.TextLines): only its lines opening with 'G' made
    chosen = lines if places is None else map(lines.__getitem__, places)
    heads = {g.group(1).upper()[-12:] for ln in chosen if ln.text[:4] == "GPU " and (g := _GPU.match(ln.text))}
    if len(heads) > MAX_MODULES:
        raise CaptureError(f"nvidia-smi -q lists {len(heads):,} GPUs (at most {MAX_MODULES:,}, the bound of every "
                           "module listing: docs/limits.md)", where=where, fix="give the capture of one node.")


def _cut(modules: list[SmiTextModule]) -> list[str]:
    """A copy that stops inside a GPU's block: the last block holds the first fields of the one before it, in
    the same order, and stops short of the rest (its missing fields are not zeros or 'not captured')."""
    if len(modules) < 2 or modules[-1].bus_id.startswith(UNNAMED):
        return []
    last = list(modules[-1].fields)
    if any(p.split("/")[0] == "Processes" for p in last):
        return []  # it reached its last section (processes differ per GPU)
    before = [p for p in modules[-2].fields if p.split("/")[0] != "Processes"]
    if not last or len(last) >= len(before) or before[:len(last) - 1] != last[:-1]:
        return []
    return [f"nvidia-smi -q: GPU {modules[-1].bus_id}'s block stops after {len(last)} of the {len(before)} fields "
            f"the GPU before it shows (the capture is cut short there): its other fields are missing, not read"]


def _close(out: SmiText, run: list[int], kv_count: int) -> None:
    """A block counts as nvidia-smi output when it holds at least two `Key : value` lines."""
    if kv_count >= 2:
        out.claimed.update(run)


def _unnamed(out: SmiText) -> str:
    k = sum(m.bus_id.startswith(UNNAMED) for m in out.modules)
    return UNNAMED if k == 0 else f"{UNNAMED} #{k + 1}"


def _repeats(m: SmiTextModule, stack: list[tuple[int, str]], kv: re.Match[str]) -> bool:
    """A key seen again in an unnamed excerpt: the next GPU's excerpt (grep -A of several GPUs)."""
    indent = len(kv.group(1))
    path = "/".join([s for i, s in stack if i < indent] + [kv.group(2).strip()])
    return path in m.fields and not path.startswith("Processes/")  # each process repeats its keys


_PROCESS_HEAD = ("GPU instance ID", "Process ID")  # the first key of each entry -q prints under Processes
_OPENS = (*_PROCESS_HEAD, "Product Name")  # flush-left keys that open a module: 'Product Name' is a block's first
_PROCESS_KEYS = frozenset(("GPU instance ID", "Compute instance ID", "Type", "Name", "Used GPU Memory"))


def _stray_pid(m: SmiTextModule) -> bool:
    """An unnamed 'module' of a 'Process ID : N' line and keys -q never prints beside it (a crash report's
    'Process Name'): not an excerpt of -q's Processes, whose entries hold its own keys."""
    return m.bus_id.startswith(UNNAMED) and all(p.startswith("Processes/") for p in m.fields) and \
        not any(p.rsplit("/", 1)[-1] in _PROCESS_KEYS for p in m.fields)


def _add(m: SmiTextModule, stack: list[tuple[int, str]], indent: int, key: str, value: str) -> None:
    while stack and stack[-1][0] >= indent:
        stack.pop()
    if not stack and key in _PROCESS_HEAD:  # an excerpt that starts inside Processes (its heading cut)
        stack.append((indent - 1, "Processes"))  # its entries are processes, not the next GPU's fields
    if value:
        if key == "Process ID" and stack and stack[-1][1] == "Processes":  # each process's Type, Name, memory
            stack.append((indent, f"Process {value}"))  # sit under its pid: one path per process, not the last only
        m.fields["/".join([s for _, s in stack] + [key])] = value
        if key == "Product Name" and not any(name == _LICENSED for _, name in stack):
            m.product = value
    else:
        stack.append((indent, key))


def _top_field(out: SmiText, s: str) -> None:
    key, _, value = s.partition(":")
    if key.strip() == "Driver Version":
        out.driver = value.strip() or None
    elif key.strip() == "CUDA Version":
        out.cuda = value.strip() or None
    elif key.strip() == "Attached GPUs" and value.strip().isdigit():
        out.attached = int(value.strip())


# --- health --------------------------------------------------------------------------------
def get(fields: dict[str, str], *suffixes: str) -> str | None:
    for suffix in suffixes:
        for path, value in fields.items():
            if path == suffix or path.endswith("/" + suffix):
                return value
    return None


def _yes(value: str | None) -> bool | None:
    if value is None:
        return None
    v = value.strip().lower()
    return True if v in ("yes", "true", "active") else False if v in ("no", "false", "not active") else None


def _sum_uncorrectable(fields: dict[str, str], scope: str) -> int | None:
    total, seen = 0, False
    for path, value in fields.items():
        parts = path.split("/")
        if "ECC Errors" not in parts or scope not in parts:
            continue
        leaf = "/".join(parts[parts.index(scope) + 1:])
        if "Uncorrectable" in leaf or leaf in ("Double Bit/Device Memory", "Double Bit/Total"):
            n = integer(value)
            if n is not None and n >= 0:
                total, seen = total + n, True
            if leaf == "Double Bit/Total":
                return n if n is not None and n >= 0 else None
    return total if seen else None


def events(fields: dict[str, str]) -> frozenset[str]:
    active = set()
    for path, value in fields.items():
        parts = path.split("/")
        if any(sec in parts for sec in _EVENT_SECTIONS) and not any("Counters" in p for p in parts) \
                and value.strip() == "Active":
            active.add(re.sub(r"\W+", "_", parts[-1].strip().lower()).strip("_"))
    return frozenset(active)


def health(m: SmiTextModule) -> ModuleHealth:
    f = m.fields
    bad: list[str] = []
    retired = [integer(get(f, f"Retired Pages/{k}")) for k in ("Single Bit ECC", "Double Bit ECC")]
    return ModuleHealth(
        module=m.bus_id, product=m.product or None,
        pcie_gen=integer(get(f, "PCIe Generation/Current", "PCIe Generation/Device Current")),
        pcie_gen_max=integer(get(f, "PCIe Generation/Device Max", "PCIe Generation/Max")),
        pcie_width=integer(get(f, "Link Width/Current")), pcie_width_max=integer(get(f, "Link Width/Max")),
        pcie_gen_link_max=_link_max(f),
        utilization_pct=reading(get(f, "Utilization/Gpu", "Utilization/GPU"), (0.0, 100.0), "Utilization/Gpu", bad),
        clock_events=events(f), ecc_mode=get(f, "ECC Mode/Current", "Ecc Mode/Current"),  # older drivers: "Ecc"
        ecc_present_said=AMBIGUOUS_ECC not in f,
        ecc_uncorrectable_volatile=_sum_uncorrectable(f, "Volatile"),
        ecc_uncorrectable_aggregate=_sum_uncorrectable(f, "Aggregate"),
        retired_pages_pending=_yes(get(f, "Retired Pages/Pending Page Retirement", "Retired Pages/Pending Page Blacklist",
                                        "Retired Pages/Pending")),
        retired_pages=sum(r for r in retired if r is not None) if any(r is not None for r in retired) else None,
        remap_pending=_yes(get(f, "Remapped Rows/Pending")),
        remap_failure=_yes(get(f, "Remapped Rows/Remapping Failure Occurred")),
        remap_uncorrectable=integer(get(f, "Remapped Rows/Uncorrectable Error")),
        temperature_c=reading(get(f, "Temperature/GPU Current Temp", "Temperature/Gpu"), TEMP_C, "GPU Current Temp",
                              bad),
        temperature_max_operating_c=reading(get(f, "Temperature/GPU Max Operating Temp"), TEMP_C,
                                            "GPU Max Operating Temp", bad),
        temperature_slowdown_c=reading(get(f, "Temperature/GPU Slowdown Temp"), TEMP_C, "GPU Slowdown Temp", bad),
        margin_c=reading(get(f, "Temperature/GPU T.Limit Temp"), MARGIN_C, "GPU T.Limit Temp", bad),
        slowdown_margin_c=reading(get(f, "Temperature/GPU Slowdown T.Limit Temp"), MARGIN_C,
                                  "GPU Slowdown T.Limit Temp", bad),
        max_operating_margin_c=reading(get(f, "Temperature/GPU Max Operating T.Limit Temp"), MARGIN_C,
                                       "GPU Max Operating T.Limit Temp", bad),
        sm_clock_mhz=reading(_exact(f, "Clocks/SM"), CLOCK_MHZ, "Clocks/SM", bad),
        sm_clock_max_mhz=reading(_exact(f, "Max Clocks/SM"), CLOCK_MHZ, "Max Clocks/SM", bad), corrupt=tuple(bad),
        fabric_state=_told(get(f, "Fabric/State")), fabric_status=_told(get(f, "Fabric/Status")),
        fabric_health=_told(get(f, "Fabric/Health/Summary")),
        fabric_health_detail=smi_fabric.health_detail(f), fabric_clique=smi_fabric.clique(f),  # FX68E
        unreadable=(*(k for k in m.unread if not _HOST_SIDE.search(k)), *unreadable(f)),
        unread_as=tuple(dict.fromkeys((*m.unread_as, *(f[k].strip() for k in unreadable(f))))),
        not_read=(*m.not_read, *(k for k, v in f.items() if _NOT_KNOWN.fullmatch(v.strip()))),
        reset_told=reset_told(get(f, "GPU Reset Status/Reset Required"),
                              get(f, "GPU Reset Status/Drain and Reset Recommended"), get(f, "GPU Recovery Action"))
        or nv_driver_faults.reset_asked(f),  # R9A: fields NVML answered RESET_REQUIRED
        lost_told=nv_driver_faults.lost_said(f),  # REVFIX65: fields NVML answered GPU_IS_LOST
    )


_NO_ACTION = ("none", "n/a", "no", "")


def reset_told(required: str | None, drain: str | None, action: str | None) -> str | None:
    """The driver's own word that the module needs a reset or more: -q's 'GPU Reset Status' (Reset Required,
    Drain and Reset Recommended: Yes) or, on newer drivers, 'GPU Recovery Action' (Reset, Node Reboot Required,
    Drain P2P …), said as printed; None where each says no, N/A or 'Requested functionality has been deprecated'."""
    said = [f"Reset Required: {required.strip()}" if required and required.strip().lower() == "yes" else "",
            f"Drain and Reset Recommended: {drain.strip()}" if drain and drain.strip().lower() == "yes" else "",
            f"GPU Recovery Action: {action.strip()}" if action and action.strip().lower() not in _NO_ACTION
            and "deprecated" not in action.lower() else ""]
    return "; ".join(s for s in said if s) or None


def _link_max(f: dict[str, str]) -> int | None:
    """The top generation the link can train to: -q's 'Max' (the lower of host and device), or the lower of
    'Device Max' and 'Host Max' where only those are printed; a slot's lower generation is no module fault."""
    top = integer(get(f, "PCIe Generation/Max"))
    if top is not None:
        return top
    known = [g for g in (integer(get(f, "PCIe Generation/Device Max")), integer(get(f, "PCIe Generation/Host Max")))
             if g is not None]
    return min(known) if known else None


MARGIN_C = (-100.0, 200.0)  # a T.Limit margin in °C: negative past the limit, never a temperature


_NOT_KNOWN = re.compile(r"\[?(?:N/A|Not Supported)\]?", re.I)  # REVFIX65: a field the module does not report
_CANNOT_READ = re.compile(r"\[?(?:Unknown Error|ERR!|GPU requires reset|GPU is lost)\]?", re.I)  # R9A: NVML's two


def unreadable(fields: dict[str, str]) -> tuple[str, ...]:
    """The fields nvidia-smi printed as 'Unknown Error' (or ERR!): NVML could not read them from the module.
    The ECC mode is left to its own reading (an unreadable ECC state is a module needing a reset)."""
    return tuple(k for k, v in fields.items() if _CANNOT_READ.fullmatch(v.strip()) and not k.lower().startswith("ecc")
                 and not _HOST_SIDE.search(k))


# R13A: what the host's side of the link gives (a VM's passed-through slot reads 'Host Max : Unknown Error'): the
# host's field unread, not the module
_HOST_SIDE = re.compile(r"(?:^|/)Host Max$|(?:^|/)Host VGPU Mode$", re.I)


def _told(value: str | None) -> str | None:
    """A field's value, None where the tool printed N/A (not known)."""
    return None if value is None or value.strip().upper() in ("N/A", "") else value.strip()


_PROCESS = re.compile(r"(?:^|/)Processes/Process [^/]+/Process ID$")
_NO_PROCESS = ("none", "no running processes found")


def processes(fields: dict[str, str]) -> tuple[SmiProcess, ...] | None:
    """The processes -q lists on the module ('Processes : None' is none); None where the capture shows no
    Processes section (an excerpt, a cut copy): not known, never 'none'."""
    listed = [(p, v) for p, v in fields.items() if _PROCESS.search(p)]
    if not listed:
        said = get(fields, "Processes")
        return () if said is not None and said.strip().lower() in _NO_PROCESS else None
    out = []
    for path, pid in listed:
        base = path[: -len("/Process ID")]
        out.append(SmiProcess(pid, fields.get(f"{base}/Type"), fields.get(f"{base}/Name"),
                              fields.get(f"{base}/Used GPU Memory")))
    return tuple(out)


def _exact(fields: dict[str, str], path: str) -> str | None:
    """A field by its whole path ('Clocks/SM' is not 'Max Clocks/SM' nor 'Applications Clocks/SM')."""
    return fields.get(path)


# --- nvidia-smi dmon ---------------------------------------------------------------------------
# nvidia-smi dmon's '# gpu pwr …' and dcgmi dmon's '#Entity  NLXMITP …' (its rows 'GPU 0  …', its units line 'ID')
_DMON_HEAD = re.compile(r"^#\s*(?:gpu|Entity)\s+(.*)$", re.I)
_DMON_ROW = re.compile(r"^\s*(?:GPU\s+)?(\d+)((?:\s+(?:-?[\d.]+|-|N/A))+)\s*$")
# the command itself ('dcgmi dmon -e 155,150', '$ dcgmi dmon -i 0 -e 203 -c 1'): its field ids are the columns of
# rows printed without the '#Entity' header; such a row is the entity's index, then its cells as printed
_DCGMI_CMD = re.compile(r"^(?:[$#>]\s*)?(?:sudo\s+)?dcgmi\s+dmon\b[^\n]*?\s-e\s+(\d{1,4}(?:\s*,\s*\d{1,4})*)")
_DCGMI_ROW = re.compile(r"^\s*(?:GPU\s+)?(\d{1,3})\s+(\S.{0,200})$")


@dataclass(frozen=True)
class DmonSample:
    """One `nvidia-smi dmon` line: the module's index and its columns as printed (pwr, gtemp, sm, pclk …)."""

    gpu: int
    values: dict[str, float | None]
    line: int


@dataclass
class Dmon:
    samples: list[DmonSample] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def parse_dmon(lines: list[Line]) -> Dmon:
    """`nvidia-smi dmon` blocks: the `# gpu pwr …` header, its units line, then one row per module per tick."""
    out = Dmon()
    columns: list[str] | None = None
    bare = False  # columns from dcgmi's command line: a row may run its cells together (its print overflows)
    heads = None if not isinstance(lines, TextLines) else lines.holding(["#", "dmon"])  # a long text's: only the
    for ln in walk(lines, lambda: columns is not None, heads):  # noqa: B023 (now) lines the test below keeps are made
        if columns is None and "#" not in ln.text and "dmon" not in ln.text:
            continue  # no dmon block open, and no header here
        s = ln.text.strip()
        if "dmon" in s and (c := _DCGMI_CMD.match(s)) is not None:
            columns, bare = [f"field {f.strip()}" for f in c.group(1).split(",")], True
            out.claimed.add(ln.no)
        elif bare and columns is not None and _DMON_ROW.match(s) is None and (b := _DCGMI_ROW.match(s)) is not None:
            out.samples.append(DmonSample(int(b.group(1)), dict.fromkeys(columns), ln.no))  # its cells unread
            out.claimed.add(ln.no)
            out.notes.append(f"line {ln.no}: a dcgmi dmon row whose cells run together ({b.group(2)[:40]!r}): "
                             "not read as values")
        elif (h := _DMON_HEAD.match(s)) is not None and "pid" in h.group(1).lower().split()[:1]:
            columns = None  # pmon's '# gpu pid type …' (and nvidia-top's '#  GPU  PID'): per process, monitor_tools'
        elif h is not None:
            columns = h.group(1).split()
            out.claimed.add(ln.no)
        elif columns is not None and (s.startswith("#") or s == "ID"):
            out.claimed.add(ln.no)  # the units line (# Idx W C C % …; dcgmi's 'ID')
        elif columns is not None and (r := _DMON_ROW.match(s)) is not None:
            cells = r.group(2).split()
            out.samples.append(DmonSample(int(r.group(1)), {c: number(v) for c, v in zip(columns, cells, strict=False)},
                                          ln.no))
            out.claimed.add(ln.no)
        elif s:
            columns, bare = None, False
    if out.samples:
        gpus = sorted({x.gpu for x in out.samples})
        out.notes.append(f"nvidia-smi dmon: {len(out.samples)} sample(s) of {len(gpus)} module(s) read; dmon gives "
                         "no bus ids, limits or throttle reasons, so no check judges it alone")
    return out
