"""One health check: read the node once (inventory, topology, health readings) under a
deadline, judge each check, and return the report. A driver that does not answer within the
deadline is itself the finding."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuvet.backends.base import Backend, ModuleLost
from gpuvet.backends.nic_readings import NicReadings
from gpuvet.backends.readings import HealthReadings, Inventory, Unavailable, XidRecord
from gpuvet.checks.nics import DeclaredNic
from gpuvet.errors import BackendError
from gpuvet.health import checks, nic_checks
from gpuvet.health.fabric_state import fabric_state
from gpuvet.health.model import CHECKS, Finding, HealthReport, Status
from gpuvet.health.state import XidMark, since_seq
from gpuvet.health.xids import xid_policy
from gpuvet.node.design import Design, declared_design, infer_design
from gpuvet.node.diff import diff_nodes
from gpuvet.node.model import EndpointKind, Module, Node
from gpuvet.node.nic_catalog import find_nic_model
from gpuvet.node.vendor_tools import VendorTools, tools_for

READ_CHECKS = ("ecc", "row_remap", "xid", "kernel_messages", "throttle")


@dataclass(frozen=True)
class HealthOptions:
    declared: Node | None = None  # --expect; None: the design inferred from what was found
    declared_name: str | None = None
    last_mark: XidMark | None = None  # None: Xids since boot
    ignore: frozenset[str] = frozenset()
    timeout_s: float = 30.0


@dataclass
class _Gathered:
    inventory: Inventory | None = None
    node: Node | None = None
    readings: HealthReadings | BackendError | None = None
    nics: NicReadings | Unavailable | None = None
    error: BaseException | None = None
    seconds: float = 0.0


@dataclass
class HealthResult:
    report: HealthReport
    mark: XidMark | None = None  # where the next `--xid-since last` check should start
    xids_seen: tuple[XidRecord, ...] = field(default_factory=tuple)
    inventory: Inventory | None = None  # the modules found (their identities: the module ledger's)
    boot_id: str | None = None
    gone: tuple[Module, ...] = ()  # modules of the design an off-bus Xid took away: still theirs to name


def _gather(backend: Backend, out: _Gathered) -> None:
    started = time.perf_counter()
    try:
        out.inventory = backend.inventory()
        out.node = backend.node()
        try:
            out.readings = backend.health()
        except BackendError as exc:  # ModuleLost included: judged below
            out.readings = exc
        out.nics = backend.nics()
    except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread and judged there
        out.error = exc
    out.seconds = time.perf_counter() - started


def gather(backend: Backend, timeout_s: float) -> _Gathered | None:
    """The readings, or None when the backend did not answer within ``timeout_s``."""
    got = _Gathered()
    worker = threading.Thread(target=_gather, args=(backend, got), daemon=True, name="gpuvet-health")
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        return None
    if got.error is not None:
        raise got.error
    return got


def run_health(backend: Backend, options: HealthOptions) -> HealthResult:
    """Raises GpuvetError for what the backend reports as bad input (a broken spec)."""
    started = time.perf_counter()
    got = gather(backend, options.timeout_s)
    if got is None or got.inventory is None or got.node is None:
        finding = Finding("driver", Status.FAIL, f"the driver did not answer within {options.timeout_s:g} s "
                                                 "(hung driver or a wedged module)",
                          fix="check the kernel log; reset the module or reboot")
        report = HealthReport("node", backend.name, backend.simulated, [finding], time.perf_counter() - started, 0,
                              _expected_text(options))
        return HealthResult(report)
    findings, notes, mark, xids = _judge(got, options)
    order = {c: i for i, c in enumerate(CHECKS)}
    findings = sorted(findings + _nic_findings(got, options.declared or backend.declared,
                                               os.environ if backend.local_host else {}),
                      key=lambda f: order.get(f.check, len(order)))
    findings = _explained_by_xids(findings, xids, notes)
    findings = [f for f in findings if f.check not in options.ignore]
    if options.ignore:
        notes.append(f"ignored: {', '.join(sorted(options.ignore))}")
    report = HealthReport(got.node.name, backend.name, backend.simulated, findings, time.perf_counter() - started,
                          len(got.inventory.modules), _expected_text(options), notes)
    boot = got.readings.boot_id if isinstance(got.readings, HealthReadings) else None
    return HealthResult(report, mark, xids, got.inventory, boot, _gone(backend, got.inventory, xids))


def _gone(backend: Backend, inv: Inventory, xids: tuple[XidRecord, ...]) -> tuple[Module, ...]:
    """The design's modules an Xid names that the inventory no longer lists (off the bus): the module
    ledger still knows them by their identity, not only by a slot."""
    named = {x.module for x in xids if x.module}
    listed = {m.id for m in inv.modules}
    design = backend.declared.modules if backend.declared is not None else ()
    return tuple(m for m in design if m.id in named and m.id not in listed)


def _nic_findings(got: _Gathered, design: Node | None, env: Mapping[str, str]) -> list[Finding]:
    """The NICs and GPUDirect's peer memory, against the declared node (--expect, else a simulated
    node's own spec); NCCL's variables only where this is the node itself."""
    assert got.node is not None
    declared = [DeclaredNic(e.id, find_nic_model(e.model)) for e in design.endpoints
                if e.kind is EndpointKind.NIC] if design is not None else []
    vendors = {m.model.vendor for m in got.node.modules}
    return nic_checks.nic(got.nics, declared, env) + nic_checks.peer_memory(got.nics, vendors)


def _explained_by_xids(findings: list[Finding], xids: tuple[XidRecord, ...], notes: list[str]) -> list[Finding]:
    """One verdict per fact: a module gone from the bus after its own off-bus Xid is that Xid's
    consequence, not a second failure: presence's finding naming it becomes a note under the Xid."""
    from gpuvet.knowledge import off_bus_xids

    gone = {x.module for x in xids if x.module and x.code in off_bus_xids()}
    failed_xid = {f.module for f in findings if f.check == "xid" and f.status is Status.FAIL}
    explained = gone & failed_xid
    if not explained:
        return findings
    out = []
    for f in findings:
        if f.check == "presence" and f.status is Status.FAIL and _only_these_missing(f.reason, explained):
            notes.append(f"presence: {f.reason} — explained by {', '.join(sorted(explained))}'s Xid (off the bus)")
            continue
        out.append(f)
    return out


def _only_these_missing(reason: str, explained: set[str]) -> bool:
    """Whether a presence finding is about these modules alone: it names one of them, or counts no
    more missing than they are and names no other module."""
    if any(re.search(rf"\b{re.escape(m)}\b", reason) for m in explained):
        return True
    count = re.search(r"(\d+) missing", reason)
    return count is not None and int(count.group(1)) <= len(explained) and not re.search(r"\bgpu\d+\b", reason)


def _expected_text(options: HealthOptions) -> str:
    if options.declared is not None:
        return f"declared: {options.declared_name or options.declared.name} ({len(options.declared.modules)} modules)"
    return "inferred from the modules found and the catalog"


def _judge(got: _Gathered, options: HealthOptions) -> tuple[list[Finding], list[str], XidMark | None,
                                                            tuple[XidRecord, ...]]:
    inv, node = got.inventory, got.node
    assert inv is not None and node is not None
    design = _design(inv, node, options)
    diffs = diff_nodes(design.node, node) if design is not None else []
    expected = len(options.declared.modules) if options.declared is not None else None
    tools = tools_for(m.model for m in node.modules)
    findings = checks.driver(inv, expected, got.seconds, tools)
    if isinstance(inv.software.driver_version, str) or inv.modules:
        findings += checks.presence(inv, node, design, diffs) + checks.fabric(node, diffs, checks.source_of(inv))
        findings += checks.pcie(inv, node, diffs) + checks.processes(inv) + checks.power_limit(inv, tools)
    elif options.declared is not None:
        findings += checks.presence(inv, node, design, diffs)
    read, notes, mark, xids = _readings(got.readings, options, bool(inv.modules or expected), checks.source_of(inv),
                                        checks.module_buses(inv), tools)
    order = {c: i for i, c in enumerate(CHECKS)}
    return sorted(findings + read, key=lambda f: order.get(f.check, len(order))), notes, mark, xids


def _design(inv: Inventory, node: Node, options: HealthOptions) -> Design | None:
    """The declared node, else the nominal design inferred from the modules found (node/design.py,
    the same inference validate uses); None when there is nothing to infer from."""
    if options.declared is not None:
        return declared_design(options.declared, options.declared_name or options.declared.name)
    if not node.modules:
        return None
    widths = {m.id: m.pcie_width_max for m in inv.modules if isinstance(m.pcie_width_max, int)}
    return infer_design(node, widths)


def _readings(readings: HealthReadings | BackendError | None, options: HealthOptions, modules_expected: bool,
              source: str, buses: dict[str, str], tools: VendorTools) -> tuple[list[Finding], list[str],
                                                                               XidMark | None, tuple[XidRecord, ...]]:
    """Findings from the health readings, notes, the new mark (Xids and driver messages share it)
    and the Xids seen."""
    if isinstance(readings, ModuleLost):
        return [Finding("presence", Status.FAIL, f"{readings.where or 'a module'}: {readings.message}")], [], None, ()
    if isinstance(readings, BackendError):
        return ([Finding(c, Status.UNKNOWN, f"cannot read: {readings.message}") for c in READ_CHECKS]
                if modules_expected else []), [], None, ()
    if readings is None:
        return [], [], None, ()
    start = since_seq(options.last_mark, readings.boot_id)
    window = "since boot" if start is None else "since the last check"
    xid_findings, notes = checks.xid(readings.xids, start, xid_policy(), window, source)
    findings = checks.ecc(readings.modules, source) + checks.row_remap(readings.modules, source, tools) + xid_findings
    findings += checks.throttle(readings.modules, source) + fabric_state(readings.modules, source)
    findings += checks.kernel_messages(readings.kernel_lines, start, buses, window, source)
    if not isinstance(readings.xids, tuple):
        return findings, notes, None, ()
    lines = readings.kernel_lines if isinstance(readings.kernel_lines, tuple) else ()
    top = max([x.seq for x in readings.xids] + [ln.seq for ln in lines], default=start if start is not None else -1)
    return findings, notes, XidMark(readings.boot_id, top), readings.xids
