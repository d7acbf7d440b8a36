"""The checks playbooks name. Each looks at typed evidence and returns whether it confirmed a
cause (with findings), found nothing wrong, or could not tell (saying what it lacked)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from gpuvet.backends.readings import ModuleInfo, Unavailable
from gpuvet.captures.records import UNNAMED, ModuleHealth
from gpuvet.checks.software import cuda_compatibility
from gpuvet.doctor import xids as xid_catalogue
from gpuvet.doctor.capture_checks import CAPTURE_CHECKS
from gpuvet.doctor.capture_failures import GPULESS, as_quoted_xid, unread_gpu_text
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import HIGH, MEDIUM, Outcome, clear, confirmed, unknown
from gpuvet.doctor.peers import peer_degraded
from gpuvet.doctor.shipped_settings import ecc_off_as_shipped, ecc_off_is_fault, narrow_by_design
from gpuvet.doctor.transfer_checks import collective_results, host_bottleneck, nccl_environment, p2p_path, pair_bandwidth
from gpuvet.knowledge import off_bus_xids, threshold, xid_severity
from gpuvet.node.bus import bus_key
from gpuvet.node.vendor_tools import GIVE, VendorTools, tools_for

THERMAL_BITS = 0x20 | 0x40


def _xid_modules(ev: Evidence) -> dict[str, list[int]]:
    """Module id -> Xid codes, from the telemetry window and from a captured kernel log (every host's)."""
    out: dict[str, list[int]] = {}
    for (_, module), codes in _xid_places(ev).items():
        out.setdefault(module, []).extend(codes)
    return out


def _xid_places(ev: Evidence) -> dict[tuple[str | None, str], list[int]]:
    """(host, module id) -> Xid codes: the host a log of several names (pdsh's 'node1: '), else None; one bus
    id on two hosts is two modules."""
    out: dict[tuple[str | None, str], list[int]] = {}
    for e in ev.events("xid"):
        code = e.evidence.get("code", 0)
        out.setdefault((None, e.module or "?"), []).append(int(code) if isinstance(code, (int, float, str)) else 0)
    by_bus = _inventory_buses(ev)
    for x in ev.captures.xids:
        out.setdefault((x.host, by_bus.get(bus_key(x.bus_id), x.bus_id)), []).append(x.code)
    return out


def _inventory_buses(ev: Evidence) -> dict[str, str]:
    if ev.inventory is None:
        return {}
    return {bus_key(str(m.bus_id)): m.id for m in ev.inventory.modules if not isinstance(m.bus_id, Unavailable)}


def _worst_xid_lines(ev: Evidence) -> dict[tuple[str | None, str, int], str]:
    """(host, module, code) -> the captured line that rates it: a fatal one over a non-fatal one (NVLink 5 Xids
    say which in the message); keyed as _xid_places names modules."""
    by_bus = _inventory_buses(ev)
    out: dict[tuple[str | None, str, int], str] = {}
    for x in ev.captures.xids:
        key = (x.host, by_bus.get(bus_key(x.bus_id), x.bus_id), x.code)
        if key not in out or xid_severity(x.code, out[key]) != "critical":
            out[key] = x.text
    return out


def _diff_cited(ev: Evidence, what: str) -> list[Cited]:
    """The declared-vs-found comparison as evidence, naming which kinds of link it could compare
    (a node rebuilt from -q -x alone knows no fabric; nothing unknown is said to match)."""
    if ev.differences is None or ev.declared is None or ev.node is None:
        return []
    where = f"declared node {ev.declared.name}"
    if what == "modules":
        return [Cited(ev.source, "modules found / declared", f"{len(ev.node.modules)} / {len(ev.declared.modules)}",
                      where)]
    kinds = [k for k, known in (("fabric", ev.node.fabric_known), ("pcie", ev.node.pcie_known)) if known]
    if what == "wiring":
        kinds = [k for k in kinds if k == "fabric"] if ev.declared.fabric_links() else kinds
    if not kinds:
        return []
    links = [ln for ln in ev.declared.links if ("fabric" if ln.kind.is_fabric else "pcie") in kinds]
    return [Cited(ev.source, f"{what} compared with the declared node ({', '.join(kinds)})",
                  f"{len(links)} declared link(s), {len(ev.differences)} difference(s) of any kind", where)]


def _window_cited(ev: Evidence, field: str, value: str) -> list[Cited]:
    """A quiet telemetry window as evidence; a window over no module is quiet about nothing."""
    return [Cited(ev.window_source(), field, value)] if ev.window is not None and ev.window.modules else []


def _inventory_cited(ev: Evidence, field: str, values: dict[str, object]) -> list[Cited]:
    """One citation per module reading (the value as read), for modules that have it."""
    return [Cited(ev.source, field, str(v), where=m) for m, v in values.items()]


# --- presence and links --------------------------------------------------------------------
def module_presence(ev: Evidence) -> Outcome:
    if ev.no_modules:
        return confirmed("no module is visible", finding("no_modules_visible", HIGH, why=ev.no_modules))
    lost = {e.module for e in ev.events("module_lost")}
    xids = _xid_modules(ev)
    found: list[Finding] = []
    if ev.differences is not None:
        for d in ev.differences:
            if d.kind == "missing_module" and d.module:
                if d.module in lost or off_bus_xids() & set(xids.get(d.module, [])):
                    found.append(finding("module_fell_off_bus", HIGH, module=d.module, detail=d.detail,
                                         xid=xids.get(d.module, [])))
                else:
                    found.append(finding("module_missing", HIGH, module=d.module, detail=d.detail))
    for m in sorted(x for x in lost - {f.module for f in found} if x):
        found.append(finding("module_fell_off_bus", HIGH, module=m, seen="disappeared during the telemetry window"))
    if ev.inventory is not None:
        for note in ev.inventory.notes:
            if "was lost while being read" in note:
                found.append(finding("module_fell_off_bus", MEDIUM, note=note))
    if found:
        return confirmed(f"{len(found)} module(s) missing", *found)
    cited = _diff_cited(ev, "modules")
    if not cited:
        return unknown("no declared node and found node to count against each other (give --expect, and "
                       f"{GIVE['module_list']}); no module was seen to leave")
    return clear("every declared module is there", *cited, *_window_cited(ev, "module_lost events", "none"))


def link_state(ev: Evidence) -> Outcome:
    if ev.no_modules:
        return unknown(f"no module to judge: {ev.no_modules}")
    found: list[Finding] = []
    for d in ev.differences or []:
        if d.kind in ("link_down", "link_degraded") and d.between:
            kind = (d.expected or d.found or "").split(" ")[0]  # 'nvlink x18 450.0 GB/s': the link's kind
            found.append(finding(d.kind, HIGH, between=d.between, fix=_fabric_fix(ev, kind), detail=d.detail,
                                 expected=str(d.expected), measured=str(d.found)))
    peer_cited: list[Cited] = []
    if ev.differences is None and ev.node is not None:  # undeclared: the design the peers inside the node show
        peer_found, peer_cited = peer_degraded(ev.node, ev.source)
        found += peer_found
    found += _link_events(ev, {m for f in found for m in (f.between or ())}) + _narrow_pcie(ev)
    if found:
        return confirmed(f"{len(found)} link(s) down or below their width/speed", *found)
    cited = _diff_cited(ev, "links") + _window_cited(ev, "link_degraded events", "none") + peer_cited
    cited += [Cited(ev.smi_source(), "PCIe Link Width current / max", f"x{h.pcie_width} / x{h.pcie_width_max}",
                    where=h.module) for h in ev.captures.health if h.pcie_width is not None and h.pcie_width_max is not None]
    if ev.inventory is not None and ev.differences is None:
        cited += _inventory_cited(ev, "PCIe width current / max", {
            m.id: f"x{m.pcie_width_current} / x{m.pcie_width_max}" for m in ev.inventory.modules
            if isinstance(m.pcie_width_current, int) and isinstance(m.pcie_width_max, int)})
    if not cited:
        return unknown("no declared node, telemetry or link widths to judge links with (give --expect, "
                       f"or {GIVE['pcie_section']})")
    slot = any(h.pcie_width is not None and h.pcie_width_max is not None and h.pcie_width < h.pcie_width_max
               for h in ev.captures.health)  # below the card's own maximum, at what the slot gives (narrow_by_design)
    return clear("every link is up at its width and speed" + (" (a card below its own maximum width is at what an "
                 "add-in card's slot gives: its wiring, not a fault)" if slot else ""), *cited)


def _link_events(ev: Evidence, covered: set[str]) -> list[Finding]:
    """watch's link events about links the declared-vs-found diff does not already name: a fabric link
    down (critical), a link below its width or speed (PCIe or fabric)."""
    found = []
    for e in ev.events("link_down", "link_degraded"):
        if not e.module or e.module in covered:
            continue
        link = str(e.evidence.get("link") or "fabric")
        if e.kind == "link_down":
            found.append(finding("link_down", HIGH, module=e.module, fix=_fabric_fix(ev, link), carried=e.evidence))
        elif link == "pcie":
            found.append(finding("pcie_link_downgraded", MEDIUM, module=e.module, carried=e.evidence))
        else:
            found.append(finding("link_degraded", MEDIUM, module=e.module, fix=_fabric_fix(ev, link),
                                 carried=e.evidence))
    return found


def _fabric_fix(ev: Evidence, link_kind: str) -> str | None:
    """A module fabric's link (NVLink, xGMI) is looked at with its vendor's own tool; a PCIe link (or
    one of no known kind) keeps the cause's fix (lspci's LnkSta against LnkCap)."""
    if link_kind in ("pcie", "smp", ""):
        return None
    return f"check the link with {_tools(ev).link_state}; reseat the module or its fabric cabling, or replace it"


def _narrow_pcie(ev: Evidence) -> list[Finding]:
    """A PCIe link narrower than its maximum, from captured -q / -x (never a power state) or, on an
    undeclared live node, from the inventory."""
    widest: dict[str | None, int] = {}  # per model: the widest link a peer in the capture trained
    for h in ev.captures.health:
        widest[h.product] = max(widest.get(h.product, 0), h.pcie_width or 0)
    found = [finding("pcie_link_downgraded", HIGH, module=h.module, width=h.pcie_width, max_width=h.pcie_width_max)
             for h in ev.captures.health if h.pcie_width is not None and h.pcie_width_max is not None
             and h.pcie_width < h.pcie_width_max
             and not narrow_by_design(h.product, h.pcie_width, h.pcie_width_max, peer_width=widest.get(h.product))]
    judged = _modules_of(ev, (h.module for h in ev.captures.health if h.pcie_width is not None))
    if ev.inventory is not None and ev.differences is None:
        for mi in ev.inventory.modules:
            if isinstance(mi.pcie_width_current, int):
                widest[mi.model] = max(widest.get(mi.model, 0), mi.pcie_width_current)
        for mi in ev.inventory.modules:
            w, wmax = mi.pcie_width_current, mi.pcie_width_max
            if isinstance(w, int) and isinstance(wmax, int) and w < wmax and mi.id not in judged \
                    and not narrow_by_design(mi.model, w, wmax, peer_width=widest.get(mi.model)):
                found.append(finding("pcie_link_downgraded", HIGH, module=mi.id, width=w, max_width=wmax))
    return found + _slow_while_busy(ev, {f.module for f in found})


def _slow_while_busy(ev: Evidence, named: set[str | None]) -> list[Finding]:
    """A PCIe link below its top generation while the capture shows the module busy: an idle module
    downshifts to save power, a busy one does not, so the width need not be in the capture to judge it."""
    busy = threshold("pcie_busy_pct")
    return [finding("pcie_link_downgraded", MEDIUM, module=h.module, generation=h.pcie_gen,
                    max_generation=h.pcie_gen_link_max, utilization_pct=h.utilization_pct,
                    note=f"below its top generation while {h.utilization_pct:g} % busy (not an idle downshift)")
            for h in ev.captures.health
            if h.module not in named and h.pcie_gen is not None and h.pcie_gen_link_max is not None
            and h.pcie_gen < h.pcie_gen_link_max and h.utilization_pct is not None and h.utilization_pct >= busy]


def wiring(ev: Evidence) -> Outcome:
    swaps = [d for d in ev.differences or [] if d.kind == "wiring_mismatch"]
    if swaps:
        return confirmed("modules are cabled in each other's place", *[
            finding("wiring_swapped", HIGH, between=(d.modules[0], d.modules[1]) if d.modules else d.between,
                    detail=d.detail) for d in swaps])
    cited = _diff_cited(ev, "wiring")
    if not cited:
        return unknown("no declared node and found topology to compare wiring with (give --expect, and topo -m "
                       "for a captured node)")
    return clear("wiring as declared", *cited)




# --- presence, history, visibility --------------------------------------------------------
def xid_log(ev: Evidence) -> Outcome:
    xids = _xid_places(ev)
    if not xids:
        cited = _window_cited(ev, "xid events", "none")
        lines = ev.captures.kernel_lines  # a driver that wrote to the log and reported no Xid
        if lines:
            cited.append(Cited(ev.capture_source("kernel log") or "captured kernel log", "driver lines read / Xid lines",
                               f"{lines} / 0"))
            return clear(f"no Xid among the {lines} driver line(s) read", *cited)
        if (unread := unread_gpu_text(ev.captures.gpu_unread)) is not None:  # OX1: never clear
            return unknown(unread)
        if ev.captures.kernel_plain:  # issue 46: a kernel excerpt of other lines only (captures/fallback.py)
            cited.append(Cited(ev.capture_source("kernel log") or "captured kernel log", "kernel lines read / Xid lines",
                               f"{ev.captures.kernel_plain} / 0"))
            return clear(f"no Xid: {GPULESS.format(ev.captures.kernel_plain)}", *cited)
        if not cited:
            return unknown("no telemetry of any module and no kernel log (give `dmesg | grep Xid` output with --from)")
        return clear("no Xid errors", *cited)
    found = []
    worst = _worst_xid_lines(ev)
    said = set() if ev.events("xid") else {x.text for x in ev.captures.xids if x.quoted}  # issue 46: a poster's
    for (host, module), codes in xids.items():
        for code in sorted(set(codes)):
            kind = "module_fell_off_bus" if code in off_bus_xids() else "xid"  # the knowledge base says which
            line = worst.get((host, module, code))
            xid = _times(replace(xid_catalogue.xid_finding(kind, HIGH, module, code, line), host=host), codes.count(code))
            found.append(as_quoted_xid(xid, module, code, line) if line in said else xid)
    found += xid_catalogue.burst(xids)  # one application Xid on many modules at once: a node finding beside them
    return confirmed("the driver reported Xid errors", *found)


def _times(found: Finding, times: int) -> Finding:
    """A code the log repeats for one module: one finding that says how many times (after the code)."""
    if times < 2:
        return found
    said = dict(found.evidence)
    ordered = {k: v for k, v in said.items() if k in ("log", "xid")} | {"times": times}
    return replace(found, evidence=ordered | said)


def hotplug_history(ev: Evidence) -> Outcome:
    added = ev.events("module_added")
    lost = ev.events("module_lost")
    if not added and not lost:
        cited = _window_cited(ev, "module_added / module_lost events", "none")
        return clear("no module left or joined", *cited) if cited else unknown("no telemetry window of any module")
    found = [finding("module_fell_off_bus", MEDIUM, module=e.module, time_s=e.time) for e in lost]
    states = {e.module: e.kind for e in ev.events("module_ready", "module_quarantined")}
    found += [finding("module_hot_added", HIGH, module=e.module, time_s=e.time, admission=states.get(e.module))
              for e in added if e.module not in {f.module for f in found}]
    return confirmed("modules left or joined while watched", *found)


def visibility(ev: Evidence) -> Outcome:
    if not ev.local:
        return unknown("can't tell (captured node): its device files and environment were not captured")
    if ev.backend is not None and not ev.backend.local_host:  # the backend says the modules are not in this machine
        return unknown("can't tell (simulated node): a model has no device files or runtime environment, and this "
                       "machine's say nothing about it")
    if ev.no_modules:
        return unknown(f"no module to open: {ev.no_modules}")
    found = []
    tools = _tools(ev)
    count = len(ev.inventory.modules) if ev.inventory is not None else None
    shown = {name: ev.env[name] for name in tools.visible_env if name in ev.env}
    for name, visible in shown.items():
        listed = [v for v in visible.split(",") if v.strip()]
        if count and len(listed) < count:
            found.append(finding("modules_hidden", HIGH, variable=f"{name}={visible}", visible=len(listed),
                                 present=count, fix=f"unset {name} or list every module you expect"))
    files = [Path(f) for f in tools.device_files]
    for f in files:
        if f.exists() and not os.access(f, os.R_OK | os.W_OK):
            found.append(finding("device_permissions", HIGH, device=str(f), fix=tools.permissions_fix))
    if found:
        return confirmed("modules are hidden from the runtime", *found)
    if count is None:
        return unknown("no inventory to count modules with")
    return clear("the runtime can see and open every module",
                 *[Cited("environment of the gpuvet process", name, shown.get(name, "unset"))
                   for name in tools.visible_env],
                 Cited(ev.source, "modules listed", str(count)),
                 *[Cited("this machine", str(f), "read/write" if f.exists() else "absent (nothing to open)")
                   for f in files])


def driver_runtime(ev: Evidence) -> Outcome:
    if ev.inventory is None:
        return unknown("no inventory")
    drv = ev.inventory.software.cuda_driver_version
    runtime = ev.versions().get("cuda_version")
    check = cuda_compatibility(None if isinstance(drv, Unavailable) else str(drv), runtime)
    if check.verdict.value == "fail":
        return confirmed(check.reason or "", finding("driver_runtime_mismatch", HIGH, driver=str(drv), runtime=runtime))
    if check.verdict.value == "skip":
        return unknown(check.reason or "versions unknown")
    return clear(f"driver CUDA {drv} runs runtime {runtime}", Cited(ev.source, "CUDA driver API version", str(drv)),
                 Cited(f"benchmark engine on {ev.source}", "CUDA runtime version", str(runtime)))


def _modules_of(ev: Evidence, names: Iterable[str]) -> set[str]:
    """The inventory's ids of the modules a captured -q names, so one module is judged once: by
    bus id, and an excerpt's unnamed GPUs (no GPU line) as the inventory's modules without a bus
    id, in order (the captured inventory lists the same -q's modules in the same order)."""
    by_bus = ev.modules_by_bus_id()
    busless = [m.id for m in (ev.inventory.modules if ev.inventory else ()) if not isinstance(m.bus_id, str)
               or not m.bus_id]

    def unnamed(name: str) -> str:  # 'GPU (bus id not in the excerpt)' is the first, '… #2' the second
        k = int(name.rsplit("#", 1)[1]) - 1 if "#" in name else 0
        return busless[k] if k < len(busless) else name

    return {unnamed(n) if n.startswith(UNNAMED) else by_bus.get(bus_key(n), n) for n in names}


# --- settings, health --------------------------------------------------------------------
def _ecc_said(h: ModuleHealth) -> str:
    """A mode ecc_health let pass, as said: on, off as the product ships, or (issue 46) deviceQuery's 'Disabled'
    on a model not known to carry ECC (the tool prints it where there is none)."""
    if h.ecc_mode == "Enabled" or ecc_off_as_shipped(h.product) or h.ecc_present_said:
        return str(h.ecc_mode) if h.ecc_mode == "Enabled" else "Disabled (as the product ships)"
    return "Disabled (no ECC on this model, or off: the tool prints both so; the model is not known to carry ECC)"


def ecc_health(ev: Evidence) -> Outcome:
    if ev.no_modules:
        return unknown(f"no module to judge: {ev.no_modules}")
    found = []
    for e in ev.events("ecc_rising", "ecc_uncorrectable"):
        found.append(finding("ecc_errors_rising", HIGH if e.kind == "ecc_uncorrectable" else MEDIUM, module=e.module,
                             carried=e.evidence))
    read_by_smi = _modules_of(ev, (h.module for h in ev.captures.health if h.ecc_mode is not None))
    if ev.inventory is not None:  # a captured node's inventory is its -q: that module is judged from the -q below
        for m in ev.inventory.modules:
            # issue 46: an inventory's 'off' may be deviceQuery's 'ECC support: Disabled' (no ECC, or off):
            # a fault only on a model known to carry ECC on by design
            if m.ecc_enabled is False and m.id not in read_by_smi and ecc_off_is_fault(m.model, said_present=False):
                found.append(finding("ecc_disabled", HIGH, module=m.id, ecc_enabled=False, source=ev.source))
    for h in ev.captures.health:
        if h.ecc_mode == "Disabled" and ecc_off_is_fault(h.product, h.ecc_present_said):
            found.append(finding("ecc_disabled", HIGH, module=h.module, ecc_mode="Disabled", source=ev.smi_source()))
    if found:
        return confirmed("ECC needs attention", *found)
    mode = _inventory_cited(ev, "ECC enabled", {m.id: "yes" for m in (ev.inventory.modules if ev.inventory
                                                                                else ())
                                                if m.ecc_enabled is True and m.id not in read_by_smi})
    smi = ev.smi_source()
    mode += [Cited(smi, "ECC Mode / Current", _ecc_said(h), where=h.module) for h in ev.captures.health
             if h.ecc_mode in ("Enabled", "Disabled")]
    if not mode:
        return unknown(f"nothing read says whether ECC is on (give {GIVE['ecc_sections']})")
    quiet = _window_cited(ev, "ecc_rising / ecc_uncorrectable events", "none")
    quiet += [Cited(smi, "ECC Errors / Volatile / uncorrectable", "0", where=h.module) for h in ev.captures.health
              if h.ecc_uncorrectable_volatile == 0]
    on = "ECC on, or off as the product ships" if any(c.value.startswith("Disabled") for c in mode) else "ECC on"
    if not quiet:
        return clear(f"{on} ({len(mode)} module reading(s)); its error counters were not read here", *mode)
    return clear(f"{on} and quiet", *mode, *quiet)


def gemm_agreement(ev: Evidence) -> Outcome:
    if ev.compute is None:
        return unknown("no compute measurement (no benchmark engine)")
    bad = [r for r in ev.compute if r.metric == "check" and r.correct is False]
    if bad:
        return confirmed("a module computes different bits", *[
            finding("silent_data_corruption", HIGH, module=r.module, reason=r.reason, rel_error=r.value) for r in bad])
    good = [r for r in ev.compute if r.metric == "check" and r.correct is True]
    if not good:
        return unknown("the compute benchmark compared no module's result with its peers")
    return clear("every module computes the same bits as its peers", *[
        Cited(f"GEMM check on {ev.source}", "result agrees with the reference", "yes", where=r.module) for r in good])


def thermal_state(ev: Evidence) -> Outcome:
    found = []
    for e in ev.events("throttle"):
        reasons = e.evidence.get("reasons", [])
        if isinstance(reasons, Sequence) and any(r in ("sw_thermal_slowdown", "hw_thermal_slowdown") for r in reasons):
            found.append(finding("thermal_throttling", HIGH, module=e.module, carried=e.evidence))
    for h in ev.captures.health:  # old 'Clocks Throttle Reasons' and new 'Clocks Event Reasons' alike
        thermal = sorted(h.clock_events & {"sw_thermal_slowdown", "hw_thermal_slowdown"})
        if thermal:
            found.append(finding("thermal_throttling", HIGH, module=h.module, reasons=thermal,
                                 temperature=h.temperature_c))
    if found:
        return confirmed("modules throttle on temperature", *found)
    cited = _window_cited(ev, "throttle events with a thermal reason", "none")
    cited += ev.clock_reasons_cited()
    from gpuvet.doctor.captured_temps import judge_bare

    told = judge_bare(ev)  # issue 46: a temperature printed without its limit, judged against the design
    if told is not None and (told.status == "confirmed" or not cited):
        return told
    if not cited:
        return unknown(f"no telemetry and no captured clock-event reasons (give {GIVE['clock_reasons']})")
    return clear("no thermal throttling", *cited, *(told.evidence if told is not None else ()))


def thermal_trend(ev: Evidence) -> Outcome:
    w = ev.window
    if w is None or w.trend is None:
        return unknown("no telemetry history (run gpuvet watch for a day or more)")
    found = []
    end = w.duration_s
    for module in w.trend.modules():
        f = w.trend.fit(module, end)
        if f is None:
            continue
        rise_c_per_day = f.slope_per_day * f.load_power_w
        if f.slope_low > 0 and rise_c_per_day >= threshold("thermal_rise_c_per_day"):
            found.append(finding("thermal_interface_ageing", MEDIUM, module=module,
                                 rise_c_per_day_at_load=round(rise_c_per_day, 2),
                                 predicted_crossing_s=f.crossing, earliest_s=f.earliest))
    if found:
        return confirmed("temperature creeps up at the same load", *found)
    fits = {m: f for m in w.trend.modules() if (f := w.trend.fit(m, end)) is not None}
    if not fits:
        return unknown("not enough steady-load history for a trend")
    return clear("temperature at comparable load is flat", *[
        Cited(ev.window_source(), "temperature rise at load (°C/day)", f"{f.slope_per_day * f.load_power_w:.2f}",
              where=m) for m, f in fits.items()])


def _workload_only(ev: Evidence) -> bool:
    """A captured listing with no benchmark result and no symptom named: its processes are the machine's own
    work (a lead only beside a measurement they could slow, or a slowness the user reports)."""
    caps = ev.captures
    bench = caps.nccl or caps.nvbandwidth or caps.perftest or caps.gpu_burn or caps.copy_checks or caps.dcgm
    return ev.backend is not None and ev.backend.captured and ev.symptom is None and not bench


def other_processes(ev: Evidence) -> Outcome:
    if ev.inventory is None:
        return unknown("no inventory")
    found = [finding("other_processes", HIGH, module=m.id, pids=list(m.processes)) for m in ev.inventory.modules
             if isinstance(m.processes, tuple) and m.processes]
    if found and _workload_only(ev):
        return clear("the processes the capture lists are the machine's workload: no benchmark or slowness in the "
                     "captures for them to disturb", *_inventory_cited(ev, "compute processes (pids)", {
                         m.id: ", ".join(map(str, m.processes)) for m in ev.inventory.modules
                         if isinstance(m.processes, tuple) and m.processes}))
    if found:
        return confirmed("other processes hold modules", *found)
    cited = _inventory_cited(ev, "compute processes", {m.id: 0 for m in ev.inventory.modules
                                                        if isinstance(m.processes, tuple)})
    if not cited:
        return unknown("no module's process list was read")
    return clear("no other process on the modules", *cited)


def clock_stability(ev: Evidence) -> Outcome:
    flaps = ev.events("clock_flapping")
    if flaps:
        return confirmed("clocks switch states under load", *[
            finding("memory_clock_flapping", HIGH if e.evidence.get("clock") == "memory" else MEDIUM, module=e.module,
                    carried=e.evidence) for e in {e.module: e for e in flaps}.values()])
    cited = _window_cited(ev, "clock_flapping events", "none")
    return clear("clocks steady under load", *cited) if cited else unknown("no telemetry window of any module")


def _tools(ev: Evidence) -> VendorTools:
    """The vendor's own commands for the node's modules (node/vendor_tools.py)."""
    return tools_for(m.model for m in ev.node.modules) if ev.node is not None else tools_for(())


def _power_reference(m: ModuleInfo) -> float | None:
    """The limit a module is judged against: its default, else its maximum where the module is a catalog one
    (datacenter modules ship at their maximum), else None: a board not in the catalog often ships with its
    default under its maximum (an RTX 2080 board at 200 of 292 W), so its maximum proves no cap."""
    for value in (m.power_limit_default_w, m.power_limit_max_w if m.in_catalog else None):
        if isinstance(value, (int, float)):
            return float(value)
    return None


def power_limit(ev: Evidence) -> Outcome:
    """A limit under the module's default is a cap, as health judges it (one fact, one verdict); the
    maximum stands in only where no default was read, on a catalog module (a board may ship with its default under its
    maximum: an RTX 3090 at 350 of 400 W is as it comes)."""
    if ev.inventory is None:
        return unknown("no inventory")
    found = []
    tools, capped = _tools(ev), threshold("power_limit_capped")
    for m in ev.inventory.modules:
        limit, ref = m.power_limit_w, _power_reference(m)
        if isinstance(limit, (int, float)) and ref is not None and limit < capped * ref:
            found.append(finding("power_cap_low", HIGH, module=m.id, limit_w=limit, max_w=m.power_limit_max_w
                                 if isinstance(m.power_limit_max_w, (int, float)) else ref, default_w=ref,
                                 fix=f"{tools.set_power_limit.format(watts=f'{ref:g}')} (gpuvet never changes it "
                                     "for you)"))
    if found and ev.declared is None and ev.backend is not None and ev.backend.captured:
        # R9A (issue 46): a captured limit under the default with no declared design is the operator's setting,
        # stated (info); a design (--spec, health) or a peer capped apart (smi_peers) makes it a fault (warn)
        return confirmed("power limits set below the modules' default (a setting: no design declared to hold it "
                         "against)", *[replace(f, severity="info") for f in found])
    if found:
        return confirmed("power limits below the modules' default", *found)
    cited = _inventory_cited(ev, "power limit / default", {
        m.id: f"{m.power_limit_w:g} W / {ref:g} W" for m in ev.inventory.modules
        if isinstance(m.power_limit_w, (int, float)) and (ref := _power_reference(m)) is not None})
    if not cited:
        return unknown("no module's power limit and default (or maximum) were read")
    return clear("power limits at their default", *cited)


def clocks(ev: Evidence) -> Outcome:
    if ev.inventory is None:
        return unknown("no inventory")
    found = [finding("clocks_locked_low", HIGH, module=m.id) for m in ev.inventory.modules if m.clocks_locked is True]
    if found:
        return confirmed("clocks set away from their default", *found)
    cited = _inventory_cited(ev, "application clocks locked", {m.id: "no" for m in ev.inventory.modules
                                                                 if m.clocks_locked is False})
    if not cited:
        return unknown("no module's clock settings were read")
    return clear("clocks at their defaults", *cited)


def compute_rate(ev: Evidence) -> Outcome:
    if ev.compute is None or ev.expectations is None:
        return unknown("no compute measurement")
    from gpuvet.checks.measured import compute_checks

    judged = [c for c in compute_checks(ev.compute, ev.expectations, "gpu")
              if c.name.startswith("gemm_bf16") and c.pct_of_expected is not None]
    slow = [c for c in judged if c.pct_of_expected is not None and c.pct_of_expected < threshold("compute_below_pct")]
    if slow:
        return confirmed("compute below what the modules should give", *[
            finding("compute_below_peak_unexplained", MEDIUM, module=c.module, measured_tflops=c.value,
                    expected_tflops=c.expected) for c in slow])
    if not judged:
        return unknown("no bf16 GEMM figure with an expected value to compare with")
    return clear("compute as expected", *[
        Cited(f"bf16 GEMM on {ev.source}", "% of expected", f"{c.pct_of_expected:.0f} %", where=c.module)
        for c in judged])


CHECKS: dict[str, Callable[[Evidence], Outcome]] = {
    "module_presence": module_presence, "link_state": link_state, "wiring": wiring, "p2p_path": p2p_path,
    "nccl_environment": nccl_environment, "pair_bandwidth": pair_bandwidth, "collective_results": collective_results,
    "host_bottleneck": host_bottleneck, "xid_log": xid_log, "hotplug_history": hotplug_history,
    "visibility": visibility, "driver_runtime": driver_runtime, "ecc_health": ecc_health,
    "gemm_agreement": gemm_agreement, "thermal_state": thermal_state, "thermal_trend": thermal_trend,
    "other_processes": other_processes, "clock_stability": clock_stability, "power_limit": power_limit,
    "clocks": clocks, "compute_rate": compute_rate,
}
CHECKS.update(CAPTURE_CHECKS)
