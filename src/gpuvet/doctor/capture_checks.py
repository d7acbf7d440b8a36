"""Checks on what captured files show and no live reading can: memory repair state, clock-event
reasons, NVLink and PCIe link state from nvidia-smi/dcgmi/lspci, nvbandwidth's copy check, DCGM
diagnostics. Each names the module as the capture names it (bus id, "GPU 3", "gpuId 0")."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.records import EXPORTER_NVLINK as _EXPORTER_NVLINK
from gpuvet.captures.records import GPU_DRIVERS, DcgmResult, PcieLink
from gpuvet.checks.model import Json
from gpuvet.doctor.capture_errors import captured_errors, dcgm_health
from gpuvet.doctor.capture_failures import (
    CUDA_SAMPLE_TABLES,
    benchmark_failures,
    clock_findings,
    ecc_reset_findings,
    kernel_messages,
    kernel_presence_messages,
    links_expected,
)
from gpuvet.doctor.capture_pairs import MAX_NAMED
from gpuvet.doctor.capture_verdicts import tool_verdicts
from gpuvet.doctor.dcgm_findings import GPU_LINK_DOWN, as_finding, messages, specific
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.fabric_steps import fabric_manager, fabric_registration
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.nccl_steps import nccl_log, nccl_log_init
from gpuvet.doctor.nic_steps import nic_ports, rdma_bandwidth
from gpuvet.doctor.outcome import HIGH, LOW, MEDIUM, Outcome, clear, confirmed, unknown
from gpuvet.doctor.shipped_settings import lspci_product, narrow_by_design
from gpuvet.doctor.smi_lone_err import lone_sensor_errors
from gpuvet.doctor.state_judgment import state_findings
from gpuvet.knowledge import threshold
from gpuvet.node.vendor_tools import CAPTURED, GIVE

if TYPE_CHECKING:  # the capture parsers load only when a capture is read (issue 43: doctor --node loads none)
    from gpuvet.captures.aer import AerDevice, AerParse
    from gpuvet.captures.dcgm_messages import DcgmMessage

RMA_RETIRED_PAGES = 60  # NVIDIA's dynamic page retirement: RMA at 60 or more retired pages
_NVLINK_COUNTERS = ("crc", "replay", "recovery")


def captured_memory(ev: Evidence) -> Outcome:
    """Row remapping, page retirement and uncorrectable ECC, as nvidia-smi -q / -x show them."""
    found: list[Finding] = []
    for h in ev.captures.health:
        if h.remap_failure:
            found.append(finding("row_remap_failure", HIGH, module=h.module, remapped_uncorrectable=h.remap_uncorrectable))
        elif h.remap_pending:
            found.append(finding("row_remap_pending", HIGH, module=h.module, remapped_uncorrectable=h.remap_uncorrectable))
        if h.retired_pages is not None and h.retired_pages >= RMA_RETIRED_PAGES:
            found.append(finding("retired_pages_exhausted", HIGH, module=h.module, retired_pages=h.retired_pages,
                                 threshold=RMA_RETIRED_PAGES))
        elif h.retired_pages_pending:
            found.append(finding("page_retirement_pending", HIGH, module=h.module, retired_pages=h.retired_pages))
        if h.ecc_uncorrectable_volatile:
            found.append(finding("ecc_uncorrectable_since_boot", HIGH, module=h.module,
                                 uncorrectable_volatile=h.ecc_uncorrectable_volatile,
                                 uncorrectable_aggregate=h.ecc_uncorrectable_aggregate))
    found += _memory_history(ev, {f.module for f in found})  # R11A: aggregate/remapped uncorrectable, repaired
    found += ecc_reset_findings(ev)  # ECC mode 'Unknown Error': needs a reset, not 'ECC off'
    found += [finding("module_needs_reset", HIGH, module=h.module, said=h.reset_told, product=h.product)
              for h in ev.captures.health if h.reset_told]  # -q's GPU Reset Status / GPU Recovery Action
    found += [finding("module_fell_off_bus", HIGH, module=h.module, said=h.lost_told, product=h.product)
              for h in ev.captures.health if h.lost_told]  # REVFIX65: a field NVML answered 'GPU is lost'
    found += _unreadable(ev, {f.module for f in found})
    found += lone_sensor_errors(ev.captures.health, {f.module for f in found})  # R9A: one ERR! its peers read
    if found:
        memory = any(f.cause not in ("module_unreadable", "module_sensors_unreadable", "module_fell_off_bus")
                     for f in found)
        repaired = all(f.cause == "ecc_uncorrectable_history" for f in found)
        return confirmed("a module had uncorrectable memory errors in its life, repaired (none since boot)"
                         if repaired else "the modules' memory needs a reset or a replacement" if memory else
                         "a module's state cannot be read: its fields print ERR! or Unknown Error", *found)
    cited = [Cited(ev.smi_source(), k, str(getattr(h, k)), where=h.module) for h in ev.captures.health
             for k in _MEMORY_FIELDS if getattr(h, k) is not None]
    if not cited:
        return unknown(f"no captured memory state (give {GIVE['memory_state']})")
    return clear("no pending or failed row remapping, no retired-page backlog, no uncorrectable ECC error", *cited)


def _unreadable(ev: Evidence, judged: set[str | None]) -> list[Finding]:
    """A module whose fields nvidia-smi prints as ERR! or Unknown Error: NVML cannot read it (the driver
    lost its state, or it needs a reset), which no figure shows. One sensor reading alone (a power draw's
    ERR!) is a transient of that sensor, not the module; a module already judged here is not named twice."""
    return [finding("module_unreadable", HIGH, module=h.module, fields=list(h.unreadable[:8]),
                    product=h.product, source=ev.smi_source())
            for h in ev.captures.health if h.module not in judged and (
                len(h.unreadable) >= 2 or any(not _SENSOR.search(k) for k in h.unreadable))]


def _memory_history(ev: Evidence, judged: set[str | None]) -> list[Finding]:
    """Uncorrectable errors in the module's life (-q's Aggregate counters, Remapped Rows' Uncorrectable Error) with
    none since the driver loaded and no remap pending or failed: the memory repaired itself, the job it hit died.
    A warn to watch (a rising count is a failing module), not a reset; a module judged above is not named twice."""
    return [finding("ecc_uncorrectable_history", MEDIUM, module=h.module, product=h.product,
                    uncorrectable_aggregate=h.ecc_uncorrectable_aggregate, remapped_uncorrectable=h.remap_uncorrectable)
            for h in ev.captures.health if h.module not in judged
            and ((h.ecc_uncorrectable_aggregate or 0) > 0 or (h.remap_uncorrectable or 0) > 0)]


_SENSOR = re.compile(r"Power|Fan|Temp|Utilization|Clocks", re.I)  # a reading of one sensor, read again each query


_MEMORY_FIELDS = ("remap_pending", "remap_failure", "retired_pages_pending", "retired_pages",
                  "ecc_uncorrectable_volatile", "ecc_uncorrectable_aggregate", "remap_uncorrectable")


def captured_clock_events(ev: Evidence) -> Outcome:
    """The hardware slowdowns nvidia-smi reports (old 'Clocks Throttle Reasons', new 'Clocks Event Reasons')."""
    found: list[Finding] = []
    for h in ev.captures.health:
        if "hw_power_brake_slowdown" in h.clock_events:
            found.append(finding("hw_power_brake", HIGH, module=h.module, active=sorted(h.clock_events)))
        elif "hw_slowdown" in h.clock_events and "hw_thermal_slowdown" not in h.clock_events:
            found.append(finding("hw_slowdown", MEDIUM, module=h.module, active=sorted(h.clock_events),
                                 temperature_c=h.temperature_c))
    found += clock_findings(ev)  # SM clock at a quarter of its maximum; at the module's max operating temp
    found += state_findings(ev)  # STJ: ~100 % busy at idle power in a state table's snapshot
    if found:
        return confirmed("the hardware slows the modules down", *found)
    cited = ev.clock_reasons_cited()  # a module whose capture lacks the section says nothing about it
    if not cited:
        return unknown(f"no captured clock-event reasons (give {GIVE['clock_reasons']})")
    return clear("no hardware slowdown or power brake active in the capture", *cited)


def captured_links(ev: Evidence) -> Outcome:
    """NVLink state and error counters, lspci link status and AER bits, nvbandwidth's copy check."""
    c = ev.captures
    unsure: list[str] = []
    found = _nvlink_findings(ev, unsure) + _lspci_findings(ev) + _not_enabled(ev) + _rev_ff(ev) + \
        _aer_findings(ev) + \
        _captured_fabric_down(ev)
    for f in c.copy_failures:
        found.append(finding("copy_verification_failed", HIGH, test=f.test, message=f.text[:200]))
    found += _validation_failures(ev)
    if found:
        return confirmed("links are down, degraded or corrupt data", *found)
    if unsure:
        more = f" (and {len(unsure) - 1} more module(s) alike)" if len(unsure) > 1 else ""
        return unknown(unsure[0] + more)
    cited = _links_cited(ev)
    if not cited:
        return unknown(f"no captured link state (give {GIVE['link_state']})")
    return clear("every captured link is up as its design says, no CRC, replay or recovery error counted", *cited)


def _validation_failures(ev: Evidence) -> list[Finding]:
    """rocm-bandwidth-test -v's FAIL cells: one finding per pair of devices, each direction that failed named."""
    pairs: dict[tuple[str, str], list[str]] = defaultdict(list)
    where: dict[tuple[str, str], tuple[str, int]] = {}
    for label, k in ev.captures.copy_checks:
        if not k.passed:
            key = (k.src, k.dst) if (k.dst, k.src) not in pairs else (k.dst, k.src)
            pairs[key].append(f"{k.src} -> {k.dst} (line {k.line})")
            where.setdefault(key, (label, k.line))
    return [finding("host_copy_validation_failed", HIGH, between=key, file=where[key][0], line=where[key][1],
                    failed=failed) for key, failed in pairs.items()]


def _links_cited(ev: Evidence) -> list[Cited]:
    """What the captured link state showed, per kind: NVLink states and counters, lspci's LnkSta, nvbandwidth."""
    c = ev.captures
    up = sum(1 for s in c.nvlink_states if s.up)  # inactive links are listed too: only those up count
    out = [Cited(ev.capture_source("nvlink state") or CAPTURED["nvlink_state"], "links up", f"{up}")] \
        if c.nvlink_states else []
    if c.nvlink_errors:
        set_ = sum(1 for e in c.nvlink_errors if e.count > 0)  # counters gpuvet does not judge may be set
        counted = ev.capture_source("nvlink state", _EXPORTER_NVLINK)  # nvlink -e, or dcgm-exporter's counters
        out.append(Cited(counted or CAPTURED["nvlink_errors"], "error counters read / non-zero",
                         f"{len(c.nvlink_errors)} / {set_}"))
    out += [Cited(ev.capture_source(CAPTURED["pcie"]) or CAPTURED["pcie"], "LnkSta / LnkCap",
                  f"x{p.width} {p.speed_gts} GT/s / x{p.cap_width} {p.cap_speed_gts} GT/s", where=p.device)
            for p in c.pcie_links if p.width is not None and p.cap_width is not None]
    if c.copy_checks:
        out.append(Cited(c.copy_checks[0][0], "rocm-bandwidth-test -v copies PASS",
                         str(sum(k.passed for _, k in c.copy_checks))))
    checked = sorted(n for n in c.nvbandwidth if not n.startswith(CUDA_SAMPLE_TABLES))
    if checked:  # nvbandwidth and TransferBench check what they copied; the CUDA samples do not
        out.append(Cited(ev.capture_source("nvbandwidth", "TransferBench") or "nvbandwidth",
                         "tests run without a copy failure", ", ".join(checked)))
    return out


def _nvlink_findings(ev: Evidence, unsure: list[str]) -> list[Finding]:
    """Modules with fewer NVLink links up than their design says; where the design is unknown (a bridged
    card, undeclared, with fewer than a full bridge set up) the reason goes to ``unsure``."""
    out: list[Finding] = []
    by_gpu: dict[str, list[int]] = defaultdict(list)  # gpu -> its links down
    seen: dict[str, int] = defaultdict(int)
    for s in ev.captures.nvlink_states:
        seen[s.gpu] += 1
        if not s.up:
            by_gpu[s.gpu].append(s.link)
    for gpu, links in by_gpu.items():
        up = seen[gpu] - len(links)
        expected = links_expected(ev, gpu, up, seen[gpu])
        if expected.count is None:
            unsure.append(expected.basis)
        elif up < expected.count:
            out.append(finding("nvlink_down", HIGH, module=gpu, links_down=links, links_seen=seen[gpu], links_up=up,
                               links_expected=expected.count, expected_from=expected.basis))
    errors: dict[str, dict[str, int]] = defaultdict(dict)
    for e in ev.captures.nvlink_errors:
        if e.count > 0 and any(k in e.counter.lower() for k in _NVLINK_COUNTERS):
            errors[e.gpu][f"link {e.link} {e.counter}" if e.link >= 0 else f"{e.counter} (all links)"] = e.count
    for gpu, counters in errors.items():
        out.append(finding("nvlink_errors", MEDIUM, module=gpu, counters=counters))
    return out


def _captured_fabric_down(ev: Evidence) -> list[Finding]:
    """Fabric links a captured topology shows down: an Ascend HCCS pair missing from a full mesh, judged
    by the capture backend against the NPUs' peers (its note names them)."""
    if ev.backend is None or not ev.backend.captured or ev.node is None:
        return []
    return [finding("link_down", HIGH, between=(ln.a, ln.b), detail=f"{ln.a}-{ln.b}: fabric link down in the "
                    "captured topology, where the design its peers show has one", expected="up", measured="down")
            for ln in ev.node.links if ln.kind.is_fabric and not ln.up]


def _slot_width(p: PcieLink, widest: dict[str, int]) -> bool:
    """A GPU lspci names ('[GeForce RTX 5090]', not -nn's '[10de:2330]') at a width its design explains
    (shipped_settings.narrow_by_design), unless a peer of its product trained wider (as -q's rule)."""
    product = lspci_product(p.name)
    return (product is not None and p.width is not None and p.cap_width is not None
            and narrow_by_design(product, p.width, p.cap_width, peer_width=widest.get(product)))


def _widest(links: list[PcieLink]) -> dict[str, int]:
    """Per product lspci names: the widest link one of its modules trained in this capture."""
    out: dict[str, int] = {}
    for p in links:
        product = lspci_product(p.name)
        if product is not None and p.width is not None:
            out[product] = max(out.get(product, 0), p.width)
    return out


# PCIe's Data Link Layer Link Active bit, where the port reports it (LnkCap's LLActRep+): DLActive- is no link up
_INACTIVE = ("the port's link is not active (LnkSta DLActive-, the port reports it: LLActRep+) and sits below its "
             "capability: no device trained a link below it, or the link trained low and dropped; not an idle GPU's "
             "power saving, which keeps the link active")


def _lspci_findings(ev: Evidence) -> list[Finding]:
    out: list[Finding] = []
    widest = _widest(ev.captures.pcie_links)
    for p in (*ev.captures.pcie_links, *ev.captures.pcie_others):  # others: narrower endpoints only (links.py)
        narrow = p.width_downgraded or (p.width is not None and p.cap_width is not None and p.width < p.cap_width)
        if narrow and p in ev.captures.pcie_links and _slot_width(p, widest):  # R13A: a named add-in GPU at its slot's
            narrow = False  # width (x8 of x16): judged against the design, as -q's width is (shipped_settings)
        slow = p.speed_downgraded or (p.speed_gts is not None and p.cap_speed_gts is not None
                                      and p.speed_gts < p.cap_speed_gts)
        if slow and p.link_inactive:  # R4B: a port whose link is not up (DLActive-) is no idle GPU's power saving
            out.append(finding("pcie_link_downgraded", MEDIUM, module=p.device, source=CAPTURED["pcie_tool"],
                               width=p.width, max_width=p.cap_width, speed_gts=p.speed_gts,
                               max_speed_gts=p.cap_speed_gts, detail=_INACTIVE))
        elif slow and not narrow:  # an idle GPU lowers its link speed to save power: lspci alone says no load
            out.append(finding("pcie_link_idle_speed", LOW, module=p.device, source=CAPTURED["pcie_tool"],
                               width=p.width, max_width=p.cap_width, speed_gts=p.speed_gts,
                               max_speed_gts=p.cap_speed_gts))
        elif narrow:  # a narrower link is never a power state
            out.append(finding("pcie_link_downgraded", HIGH, module=p.device,
                               source=CAPTURED["pcie_tool"], width=p.width, max_width=p.cap_width, speed_gts=p.speed_gts,
                               max_speed_gts=p.cap_speed_gts))
        if p.aer_uncorrectable or p.aer_correctable:  # corrected bits alone: sticky, no count or rate (info)
            out.append(finding("pcie_aer_errors" if p.aer_uncorrectable else "pcie_aer_corrected_bits",
                               HIGH if p.aer_uncorrectable else MEDIUM, module=p.device,
                               uncorrectable=list(p.aer_uncorrectable), correctable=list(p.aer_correctable)))
    return out


def _not_enabled(ev: Evidence) -> list[Finding]:
    """A GPU function lspci shows with bus mastering off and no driver named in use: no driver has enabled it
    (its probe never ran or failed), so no program can use it."""
    return [finding("gpu_no_driver_bound", MEDIUM, module=g.bus_id, source=CAPTURED["pcie_tool"], vendor=g.vendor,
                    model=g.model, msi=g.msi, irq=g.irq,
                    said=f"{CAPTURED['pcie_tool']} shows BusMaster-" + (f", MSI {g.msi}" if g.msi else "") +
                         (f", IRQ {g.irq}" if g.irq is not None else "") + " and no kernel driver in use: no driver "
                         "has enabled the function (a GPU held by vfio-pci for a VM would name it)")
            for g in ev.captures.not_enabled]


def _rev_ff(ev: Evidence) -> list[Finding]:
    """A GPU lspci lists with revision ff: its config space reads all ones, so the module no longer answers on the
    bus (fell off it); lspci names it from the ids it cached. One finding per module (its functions share a slot)."""
    modules: dict[str, Finding] = {}
    for g in ev.captures.gone_from_bus:
        modules.setdefault(g.bus_id.rsplit(".", 1)[0], finding(
            "module_fell_off_bus", HIGH, module=g.bus_id, source=CAPTURED["pcie_tool"], vendor=g.vendor,
            model=g.model, said=f"{CAPTURED['pcie_tool']} lists it with revision ff: its config space reads "
                                "0xff, the device no longer answers on the bus"))
    return list(modules.values())


def _aer_findings(ev: Evidence) -> list[Finding]:
    """The kernel's AER errors on an NVIDIA module, or on a root port whose messages no other device's
    driver claims (a burst: two or more correctable, or its messages received saying so where no device below
    has lines of its own, or any uncorrectable);
    a port reporting for an NVMe drive or a NIC, and those devices' own errors, are theirs (a note), never a
    GPU's. A port with no GPU named below it that logged only corrected receiver errors is an info note:
    nothing leads to a module, unless they flood: more in a few seconds than the kernel's own AER rate limit
    lets it log (faults.yaml pcie_aer_flood), a marginal link to find (warn). Every error reported is counted: a
    port's messages ('Multiple …': two) as well as its severity lines. A GPU's other function (its HDMI audio)
    shares the GPU's link: its errors are the module's.
    An error the kernel called Fatal failed the link itself (pcie_aer_fatal), unless the kernel then said its
    recovery succeeded, or a GPU below it it could not recover has its own finding (the module's, critical)."""
    out: list[Finding] = []
    burst, flood, window = (threshold(t) for t in ("pcie_aer_port_burst", "pcie_aer_flood", "pcie_aer_flood_window_s"))
    for label, parsed in ev.captures.aer:
        for d in parsed.devices.values():
            others = [s for s in d.sources if s in parsed.devices and s != d.bus and not parsed.gpu(s)]
            gpus = [s for s in d.sources if parsed.gpu(s)]
            said = d.messages if not any(s in parsed.devices and s != d.bus for s in d.sources) else 0  # else theirs
            port = d.driver == "pcieport" and not others and (d.uncorrectable or max(d.correctable, said) >= burst)
            if not parsed.gpu(d.bus) and not port or _beside_driven(parsed, d):
                continue
            if d.fatal and d.unrecovered and not any(o.unrecovered and parsed.gpu(o.bus) for o in parsed.devices.values()):
                # the link was reset and the kernel gave up on what is below (a lost GPU is the kernel reader's finding)
                out.append(replace(_aer_unrecovered(label, parsed, d), host=parsed.host))
                continue
            most = parsed.corrected_within(d.bus, window)
            quiet = not gpus and not parsed.gpu(d.bus) and d.receiver_errors_only and most <= flood  # no GPU below
            lost_gpu = any(o.unrecovered and parsed.gpu(o.bus) for o in parsed.devices.values())  # its own finding
            fatal = d.fatal and not d.recovered and not lost_gpu
            cause = "pcie_aer_fatal" if fatal else "pcie_port_receiver_errors" if quiet else "pcie_aer_errors"
            fns = [d, *(o for o in parsed.devices.values() if o is not d and _beside_driven(parsed, o)
                        and o.bus.rpartition(".")[0] == d.bus.rpartition(".")[0])]  # the module's other functions
            uncorrectable = sum(f.uncorrectable for f in fns)
            out.append(replace(finding(cause,
                               HIGH if uncorrectable else MEDIUM, module=d.bus, file=label,
                               line=d.first_line, driver=d.driver,
                               errors=list(dict.fromkeys(k for f in fns for k in f.kinds))[:6],
                               correctable=max(d.correctable, sum(n for _, n, _ in d.corrected_at), said) +
                               sum(max(f.correctable, sum(n for _, n, _ in f.corrected_at)) for f in fns[1:]),
                               uncorrectable=uncorrectable, functions=", ".join(
                                   f"{f.bus} ({f.driver}): the same link" for f in fns[1:]) or None,
                               below=", ".join(gpus) if gpus else
                               (_itself(d) if parsed.gpu(d.bus) else _unnamed_below(parsed, d)),
                               flood=_flood(most, flood, window, parsed.undated(d.bus)) if most > flood else None),
                               host=parsed.host))
    return out


def _flood(most: int, flood: float, window: float, undated: bool) -> str:
    """The flood in words: within the window where the lines carry stamps; undated, a run of lines read as one."""
    within = "in one undated run of lines (no stamp: read as one burst)" if undated else f"within {window:g} s"
    return f"{most} corrected errors {within}: more than the kernel's AER rate limit logs ({flood:g} per {window:g} s)"


def _beside_driven(parsed: AerParse, d: AerDevice) -> bool:
    """Another function of a module whose GPU function has lines of its own (nvidia, amdgpu): one link, judged
    once, on the GPU function."""
    slot = d.bus.rpartition(".")[0]
    return d.driver not in GPU_DRIVERS and any(o.driver in GPU_DRIVERS and o.bus.rpartition(".")[0] == slot
                                               for o in parsed.devices.values())


def _itself(d: AerDevice) -> str:
    """The module's own function, or another function of it (its audio, USB-C): one link, the GPU's."""
    if d.driver in GPU_DRIVERS:
        return "the module itself"
    return f"the module's own link: its {d.driver} function{' [' + d.vendor + ']' if d.vendor else ''} shares it"


def _unnamed_below(parsed: AerParse, d: AerDevice) -> str:
    """A port's message names the device that sent it though no line of that device says what it is (a source
    id of zero, 0000:00:00.0, is the kernel's word for one it could not read: not named)."""
    sent = [s for s in d.sources if s != d.bus and s not in parsed.devices and s != "0000:00:00.0"]
    if sent:
        return f"{', '.join(sent)} (the port's message names it; no line of its own says what device it is)"
    if parsed.stray:  # an endpoint's own error bits (its driver's name), its severity line cut: the link's other end
        return "; ".join(f"{bus} ({said}, its own AER lines)" for bus, said in parsed.stray.items())
    return "the module below it is not named in the log"


def _aer_unrecovered(label: str, parsed: AerParse, d: AerDevice) -> Finding:
    """A fatal uncorrectable error whose recovery failed: the devices the kernel could not recover are named."""
    lost = [o.bus for o in parsed.devices.values() if o.unrecovered and o.bus != d.bus] or \
        [f"{bus} ({driver}: no AER-aware driver)" for bus, driver in sorted(
            parsed.unhandled.items(), key=lambda kv: kv[1] not in GPU_DRIVERS) if bus != d.bus]
    return finding("pcie_fatal_unrecovered", HIGH, module=d.bus, file=label, line=d.first_line, driver=d.driver,
                   errors=d.kinds[:6], uncorrectable=d.uncorrectable,
                   lost=", ".join(lost) if lost else "the device below it is not named in the log")


def dcgm_diag(ev: Evidence) -> Outcome:
    """Each dcgmi diag test result is evidence; a failure or warning names its test and GPU."""
    results = ev.captures.dcgm
    if not results:
        return unknown(f"no DCGM diagnostics output (give {GIVE['dcgm_diag']})")
    nvlink = _has_nvlink(ev)
    found = [f for r in results if r.status in ("fail", "error", "warn") for f in _dcgm_findings(r, nvlink)]
    if found:
        found.sort(key=lambda f: f.severity != "critical")  # failures named first, in the capture's order
        more = f" ({len(found)} results; the first {MAX_NAMED} named, the rest counted)" if len(found) > MAX_NAMED else ""
        return confirmed(f"DCGM diagnostics failed or warned{more}", *found[:MAX_NAMED])
    passed = [r for r in results if r.status == "pass"]
    if not passed:
        return unknown(f"{len(results)} DCGM diagnostic result(s), none a pass (skipped or not run)")
    source = ev.capture_source(CAPTURED["dcgm_diag"], CAPTURED["dcgm_diag_json"],
                               "DCGM diagnostic JSON") or CAPTURED["dcgm_diag"]  # the kind formats.py names it
    return clear(f"{len(results)} DCGM diagnostic result(s), all pass or skip", *[
        Cited(source, r.test, r.status, where=f"GPU {r.gpu}" if r.gpu else r.category) for r in passed])


def _dcgm_findings(r: DcgmResult, nvlink: bool | None) -> list[Finding]:
    """A failed or warned result: the cause each DCGM message in it names (dcgm_findings: a DBE is
    ecc_uncorrectable_since_boot on its GPU), else DCGM's own failure or warning of the test. A link DCGM reports
    down on a module not known to have NvLink by design is left to the test's own rating (a PCIe board)."""
    failed = r.status in ("fail", "error") and (nvlink is True or not _links_down_only(r))
    named = specific(messages(r.detail, r.codes))
    coded = [m for m in named if m.code != GPU_LINK_DOWN or nvlink is True]
    said: dict[str, Json] = {"test": r.test, "category": r.category, "status": r.status, "detail": r.detail}
    found = [as_finding(m, _dcgm_module(r, m), said) for m in coded]
    return found + ([_dcgm_finding(r, failed)] if not coded or len(coded) < len(named) else [])


def _dcgm_module(r: DcgmResult, m: DcgmMessage) -> str | None:
    """The module a result's message is about: the NVSwitch it names, else the result's GPU, else the message's."""
    if m.switch is not None:
        return m.entity
    gpu = r.gpu if r.gpu and "," not in r.gpu else None if m.gpu is None else str(m.gpu)
    return f"GPU{gpu}" if gpu is not None else None


def _dcgm_finding(r: DcgmResult, failed: bool) -> Finding:
    spurious = r.status in ("fail", "error") and not failed
    return finding("dcgm_diag_failed" if failed else "dcgm_diag_warning", HIGH if failed else MEDIUM,
                   module=f"GPU{r.gpu}" if r.gpu and "," not in r.gpu else None, test=r.test, category=r.category,
                   gpus=r.gpu, detail=r.detail, status=r.status,
                   note="DCGM fails the test only on NvLink links it reports down, and no module read here is "
                        "known to have NvLink by design (DCGM 2.x reports links down on PCIe boards without any): "
                        "rated as its warning; give the modules' listing (their model) to judge the links"
                   if spurious else None)


_LINK_DOWN = re.compile(r"NvLinklink\d+iscurrentlydown", re.I)  # matched with the spaces out: DCGM wraps mid-word
_OTHER_FAULT = re.compile(r"PCIe|replay|bandwidth|error|fail|timeout|mismatch|below|exceed", re.I)


def _links_down_only(r: DcgmResult) -> bool:
    """The result's detail says nothing but 'NvLink link N is currently down' (and DCGM's advice after it)."""
    joined = re.sub(r"\s+", "", r.detail or "")
    return _LINK_DOWN.search(joined) is not None and _OTHER_FAULT.search(joined) is None


def _has_nvlink(ev: Evidence) -> bool | None:
    """Whether the modules read have NvLink by design: None where no module's model is known (a DCGM
    'NvLink link N is currently down' alone is then a warning, not a failed module)."""
    node = ev.node
    models = [m.model for m in node.modules if m.model.name and not m.model.name.startswith("unknown")] if node else []
    return any(m.fabric == "nvlink" for m in models) if models else None


CAPTURE_CHECKS: dict[str, Callable[[Evidence], Outcome]] = {
    "captured_memory": captured_memory, "captured_clock_events": captured_clock_events,
    "captured_links": captured_links, "dcgm_diag": dcgm_diag,
    "kernel_messages": kernel_messages, "kernel_messages:presence": kernel_presence_messages,
    "benchmark_failures": benchmark_failures, "tool_verdicts": tool_verdicts, "nic_ports": nic_ports,
    "fabric_registration": fabric_registration, "fabric_manager": fabric_manager,
    "rdma_bandwidth": rdma_bandwidth, "nccl_log": nccl_log, "nccl_log:init": nccl_log_init,
    "captured_errors": captured_errors, "dcgm_health": dcgm_health,
}
