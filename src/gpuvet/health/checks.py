"""Each health check: typed readings in, findings out. Pure, so each is tested on recorded or
fake readings. A check that finds nothing wrong returns one OK finding saying what it saw."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gpuvet.backends.readings import (
    HW_SLOWDOWNS,
    Inventory,
    KernelLine,
    ModuleHealth,
    Unavailable,
    XidRecord,
    throttle_labels,
)
from gpuvet.captures import host_errors, kernel
from gpuvet.captures.kernel_messages import kernel_message_catalog
from gpuvet.captures.text import Line
from gpuvet.checks.model import Cited
from gpuvet.health.design import switched_domain_gap
from gpuvet.health.model import Finding, Status
from gpuvet.health.xids import XidPolicy
from gpuvet.knowledge import fault, threshold
from gpuvet.node.bus import bus_key
from gpuvet.node.design import Design
from gpuvet.node.diff import Difference
from gpuvet.node.model import PCIE_LANE_GBPS, Node
from gpuvet.node.vendor_tools import PCIE_LINK_STATE, UNKNOWN_VENDOR, VendorTools, tools_for

# clocks-event reasons that mean the hardware is holding the clocks down: slowdown, thermal
# (hardware and the driver's thermal), power brake; sw_power_cap under load is normal
HW_THROTTLE_BITS = HW_SLOWDOWNS  # hardware, thermal and power-brake slowdowns: not a setting
_NOT_APPLICABLE = ("not supported", "not in this", "not modelled")


def unavailable(check: str, reading: Unavailable, module: str | None) -> Finding:
    """Not supported here: skip. Failed or not permitted: could not tell."""
    status = Status.SKIP if any(k in reading.reason for k in _NOT_APPLICABLE) else Status.UNKNOWN
    return Finding(check, status, f"{module}: {reading.reason}" if module else reading.reason, module)


def summarise(check: str, found: list[Finding], ok_reason: str, evidence: Sequence[Cited]) -> list[Finding]:
    """The findings, or one OK saying what was seen (and citing it) when none failed or could not
    tell. Nothing read is not OK: it is "could not tell" (a skip-only check stays a skip)."""
    bad = [f for f in found if f.status in (Status.FAIL, Status.WARN, Status.UNKNOWN)]
    if bad:
        return found
    if not evidence:
        if found and all(f.status is Status.SKIP for f in found):
            return found
        return [*found, Finding(check, Status.UNKNOWN, f"can't tell: nothing was read for {check}")]
    return [*found, Finding(check, Status.OK, ok_reason, evidence=tuple(evidence))]


def source_of(inv: Inventory) -> str:
    """Where the readings come from, in words; simulated ones say so."""
    return "simulated node (a model, not hardware)" if inv.simulated else f"{inv.backend} readings"


def driver(inv: Inventory, expected_modules: int | None, seconds: float,
           tools: VendorTools = UNKNOWN_VENDOR) -> list[Finding]:
    version = inv.software.driver_version
    if isinstance(version, Unavailable):
        status = Status.FAIL if expected_modules else Status.UNKNOWN
        return [Finding("driver", status, f"driver/NVML not usable: {version.reason}",
                        fix=f"check {tools.driver_check} and the kernel log; reload the driver or reboot")]
    return [Finding("driver", Status.OK, f"driver {version} answered in {seconds:.2f} s",
                    evidence=(Cited(source_of(inv), "driver version", str(version)),))]


_PCIE_FIX = f"reseat the module or its riser; check the slot, the cable and {PCIE_LINK_STATE}"


def _fabric_fix(tools: VendorTools) -> str:
    """The vendor's own link command (NVLink's, xGMI's), then the hands-on fix."""
    return f"check `{tools.link_state}`; reseat the module or its fabric cabling, or replace it"


def presence(inv: Inventory, found: Node, design: Design | None, diffs: list[Difference] | None) -> list[Finding]:
    """Against the declared node: its missing and extra modules. Against the inferred design: the
    places in the topology whose module is not there, and a switched domain short of its size."""
    fix = f"reseat or replace the module; check {tools_for(m.model for m in found.modules).lost_module_log}"
    out = [Finding("presence", Status.FAIL, note, fix=fix)
           for note in inv.notes if "lost while being read" in note]
    if design is None:
        return out or [Finding("presence", Status.UNKNOWN, "no module found and nothing to count against",
                               fix="give --expect SPEC with the modules this node should have")]
    if not design.inferred:
        for d in diffs or []:
            if d.kind in ("missing_module", "extra_module"):
                out.append(Finding("presence", Status.FAIL, d.detail, d.module,
                                   fix=fix if d.kind == "missing_module" else
                                   "update the spec given to --expect"))
        return summarise("presence", out, f"{len(found.modules)} modules, as declared", [
            Cited(source_of(inv), "modules found / declared", f"{len(found.modules)} / {len(design.node.modules)}",
                  where=f"declared: {design.node.name}")])
    for slot in design.missing:
        guess = f" (likely {slot.guess})" if slot.guess else ""
        out.append(Finding("presence", Status.FAIL, f"{slot.reason}: {slot.count} missing{guess}", slot.guess,
                           fix=fix))
    gap = switched_domain_gap(found)
    if gap:
        out.append(Finding("presence", Status.FAIL, gap, fix=fix))
    return summarise("presence", out, f"{len(found.modules)} modules, filling the design inferred from them", [
        Cited(source_of(inv), "modules found / places in the inferred design",
              f"{len(found.modules)} / {len(design.node.modules)}")] if found.modules else [])


def _module_of(d: Difference, found: Node) -> str | None:
    return d.module or next((end for end in d.between or () if end in found.module_ids), None)


def _link_kind(d: Difference) -> str:
    return (d.expected or d.found or "").split(" ")[0]


def _diff_status(d: Difference) -> Status:
    """A slowed link is warn (faults.yaml link_degraded): the node computes right, slower, so a
    scheduler keeps it in service and names it; a link down or miswired fails (drains)."""
    return Status.WARN if d.kind == "link_degraded" else Status.FAIL


def fabric(found: Node, diffs: list[Difference], source: str) -> list[Finding]:
    """Fabric links down or below the design (its width and lane speed), and modules cabled in
    each other's place (against a declared node)."""
    has_fabric = bool(found.fabric_links())
    fix = _fabric_fix(tools_for(m.model for m in found.modules))
    out = [Finding("fabric", _diff_status(d), d.detail, _module_of(d, found), fix=fix) for d in diffs
           if (d.kind == "wiring_mismatch" and has_fabric)
           or (d.kind in ("link_down", "link_degraded") and _link_kind(d) not in ("pcie", "smp"))]
    if not has_fabric and not out:
        return [Finding("fabric", Status.SKIP, "no module fabric on this node (PCIe only)")]
    up = [ln for ln in found.fabric_links() if ln.up]
    return summarise("fabric", out, f"{len(found.fabric_links())} fabric connections up at full width and speed", [
        Cited(f"topology ({source})", "fabric links up / differences from the design", f"{len(up)} / 0")] if up else [])


def pcie(inv: Inventory, found: Node, diffs: list[Difference]) -> list[Finding]:
    """Width now against the module's maximum (width does not drop at idle; the generation does,
    so it is judged on the link's capability, never on the idle reading)."""
    out: list[Finding] = []
    low = threshold("pcie_lane_rate_low")
    for m in inv.modules:
        width, top = m.pcie_width_current, m.pcie_width_max
        link = found.pcie_link(m.id)
        if isinstance(width, int) and isinstance(top, int) and width < top:
            out.append(Finding("pcie", Status.WARN, f"{m.id}: PCIe link at x{width} of x{top}", m.id,
                               fix=_PCIE_FIX))
        elif link is not None and not link.up:
            out.append(Finding("pcie", Status.FAIL, f"{m.id}: PCIe link down", m.id))
        elif link is not None and link.gen and link.lane_gbps and link.lane_gbps < low * PCIE_LANE_GBPS[link.gen]:
            bw, nominal = link.width * link.lane_gbps, link.width * PCIE_LANE_GBPS[link.gen]
            out.append(Finding("pcie", Status.WARN, f"{m.id}: PCIe link carries {bw:.1f} of {nominal:.1f} GB/s "
                                                    f"(gen{link.gen} x{link.width})", m.id, fix=_PCIE_FIX))
        elif isinstance(width, Unavailable):
            out.append(unavailable("pcie", width, m.id))
    named = {f.module for f in out}
    for d in diffs:
        if d.kind == "wiring_mismatch" and not found.fabric_links():
            out.append(Finding("pcie", Status.FAIL, d.detail))
        if d.kind in ("link_down", "link_degraded") and _link_kind(d) in ("pcie", "smp") and \
                not (d.between and set(d.between) & named):
            out.append(Finding("pcie", _diff_status(d), d.detail, fix=_PCIE_FIX))
    return summarise("pcie", out, f"{len(inv.modules)} module PCIe links at their maximum width", [
        Cited(source_of(inv), "PCIe width current / max", f"x{m.pcie_width_current} / x{m.pcie_width_max}", m.id)
        for m in inv.modules if isinstance(m.pcie_width_current, int) and isinstance(m.pcie_width_max, int)])


def ecc(readings: Sequence[ModuleHealth], source: str) -> list[Finding]:
    out: list[Finding] = []
    for r in readings:
        count = r.ecc_uncorrected_volatile
        if isinstance(count, Unavailable):
            out.append(unavailable("ecc", count, r.id))
        elif count > 0:
            out.append(Finding("ecc", Status.FAIL, f"{r.id}: {count} uncorrectable ECC error(s) since the last reset",
                               r.id, fix="drain; reset the module (row remapping applies on reset); replace if it "
                                         "recurs"))
    return summarise("ecc", out, f"no uncorrectable ECC error on {len(readings)} modules", [
        Cited(source, "uncorrectable ECC errors (volatile)", str(r.ecc_uncorrected_volatile), r.id) for r in readings
        if isinstance(r.ecc_uncorrected_volatile, int)])


def row_remap(readings: Sequence[ModuleHealth], source: str, tools: VendorTools = UNKNOWN_VENDOR) -> list[Finding]:
    out: list[Finding] = []
    for r in readings:
        if isinstance(r.remap_failed, Unavailable):
            out.append(unavailable("row_remap", r.remap_failed, r.id))
            continue
        if r.remap_failed:
            out.append(Finding("row_remap", Status.FAIL, f"{r.id}: row remapping failed (no spare rows)", r.id,
                               fix="replace the module"))
        if r.remap_pending is True:
            out.append(Finding("row_remap", Status.FAIL, f"{r.id}: row remapping pending", r.id,
                               fix=f"reset the module ({tools.reset_module}) when it is idle, or reboot"))
    return summarise("row_remap", out, f"no row remapping pending or failed on {len(readings)} modules", [
        Cited(source, "row remap pending / failed", f"{r.remap_pending} / {r.remap_failed}", r.id) for r in readings
        if isinstance(r.remap_failed, bool) and isinstance(r.remap_pending, bool)])


def xid(xids: tuple[XidRecord, ...] | Unavailable, since_seq: int | None, policy: XidPolicy,
        window: str, source: str) -> tuple[list[Finding], list[str]]:
    """(findings, notes): Xids of the drain class fail; the job's own are noted."""
    if isinstance(xids, Unavailable):
        if any(k in xids.reason for k in _NOT_APPLICABLE):  # a vendor without Xids (AMD): skip, saying why
            return [unavailable("xid", xids, None)], []
        return [Finding("xid", Status.UNKNOWN, xids.reason, fix="run as root, or pass --ignore xid")], []
    fresh = [x for x in xids if since_seq is None or x.seq > since_seq]
    counts = Counter((x.module or x.bus_id, x.code) for x in fresh)
    out: list[Finding] = []
    notes: list[str] = []
    for (where, code), n in sorted(counts.items()):
        text = f"{where}: Xid {code} ({policy.meaning(code)})" + (f" x{n}" if n > 1 else "")
        if code in policy.drain:  # severity critical in the knowledge base: the action is NVIDIA's bucket's
            out.append(Finding("xid", Status.FAIL, text, where, fix=policy.action(code)))
        else:
            notes.append(f"{text} {window}: {policy.severity(code)}, reported, not failed ({policy.action(code)})")
    cited = [Cited(f"kernel log ({source})", f"Xid records {window} / of the drain class", f"{len(fresh)} / 0")]
    return summarise("xid", out, f"no Xid needing action {window}", cited), notes


def module_buses(inv: Inventory) -> dict[str, str]:
    """Bus id in the one spelling the kernel log's readers give it (node.bus: ``0000:58:00.0``) -> module id."""
    return {bus_key(m.bus_id): m.id for m in inv.modules if isinstance(m.bus_id, str)}


def kernel_messages(lines: tuple[KernelLine, ...] | Unavailable, since_seq: int | None, modules: dict[str, str],
                    window: str, source: str) -> list[Finding]:
    """The driver's messages of a module that did not initialise, needs a reset, fell off the bus
    or cannot attach (no Xid says so): read by captures/kernel.py, the patterns doctor reads
    captures with, on the lines after the same mark as the Xids; the fix is the message's action
    (captures/kernel_messages.yaml). A module that failed to initialise is not in the driver's
    list, so it is named by its bus id."""
    if isinstance(lines, Unavailable):
        if any(k in lines.reason for k in _NOT_APPLICABLE):
            return [unavailable("kernel_messages", lines, None)]
        return [Finding("kernel_messages", Status.UNKNOWN, lines.reason,
                        fix="run as root, or pass --ignore kernel_messages")]
    fresh = [Line(ln.seq, ln.text) for ln in lines if since_seq is None or ln.seq > since_seq]
    table = kernel_message_catalog()
    out: list[Finding] = []
    for e in kernel.parse(fresh).events:
        where = modules.get(e.module, e.module)
        info = table[e.kind]
        times = f" (logged {e.count} times)" if e.count > 1 else ""
        status = _STATUS_OF[fault(info.cause).severity]  # faults.yaml's verdict: an info kind is said, not failed
        out.append(Finding("kernel_messages", status, f"{where}: {info.meaning}{times}", where, fix=info.action,
                           evidence=(Cited(f"kernel log ({source})", _driver_word(e.kind), e.text[:240],
                                           f"record {e.line}"),)))
    cited = [Cited(f"kernel log ({source})", f"driver lines {window} / failure messages", f"{len(fresh)} / 0")]
    return summarise("kernel_messages", out, f"no module failed to come up, needs a reset or cannot attach {window}",
                     cited)


# a knowledge-base severity as health's status: critical drains the node, warn flags it, info is reported only
_STATUS_OF = {"critical": Status.FAIL, "warn": Status.WARN, "info": Status.OK}


def _driver_word(kind: str) -> str:
    """Which driver's message the evidence is: amdgpu's kinds are named amd_*; a host DIMM's memory errors are
    EDAC's (or the machine check handler's, rasdaemon's: captures/host_errors.py), no GPU driver's."""
    return "amdgpu message" if kind.startswith("amd_") else "EDAC message" if kind in host_errors.KINDS \
        else "machine check record" if kind.startswith("host_machine_check") else "NVRM message"


def throttle(readings: Sequence[ModuleHealth], source: str) -> list[Finding]:
    out: list[Finding] = []
    for r in readings:
        mask = r.clock_event_mask
        if isinstance(mask, Unavailable):
            out.append(unavailable("throttle", mask, r.id))
        elif mask & HW_THROTTLE_BITS:
            out.append(Finding("throttle", Status.FAIL, f"{r.id}: clocks held down now: "
                                                        f"{', '.join(throttle_labels(mask & HW_THROTTLE_BITS))}", r.id,
                               fix="check cooling, inlet temperature and the power supply"))
    return summarise("throttle", out, f"no hardware or thermal clock slowdown on {len(readings)} modules", [
        Cited(source, "clock-event reasons now", ", ".join(throttle_labels(r.clock_event_mask)) or "none", r.id)
        for r in readings if isinstance(r.clock_event_mask, int)])


def processes(inv: Inventory) -> list[Finding]:
    out: list[Finding] = []
    for m in inv.modules:
        pids = m.processes
        if isinstance(pids, Unavailable):
            out.append(unavailable("processes", pids, m.id))
        elif pids:
            out.append(Finding("processes", Status.FAIL, f"{m.id}: held by process(es) "
                                                         f"{', '.join(map(str, pids[:8]))}", m.id,
                               fix="stop the leftover processes, or pass --ignore processes while a job runs"))
    return summarise("processes", out, "no compute process on any module", [
        Cited(source_of(inv), "compute processes", "0", m.id) for m in inv.modules if isinstance(m.processes, tuple)])


def power_limit(inv: Inventory, tools: VendorTools = UNKNOWN_VENDOR) -> list[Finding]:
    out: list[Finding] = []
    for m in inv.modules:
        limit, default = m.power_limit_w, m.power_limit_default_w
        if isinstance(limit, Unavailable):
            out.append(unavailable("power_limit", limit, m.id))
        elif not isinstance(default, Unavailable) and limit < threshold("power_limit_capped") * default:
            out.append(Finding("power_limit", Status.WARN, f"{m.id}: power limit {limit:g} W below its default "
                                                           f"{default:g} W", m.id,
                               fix=f"{tools.set_power_limit.format(watts=f'{default:g}')}, or pass --ignore "
                                   "power_limit where caps are deliberate"))
    return summarise("power_limit", out, "every power limit at its default", [
        Cited(source_of(inv), "power limit / default", f"{m.power_limit_w:g} W / {m.power_limit_default_w:g} W", m.id)
        for m in inv.modules if isinstance(m.power_limit_w, (int, float))
        and isinstance(m.power_limit_default_w, (int, float))])
