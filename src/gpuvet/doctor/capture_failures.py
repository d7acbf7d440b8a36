"""What captured files say failed, beyond Xid numbers and counters: NVRM messages of modules that
did not come up or need a reset, benchmarks that aborted or waived their tests, an ECC mode the
driver can no longer read, clocks held far below their maximum, a module at its own maximum
operating temperature, and NVLink links that are inactive by the card's design (a bridged pair).
Each finding carries the line or field it was read from."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple

from gpuvet.captures.records import SMI_MESSAGES, ModuleHealth, SmiTextModule
from gpuvet.doctor import bench_cuda
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, Finding, causes, finding
from gpuvet.doctor.outcome import HIGH, LOW, MEDIUM, Outcome, clear, confirmed, unknown
from gpuvet.doctor.xids import kernel_message_catalog
from gpuvet.knowledge import off_bus_xids
from gpuvet.node.bus import bus_key
from gpuvet.node.catalog import find_model
from gpuvet.node.vendor_tools import APP_ERROR_FIX, CAPTURED, COLLECTIVE_FIX, CORRUPTION_FIX, P2P_FIX_AMD

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelEvent

# tables the CUDA samples and rocm-bandwidth-test (its -v aside, read apart) time and never check
CUDA_SAMPLE_TABLES = ("p2pBandwidthLatencyTest", "bandwidthTest", "busGrind", "rocm-bandwidth-test", "hipBusBandwidth")
CLOCK_HELD_LOW = 0.25  # SM clock at or below a quarter of its maximum: HW slowdown territory (nvml: "by 2x or more")
# PCIe cards whose NVLink comes only from bridges to one peer: each bridge carries 4 links, 3 bridges make the
# full set; the chip's other links are unwired. NVIDIA H100 PCIe / H100 NVL product briefs: NVLink 600 GB/s
# bidirectional through three bridges = 12 NVLink 4 links (4 per bridge); nvidia-smi lists all 18 of the chip's
# links, and "the inactive links are by design" (github.com/Azure/azurehpc-health-checks/issues/162, H100 PCIe
# in Azure NCv5: 12 of 18 links up).


class BridgeDesign(NamedTuple):
    """NVLink through bridges: how many links one bridge carries and how many bridges a full set is."""

    links_per_bridge: int
    bridges: int

    @property
    def full_set(self) -> int:
        return self.links_per_bridge * self.bridges


BRIDGED_CARDS: dict[str, BridgeDesign] = {"h100 pcie": BridgeDesign(4, 3), "h100 nvl": BridgeDesign(4, 3)}


# what says a module is not there to use: module-missing reads only these (a ring timeout or a RAS
# error of a module that is present belongs to compute-errors, which reads every kind)
PRESENCE_CAUSES = frozenset({"module_init_failed", "module_firmware_boot_failed", "module_needs_reset",
                             "module_cannot_attach", "module_fell_off_bus", "module_power_cables"})


def kernel_messages(ev: Evidence) -> Outcome:
    """The driver's messages without an Xid: a module that did not initialise, needs a reset,
    cannot attach, hung or reported a hardware error."""
    return _kernel_messages(ev, None)


def kernel_presence_messages(ev: Evidence) -> Outcome:
    """Only the messages that say a module is not there to use (module-missing's reading)."""
    return _kernel_messages(ev, PRESENCE_CAUSES)


def _not_brought_up(ev: Evidence) -> list[Finding]:
    """nvidia-smi found no device while an lspci listing shows NVIDIA GPU functions on the bus: the
    modules are there and the driver brings up none of them (not loaded, refused, or a CC/PPCIe set-up)."""
    c = ev.captures
    if not c.smi_none:
        return _fewer_listed(ev)
    label, line = c.smi_none[0]
    if any(f == label and e.kind in _VIEW_KINDS for f, e in c.app_errors):  # a job's view (captures/job_view.py)
        return []
    if not c.bus_gpus and c.bus_other_gpus:  # another vendor's modules only: NVIDIA's tool rightly finds none
        return []
    if not c.bus_gpus:  # nvidia-smi alone: the driver answered and lists none (or none was passed to a container)
        return [finding("no_modules_visible", MEDIUM, fix=APP_ERROR_FIX["smi_no_devices"], file=label, line=line,
                        log="No devices were found",
                        detail="the driver answered and lists no module; no PCI listing given to say "
                               "whether they are on the bus")]
    buses = [bus_key(b) for b, _ in c.bus_gpus]
    return [finding("no_modules_visible", HIGH, module=", ".join(buses), file=label, line=line,
                    log="No devices were found", on_the_bus=[f"{bus_key(b)} {name}".strip() for b, name in c.bus_gpus],
                    detail=f"{len(buses)} NVIDIA GPU function(s) on the PCI bus, none brought up by the driver")]


# captures/job_view.VIEW_KINDS (not imported: doctor --sim loads no parser): 'No devices were found' in a job's or
# a cgroup's view is that view's record, never the node's modules missing
_VIEW_KINDS = frozenset({"job_view_no_devices", "container_view_no_devices"})


def _fewer_listed(ev: Evidence) -> list[Finding]:
    """NVIDIA GPU functions lspci lists that the driver's own listing (nvidia-smi's table or -q) lacks, where that
    listing goes on past their bus id: nvidia-smi lists its modules in bus order, so a paste cut short drops only
    its tail, and a module missing before the last one listed is one the driver did not bring up (fell off the bus,
    failed its init), with or without an Xid (issue 46, batch T)."""
    c = ev.captures
    listed = {bus_key(m.bus_id) for m in c.smi_text if m.bus_id}
    if not listed or not c.bus_gpus:
        return []
    last = _listed_through(c.smi_text) or max(listed)
    gone = [(bus_key(b), name) for b, name in c.bus_gpus if bus_key(b) not in listed and bus_key(b) < last]
    if not gone:
        return []
    return [finding("module_missing", MEDIUM, module=", ".join(b for b, _ in gone),
                    fix="the module is on the PCI bus and the driver does not list it: read the kernel log for its "
                        "bus id (the driver's lines: fallen off the bus, RmInitAdapter failed); reset the module or "
                        "reboot, and reseat or replace it if it drops again",
                    on_the_bus=[f"{b} {name}".strip() for b, name in gone], bus_count=len(c.bus_gpus),
                    driver_count=len(listed), detail=f"the PCI listing shows {len(c.bus_gpus)} NVIDIA GPU function(s), "
                    f"the driver's listing {len(listed)}: {', '.join(b for b, _ in gone)} missing before its last "
                    f"module ({last})")]


def _listed_through(modules: list[SmiTextModule]) -> str:
    """The last bus id of the listing's unbroken run of indexes from its first (R12C): nvidia-smi numbers the modules
    it brought up without a gap, so an index skipped ('0, 1, 7': a paste's '...' between rows) or printed twice (two
    machines' tables in one document) is rows the paste left out, and a module past them is not known missing.
    Empty where no row prints its index."""
    indexed = sorted((int(m.fields["Index"]), bus_key(m.bus_id)) for m in modules
                     if m.bus_id and m.fields.get("Index", "").isdigit())
    run: list[str] = []
    for n, (index, bus) in enumerate(indexed):
        if index != indexed[0][0] + n:
            break
        run.append(bus)
    return max(run) if run else ""


# issue 46: what a finding read from a poster's sentence (captures/quoted.py, app_errors.quoted) says of its source
QUOTED_SAID = "quoted in the poster's words, not a tool's own line"


def as_quoted(found: Finding) -> Finding:
    """A finding read from a poster's words (issue 46): a lead, not a verdict. The knowledge base's cause and
    advice, at most warn (a sentence is never a critical fault), low confidence, and said as theirs."""
    severity = "warn" if found.severity == "critical" else found.severity
    return replace(found, severity=severity, confidence=LOW, evidence={**found.evidence, "said": QUOTED_SAID})


# R4B: a poster's Xid quoted with the driver's own message after its code ('`Xid <code>, NETIR_LINK_DOWN Fatal XC0
# i0 Link 14`') is the log's line itself: the catalog's severity stands, still a lead said as the poster's (a
# sentence that only names the code, 'dmesg shows Xid <code> on <bus>', stays at most warn: as_quoted)
_XID_MESSAGE = r"\bXid\s*(?:\([^)]{{0,40}}\)\s*:?\s*)?{},\s+[A-Z][A-Z0-9_]{{3,}}"


def as_quoted_xid(found: Finding, module: str, code: int, text: str) -> Finding:
    """A quoted Xid's finding (as_quoted), at the catalog's severity where the poster quoted its message whole
    (this code's, not another's on the line); ``module`` the module it is on."""
    lead = as_quoted(found)
    kept = re.search(_XID_MESSAGE.format(code), text) is not None
    lead = replace(lead, severity=found.severity) if kept else lead
    if (driver := _DRIVER_NAMED.search(text)) is None:
        return lead
    return replace(lead, evidence={**lead.evidence, "driver_named": _DRIVER_SUSPECT.format(driver.group(1))})


# R4B: a report that names the driver version beside its Xids ('driver **610.57.04** takes recurring Xid …'): where
# the Xid recurs across processes after a driver change, the driver is the suspect, not each application
_DRIVER_NAMED = re.compile(r"\bdriver\W{1,6}(\d{3}\.\d{1,3}(?:\.\d{1,3})?)\b", re.I)
_DRIVER_SUSPECT = ("the report ties these Xids to driver {}: where they recur across processes and workloads since a "
                   "driver change, suspect the driver (roll back to the earlier driver to confirm; report it to NVIDIA)")


# issue 46: the kind of captures/kernel_unknown.py's events (UNNAMED, not imported: doctor --sim loads no parser)
# and the cause they give (knowledge/faults.yaml)
UNNAMED = UNNAMED_CAUSE = "driver_error_unnamed"
GPULESS = "{} kernel line(s), none from a GPU, NIC-to-GPU or driver module"  # fallback.py's kernel excerpt
UNREAD = "{}: gpuvet has no reader for these lines, so it can't tell whether they hold a fault"  # OX1


def unread_gpu_text(counts: dict[str, int]) -> str | None:
    """A GPU software stack's lines no reader read (captures/gpu_software.py), said with their count; None if none."""
    if not counts:
        return None
    return UNREAD.format("; ".join(f"{n} {source} line(s) not understood" for source, n in counts.items()))


WINDOWS_LOG = "Windows event log or WSL lines"  # issue 46: Windows' display drivers' events (captures/windows.py)
MINER_LINES = "miner NVML lines"  # issue 46: miners', hashcat's, Folding@home's, ffmpeg's GPU lines (app_gpu_lines.py)


def _kernel_messages(ev: Evidence, causes: frozenset[str] | None) -> Outcome:
    c = ev.captures
    unused = _not_brought_up(ev)
    if unused and c.bus_gpus:
        return confirmed("the driver brings up no module while the PCI bus lists NVIDIA GPUs" if c.smi_none else
                         "the driver's listing lacks NVIDIA GPUs the PCI bus lists", *unused)
    said = _driver_lines(ev, causes)
    if unused and said.status != "confirmed":  # nvidia-smi's 'none' alone; the driver's own lines say more
        return confirmed("the driver answered and lists no module", *unused)
    return said


def _driver_lines(ev: Evidence, causes: frozenset[str] | None) -> Outcome:
    """What the driver's kernel lines say (those of ``causes`` only, where given)."""
    c = ev.captures
    if not c.kernel_lines and not c.kernel_events and c.kernel_other:  # issue 46: a driver with no messages known
        return unknown(OTHER_DRIVERS.format(", ".join(f"{n} {d}" for d, n in c.kernel_other.items())))
    if not c.kernel_lines and not c.kernel_events and (unread := unread_gpu_text(c.gpu_unread)) is not None:
        return unknown(unread)
    if not c.kernel_lines and not c.kernel_events and c.kernel_plain:  # issue 46: an excerpt of other lines only
        return clear(GPULESS.format(c.kernel_plain), Cited(_source(ev, "kernel log"), "kernel lines read",
                                                           str(c.kernel_plain)))
    if not c.kernel_lines and not c.kernel_events:  # issue 46: a poster's words may name a message, no line
        return unknown("no NVRM lines in the captures (give `dmesg -T | grep NVRM` or `journalctl -k` output)")
    table = kernel_message_catalog()
    events = [e for e in c.kernel_events if causes is None or table[e.kind].cause in causes]
    found = [_unnamed(e, table[e.kind].action) if e.kind == UNNAMED else
             replace(finding(table[e.kind].cause, HIGH, module=e.module, fix=table[e.kind].action, message=e.kind,
                             meaning=table[e.kind].meaning, line=e.line, log=e.text[:240], times=e.count), host=e.host)
             for e in events]
    found = [as_quoted(f) if e.quoted else f for f, e in zip(found, events, strict=True)]
    if found:
        said = list(dict.fromkeys(re.sub(r"\s*\([^)]*\)", "", table[e.kind].meaning).split(":")[0]
                                  for e in events))  # each meaning's first clause, once
        return confirmed("the driver's kernel messages say: " + "; ".join(said), *found)
    other = len(c.kernel_events) - len(events)
    return clear(_none_said(ev) + (f" ({other} other message(s): see compute-errors)" if other else ""),
                 Cited(_source(ev, "kernel log", WINDOWS_LOG, SMI_MESSAGES, MINER_LINES), "driver lines read",
                       str(c.kernel_lines)))


OTHER_DRIVERS = ("kernel lines of a GPU driver gpuvet has no messages for ({}), none at error level: it can't tell "
                 "whether they hold a fault (read them, or give that vendor's tool's output)")


def _unnamed(e: KernelEvent, action: str) -> Finding:
    """Issue 46: a driver's error lines no message of the knowledge base names: said with their count and the
    first of them quoted, a lead to read (warn), never a named fault."""
    said = f"the {e.driver} driver printed {e.count} error line(s) gpuvet's knowledge base does not name"
    found = finding(UNNAMED_CAUSE, MEDIUM, module=e.module, fix=action, message=e.kind, driver=e.driver,
                    line=e.line, times=e.count, lines=list(e.shown))
    return replace(found, title=said[0].upper() + said[1:], host=e.host)


def _none_said(ev: Evidence) -> str:
    """What the clear verdict rules out: never the bus loss the log reported as an Xid (the knowledge base's
    off-bus codes), which the reader hands to xid_log and xid_log confirms; one check does not call clear what
    another found."""
    lost = sorted({x.code for x in ev.captures.xids if x.code in off_bus_xids()})
    if not lost:
        return "no initialisation, reset, attach or bus-loss message among the driver's lines"
    codes = ", ".join(str(code) for code in lost)
    return f"no initialisation, reset or attach message among the driver's lines (the bus loss, Xid {codes}: xid_log)"


def _xgmi_fabric(product: str) -> bool:
    """A module built into an xGMI fabric (the catalog's design): its peers are joined by design, so no peer
    access between two of them is a fault. A PCIe card (a Radeon) may have none by design, as CUDA's
    p2p_denied is judged only on NVLink boards: one fact, one verdict."""
    model = find_model(product) if product else None
    return model is not None and model.fabric == "xgmi"


def _first_runtime_error(ev: Evidence, before: int) -> str | None:
    """The collective library's first WARN/ERROR logged before a benchmark's failure line, with the host
    and device it names: the error the benchmark's own abort ('unhandled cuda error') only echoes."""
    fails = sorted((f.at for _, log in ev.captures.nccl_logs for f in log.failures if f.at.line < before),
                   key=lambda at: at.line)
    if not fails:
        return None
    at = fails[0]
    where = " ".join(x for x in (at.host, f"[{at.dev}]" if at.dev is not None else None) if x)
    return f"{where or 'host not in the log'}, line {at.line}: {at.text[:200]}"


def benchmark_failures(ev: Evidence) -> Outcome:
    """nccl-tests that stopped or failed their check; nvbandwidth device-to-device tests it waived."""
    c = ev.captures
    found: list[Finding] = []
    wrong_rows = any(row.wrong for r in c.nccl for row in r.rows)
    for f in c.nccl_failures:  # wrong values counted by nccl-tests itself are corrupt data, not an abort
        if f.kind == "out_of_bounds" and wrong_rows:
            continue  # collective_results names the sizes from the #wrong column
        cause = {"out_of_bounds": "data_corruption_in_transfer", "alone": "nccl_tests_without_mpi",
                 "stalled": "collective_test_stalled"}.get(f.kind, "collective_test_failed")
        cause = bench_cuda.cause(f.kind, f.message) or cause  # R10B: the CUDA runtime's own words name the state
        fix = {"collective_test_failed": COLLECTIVE_FIX, "data_corruption_in_transfer": CORRUPTION_FIX}.get(
            cause, {}).get(f.tool)
        first = _first_runtime_error(ev, f.line) if cause == "collective_test_failed" else None
        if first is not None:  # the library's own WARN before the abort says why: its advice, not "run with INFO"
            fix = causes()["collective_runtime_error"].fix
        sure = MEDIUM if f.kind == "stalled" else HIGH  # R6B: a stall told by the text around the header
        found.append(finding(cause, sure, fix=fix, carried={"first_error": first} if first else None, tool=f.tool,
                             kind=f.kind, error=f.message, at=f.where, line=f.line, output=f.text[:240]))
    waived = [w for w in c.nvb_waived if w.test and w.test.startswith("device_to_device")]
    if waived:
        found.append(finding("p2p_unavailable", MEDIUM, tests=[w.test for w in waived if w.test],
                             reason=waived[0].reason or None, line=waived[0].line))
    for w in c.nvb_waived:  # TransferBench stopped at an [ERROR] line; without peer access, P2P is unavailable
        if w.test == "TransferBench":
            cause = "p2p_unavailable" if "peer" in w.reason.lower() else "copy_test_failed"
            found.append(finding(cause, MEDIUM, fix=P2P_FIX_AMD if cause == "p2p_unavailable" else None, tool=w.test,
                                 error=w.reason[:240], line=w.line))
    found += [finding("p2p_unavailable", MEDIUM, between=(k.src, k.dst), fix=P2P_FIX_AMD, tool="rocm-bandwidth-test",
                      file=label, line=k.line, reading="Inter-Device Access 0: no peer access between them")
              for label, k in c.no_peer if all(_xgmi_fabric(m) for m in k.models)]
    if found:
        return confirmed("a benchmark failed or skipped what it was asked to measure", *found)
    if c.nccl_failures:  # only an 'Out of bounds values … FAILED' beside #wrong rows: never "clear"
        return unknown(f"nccl-tests reported {c.nccl_failures[0].message}: collective_results names the sizes")
    rows = sum(len(r.rows) for r in c.nccl)
    tables = [n for n in c.nvbandwidth if not n.startswith(CUDA_SAMPLE_TABLES)]  # the samples: captured_errors's
    if not (rows or tables):  # a header alone (or a cut run) does not say the run finished
        return unknown("no benchmark results (give the whole nccl-tests or nvbandwidth output with --from)")
    cut = [r for r in c.nccl if r.rows and r.avg_busbw is None and not r.finished]  # 'Out of bounds … OK': whole
    if cut:  # rows alone do not say the run finished: nccl-tests prints its summary last
        return unknown(f"the output ends before nccl-tests' summary ('# Out of bounds values' / '# Avg bus bandwidth')"
                       f" after {len(cut[0].rows)} result row(s): cut, killed or hung (give the whole output)")
    cited: list[Cited] = []
    if rows:
        cited.append(Cited(ev.capture_source("nccl-tests", "hccl_test") or "captured nccl-tests",
                           "result rows, summary lines, failure lines",
                           f"{rows}, {sum(1 for r in c.nccl if r.rows)}, 0"))
    if tables:
        cited.append(Cited(ev.capture_source("nvbandwidth", "TransferBench") or "captured nvbandwidth",
                           "tests run, device-to-device tests waived",
                           f"{len(tables)}, 0"))
    return clear("the benchmarks ran to the end without an error line", *cited)


def _source(ev: Evidence, kind: str, *more: str) -> str:
    return ev.capture_source(kind, *more) or f"captured {kind}"


# --- findings the existing capture checks add --------------------------------------------------
def ecc_reset_findings(ev: Evidence) -> list[Finding]:
    """ECC mode 'Unknown Error': the driver cannot read the module's ECC state, which after an
    uncorrectable error means the module must be reset (it is not 'ECC off')."""
    return [finding("module_needs_reset", HIGH, module=h.module, ecc_mode=h.ecc_mode,
                    uncorrectable_volatile=h.ecc_uncorrectable_volatile, source=CAPTURED["ecc_mode"])
            for h in ev.captures.health if h.ecc_mode and "error" in h.ecc_mode.lower()]


def clock_findings(ev: Evidence) -> list[Finding]:
    """SM clock at a quarter of its maximum or less while the capture's clock reasons say it is not
    idle and it is busy (0 % utilization: an idle module's SW Power Cap at P8 is no fault); a module at or
    above its own slowdown temperature (throttling, whether or not the capture shows the clock reasons), else at
    its own maximum operating temperature with no thermal slowdown active yet."""
    out: list[Finding] = []
    for h in ev.captures.health:
        reasons_read = h.module in ev.captures.clock_reasons_read  # without them an idle module looks the same
        idle = "idle" in h.clock_events or h.utilization_pct == 0  # R11A: no work, no clock to judge (P8 at 0 MHz)
        if h.sm_clock_mhz is not None and h.sm_clock_max_mhz and reasons_read and not idle \
                and h.sm_clock_mhz <= CLOCK_HELD_LOW * h.sm_clock_max_mhz:
            out.append(finding("clocks_held_low", MEDIUM if h.clock_events else LOW, module=h.module,
                               sm_clock_mhz=h.sm_clock_mhz, sm_clock_max_mhz=h.sm_clock_max_mhz,
                               active=sorted(h.clock_events),
                               note=None if h.clock_events else "no reason active in the capture: read it under load"))
        limit = h.temperature_max_operating_c
        thermal = h.clock_events & {"sw_thermal_slowdown", "hw_thermal_slowdown"}
        slowdown = h.temperature_slowdown_c
        if slowdown and h.temperature_c is not None and h.temperature_c >= slowdown and not thermal:
            out.append(_at_slowdown(h, slowdown, reasons_read))
        elif limit and h.temperature_c is not None and h.temperature_c >= limit - 1 and not thermal:
            out.append(finding("at_max_operating_temp", MEDIUM, module=h.module, temperature_c=h.temperature_c,
                               max_operating_c=limit, slowdown_c=h.temperature_slowdown_c))
        elif slowdown is None and limit is None and not thermal:
            out += _margin_findings(h)
    return out


def _at_slowdown(h: ModuleHealth, slowdown: float, reasons_read: bool) -> Finding:
    """At or above the module's own slowdown temperature: throttling where the capture has no clock reasons;
    where it read them and no thermal slowdown is active among them, the module is that hot without
    throttling yet (the maximum operating temperature's kind: the next step is throttling)."""
    if reasons_read:
        return finding("at_max_operating_temp", MEDIUM, module=h.module, temperature_c=h.temperature_c,
                       max_operating_c=h.temperature_max_operating_c, slowdown_c=slowdown,
                       note="at or above the module's own slowdown temperature, but the capture's clock reasons "
                       "show no thermal slowdown active (HW/SW Thermal Slowdown): not throttling when captured")
    return finding("thermal_throttling", MEDIUM, module=h.module, temperature_c=h.temperature_c,
                   slowdown_c=slowdown, note="at or above the module's own slowdown temperature: its "
                   "hardware lowers the clocks there (the capture shows no clock reasons saying so)")


def _margin_findings(h: ModuleHealth) -> list[Finding]:
    """Newer drivers print T.Limit margins instead of thresholds: the degrees left to the limit ('GPU T.Limit
    Temp') against where slowdown and the maximum operating step begin on that scale ('GPU Slowdown T.Limit
    Temp : -2 C'). A margin is never read as a temperature (a margin of 5 C is a hot module, not a cold one)."""
    margin, slow, top = h.margin_c, h.slowdown_margin_c, h.max_operating_margin_c
    if margin is None:
        return []
    if slow is not None and margin <= slow:
        return [finding("thermal_throttling", MEDIUM, module=h.module, temperature_c=h.temperature_c,
                        tlimit_margin_c=margin, slowdown_tlimit_c=slow, note="its T.Limit margin has reached the "
                        "slowdown step: its hardware lowers the clocks there")]
    if top is not None and margin <= top + 1:
        return [finding("at_max_operating_temp", MEDIUM, module=h.module, temperature_c=h.temperature_c,
                        tlimit_margin_c=margin, max_operating_tlimit_c=top)]
    return []


@dataclass(frozen=True)
class LinksExpected:
    """How many of a module's NVLink links should be up, and what says so; ``count`` None: can't tell."""

    count: int | None
    basis: str


def links_expected(ev: Evidence, gpu: str, up: int, seen: int) -> LinksExpected:
    """The links that should be up on ``gpu`` from the design, never from the links found up: the declared
    node's fabric links (``--expect``), else a bridged card's full bridge set when that many are up.
    Fewer than a full set, undeclared, is one or two bridges fitted or bridges lost: can't tell; but
    a count no whole number of bridges carries means a fitted bridge has links down (the next whole
    bridge is a floor). Other modules: every link listed."""
    declared = _declared_links(ev, gpu)
    if declared is not None:
        return LinksExpected(declared, f"declared node {ev.declared.name if ev.declared else ''}".strip())
    product = ev.captures.nvlink_products.get(gpu, "")
    bridge = next((v for k, v in BRIDGED_CARDS.items() if k in product.lower()), None)
    if bridge is None:
        return LinksExpected(seen, CAPTURED["nvlinks_listed"])
    if up >= bridge.full_set:
        return LinksExpected(bridge.full_set, f"a full set of {bridge.bridges} bridges")
    if up % bridge.links_per_bridge:
        fitted = -(-up // bridge.links_per_bridge)
        return LinksExpected(fitted * bridge.links_per_bridge, f"at least {fitted} bridge(s) fitted, "
                             f"{bridge.links_per_bridge} links each")
    return LinksExpected(None, f"{up} of the {bridge.full_set} links of a full set of {bridge.bridges} bridges up "
                         f"on {gpu} ({product or 'bridged card'}): can't tell how many bridges are fitted — "
                         "declare the node with --expect")


def _declared_links(ev: Evidence, gpu: str) -> int | None:
    """The declared node's fabric links of the module nvidia-smi calls ``GPU n`` (dcgmi: ``gpuId n``),
    declared as ``gpun``; None without a declared node or such a module."""
    if ev.declared is None:
        return None
    module = "gpu" + gpu.rsplit(" ", 1)[-1]
    if module not in ev.declared.module_ids:
        return None
    return sum(ln.width for ln in ev.declared.links_of(module) if ln.kind.is_fabric and ln.up)
