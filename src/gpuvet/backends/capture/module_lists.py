"""The module lists a capture gives, as ModuleInfo: nvidia-smi -q -x (XML), nvidia-smi -q text (or
the table, the --query-gpu CSV) and the AMD and Ascend listings, each module under the tool's own
index. module_info, which every list goes through, checks each figure is physical: a corrupt
reading is noted and left out, never used. Apart from the backend because it is where a printed
field becomes a reading, and the one place those bounds live."""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

from gpuvet import __version__
from gpuvet.backends.readings import ModuleInfo, SoftwareInfo, Unavailable
from gpuvet.captures import smi_text, smi_xml
from gpuvet.captures.driver_ids import DriverId, DriverIds
from gpuvet.captures.kernel import KernelModule
from gpuvet.captures.links import ListedGpu
from gpuvet.captures.lspci_list import product_name
from gpuvet.captures.records import ListedModule, SmiProcess, SmiTextModule
from gpuvet.captures.text import clean, integer, number, reading
from gpuvet.errors import CaptureError
from gpuvet.node.catalog import CATALOG, VENDOR_CODE, find_model, pci_product
from gpuvet.node.model import Module

NOT_IN_CAPTURE = Unavailable("not in the captured file")
_WIDTHS = (1, 2, 4, 8, 12, 16, 32)
_GENS = {2.5: 1.0, 5.0: 2.0, 8.0: 3.0, 16.0: 4.0, 32.0: 5.0, 64.0: 6.0}  # PCIe transfer rate (GT/s) -> generation
_MAX_MIB = 10 * max(m.memory_mib or 0 for m in CATALOG.values())  # 10x the largest module known: a corrupt reading


def listed_indexes(modules: list[ListedModule]) -> list[int]:
    """The tool's own index of each module (rocm-smi's GPU[1], amd-smi's GPU: 1, npu-smi's NPU 1), so a
    listing that starts at 1 or lists a subset keeps gpu1 as gpu1; numbered in order where the labels give
    no distinct index (rocm-bandwidth-test counts the CPUs among its devices, npu-smi's chips of one card)."""
    said = [int(m.group(0)) if (m := re.search(r"\d+", x.label)) else None for x in modules]
    if any(x.tool == "rocm-bandwidth-test" for x in modules) or None in said or len(set(said)) < len(said):
        return list(range(len(modules)))
    return [i for i in said if i is not None]


def listed_module(module_id: str, m: ListedModule, notes: list[str], numa: int | None = None) -> ModuleInfo:
    none4: tuple[str | None, str | None, str | None, str | None] = (None, None, None, None)
    cap = NOT_IN_CAPTURE if m.power_limit_w is None else m.power_limit_w
    info = module_info(module_id, m.name or _id_model(m, module_id, notes), m.uuid, m.bus_id or "", m.memory_mib,
                       (m.pcie_gen_current, m.pcie_gen_max), (m.pcie_width_current, m.pcie_width_max),
                       (cap, NOT_IN_CAPTURE, NOT_IN_CAPTURE), None, none4, None if numa is None else str(numa), notes)
    info = replace(info, serial=m.serial or info.serial, vbios_version=m.vbios or info.vbios_version)
    return info if m.processes is None else replace(info, processes=_pids(module_id, m.processes, notes))


def _id_model(m: ListedModule, module_id: str, notes: list[str]) -> str | None:
    """A module the tool names only by its PCI device id (rocm-smi's 'GPU ID: 0x687f'): the id said, and the
    model pci.ids gives it where gpuvet's table names it; None (unknown) otherwise."""
    if not m.device_id or not re.fullmatch(r"(0x)?[0-9A-Fa-f]{4}", m.device_id):
        return None
    known = pci_product(f"1002:{m.device_id[-4:].lower()}")
    notes.append(f"{module_id}: {m.tool or 'the tool'} prints device id {m.device_id}" + (
        f" ({known.product} in pci.ids)" if known else ", which gpuvet's pci.ids table does not name"))
    return f"AMD {known.product}" if known else None


def _plausible(value: float | None, what: str, ok: bool, notes: list[str], module: str) -> float | Unavailable:
    """A figure from the capture, or Unavailable with the reason when it is not physical."""
    if value is None:
        return NOT_IN_CAPTURE
    if not ok:
        notes.append(f"{module}: {what} {value:g} is not physical (a corrupt reading): ignored, shown as n/a")
        return Unavailable(f"implausible value in the capture ({value:g})")
    return value


def _memory(text: str | None, notes: list[str], module: str) -> float | None:
    """A memory total as printed; NaN or infinity is a corrupt reading, noted (None either way)."""
    bad: list[str] = []
    value = reading(text, (-math.inf, math.inf), "memory", bad)
    notes += [f"{module}: {b}" for b in bad]
    return value


def _int(v: float | Unavailable) -> int | Unavailable:
    return int(v) if isinstance(v, float) else v


def parse_smi_xml(text: str, where: str = "nvidia-smi -q -x") -> tuple[list[ModuleInfo], SoftwareInfo]:
    """Modules and software from ``nvidia-smi -q -x``. Raises CaptureError if it is not one."""
    modules, software, _ = read_smi_xml(text, where)
    return modules, software


def read_smi_xml(text: str, where: str) -> tuple[list[ModuleInfo], SoftwareInfo, list[str]]:
    xml = smi_xml.parse(clean(text).lines, where)
    if xml is None:
        raise CaptureError("no nvidia-smi XML found (expected <nvidia_smi_log> …)", where=where,
                           fix="capture it with `nvidia-smi -q -x > smi.xml`.")
    modules, software, notes = xml_modules(xml.root, where)
    return modules, software, xml.notes + notes


def xml_modules(root: ET.Element, where: str) -> tuple[list[ModuleInfo], SoftwareInfo, list[str]]:
    if root.tag not in ("nvidia_smi_log", "gpuvet_fragment"):
        raise CaptureError(f"root element is <{root.tag}>, expected <nvidia_smi_log>", where=where,
                           fix="capture it with `nvidia-smi -q -x > smi.xml`.")
    gpus = root.findall("gpu") if root.tag == "nvidia_smi_log" else root.findall(".//gpu") or (
        [root] if any(root.find(t) is not None for t in _GPU_PARTS) else [])  # a fragment from inside one <gpu>
    if len(gpus) > smi_xml.MAX_GPUS:
        raise CaptureError(f"{len(gpus)} <gpu> elements (at most {smi_xml.MAX_GPUS})", where=where,
                           fix="give the capture of one node.")
    uuids = [u for g in gpus if (u := smi_xml.text_of(g, "uuid"))]
    twice = sorted({u for u in uuids if uuids.count(u) > 1})
    if twice:
        raise CaptureError(f"two <gpu> elements have the same UUID {twice[0]}", where=where,
                           fix="give one unedited `nvidia-smi -q -x` per file.")
    notes: list[str] = []
    readable = [g for g in gpus if g.get("id") or smi_xml.text_of(g, "product_name") or smi_xml.text_of(g, "uuid")
                or g is root]
    if len(readable) < len(gpus):
        if not readable:
            raise CaptureError(f"{len(gpus)} <gpu> element(s) without an id, a name or a UUID (cut before its "
                               "first field?)", where=where, fix="capture it again with `nvidia-smi -q -x > smi.xml`.")
        notes.append(f"{len(gpus) - len(readable)} <gpu> element(s) without an id, a name or a UUID: left out")
    gpus = sorted(readable, key=lambda g: (g.get("id") or "").upper()[-12:])
    modules = [_xml_module(f"gpu{i}", g, notes) for i, g in enumerate(gpus)]
    software = SoftwareInfo(__version__, smi_xml.text_of(root, "driver_version") or NOT_IN_CAPTURE,
                            smi_xml.text_of(root, "cuda_version") or NOT_IN_CAPTURE, NOT_IN_CAPTURE)
    return modules, software, notes


_GPU_PARTS = ("power_readings", "gpu_power_readings", "temperature", "fb_memory_usage", "pci", "clocks")


def _xml_module(module_id: str, g: ET.Element, notes: list[str]) -> ModuleInfo:
    t = smi_xml.text_of
    link = "pci/pci_gpu_link_info"
    power = g.find("gpu_power_readings")  # drivers >= 535; older ones say power_readings
    if power is None:
        power = g.find("power_readings")

    def pw(*tags: str) -> float | Unavailable:
        for tag in tags:
            if power is not None and t(power, tag) is not None:
                return _watts(t(power, tag), tag, notes, module_id)
        return NOT_IN_CAPTURE

    info = module_info(module_id, t(g, "product_name"), t(g, "uuid"), (t(g, "pci/pci_bus_id") or g.get("id") or ""),
                   _memory(t(g, "fb_memory_usage/total"), notes, module_id),
                   (number(t(g, f"{link}/pcie_gen/current_link_gen")), number(t(g, f"{link}/pcie_gen/max_link_gen"))),
                   (number(t(g, f"{link}/link_widths/current_link_width")),
                    number(t(g, f"{link}/link_widths/max_link_width"))),
                   (pw("current_power_limit", "power_limit"), pw("default_power_limit"), pw("max_power_limit")),
                   t(g, "ecc_mode/current_ecc"),
                   (t(g, "clocks/sm_clock"), t(g, "clocks/mem_clock"), t(g, "max_clocks/sm_clock"),
                    t(g, "max_clocks/mem_clock")), t(g, "numa_node_id"), notes)
    info = replace(info, serial=_named(t(g, "serial")), vbios_version=_named(t(g, "vbios_version")),
                   inforom_version=_named(t(g, "inforom_version/img_version")),
                   gsp_firmware=_named(t(g, "gsp_firmware_version")))
    info = _mig(module_id, t(g, "mig_mode/current_mig"), t(g, "mig_mode/pending_mig"), notes, info)
    return _settings(module_id, t(g, "persistence_mode"), smi_xml.processes(g), notes, info)


def _named(text: str | None) -> str | Unavailable:
    """A serial or firmware version the capture names (what the module ledger and an RMA packet
    keep); left out or N/A: not in the capture."""
    value = (text or "").strip()
    return value[:64] if value and value.upper() != "N/A" else NOT_IN_CAPTURE


def smi_indexes(modules: list[SmiTextModule], notes: list[str]) -> list[str]:
    """nvidia-smi's own index of each module wherever the listing prints one (the table, a --query-gpu with
    index), so gpu1 stays gpu1; a module without one takes the lowest number no printed index uses, named
    in a note: never another module's index. One index printed for two modules is refused, never renumbered."""
    said = [str(int(i)) if i.isdigit() else "" for i in (m.fields.get("Index", "") for m in modules)]
    _one_module_per_index(said, modules)
    taken = set(filter(None, said))
    free = (str(n) for n in itertools.count() if str(n) not in taken)
    out: list[str] = []
    for i in said:
        out.append(i if i and i not in out else next(free))
    moved = [f"gpu{o} ({m.bus_id})" for i, o, m in zip(said, out, modules, strict=True) if i != o]
    if moved and taken:  # a listing that prints no index at all (-q) is numbered in its order, as always
        notes.append(f"nvidia-smi printed no index (or one an earlier module holds) for {', '.join(moved[:8])}"
                     f"{' …' if len(moved) > 8 else ''}: numbered after the indexes it printed")
    return out


def _one_module_per_index(said: list[str], modules: list[SmiTextModule]) -> None:
    """Two modules printed under one nvidia-smi index are two listings pasted together (two nodes, or
    one node listed twice across a change): renumbering one would invent a module, so the list is refused."""
    first: dict[str, SmiTextModule] = {}
    for index, m in zip(said, modules, strict=True):
        if not index:
            continue
        if index in first:
            other = first[index]
            ids = [x.fields.get("GPU UUID") or (x.bus_id if not x.bus_id.startswith("GPU") else "") or "no UUID"
                   for x in (other, m)]
            raise CaptureError(f"two listings of GPU {index} ({ids[0]}, {ids[1]}): two nodes, or one listed twice? "
                               "gpuvet will not renumber either", where="nvidia-smi listing",
                               fix="give each node's listing in its own file, one capture per node")
        first[index] = m


def text_module(module_id: str, m: SmiTextModule, notes: list[str]) -> ModuleInfo:
    f = m.fields

    def get(*keys: str) -> str | None:
        return smi_text.get(f, *keys)

    def pw(*keys: str) -> float | Unavailable:
        return _watts(get(*keys), keys[0].rsplit("/", 1)[-1], notes, module_id)

    fragment_bus = get("PCI/Bus Id", "Bus Id") or ""  # an excerpt from the PCI section names the module's bus id there
    info = module_info(module_id, m.product or None, get("GPU UUID"),
                   (fragment_bus if re.fullmatch(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]",
                                                 fragment_bus) else "") if m.bus_id.startswith("GPU") else m.bus_id,
                   _memory(get("FB Memory Usage/Total"), notes, module_id),
                   (number(get("PCIe Generation/Current")), number(get("PCIe Generation/Device Max",
                                                                           "PCIe Generation/Max"))),
                   (number(get("Link Width/Current")), number(get("Link Width/Max"))),
                   (pw(*_POWER_KEYS["Current Power Limit"]), pw(*_POWER_KEYS["Default Power Limit"]),
                    pw(*_POWER_KEYS["Max Power Limit"])),
                   get("ECC Mode/Current", "Ecc Mode/Current"),  # driver 535+ prints 'Ecc Mode'
                   (get("Clocks/SM"), get("Clocks/Memory"), get("Max Clocks/SM"), get("Max Clocks/Memory")), None,
                   notes)
    info = replace(info, serial=_named(get("Serial Number")), vbios_version=_named(get("VBIOS Version")),
                   inforom_version=_named(get("Inforom Version/Image Version")),
                   gsp_firmware=_named(get("GSP Firmware Version")),
                   compute_capability=_named(get("Compute Capability")))
    info = _mig(module_id, get("MIG Mode/Current"), get("MIG Mode/Pending"), notes, info)
    return _settings(module_id, get("Persistence Mode"), smi_text.processes(f), notes, info)


# driver >= 530 prints a 'GPU Power Readings' section (beside 'GPU Memory Power Readings' and 'Module Power
# Readings', whose limits are not the GPU's); older ones 'Power Readings', whose set limit is 'Power Limit'
_POWER_KEYS: dict[str, tuple[str, ...]] = {key: (f"GPU Power Readings/{key}", f"Power Readings/{key}") for key in
               ("Current Power Limit", "Default Power Limit", "Max Power Limit")}
_POWER_KEYS["Current Power Limit"] += ("GPU Power Readings/Power Limit", "Power Readings/Power Limit")
_WATTS = re.compile(r"\s*([-+]?(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|nan|inf(?:inity)?))\s*W?\s*", re.I)
_NOT_A_FIGURE = ("n/a", "[n/a]", "not supported", "[not supported]", "unknown error", "err!", "")


def _watts(text: str | None, what: str, notes: list[str], module: str) -> float | Unavailable:
    """A power figure as printed ('700.00 W'). One gpuvet cannot read as printed ('700,00 W' of a localised
    copy: 700 or 70000?) is named in a note and left out, never guessed; N/A is not in the capture."""
    if text is None or text.strip().lower() in _NOT_A_FIGURE:
        return NOT_IN_CAPTURE
    m = _WATTS.fullmatch(text)
    if m is None:
        comma = " (a decimal comma? a localised copy)" if "," in text else ""
        notes.append(f"{module}: {what} {text.strip()[:40]!r} is not a figure gpuvet reads{comma}: left out, "
                     "shown as n/a")
        return Unavailable(f"unreadable in the capture ({text.strip()[:40]!r})")
    v = float(m.group(1))
    return _plausible(v, f"power {what}", math.isfinite(v) and 0 < v < 5000, notes, module)


def _settings(module_id: str, persistence: str | None, procs: tuple[SmiProcess, ...] | None, notes: list[str],
              info: ModuleInfo) -> ModuleInfo:
    """Persistence mode and the compute processes a -q (text or XML) shows: doctor judges both."""
    said = (persistence or "").strip()
    mode: bool | Unavailable = (said == "Enabled" if said in ("Enabled", "Disabled") else NOT_IN_CAPTURE if not said
                                else Unavailable(f"the capture says {said[:40]!r}"))
    return replace(info, persistence_mode=mode, processes=_pids(module_id, procs, notes))


def _mig(module_id: str, current: str | None, pending: str | None, notes: list[str], info: ModuleInfo) -> ModuleInfo:
    """MIG mode as printed (Enabled/Disabled; N/A on a module without MIG: n/a): which is on decides what a job
    sees (MIG instances, not the module); a pending mode unlike the current one waits for a reset, said in a note."""
    now, then = _enabled(current), _enabled(pending)
    if isinstance(now, bool) and isinstance(then, bool) and now != then:
        notes.append(f"{module_id}: MIG mode {'Enabled' if now else 'Disabled'}, pending "
                     f"{'Enabled' if then else 'Disabled'}: the change waits for a module reset (nvidia-smi -r)")
    return replace(info, mig_mode=now, mig_mode_pending=then)


def _enabled(text: str | None) -> bool | Unavailable:
    said = (text or "").strip()
    return said == "Enabled" if said in ("Enabled", "Disabled") else NOT_IN_CAPTURE


def _pids(module_id: str, procs: tuple[SmiProcess, ...] | None, notes: list[str]) -> tuple[int, ...] | Unavailable:
    """The pids of the compute processes listed (type C, C+G, M…; a graphics-only G is not compute, nor a C+G
    whose memory has no figure: a desktop's client, as WDDM lists every window), each process named in a note
    as printed, so a finding's pid can be told from the job the user meant."""
    if procs is None:
        return NOT_IN_CAPTURE
    pids: list[int] = []
    shown: list[str] = []
    for p in procs:
        pid = integer(p.pid)
        cut = p.type is None and p.name is None and p.memory is None  # the excerpt stops after its pid
        compute = not cut and (p.type is None or p.type.strip().upper() != "G" and not _desktop(p))
        if pid is not None and pid >= 0 and compute:
            pids.append(pid)
        kind = "not a process id: left out" if pid is None or pid < 0 else "compute" if compute else \
            "its entry cut after the pid: not known" if cut else \
            "a desktop client, memory not reported" if _desktop(p) else "graphics only"
        shown.append(f"pid {p.pid[:20]} {(p.name or '?')[:60]} ({p.type or 'type not printed'}, "
                     f"{p.memory or 'memory not printed'}; {kind})")
    if shown:
        more = f" and {len(shown) - 4} more" if len(shown) > 4 else ""
        notes.append(f"{module_id}: the capture lists {len(shown)} process(es) on it: {'; '.join(shown[:4])}{more}")
    return tuple(dict.fromkeys(pids))


def _desktop(p: SmiProcess) -> bool:
    """A C+G process without a memory figure ('Not available in WDDM driver model', or none printed): a
    window of the desktop, not a job holding the module."""
    return (p.type or "").strip().upper() == "C+G" and not re.match(r"\s*\d", p.memory or "")


def module_info(module_id: str, name: str | None, uuid: str | None, bus_id: str, mib: float | None,
            gen: tuple[float | None, float | None], width: tuple[float | None, float | None],
            power: tuple[float | Unavailable, float | Unavailable, float | Unavailable], ecc: str | None,
            clocks: tuple[str | None, str | None, str | None, str | None], numa: str | None,
            notes: list[str]) -> ModuleInfo:
    name = name or "unknown"
    mem = _plausible(mib, "memory (MiB)", mib is not None and 0 < mib <= _MAX_MIB, notes, module_id)

    def gen_of(v: float | None, what: str) -> int | Unavailable:
        return _int(_plausible(v, what, v is not None and v in (1, 2, 3, 4, 5, 6, 7), notes, module_id))

    def width_of(v: float | None, what: str) -> int | Unavailable:
        return _int(_plausible(v, what, v is not None and v in _WIDTHS, notes, module_id))

    def clock(v: str | None, what: str) -> int | Unavailable:
        n = number(v)
        return _int(_plausible(n, what, n is not None and 0 <= n < 100_000, notes, module_id))

    return ModuleInfo(
        id=module_id, model=name, in_catalog=find_model(name) is not None,
        uuid=uuid or NOT_IN_CAPTURE, bus_id=bus_id.upper()[-12:] or NOT_IN_CAPTURE,
        memory_bytes=int(mem * 2**20) if isinstance(mem, float) else mem,
        pcie_gen_current=gen_of(gen[0], "PCIe generation"), pcie_gen_max=gen_of(gen[1], "PCIe generation (max)"),
        pcie_width_current=width_of(width[0], "PCIe width"), pcie_width_max=width_of(width[1], "PCIe width (max)"),
        power_limit_w=power[0], power_limit_default_w=power[1], power_limit_max_w=power[2],
        ecc_enabled=(ecc == "Enabled") if ecc in ("Enabled", "Disabled") else NOT_IN_CAPTURE,  # 'Unknown Error': not off
        sm_clock_mhz=clock(clocks[0], "SM clock"), mem_clock_mhz=clock(clocks[1], "memory clock"),
        sm_clock_max_mhz=clock(clocks[2], "max SM clock"), mem_clock_max_mhz=clock(clocks[3], "max memory clock"),
        numa_node=integer(numa) if integer(numa) is not None else NOT_IN_CAPTURE,  # type: ignore[arg-type]
    )


def bare_module(m: Module) -> ModuleInfo:
    u = NOT_IN_CAPTURE
    return ModuleInfo(m.id, m.model.name, False, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u)


def kernel_listed(named: list[KernelModule], notes: list[str], ids: DriverIds | None = None) -> list[ModuleInfo]:
    """The modules a kernel log names, when no tool's listing gave any: each under its bus id (or the
    driver's index, 'GPU0' -> gpu0, where no line names the bus), its vendor said, its model where a driver line
    prints its PCI id (pci.ids' name) else unknown, its memory where amdgpu prints its VRAM, with the UUID and
    serial where the driver printed them."""
    taken = {f"gpu{k.module[3:]}" for k in named if re.fullmatch(r"GPU\d+", k.module)}
    free = (f"gpu{n}" for n in itertools.count() if f"gpu{n}" not in taken)
    out: list[ModuleInfo] = []
    for k in named:
        module_id = f"gpu{k.module[3:]}" if re.fullmatch(r"GPU\d+", k.module) else next(free)
        placed = re.fullmatch(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]", k.module)  # not GPU6, drmn0
        said = (ids or DriverIds()).of(k.module, VENDOR_CODE.get(k.vendor, ""),
                                       sum(x.vendor == k.vendor for x in named) == 1)
        model = f"{k.vendor} {k.chip}" if k.chip else _driver_model(k.vendor, said, module_id, notes)
        info = module_info(module_id, model, k.uuid,
                           k.module if placed else "", None if said.vram_mib is None else float(said.vram_mib),
                           (None, None), (None, None),
                           (NOT_IN_CAPTURE, NOT_IN_CAPTURE, NOT_IN_CAPTURE), None, (None, None, None, None), None, [])
        out.append(replace(info, serial=k.serial or NOT_IN_CAPTURE))
    if out:
        shown = ", ".join(k.module for k in named[:8]) + (" …" if len(named) > 8 else "")
        unplaced = [k.module for k in named if not re.fullmatch(r"GPU\d+|[0-9A-Fa-f:]+\.[0-7]", k.module)]
        notes.append(f"kernel log: {len(out)} module(s) named by the driver's lines ({shown}): listed by bus id, "
                     "model as their PCI id names it, else unknown (no tool's listing given)" + (
                         f"; {', '.join(unplaced)}: the driver's name for it, no line gives its bus id" if unplaced
                         else ""))
    return out


def _driver_model(vendor: str, said: DriverId, module_id: str, notes: list[str]) -> str:
    """The model a driver line's PCI id names (pci.ids' product), else its chip name; 'unknown' where neither
    is printed. An id pci.ids does not name is said in a note, never shown as the model."""
    known = pci_product(said.pci_id) if said.pci_id else None
    if known is not None:
        return f"{vendor} {known.product}"
    if said.pci_id:
        notes.append(f"{module_id}: its driver printed PCI id {said.pci_id} (line {said.line}), which gpuvet's "
                     "pci.ids table does not name")
    return f"{vendor} {said.chip}" if said.chip else f"unknown {vendor} module"


def npu_listed(devices: list[int], notes: list[str]) -> list[ModuleInfo]:
    """The NPUs an Ascend error log names by device ('device(chipId:3, …)', torch_npu's 'Device:3'), when no
    tool's listing gave any: each under its device index (gpu3, as npu-smi's listing is), model and bus id not in the log."""
    out = [module_info(f"gpu{d}", "unknown Ascend NPU", None, "", None, (None, None), (None, None),
                       (NOT_IN_CAPTURE, NOT_IN_CAPTURE, NOT_IN_CAPTURE), None, (None, None, None, None), None, [])
           for d in devices]
    if out:
        notes.append(f"Ascend error log: {len(out)} NPU(s) named by device ({', '.join(map(str, devices[:8]))}): "
                     "listed by device index, model and bus id not in the log (no tool's listing given)")
    return out


def lspci_listed(listed: list[ListedGpu], notes: list[str]) -> list[ModuleInfo]:
    """The GPU functions an lspci listing names, when no tool's listing gave any: each under its bus id, its
    model as pci.ids words it (a chip name, seldom the product), and its PCIe link where LnkCap/LnkSta were
    given (generation from the transfer rate)."""
    out: list[ModuleInfo] = []
    if any(g.vendor != "Intel" for g in listed) and (intel := [g.bus_id for g in listed if g.vendor == "Intel"]):
        notes.append(f"lspci: Intel display function(s) {', '.join(intel[:8])} beside another vendor's GPUs: the "
                     "host's own graphics, not listed")
        listed = [g for g in listed if g.vendor != "Intel"]
    for n, g in enumerate(listed):
        link = g.link
        gen = (_gen(link.speed_gts), _gen(link.cap_speed_gts)) if link else (None, None)
        width = (link.width, link.cap_width) if link else (None, None)
        name = f"{g.vendor} {product_name(g.vendor, g.model, keep_chip=True)}".strip()  # pci.ids' words, id left out
        out.append(module_info(f"gpu{n}", name, None, g.bus_id, None, gen, width,
                               (NOT_IN_CAPTURE, NOT_IN_CAPTURE, NOT_IN_CAPTURE), None, (None, None, None, None), None,
                               notes))
    if out:
        shown = ", ".join(f"{g.bus_id} {g.vendor}" for g in listed[:8]) + (" …" if len(listed) > 8 else "")
        notes.append(f"lspci: {len(out)} GPU function(s) listed ({shown}): listed by bus id with lspci's device "
                     "name (no tool's module listing given)")
    return out


def _gen(gts: float | None) -> float | None:
    """The PCIe generation of a link's transfer rate (2.5, 5, 8, 16, 32, 64 GT/s: Gen1 to Gen6)."""
    return None if gts is None else _GENS.get(gts)
