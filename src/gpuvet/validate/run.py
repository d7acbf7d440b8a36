"""One straight path: detection → backend → benchmarks (+ telemetry) → rules → verdicts →
logbook. The report is made from what the logbook keeps."""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import cast

from gpuvet import __version__
from gpuvet.backends.base import Backend
from gpuvet.backends.engine import BenchEngine
from gpuvet.backends.readings import Inventory, ModuleHealth, ModuleInfo, Unavailable
from gpuvet.bench import registry
from gpuvet.bench.context import BenchContext, Progress
from gpuvet.bench.records import BenchResult
from gpuvet.bench.registry import Benchmark, Scope
from gpuvet.bench.timing import QUICK, TimingPlan
from gpuvet.checks.expected import Expectations
from gpuvet.checks.model import Check, Json, Layer, Verdict, overall
from gpuvet.checks.roots import Root, find_roots
from gpuvet.checks.software import host_load_check, software_checks
from gpuvet.errors import GpuvetError
from gpuvet.ledger.ladders import Ladders, load_ladders
from gpuvet.ledger.record import FIRMWARE, ModuleStep
from gpuvet.logbook.store import SCHEMA_VERSION, Logbook, utc_now
from gpuvet.node.design import Design, declared_design, infer_design
from gpuvet.node.model import Node
from gpuvet.node.vendor_tools import HOST_ONLY_FIX, NO_ACCELERATOR_FIX, PCIE_LINK_STATE, tools_for
from gpuvet.report.jsonable import drop_none, to_jsonable
from gpuvet.validate import peers
from gpuvet.validate.baseline import Baseline, apply_baseline
from gpuvet.validate.expected import judge
from gpuvet.validate.ledger_link import keep
from gpuvet.validate.network import declared_nics, fabric_state_checks, network_checks
from gpuvet.validate.rules import RuleSet, default_rules

JSON_SCHEMA_VERSION = 1


class Level(StrEnum):
    QUICK = "quick"
    STANDARD = "standard"
    LONG = "long"


@dataclass(frozen=True)
class Plan:
    """What each level measures: its timing here; each benchmark's own options at the level are
    its registration's (``gpuvet.bench.registry``)."""

    timing: TimingPlan


PLANS = {Level.QUICK: Plan(QUICK), Level.STANDARD: Plan(TimingPlan(budget_s=1.0)), Level.LONG: Plan(TimingPlan())}


@dataclass
class ValidationRun:
    run_id: str | None
    simulated: bool
    verdict: Verdict
    level: Level
    checks: list[Check]
    envelope: dict[str, Json]
    notes: list[str] = field(default_factory=list)
    roots: list[Root] = field(default_factory=list)  # the faults that explain the failed checks (issue 42)
    actions: list[ModuleStep] = field(default_factory=list)  # each module's ladder step (the module ledger's)

    @property
    def measured(self) -> bool:
        """Whether any benchmark layer produced a figure (not only skips)."""
        bench_layers = registry.measured_layers()
        return any(c.layer in bench_layers and c.verdict is not Verdict.SKIP for c in self.checks)

    def to_json(self) -> dict[str, Json]:
        return {
            "schema_version": JSON_SCHEMA_VERSION, "run_id": self.run_id, "simulated": self.simulated,
            "verdict": self.verdict.value, "level": self.level.value, "environment": self.envelope,
            "notes": self.notes, "checks": [check_json(c) for c in self.checks],
            "roots": [r.to_json() for r in self.roots], "actions": [a.to_json() for a in self.actions],
        }


_ALWAYS = ("layer", "name", "verdict", "value", "unit", "expected")  # printed even when null


def check_json(c: Check) -> dict[str, Json]:
    """A check as validate --json prints it and the logbook keeps it: every field in order, the
    empty ones left out but for the six always printed; evidence as the keys it was made from."""
    data: dict[str, Json] = {}
    for name in Check.model_fields:
        value = c.evidence.facts() if name == "evidence" else getattr(c, name)
        data[name] = to_jsonable(value)
    data.update({k: to_jsonable(v) for k, v in (c.model_extra or {}).items()})
    return {k: v for k, v in data.items() if k in _ALWAYS or v not in (None, {}, [])}


def node_type(node: Node) -> str:
    """What a baseline must match: the module models (count may differ: a missing module is a
    finding, not another node type)."""
    models = sorted({m.model.name for m in node.modules})
    return "+".join(models) if models else f"host:{node.host.cpu_model or 'cpu'}"


def topology_fingerprint(node: Node) -> str:
    parts = sorted(f"{lk.a}-{lk.b}:{lk.kind}:{lk.width}:{lk.up}" for lk in node.links)
    parts += sorted(f"{m.id}:{m.model.name}" for m in node.modules)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def envelope(backend: Backend, inv: Inventory, node: Node, versions: dict[str, str | None], level: Level) -> dict[str, Json]:
    def v(x: object) -> Json:
        return None if isinstance(x, Unavailable) else cast(Json, x)  # readings are JSON-ready values

    return {
        "tool": "gpuvet", "tool_version": __version__, "schema_version": SCHEMA_VERSION,
        "json_schema_version": JSON_SCHEMA_VERSION, "host": socket.gethostname(), "time_utc": utc_now(),
        "backend": backend.name, "simulated": backend.simulated, "node": node.name, "node_type": node_type(node),
        "level": level.value, "topology_fingerprint": topology_fingerprint(node),
        "driver_version": v(inv.software.driver_version), "cuda_driver_version": v(inv.software.cuda_driver_version),
        **{k: val for k, val in versions.items() if val is not None},
        "modules": [drop_none({"id": m.id, "model": m.model, "uuid": v(m.uuid), "bus_id": v(m.bus_id),
                               "power_limit_w": v(m.power_limit_w), "ecc": v(m.ecc_enabled),
                               "sm_clock_mhz": v(m.sm_clock_mhz), "mem_clock_mhz": v(m.mem_clock_mhz),
                               "pcie": f"gen{v(m.pcie_gen_current)} x{v(m.pcie_width_current)}",
                               **firmware(m, backend.simulated)})
                    for m in inv.modules],
    }


def firmware(m: ModuleInfo, simulated: bool) -> dict[str, Json]:
    """The module's serial and firmware versions where its backend read them, so `log compare`
    shows a VBIOS change; a simulated module has no VBIOS, and its record says "simulated" as
    its driver version does."""
    read: dict[str, Json] = {k: value for k in FIRMWARE if isinstance(value := getattr(m, k), str) and value}
    if simulated and "vbios_version" not in read:
        read["vbios_version"] = "simulated"
    return read


def no_accelerator(backend: Backend) -> GpuvetError | None:
    """The refusal of a run where no accelerator was found (the host backend opened), or None.
    Judged as it was, the host alone gave warn and exit 0: a gate asking whether the GPUs are
    sound read that as a pass, where `health` on the same machine says it could not tell."""
    if backend.name != "host":
        return None
    return GpuvetError("no accelerator was found, so none could be validated: looked for NVIDIA modules through "
                       f"NVML and AMD modules through AMD SMI ({backend.why_no_modules})", where="validate",
                       fix=NO_ACCELERATOR_FIX)


def design_for(found: Node, inv: Inventory, declared: Node | None) -> Design | None:
    """What the node is judged against: the declared spec, else the nominal design inferred from
    the modules found and the catalog (never the state of the links found)."""
    if declared is not None:
        return declared_design(declared, declared.name)
    if not found.modules:
        return None
    widths = {m.id: m.pcie_width_max for m in inv.modules if isinstance(m.pcie_width_max, int)}
    return infer_design(found, widths)


def inventory_checks(inv: Inventory, found: Node, design: Design | None, why_no_modules: str | None) -> list[Check]:
    out: list[Check] = []
    count = len(inv.modules)
    declared = design.node if design is not None and not design.inferred else None
    if why_no_modules:
        out.append(Check(Layer.INVENTORY, "modules", Verdict.WARN, value=0, expected=len(declared.modules) if declared
                         else None, reason=f"no GPU module was found: {why_no_modules}; validating the host only",
                         fix=HOST_ONLY_FIX, device="cpu"))
    elif design is not None and design.inferred:
        out += _against_inferred(design, found)
    elif declared is not None:
        want = len(declared.modules)
        out.append(Check(Layer.INVENTORY, "modules", Verdict.PASS if count == want else Verdict.FAIL, value=count,
                         expected=want, reason=None if count == want else f"found {count} modules, declared {want}",
                         evidence={"models": sorted({m.model for m in inv.modules}), "declared": declared.name}))
    elif count == 0:  # zero modules and nothing to count against: not a pass
        out.append(Check(Layer.INVENTORY, "modules", Verdict.SKIP, value=0,
                         reason="no module found and nothing to count against (give --expect SPEC)"))
    else:
        out.append(Check(Layer.INVENTORY, "modules", Verdict.PASS, value=count,
                         evidence={"models": sorted({m.model for m in inv.modules})}))
    if declared is not None and not why_no_modules:
        out += _difference_checks(declared, found, "declared", "",
                                  "reseat or replace the module/cable named; compare with `gpuvet topo --expect`")
    for note in inv.notes:
        if "lost" in note:
            out.append(Check(Layer.INVENTORY, "module_lost", Verdict.FAIL, reason=note,
                             fix=f"check {tools_for(m.model for m in found.modules).lost_module_log}; "
                                 "reseat or replace the module"))
    return out


def _against_inferred(design: Design, found: Node) -> list[Check]:
    """The module count and every link against the inferred nominal design."""
    out = []
    tools = tools_for(m.model for m in found.modules)
    missing = sum(slot.count for slot in design.missing)
    out.append(Check(Layer.INVENTORY, "modules", Verdict.FAIL if missing else Verdict.PASS,
                     value=len(found.modules), expected=len(found.modules) + missing,
                     reason="; ".join(s.reason for s in design.missing) or None,
                     evidence={"models": sorted({m.model.name for m in found.modules})}))
    for slot in design.missing:
        where = f" (likely {slot.guess}, the gap in the numbering)" if slot.guess else ""
        out.append(Check(Layer.INVENTORY, "missing_module", Verdict.FAIL, value="absent", expected="present",
                         module=slot.guess, reason=f"{slot.reason}: a module is missing there{where}",
                         fix=f"check that it is seated and powered; {tools.list_modules}, "
                             f"and {tools.lost_module_log}"))
    return out + _difference_checks(design.node, found, "designed", " (against the nominal design)",
                                    "reseat or replace the module or cable named; check the link with "
                                    f"{tools.link_state} or {PCIE_LINK_STATE}")


def _difference_checks(want: Node, found: Node, as_: str, suffix: str, fix: str) -> list[Check]:
    """One FAIL per difference between what the node should be and what was found, or one PASS."""
    from gpuvet.node.diff import diff_nodes, unread_widths

    diffs = diff_nodes(want, found)
    if not diffs:
        compared = [k for k, known in (("fabric", found.fabric_known), ("pcie", found.pcie_known)) if known]
        unread = unread_widths(want, found)
        return [Check(Layer.INVENTORY, "topology", Verdict.PASS,
                      value=f"as {as_}" + (f" (PCIe width of {len(unread)} module(s) not read)" if unread else ""),
                      expected=f"as {as_}",
                      evidence={"modules_compared": len(want.modules), "links_compared": len(want.links),
                                "link_kinds_known": compared, "differences": 0, "pcie_width_unread": unread})]
    return [Check(Layer.INVENTORY, d.kind, _diff_verdict(d.kind), value=str(d.found) if d.found is not None else None,
                  expected=str(d.expected) if d.expected is not None else None, module=d.module, between=d.between,
                  reason=d.detail + suffix, fix=fix) for d in diffs]


def _diff_verdict(kind: str) -> Verdict:
    """A slowed link warns (faults.yaml link_degraded, as health, doctor and watch); the checks
    it slows fail on their own figures. A link down or miswired fails."""
    return Verdict.WARN if kind == "link_degraded" else Verdict.FAIL


@dataclass
class Validator:
    backend: Backend
    level: Level = Level.STANDARD
    rules: RuleSet = field(default_factory=default_rules)
    declared: Node | None = None
    baseline: Baseline | None = None
    logbook: Logbook | None = None
    progress: Progress | None = None
    on_layer: Callable[[str], None] | None = None
    ladders: Ladders | None = None  # the site's escalation ladders (default gpuvet's; docs/ledger.md)

    def _event(self, run_id: str | None, message: str) -> None:
        if self.on_layer:
            self.on_layer(message)
        if self.logbook and run_id:
            self.logbook.event(run_id, "layer", message)

    def run(self) -> ValidationRun:
        plan = PLANS[self.level]
        inv = self.backend.inventory()
        found = self.backend.node()
        why_no_modules = self.backend.why_no_modules if not inv.modules else None
        engine: BenchEngine | None = None
        engine_error: str | None = None
        try:
            engine = self.backend.engine()
        except GpuvetError as exc:
            engine_error = exc.message
        versions = engine.versions() if engine else {}
        env = envelope(self.backend, inv, found, versions, self.level)
        run_id = self.logbook.begin("validate", env, inv.simulated, found.name) if self.logbook else None
        design = design_for(found, inv, self.declared)
        if design is not None:
            env["judged_against"] = design.source
        try:
            checks = self._checks(plan, inv, found, design, why_no_modules, engine, engine_error, versions, run_id)
        except BaseException as exc:
            if self.logbook and run_id:
                self.logbook.abort(run_id, f"{type(exc).__name__}: {exc}")
            raise
        finally:
            if engine:
                engine.close()
        if self.baseline is not None:
            checks = apply_baseline(checks, self.baseline, node_type(found))
        checks = [self.rules.judge(c) for c in checks]
        verdict = overall(checks)
        notes = []
        if inv.simulated:
            notes.append("simulated: every figure is modelled from the spec, not measured")
        if why_no_modules:
            notes.append(f"No GPU module was found ({why_no_modules}); the host was validated instead.")
        if design is not None:
            notes.append(f"judged against: {design.source}")
            notes += [f"not judged: {what}" for what in design.unjudged]
        result = ValidationRun(run_id, inv.simulated, verdict, self.level, checks, env, notes,
                               find_roots(checks, design.node if design is not None else found))
        if self.logbook and run_id:
            self.logbook.finish(run_id, verdict.value, [check_json(c) for c in checks], env,  # with judged_against
                                roots=[r.to_json() for r in result.roots])
        result.actions = keep(run_id, found.name, inv, result.roots, checks, self.logbook, self.ladders or load_ladders())
        return result

    def _checks(self, plan: Plan, inv: Inventory, found: Node, design: Design | None, why_no_modules: str | None,
                engine: BenchEngine | None, engine_error: str | None, versions: dict[str, str | None],
                run_id: str | None) -> list[Check]:
        """The node's own checks (inventory, software, network), then what the benchmarks measure."""
        self._event(run_id, "inventory")
        checks = inventory_checks(inv, found, design, why_no_modules)
        self._event(run_id, "software")
        checks += software_checks(inv, versions, why_no_modules)
        checks += network_checks(self.backend.nics(), declared_nics(design.node if design is not None else None),
                                 {m.model.vendor for m in found.modules})
        checks += fabric_state_checks(self._module_health())
        if engine is None:
            return checks + _benchmarks_skipped(engine_error)
        modules = engine.modules()
        if not modules:  # nothing to measure on: each benchmark layer says so (a set of zero copies is no failure)
            return checks + _benchmarks_skipped("no module to measure on (none found: see the inventory)")
        device = "cpu" if any(m.is_host for m in modules) else "gpu"
        bench = _Bench(BenchContext(engine, plan.timing, self.progress or (lambda d, t, s: None)),
                       Expectations(design.node if design is not None else found),
                       Scope(self.level.value, [m.id for m in modules], device))
        load = host_load_check(engine.host_load, engine.cpu_threads) if device == "cpu" else None
        checks += [load] if load else []
        checks += self._measured(bench, run_id)
        if device == "gpu":
            checks += peers.module_peer_checks(checks, found)
            checks += peers.pair_peer_checks(checks, design.node if design is not None else found)
        return checks

    def _measured(self, b: _Bench, run_id: str | None) -> list[Check]:
        """The benchmarks of the level, in their layers' order (compute, links, collectives, memory,
        models), each judged against the expected figures."""
        checks: list[Check] = []
        for bench in registry.of_level(self.level.value):
            self._event(run_id, bench.event)
            checks += self._one(bench, b)
        return checks

    def _one(self, bench: Benchmark[object], b: _Bench) -> list[Check]:
        """One benchmark with its options at this level; a marginal check is measured again where it says how."""
        opts = bench.plan(b.scope) if bench.plan is not None else bench.options()
        if isinstance(opts, Check):
            return [opts]
        results = bench.run(b.ctx, opts)

        def judged(rs: Sequence[BenchResult]) -> list[Check]:
            return judge(bench.name, rs, b.exp, b.scope)

        if bench.again is None:
            return judged(results)
        again = bench.again
        return self._rerun_marginal(judged(results), b.ctx, lambda c: bench.run(b.ctx, again(c, results, opts)), judged)

    def _module_health(self) -> Sequence[ModuleHealth] | None:
        """The modules' health readings (their NVLink fabric registration); None where the backend has none."""
        try:
            return self.backend.health().modules
        except GpuvetError:
            return None

    def _rerun_marginal(self, checks: list[Check], ctx: BenchContext, remeasure: Callable[[Check], list[BenchResult]],
                        to_checks: Callable[[list[BenchResult]], list[Check]]) -> list[Check]:
        """A check within its own spread of a threshold is measured once more; the second figure
        is the one judged (both are kept as evidence)."""
        out = []
        for c in checks:
            if c.verdict is not Verdict.PASS or not self.rules.marginal(c):
                out.append(c)
                continue
            again = [x for x in to_checks(remeasure(c)) if x.key == c.key]
            if again:
                out.append(again[0].with_evidence(rerun=True, first_value=c.value))
            else:
                out.append(c)
        return out


@dataclass(frozen=True)
class _Bench:
    """What every benchmark of one run measures with."""

    ctx: BenchContext
    exp: Expectations
    scope: Scope  # the level, the modules' ids, and "gpu" or "cpu" where the host's own cores are measured


def _benchmarks_skipped(why: str | None) -> list[Check]:
    """Each benchmark layer every level measures, skipped, saying why (no engine, or nothing to measure on)."""
    return [Check(layer, "benchmarks", Verdict.SKIP, reason=why) for layer in registry.every_level_layers()]
