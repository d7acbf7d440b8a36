"""`nvidia-smi -L`: one line per module (``GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-…)``), older
drivers without the ``NVIDIA`` prefix, MIG instances indented under their module (``MIG 1g.10gb
Device 0: (UUID: MIG-…)``), and several modules on one line, as an issue form or a post's prose
joins them; a line whose UUID the poster elided (``GPU 0: NVIDIA H100 80GB HBM3 ...``, as pasted from
gpu-burn's echo of the listing) keeps its index and name where the name is a GPU model's. The
driver's own listing a bug report holds (``/proc/driver/nvidia/gpus/<bus>/information``: ``Model:``,
``GPU UUID:``, ``Video BIOS:``, ``Bus Location:``) gives each module with its bus id. Each module
keeps the index, name and UUID printed; -L prints no bus id, so none is given (never guessed from the
order). Read into the same module record as the other listings, so inventory and doctor see the modules."""

from __future__ import annotations

import re

from gpuvet.captures.records import SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import MAX_MODULES, Line
from gpuvet.node.catalog import find_model

_UUID = r"[^()\s]{1,60}"  # GPU-<hex> as printed, or what the poster put in its place (GPU-xxxx, <redacted>)
# 'GPU 3: NAME (UUID: GPU-…)' at the start of a line or after a space (several pasted on one line)
# a module line: at the line's start or after a blank, a quote or a backtick (`GPU 0: … (UUID: …)` quoted in prose)
_MODULE = re.compile(r"(?:^|(?<=[\s`'\"\u201c]))GPU (\d{1,4}): ([^()\n]{1,96}?) \(UUID: (" + _UUID + r")\)")
# the same line with its '(UUID: …)' elided: a model name (a letter and a digit in it), then '...' or '…'
_ELIDED = re.compile(r"^\s*GPU (\d{1,4}): ((?=[^()\n]*[A-Za-z])(?=[^()\n]*\d)[^()\n]{2,96}?)\s*(?:\.{3}|…)\s*$")
# a GPU model word in an elided line: a brand (NVIDIA, Tesla, GeForce, Quadro, TITAN, RTX/GTX) or a family letter
# and its number (A100, H100, V100, T4, L40S, A10G, GH200, B200); else the catalog's name ('loading shard 1 of 8' has none)
_MODEL_WORD = re.compile(r"\b(?:NVIDIA|Tesla|GeForce|Quadro|TITAN|[RG]TX|(?:A|B|H|L|T|V|P|K|M|GH|GB)\d{1,4}[A-Z]{0,2})\b")
_CAPABILITY = re.compile(r"^\s*Link (\d{1,2}), ([A-Za-z0-9 ]{3,60}): (true|false)\s*$")  # nvidia-smi nvlink -c
# a job task's prefix before its module line: srun --label's 'N: ', or an echoed task variable ('PROC_ID=0 ')
_TASK = re.compile(r"\s*(?:\d{1,4}: |\S*?(?:PROC_?ID|RANK|TASK_?ID)=\d{1,4}\s+)$")
_NODES = re.compile(r"\s(?:-N\s*|--nodes[= ])(?:[2-9]|\d\d)")  # an srun on several nodes
_MIG = re.compile(r"^\s*MIG\s+(\S{1,40})\s+Device\s+(\d{1,3}):\s*\(UUID: (MIG-[^)\s]{1,120})\)")


_PROC_KEY = re.compile(r"^\s*(Model|GPU UUID|Video BIOS|Bus Location|Bus Type|IRQ|Device Minor|GPU Excluded|"
                       r"DMA Size|DMA Mask|Firmware):\s+(\S.{0,120}?)\s*$")
_PROC_BUS = re.compile(r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")
_PROC_FIELDS = {"GPU UUID": "GPU UUID", "Video BIOS": "VBIOS Version", "Device Minor": "Minor Number"}


def _proc_information(lines: list[Line], out: SmiText) -> None:
    """The driver's /proc/driver/nvidia/gpus/<bus>/information blocks (a bug report prints each): a block
    is a module when it names its model and its bus location."""
    block: dict[str, str] = {}
    seen: list[int] = []
    for ln in [*lines, Line(-1, "")]:
        m = _PROC_KEY.match(ln.text)
        if m is not None:
            block[m.group(1)] = m.group(2)
            seen.append(ln.no)
            continue
        bus = _PROC_BUS.fullmatch(block.get("Bus Location", ""))
        if block.get("Model") and bus is not None and len(out.modules) < MAX_MODULES:
            fields = {_PROC_FIELDS[k]: v for k, v in block.items() if k in _PROC_FIELDS}
            out.modules.append(SmiTextModule(bus.group(0).upper()[-12:], block["Model"], fields))
            out.claimed |= set(seen)
        block, seen = {}, []


def parse(lines: list[Line]) -> SmiText:
    """Every module line of an `nvidia-smi -L` listing in the lines (possibly none), MIG instances
    counted under the module above them; else the driver's /proc listing a bug report holds."""
    out = _listing(lines)
    if not out.modules and any("Bus Location:" in ln.text for ln in lines):
        _proc_information(lines, out)
        if out.modules:
            out.notes.append(f"driver's /proc listing: {len(out.modules)} module(s) read (model, bus id, UUID, VBIOS)")
    return out


def _listing(lines: list[Line]) -> SmiText:
    out = SmiText()
    by_uuid: dict[tuple[str, str], SmiTextModule] = {}  # (index, UUID as printed): a redacted UUID repeats
    last: SmiTextModule | None = None
    # issue 43: a module line holds 'GPU ', a MIG line 'MIG', a capability line 'Link ': the others do nothing here
    tasks: list[SmiTextModule] = []  # the modules a job task's line lists ('0: GPU 0: …', 'PROC_ID=1 GPU 0: …')
    for ln in [ln for ln in lines if "GPU " in (t := ln.text) or "MIG" in t or "Link " in t]:
        found = list(_MODULE.finditer(ln.text)) if "UUID" in ln.text else [
            e for e in [_ELIDED.match(ln.text) if "GPU " in ln.text else None] if e is not None and _is_model(e.group(2))]
        if found:
            for m in found:
                last = _module(out, by_uuid, m)
            if last is not None and found[0].start() and _TASK.match(ln.text, 0, found[0].start()) \
                    and all(last is not t for t in tasks):
                tasks.append(last)
            out.claimed.add(ln.no)
        elif last is None:
            continue
        elif (mig := _MIG.match(ln.text)) is not None:
            _mig(last, mig)
            out.claimed.add(ln.no)
        elif (cap := _CAPABILITY.match(ln.text)) is not None:
            _capability(last, cap)
            out.claimed.add(ln.no)
        if len(out.modules) > MAX_MODULES:
            out.notes.append(f"nvidia-smi -L: more than {MAX_MODULES} modules: not one node, the rest not read")
            break
    if out.modules:
        out.notes.append(_note(out.modules, sum(key[1] == "elided" for key in by_uuid)))
    _task_views(lines, tasks, out)
    return out


def _task_views(lines: list[Line], tasks: list[SmiTextModule], out: SmiText) -> None:
    """Job tasks' own listings on one node (an echoed task variable, or srun --label's 'N: ', which text.clean
    peels, on one node's srun): each task numbers the GPUs it sees from 0 (ConstrainDevices, --gpus-per-task), so
    one index printed by two tasks for two UUIDs is two GPUs of the node, not two nodes: their printed index is
    the task's, not the node's, and is not kept (R3A). Looked at only where an index repeats."""
    indexes = [m.fields.get("Index") for m in out.modules]
    if len(set(indexes)) == len(indexes):
        return
    if len({m.fields.get("Index") for m in tasks}) == len(tasks):
        runs = [ln.text for ln in lines if "srun " in ln.text]
        if not runs or any(_NODES.search(t) for t in runs):
            return  # no job's tasks, or tasks on several nodes: two listings (module_lists refuses them)
        tasks = out.modules
    for m in tasks:
        m.fields.pop("Index", None)
    out.notes.append(f"nvidia-smi -L in {len(tasks)} job task(s)' own view: each numbers its GPUs from 0, so "
                     "the node's index of each is not printed (told apart by UUID)")


def _is_model(name: str) -> bool:
    """An elided line's name is a GPU model: a model word in it, or the catalog knows it."""
    return _MODEL_WORD.search(name) is not None or find_model(name) is not None


def _note(modules: list[SmiTextModule], elided: int) -> str:
    """What was read; a UUID is claimed only for the lines that printed one."""
    migs = sum(int(m.fields.get("MIG Devices", "0")) for m in modules)
    uuid = "UUID" if not elided else ("no UUID: the poster elided it" if elided == len(modules) else
                                      f"UUID; {elided} line(s) with it elided")
    return (f"nvidia-smi -L: {len(modules)} module(s) read (index, name, {uuid}"
            f"{f'; {migs} MIG instance(s)' if migs else ''}); -L prints no bus id, PCIe link or health fields")


def _module(out: SmiText, by_uuid: dict[tuple[str, str], SmiTextModule], m: re.Match[str]) -> SmiTextModule:
    """One module line (also the header of nvlink -s/-e/-c's blocks that nothing else claimed); the same
    UUID listed again (the listing pasted twice) is one module."""
    uuid = m.group(3) if m.re is _MODULE else "elided"
    key = (m.group(1), uuid)
    if key in by_uuid:
        return by_uuid[key]
    fields = {"Index": str(int(m.group(1)))} | ({"GPU UUID": uuid} if re.fullmatch(r"GPU-[0-9a-fA-F-]{36}", uuid) else {})
    module = SmiTextModule(f"GPU {int(m.group(1))}", m.group(2).strip(), fields)
    by_uuid[key] = module
    out.modules.append(module)
    return module


def _capability(module: SmiTextModule, m: re.Match[str]) -> None:
    """`nvidia-smi nvlink -c`: the links whose 'Link is supported' (or, without that line, 'P2P is
    supported') reads true are counted; the capabilities say what a link may do, not that it is up."""
    if m.group(2).strip().lower() in ("link is supported", "p2p is supported"):
        links = set(filter(None, module.fields.get("NVLink Links Supported", "").split(",")))
        links.discard(m.group(1)) if m.group(3) == "false" else links.add(m.group(1))
        module.fields["NVLink Links Supported"] = ",".join(sorted(links, key=int))


def _mig(module: SmiTextModule, m: re.Match[str]) -> None:
    """A MIG instance under its module: counted, each profile kept as printed."""
    module.fields["MIG Devices"] = str(int(module.fields.get("MIG Devices", "0")) + 1)
    profiles = module.fields.get("MIG Profiles")
    module.fields["MIG Profiles"] = f"{profiles}, {m.group(1)}" if profiles else m.group(1)


def carry_uuids(smi: SmiText, listing: SmiText) -> None:
    """`nvidia-smi -L` beside the table (or another list without UUIDs) of the same modules: each module
    takes the UUID its -L line prints. Carried only where both list the same indices and each name agrees
    (the table elides long names with '...'); a listing of other modules (another node) carries none."""
    by_index = {m.fields.get("Index"): m for m in listing.modules}
    indices = [m.fields.get("Index") for m in smi.modules]
    if None in indices or sorted(indices, key=str) != sorted(by_index, key=str):
        return
    pairs = [(m, by_index[m.fields.get("Index")]) for m in smi.modules]
    if not all(_same_name(m.product, other.product) for m, other in pairs):
        return
    carried = [(m, other.fields["GPU UUID"]) for m, other in pairs
               if "GPU UUID" in other.fields and "GPU UUID" not in m.fields]
    for m, uuid in carried:
        m.fields["GPU UUID"] = uuid
    if carried:
        smi.notes.append(f"nvidia-smi -L: the UUIDs of {len(carried)} module(s) carried onto the same indices "
                         "and names")


def _same_name(table: str, listed: str) -> bool:
    """A table's name and -L's of one module: equal, or the table's cut short with '...' or '…'."""
    short = table.rstrip(".… ").strip()
    return bool(short) and (table.strip() == listed.strip() or (short != table.strip() and listed.startswith(short)))
