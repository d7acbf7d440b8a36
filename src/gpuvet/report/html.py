"""One self-contained HTML file per run: verdicts, GEMM vs peak, bandwidth heatmaps, busbw vs
message size, clocks/power/temperature while it ran. No scripts, no external files: it opens
offline and prints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Protocol, TypedDict

from gpuvet.checks.model import Check, ModuleTelemetry, Verdict
from gpuvet.logbook.document import Environment, RunDocument, as_document
from gpuvet.report import svg
from gpuvet.report.format import value as format_value

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#2e7d32}.warn{color:#b26a00}.fail{color:#c62828;font-weight:bold}.skip{color:#777}
.banner{background:#fff3cd;border:1px solid #e0c060;padding:8px;margin:8px 0}
.verdict{font-size:18px;font-weight:bold}.plots svg{margin:8px 16px 8px 0;vertical-align:top}
.counts span{margin-right:14px}
"""
_ORDER = (Verdict.FAIL, Verdict.WARN, Verdict.PASS, Verdict.SKIP)  # the summary's order: worst first


def _fmt(v: object) -> str:
    return escape(format_value(v))


def render(doc: RunDocument) -> str:
    """A validation run as one page: the summary of what failed and why first, then the
    environment, the plots and every check."""
    env = doc.environment
    verdict = doc.verdict.value if doc.verdict else ""
    title = f"gpuvet validate — {env.node or ''} — {verdict.upper()}"
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{escape(title)}</title>"
             f"<style>{_CSS}</style></head><body>", f"<h1>{escape(title)}</h1>"]
    if doc.simulated:
        parts.append("<div class='banner'><b>SIMULATED</b> — every figure comes from a model of the node, not from "
                     "hardware.</div>")
    parts.append(f"<p class='verdict {escape(verdict)}'>verdict: {escape(verdict)}</p>")
    parts.append(f"<p>run {escape(str(doc.run_id))} · status {escape(doc.status or 'complete')} · "
                 f"level {escape(doc.level or '')} · {escape(env.time_utc or '')} · "
                 f"host {escape(env.host or '')} · gpuvet {escape(env.tool_version or '')}</p>")
    parts.append(summary(doc))
    parts.append(_environment(env))
    parts.append("<h2>Plots</h2><div class='plots'>" + "".join(_plots(doc.checks)) + "</div>")
    parts.append(_table(doc.checks))
    for note in doc.notes:
        parts.append(f"<p>{escape(note)}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def summary(doc: RunDocument) -> str:
    """Counts by verdict, then each failing and warning check (worst first): where, the figure
    against what was expected, the reason and the fix; then why checks were skipped."""
    counts = doc.counts()
    spans = "".join(f"<span class='{v.value}'>{counts[v]} {v.value}</span>" for v in _ORDER)
    parts = [f"<h2>Summary</h2><p class='counts' id='counts'>{len(doc.checks)} checks: {spans}</p>"]
    problems = [c for v in (Verdict.FAIL, Verdict.WARN) for c in doc.checks if c.verdict is v]
    if problems:
        head = "".join(f"<th>{h}</th>" for h in ("verdict", "where", "check", "figure", "why", "fix"))
        rows = "".join(
            f"<tr><td class='{c.verdict.value}'>{c.verdict.value}</td><td>{escape(c.where or 'node')}</td>"
            f"<td>{escape(c.layer)} / {escape(c.name)}</td><td>{escape(_figure(c))}</td>"
            f"<td>{escape(_why(c))}</td><td>{escape(c.fix or '')}</td></tr>" for c in problems)
        parts.append(f"<table id='problems'><tr>{head}</tr>{rows}</table>")
    else:
        parts.append("<p id='problems'>Nothing failed or warned.</p>")
    skipped: dict[str, int] = {}
    for c in doc.checks:
        if c.verdict is Verdict.SKIP:
            skipped[c.reason or "no reason given"] = skipped.get(c.reason or "no reason given", 0) + 1
    if skipped:
        items = "".join(f"<li>{n} × {escape(why)}</li>" for why, n in skipped.items())
        parts.append(f"<p>Not measured:</p><ul id='skipped'>{items}</ul>")
    return "\n".join(parts)


def _figure(c: Check) -> str:
    """``72.8 TFLOPS of 85 expected (85.6 %)``: the figure in words, as far as it is known."""
    if c.value is None:
        return ""
    text = f"{format_value(c.value)} {c.unit or ''}".strip()
    if c.expected is not None:
        text += f" of {format_value(c.expected)} expected"
    if c.pct_of_expected is not None:
        text += f" ({c.pct_of_expected:.1f} %)"
    return text


def _why(c: Check) -> str:
    reason = c.reason or ""
    throttle = c.evidence.throttle_reasons
    return reason + (f" [throttled: {', '.join(throttle)}]" if throttle else "")


def _environment(env: Environment) -> str:
    fields = (("backend", env.backend), ("node", env.node), ("node_type", env.node_type),
              ("driver_version", env.driver_version), ("cuda_driver_version", env.cuda_driver_version),
              ("torch_version", env.torch_version), ("cuda_version", env.cuda_version),
              ("nccl_version", env.nccl_version), ("topology_fingerprint", env.topology_fingerprint))
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{_fmt(v)}</td></tr>" for k, v in fields if v is not None)
    if env.modules:
        cols = ("id", "model", "power_limit_w", "ecc", "sm_clock_mhz", "mem_clock_mhz", "pcie", "bus_id")
        head = "".join(f"<th>{c}</th>" for c in cols)
        body = "".join("<tr>" + "".join(f"<td>{_fmt(getattr(m, c))}</td>" for c in cols) + "</tr>"
                       for m in env.modules)
        rows += f"</table><table><tr>{head}</tr>{body}"
    return f"<h2>Environment</h2><table>{rows}</table>"


def _table(checks: Sequence[Check]) -> str:
    head = "".join(f"<th>{h}</th>" for h in ("layer", "check", "where", "verdict", "value", "unit", "expected",
                                              "% of peak", "% of expected", "CV %", "reason / fix"))
    rows = []
    for c in checks:
        v = c.verdict.value
        note = " — ".join(x for x in (c.reason, c.fix) if x)
        if c.evidence.throttle_reasons:
            note += f" [throttle: {', '.join(c.evidence.throttle_reasons)}]"
        rows.append(
            f"<tr><td>{escape(c.layer)}</td><td>{escape(c.name)}</td><td>{escape(c.where)}</td>"
            f"<td class='{v}'>{v}</td><td class='num'>{_fmt(c.value)}</td>"
            f"<td>{_fmt(c.unit)}</td><td class='num'>{_fmt(c.expected)}</td>"
            f"<td class='num'>{_fmt(c.pct_of_peak)}</td><td class='num'>{_fmt(c.pct_of_expected)}</td>"
            f"<td class='num'>{_fmt(100 * c.cv if c.cv is not None else None)}</td><td>{escape(note)}</td></tr>")
    return f"<h2>Checks ({len(checks)})</h2><table id='checks'><tr>{head}</tr>{''.join(rows)}</table>"


def _modules_order(ids: set[str]) -> list[str]:
    return sorted(ids, key=lambda m: (len(m), m))


_DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8")


def _plots(checks: Sequence[Check]) -> list[str]:
    gemm = [c for c in checks if c.name.startswith("gemm_") and "agreement" not in c.name
            and c.pct_of_peak is not None and c.module and c.dtype]
    out = [_gemm_plot(gemm)] if gemm else []
    for name in ("p2p_one_way", "p2p_two_way"):
        cells: dict[tuple[str, str], float] = {c.between: n for c in checks
                                               if c.name == name and c.between and (n := c.number) is not None}
        if cells:
            labels = _modules_order({m for pair in cells for m in pair})
            if name == "p2p_two_way":
                cells |= {(b, a): v for (a, b), v in list(cells.items())}
            out.append(svg.heatmap(f"{name} GB/s (row → column)", labels, cells, "GB/s"))
    host = {(c.module, c.name): n for c in checks
            if c.name in ("h2d", "d2h") and c.module and (n := c.number) is not None}
    if host:
        modules = _modules_order({m for m, _ in host})
        out.append(svg.grouped_bars("host ↔ module, GB/s", modules,
                                    {n: [host.get((m, n)) for m in modules] for n in ("h2d", "d2h")}, "GB/s"))
    sweeps = {c.name.removesuffix("_busbw"): [(float(s), float(bw)) for s, bw in c.evidence.sweep if bw is not None]
              for c in checks if c.name.endswith("_busbw") and c.evidence.sweep}
    if sweeps:
        out.append(svg.log_lines("busbw vs message size", sweeps, "message size (bytes)", "busbw GB/s"))
    return out + _telemetry_plots(gemm)


def _gemm_plot(gemm: Sequence[Check]) -> str:
    modules = _modules_order({str(c.module) for c in gemm})
    dtypes = sorted({str(c.dtype) for c in gemm}, key=lambda d: _DTYPES.index(d) if d in _DTYPES else 9)
    pct = {(c.module, c.dtype): c.pct_of_peak for c in gemm}
    return svg.grouped_bars("GEMM, % of dense peak", modules,
                            {d: [pct.get((m, d)) for m in modules] for d in dtypes}, "% of peak", reference=60)


def _telemetry_plots(gemm: Sequence[Check]) -> list[str]:
    telemetry: dict[str, ModuleTelemetry] = {}
    for c in gemm:
        for m, t in c.evidence.telemetry.items():
            telemetry.setdefault(m, t)
    out = []
    modules = _modules_order(set(telemetry))
    for key, title, unit in (("core_clock_mhz_median", "SM clock during GEMM (median)", "MHz"),
                             ("power_w_median", "power during GEMM (median)", "W"),
                             ("temp_c_max", "temperature during GEMM (max)", "°C")):
        vals: list[float | None] = [getattr(telemetry[m], key) for m in modules]
        if any(v is not None for v in vals):
            out.append(svg.grouped_bars(title, modules, {unit: vals}, unit))
    return out


class _EfficiencyPoint(TypedDict):
    """A point of `bench efficiency --json` (gpuvet.bench.efficiency.Point's fields)."""

    module: str
    cap_w: float
    tflops: float
    power_w: float
    tflops_per_w: float
    temp_c: float | None


def efficiency_page(data: Mapping[str, object]) -> str:
    """`bench efficiency` as one page (its --json data): TFLOPS and TFLOPS per watt against the
    cap, knee marked."""
    by_module: dict[str, list[_EfficiencyPoint]] = {}
    points = data.get("points", [])
    for p in points if isinstance(points, list) else []:
        by_module.setdefault(p["module"], []).append(p)
    found = data.get("knees", {})
    knees = {m: k for m, k in found.items() if k} if isinstance(found, dict) else {}
    title = "gpuvet bench efficiency" + (" — SIMULATED" if data.get("simulated") else "")
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{escape(title)}</h1>"]
    if data.get("simulated"):
        parts.append("<div class='banner'><b>SIMULATED</b> — the curve comes from the node's power model.</div>")
    marks = {f"knee {m}": k for m, k in knees.items()}
    parts.append("<div class='plots'>")
    parts.append(svg.lines("GEMM TFLOPS against the power cap",
                           {m: [(p["cap_w"], p["tflops"]) for p in ps] for m, ps in by_module.items()}, "cap (W)",
                           "TFLOPS", marks))
    parts.append(svg.lines("TFLOPS per watt against the power cap",
                           {m: [(p["cap_w"], p["tflops_per_w"]) for p in ps] for m, ps in by_module.items()},
                           "cap (W)", "TFLOPS/W", marks))
    parts.append("</div><table><tr><th>module</th><th>cap W</th><th>TFLOPS</th><th>power W</th><th>TFLOPS/W</th></tr>")
    for m, ps in by_module.items():
        for p in ps:
            parts.append(f"<tr><td>{escape(m)}</td><td class='num'>{p['cap_w']:g}</td><td class='num'>{p['tflops']:.1f}"
                         f"</td><td class='num'>{p['power_w']:.0f}</td><td class='num'>{p['tflops_per_w']:.3f}</td></tr>")
    parts.append("</table></body></html>")
    return "\n".join(parts)


class _Outlier(Protocol):
    @property
    def node(self) -> str: ...
    @property
    def module(self) -> str | None: ...
    @property
    def between(self) -> tuple[str, str] | None: ...
    @property
    def metric(self) -> str: ...
    @property
    def value(self) -> float: ...
    @property
    def fleet_median(self) -> float: ...
    @property
    def deviation_pct(self) -> float: ...
    @property
    def score(self) -> float: ...


class _Analysis(Protocol):
    """What the fleet page shows of a peer analysis (fleet.peers.FleetAnalysis)."""

    @property
    def outliers(self) -> Sequence[_Outlier]: ...


def _figures_of(env: RunDocument | Mapping[str, object], where: str) -> tuple[str, bool, list[tuple[str, float]]]:
    """A node's name, whether it is simulated, and its (metric, figure) pairs that count (plain
    numbers, not skipped): all the fleet page draws of it. Read straight off an envelope that
    ``fleet merge`` has already folded; validating each whole envelope against the schema again
    took 4 ms for a small one, minutes for thousands. What is not shaped so goes to the schema,
    which says what is wrong."""
    if isinstance(env, RunDocument):
        return str(env.environment.node), env.simulated, [
            (c.name, v) for c in env.checks if (v := c.number) is not None and c.verdict is not Verdict.SKIP]
    environment, checks = env.get("environment"), env.get("checks")
    node = environment.get("node") if isinstance(environment, Mapping) else None
    if not isinstance(node, str) or not isinstance(checks, list) or not all(isinstance(c, Mapping) for c in checks):
        return _figures_of(as_document(env, where), where)
    figures = [(str(c.get("name")), float(v)) for c in checks
               if isinstance(v := c.get("value"), (int, float)) and not isinstance(v, bool) and c.get("verdict") != "skip"]
    return node, bool(env.get("simulated")), figures


def fleet_page(analysis: _Analysis, envelopes: Sequence[tuple[str, RunDocument | Mapping[str, object]]],
               statuses: Sequence[Mapping[str, object]]) -> str:
    """The fleet as one page: node status, outliers, each flagged metric's distribution with the
    outliers marked, and a node × metric heatmap (% of the fleet median)."""
    import statistics

    title = "gpuvet fleet"
    read = [_figures_of(e, where) for where, e in envelopes]
    simulated = any(sim for _, sim, _ in read)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
             f"<style>{_CSS}</style></head><body><h1>{title}" + (" — SIMULATED" if simulated else "") + "</h1>"]
    if statuses:
        parts.append("<h2>Nodes</h2><table><tr><th>node</th><th>status</th><th>verdict</th><th>detail</th></tr>")
        for s in statuses:
            parts.append(f"<tr><td>{escape(str(s.get('node')))}</td><td class='{'pass' if s['status'] == 'ok' else 'fail'}'>"
                         f"{escape(str(s['status']))}</td><td>{escape(str(s.get('verdict') or ''))}</td>"
                         f"<td>{escape(str(s.get('error') or ''))}</td></tr>")
        parts.append("</table>")
    parts.append(f"<h2>Outliers ({len(analysis.outliers)})</h2><table><tr><th>node</th><th>where</th><th>metric</th>"
                 "<th>value</th><th>fleet median</th><th>deviation</th><th>score</th></tr>")
    for o in analysis.outliers:
        where = o.module or (" → ".join(o.between) if o.between else "node")
        parts.append(f"<tr><td>{escape(o.node)}</td><td>{escape(where)}</td><td>{escape(o.metric)}</td>"
                     f"<td class='num'>{o.value:.4g}</td><td class='num'>{o.fleet_median:.4g}</td>"
                     f"<td class='num'>{o.deviation_pct:+.1f} %</td><td class='num'>{o.score:.1f}</td></tr>")
    parts.append("</table><h2>Distributions</h2><div class='plots'>")
    flagged = {o.metric for o in analysis.outliers}
    per_node: dict[tuple[str, str], list[float]] = {}
    for node, _, figures in read:
        for name, v in figures:
            per_node.setdefault((node, name), []).append(v)
    metrics = sorted({m for _, m in per_node})
    for metric in sorted(flagged):
        bad_nodes = {o.node for o in analysis.outliers if o.metric == metric}
        dots = [(n, statistics.median(v), n in bad_nodes) for (n, m), v in per_node.items() if m == metric]
        parts.append(svg.strip(f"{metric} (node medians)", dots, ""))
    nodes = sorted({n for n, _ in per_node})
    shown = [m for m in metrics if len({n for n, mm in per_node if mm == m}) >= 3][:40]
    cells = {}
    for m in shown:
        medians = {n: statistics.median(v) for (n, mm), v in per_node.items() if mm == m}
        fleet = statistics.median(medians.values())
        for n, v in medians.items():
            if fleet:
                cells[(n, m)] = 100 * v / fleet
    parts.append("</div><h2>Node × metric (% of the fleet median)</h2>")
    parts.append(svg.grid("node × metric", nodes, shown, cells))
    parts.append("</body></html>")
    return "\n".join(parts)
