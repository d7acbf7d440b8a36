"""Which list names a capture's modules when nvidia-smi -q gave none (issue 46): the table, the --query-gpu
CSV, a monitor's screen, a rig report, an exporter, DCGM's discovery, deviceQuery, -L, an environment report, a
runtime's device lines, a Windows adapter listing; else what a benchmark, gpu-burn, an NCCL log or a program names.
read.py asks once, after every format of formats.FORMATS has read the file."""

from __future__ import annotations

import re

from gpuvet.captures import dcgm, nccl_log, smi_text
from gpuvet.captures.formats import (
    DISCOVERY,
    ENV,
    EXPORTER,
    FIELDS,
    LISTING,
    MONITOR,
    NCCL_TOPO,
    NODES,
    QUERY,
    RIG,
    TABLE,
    VGPU,
    WINDOWS,
    FileCapture,
)
from gpuvet.captures.records import UNNAMED, SmiTextModule
from gpuvet.captures.runtime_marks import RUNTIME
from gpuvet.captures.text import Line


def choose_smi(fc: FileCapture, kept: dict[str, object], lines: list[Line]) -> str | None:
    """The module list when no -q text gave one: the table, else the --query-gpu CSV (a -q beside
    them, as in a bug report, says more of the same modules), else a benchmark log's device lines
    when the run is all the file holds. The kind it is read as, named where -q's would be; None
    when -q gave the list or nothing did. A -q excerpt of Processes alone names no module: another
    list in the file gives the modules."""
    if fc.smi is not None and _foreign(fc.smi) and (fc.amd.modules or _other_list(fc, kept) is not None):
        fc.smi = None  # issue 46: another tool's 'Key : value' block read by -q's reader; another list names them
        fc.kinds = [k for k in fc.kinds if k != "nvidia-smi -q"]
    if fc.smi is not None and not _processes_only(fc.smi):
        _vgpus_beside(fc.smi, kept)
        return None
    if (listed := _other_list(fc, kept)) is not None:
        kind, smi = listed
        if fc.smi is not None:
            pids = sorted({v for m in fc.smi.modules for p, v in m.fields.items() if p.endswith("/Process ID")})
            smi.notes.append(f"nvidia-smi -q: an excerpt of Processes alone (pid {', '.join(pids)}) names no GPU: "
                             f"the modules are the {kind or 'deviceQuery'} list's; its processes are placed on none")
        fc.smi = smi
        if kind != LISTING and isinstance(listing := kept[LISTING], smi_text.SmiText):
            from gpuvet.captures import smi_list  # run already: its listing is here

            smi_list.carry_uuids(smi, listing)
        return kind
    if fc.smi is not None:
        return None
    if (fc.nccl.results or fc.nccl.claimed) and fc.topo is None:  # QX2: a header cut before its rows names them too
        after_xml = [ln for ln in lines if fc.xml is None or ln.no not in fc.xml.claimed]
        from gpuvet.captures import nccl_devices

        if (named := nccl_devices.listing(after_xml)).modules:
            fc.smi = named
    if fc.smi is None and fc.topo is None and (gpus := dcgm.gpus(fc.dcgm)):  # the GPUs dcgmi diag's results name
        product = _dcgm_product(fc.dcgm.device_ids)
        fc.smi = smi_text.SmiText(modules=[SmiTextModule(f"GPU {g}", product, {"Index": str(g)}) for g in gpus], notes=[
            f"dcgmi diag: {len(gpus)} GPU(s) named by its results (GPU {', '.join(map(str, gpus))}): listed by DCGM's "
            "GPU id, bus id not in the output" + (f"; the model {product}, by the one PCI device id its Metadata "
            "detected" if product else ", model not in the output")], driver=fc.dcgm.driver)
    if fc.smi is None and fc.topo is None and (burned := fc.gpu_burn.initialized):  # the devices gpu-burn set up
        fc.smi = smi_text.SmiText(modules=[SmiTextModule(f"GPU {g}", "", {
            "Index": str(g), "FB Memory Usage/Total": f"{mb} MiB"}) for g, (_, mb) in sorted(burned.items())], notes=[
            f"gpu-burn: {len(burned)} device(s) named by its 'Initialized device' lines: listed by CUDA index, "
            "bus id and model not in its output"])
    if fc.smi is None and fc.topo is None and fc.gpu_burn.tool != "gpu-burn" and (done := fc.gpu_burn.work):
        fc.smi = smi_text.SmiText(modules=[SmiTextModule(f"GPU {g}", "", {"Index": str(g)}) for g in range(len(done))],
                                  notes=[f"{fc.gpu_burn.tool}: {len(done)} GPU(s) named by its summary: listed by CUDA "
                                         "index, bus id and model not in its output"])  # issue 46 (batch S)
    if fc.smi is None and fc.topo is None and fc.nccl_log.lines:
        fc.smi = _nccl_listing(fc, lines)
    if fc.smi is None and fc.topo is None and not fc.amd.modules:
        fc.smi = _named(fc, lines)
    return None


def _dcgm_product(device_ids: list[str]) -> str:
    """FX68A: the model of dcgmi diag's one distinct PCI device id ('GPU Device IDs Detected | 2237': NVIDIA's
    10de:2237, pci.ids' A10G), '' where it lists none, several or one the catalog does not know."""
    from gpuvet.node.catalog import VENDOR_CODE, pci_product

    ids = {d.lower() for d in device_ids if re.fullmatch(r"[0-9a-fA-F]{4}", d)}
    known = pci_product(f"{VENDOR_CODE['NVIDIA']}:{ids.pop()}") if len(ids) == 1 else None
    return known.product if known is not None else ""


def _named(fc: FileCapture, lines: list[Line]) -> smi_text.SmiText | None:
    """The devices a scheduler's view lists where the ops layer read one (R14D: HAMi's plugin registered, ray status
    counts), else the module a program says it runs on ('Testing using device Tesla K80'); None where none names one."""
    from gpuvet.captures import program_devices, scheduler_devices

    if scheduler_devices.seen(fc.app_errors) and (viewed := scheduler_devices.listing(lines)).modules:
        return viewed
    return named if (named := program_devices.listing(lines)).modules else None


def _nccl_listing(fc: FileCapture, lines: list[Line]) -> smi_text.SmiText | None:
    """The modules an NCCL debug log names: its channels' bus ids, else its path dump's, else its processes'
    CUDA devices (issue 46, batches S and T); None where it names none."""
    from gpuvet.captures import nccl_modules

    if buses := nccl_log.listing(fc.nccl_log):
        return smi_text.SmiText(modules=[SmiTextModule(bus, "") for _, bus in buses], notes=[
            f"NCCL debug log: {len(buses)} module(s) named by bus id on its channel lines inside a node (hosts: "
            f"{', '.join(sorted({h or 'not in the log' for h, _ in buses}))}); their model is not in the log",
            *nccl_modules.ranks_note(lines)])  # R14A: the communicator's size
    return dumped if (dumped := nccl_modules.listing(lines, fc.nccl_log)).modules else None


def _processes_only(smi: smi_text.SmiText) -> bool:
    """-q's modules are an excerpt of Processes alone: no module is named and every field is a process's."""
    return all(m.bus_id.startswith(UNNAMED) and all(p.startswith("Processes/") for p in m.fields)
               for m in smi.modules)


# keys only nvidia-smi -q prints in a GPU's block (a block holding none, and no section, is another tool's)
_SMI_KEYS = frozenset(("Product Name", "Product Brand", "Product Architecture", "GPU UUID", "Minor Number",
                       "VBIOS Version", "Serial Number", "Bus Id", "Board ID", "Persistence Mode", "Display Mode",
                       "Display Active", "Performance State", "Fan Speed", "Compute Mode", "GPU Part Number",
                       "MultiGPU Board", "Accounting Mode", "Addressing Mode", "Driver Model"))


def _foreign(smi: smi_text.SmiText) -> bool:
    """-q's reader took another tool's 'Key : value' blocks (hashcat -I's OpenCL fields: 'Vendor', 'Name',
    'OpenCL Version'): no block is named by a GPU line, none holds a section or a key -q prints."""
    return bool(smi.modules) and all(m.bus_id.startswith(UNNAMED) and not any("/" in p or p in _SMI_KEYS
                                                                              for p in m.fields) for m in smi.modules)


def _vgpus_beside(smi: smi_text.SmiText, kept: dict[str, object]) -> None:
    """Issue 46 (BJ): nvidia-smi vgpu's box beside -q: -q's modules are the list, the box's vGPUs are said."""
    if isinstance(box := kept.get(VGPU), smi_text.SmiText):
        smi.notes += box.notes


def _other_list(fc: FileCapture, kept: dict[str, object]) -> tuple[str | None, smi_text.SmiText] | None:
    """The first other module list that holds modules and its kind (None: deviceQuery, named among the samples)."""
    table, query = kept[TABLE] or smi_text.SmiText(), kept[QUERY] or smi_text.SmiText()  # None: not run (no markers)
    assert isinstance(table, smi_text.SmiText) and isinstance(query, smi_text.SmiText)
    if isinstance(screen := kept[MONITOR], smi_text.SmiText) and len(screen.modules) > len(table.modules):  # issue 46
        from gpuvet.captures import monitor_tools  # imported where a monitor's screen was read (issue 43)

        return monitor_tools.kinds_of(screen) or MONITOR, monitor_tools.beside(table, screen)
    if table.modules or query.modules:
        return (TABLE, table) if table.modules else (QUERY, query)
    for kind, listed in ((VGPU, kept[VGPU]), (RIG, kept[RIG]), (EXPORTER, kept[EXPORTER]), (FIELDS, kept[FIELDS]),
                         (DISCOVERY, kept[DISCOVERY]),
                         ("deviceQuery", fc.samples.modules), (LISTING, kept[LISTING]), (ENV, kept[ENV + " GPUs"]),
                         (RUNTIME, kept[RUNTIME]), (NCCL_TOPO, kept[NCCL_TOPO]), ("tegrastats", kept["tegrastats"]),
                         (WINDOWS, kept[WINDOWS]), ("NVML values (a binding's)", kept["NVML values (a binding's)"]),
                         (NODES, kept[NODES])):
        # issue 46: the lists without -q's fields (an environment report's versions alone)
        if isinstance(listed, smi_text.SmiText) and (listed.modules or kind == ENV and _versions_alone(fc, listed)
                                                     or kind == NODES and bool(listed.claimed)):  # BJ: uvm nodes alone
            return None if kind == "deviceQuery" else kind, listed
    if table.claimed and table.driver:  # a table cut before its first module row
        return TABLE, table
    return (QUERY, query) if query.claimed else None  # a --query-gpu header cut before its first row (issue 46)


def _versions_alone(fc: FileCapture, listed: smi_text.SmiText) -> bool:
    """An environment report that names versions and no module is still the file's list (issue 46)."""
    from gpuvet.captures import env_report  # imported only where an environment report was read (issue 43)

    return env_report.alone(fc.kinds, listed)


def hosts_apart(fc: FileCapture, lines: list[Line], prefixed: dict[int, str]) -> None:
    """Issue 46: a paste whose shell prompts name several machines: lspci's GPUs of a host whose driver listing the
    paste does not hold are not that listing's, one bus id listed by two hosts is said (captures/prompt_hosts.py);
    read.py asks once, after choose_smi."""
    if (fc.lspci.gpus or fc.smi is not None) and (prefixed or _holds_at(lines)):
        from gpuvet.captures import prompt_hosts

        prompt_hosts.apart(fc.lspci, fc.smi, lines, prefixed)


def _holds_at(lines: list[Line]) -> bool:
    """Whether a line holds '@' (a user@host prompt's): lines kept as the whole of their text (lines.TextLines, a
    bug report's) ask that text once, at C speed, instead of making each line to test it."""
    whole = getattr(lines, "joined", lambda: None)()
    return "@" in whole if isinstance(whole, str) else any("@" in ln.text for ln in lines)
