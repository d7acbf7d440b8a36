"""One self-contained HTML file per run: verdicts, GEMM vs peak, bandwidth heatmaps, busbw vs
message size, clocks/power/temperature while it ran. No scripts, no external files: it opens
offline and prints."""

from __future__ import annotations

from html import escape
from typing import Any

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
"""


def _fmt(v: Any) -> str:
    return escape(format_value(v))


def _where(c: dict[str, Any]) -> str:
    if c.get("between"):
        return " → ".join(c["between"])
    return c.get("module") or ""


def render(doc: dict[str, Any]) -> str:
    """``doc``: a validation run as ``validate --json`` prints it (or as the logbook keeps it)."""
    checks: list[dict[str, Any]] = doc.get("checks", [])
    env = doc.get("environment", {})
    title = f"gpuvet validate — {env.get('node', '')} — {doc.get('verdict', '').upper()}"
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{escape(title)}</title>"
             f"<style>{_CSS}</style></head><body>", f"<h1>{escape(title)}</h1>"]
    if doc.get("simulated"):
        parts.append("<div class='banner'><b>SIMULATED</b> — every figure comes from a model of the node, not from "
                     "hardware.</div>")
    verdict = doc.get("verdict", "")
    parts.append(f"<p class='verdict {escape(verdict)}'>verdict: {escape(verdict)}</p>")
    parts.append(f"<p>run {escape(str(doc.get('run_id')))} · status {escape(str(doc.get('status', 'complete')))} · "
                 f"level {escape(str(doc.get('level', '')))} · {escape(str(env.get('time_utc', '')))} · "
                 f"host {escape(str(env.get('host', '')))} · gpuvet {escape(str(env.get('tool_version', '')))}</p>")
    parts.append(_environment(env))
    parts.append("<h2>Plots</h2><div class='plots'>" + "".join(_plots(checks)) + "</div>")
    parts.append(_table(checks))
    for note in doc.get("notes", []):
        parts.append(f"<p>{escape(note)}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _environment(env: dict[str, Any]) -> str:
    keys = ["backend", "node", "node_type", "driver_version", "cuda_driver_version", "torch_version", "cuda_version",
            "nccl_version", "topology_fingerprint"]
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{_fmt(env.get(k))}</td></tr>" for k in keys if env.get(k) is not None)
    mods = env.get("modules", [])
    if mods:
        cols = ["id", "model", "power_limit_w", "ecc", "sm_clock_mhz", "mem_clock_mhz", "pcie", "bus_id"]
        head = "".join(f"<th>{c}</th>" for c in cols)
        body = "".join("<tr>" + "".join(f"<td>{_fmt(m.get(c))}</td>" for c in cols) + "</tr>" for m in mods)
        rows += f"</table><table><tr>{head}</tr>{body}"
    return f"<h2>Environment</h2><table>{rows}</table>"


def _table(checks: list[dict[str, Any]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in ("layer", "check", "where", "verdict", "value", "unit", "expected",
                                              "% of peak", "% of expected", "CV %", "reason / fix"))
    rows = []
    for c in checks:
        v = c["verdict"]
        cv = c.get("cv")
        note = " — ".join(x for x in (c.get("reason"), c.get("fix")) if x)
        throttle = c.get("evidence", {}).get("throttle_reasons")
        if throttle:
            note += f" [throttle: {', '.join(throttle)}]"
        rows.append(
            f"<tr><td>{escape(c['layer'])}</td><td>{escape(c['name'])}</td><td>{escape(_where(c))}</td>"
            f"<td class='{escape(v)}'>{escape(v)}</td><td class='num'>{_fmt(c.get('value'))}</td>"
            f"<td>{_fmt(c.get('unit'))}</td><td class='num'>{_fmt(c.get('expected'))}</td>"
            f"<td class='num'>{_fmt(c.get('pct_of_peak'))}</td><td class='num'>{_fmt(c.get('pct_of_expected'))}</td>"
            f"<td class='num'>{_fmt(100 * cv if isinstance(cv, (int, float)) else None)}</td><td>{escape(note)}</td></tr>")
    return f"<h2>Checks ({len(checks)})</h2><table id='checks'><tr>{head}</tr>{''.join(rows)}</table>"


def _modules_order(ids: set[str]) -> list[str]:
    return sorted(ids, key=lambda m: (len(m), m))


def _plots(checks: list[dict[str, Any]]) -> list[str]:
    out = []
    gemm = [c for c in checks if c["name"].startswith("gemm_") and "agreement" not in c["name"]
            and c.get("pct_of_peak") is not None]
    if gemm:
        modules = _modules_order({c["module"] for c in gemm})
        dtypes = sorted({c["dtype"] for c in gemm}, key=lambda d: ["fp64", "fp32", "tf32", "fp16", "bf16", "fp8"].index(d)
                        if d in ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8") else 9)
        pct = {(c["module"], c["dtype"]): c["pct_of_peak"] for c in gemm}
        out.append(svg.grouped_bars("GEMM, % of dense peak", modules,
                                    {d: [pct.get((m, d)) for m in modules] for d in dtypes}, "% of peak", reference=60))
    for name in ("p2p_one_way", "p2p_two_way"):
        cells: dict[tuple[str, str], float] = {(c["between"][0], c["between"][1]): c["value"] for c in checks
                                               if c["name"] == name and c.get("value") is not None}
        if cells:
            labels = _modules_order({m for pair in cells for m in pair})
            if name == "p2p_two_way":
                cells |= {(b, a): v for (a, b), v in list(cells.items())}
            out.append(svg.heatmap(f"{name} GB/s (row → column)", labels, cells, "GB/s"))
    host = [c for c in checks if c["name"] in ("h2d", "d2h") and c.get("value") is not None]
    if host:
        modules = _modules_order({c["module"] for c in host})
        by_kind = {(c["module"], c["name"]): c["value"] for c in host}
        out.append(svg.grouped_bars("host ↔ module, GB/s", modules,
                                    {n: [by_kind.get((m, n)) for m in modules] for n in ("h2d", "d2h")}, "GB/s"))
    sweeps = {c["name"].removesuffix("_busbw"): c["evidence"]["sweep"] for c in checks
              if c["name"].endswith("_busbw") and c.get("evidence", {}).get("sweep")}
    if sweeps:
        out.append(svg.log_lines("busbw vs message size", {k: [tuple(p) for p in v] for k, v in sweeps.items()},
                                 "message size (bytes)", "busbw GB/s"))
    telemetry: dict[str, dict[str, Any]] = {}
    for c in gemm:
        for m, t in c.get("evidence", {}).get("telemetry", {}).items():
            telemetry.setdefault(m, t)
    if telemetry:
        modules = _modules_order(set(telemetry))
        for key, title, unit in (("core_clock_mhz_median", "SM clock during GEMM (median)", "MHz"),
                                 ("power_w_median", "power during GEMM (median)", "W"),
                                 ("temp_c_max", "temperature during GEMM (max)", "°C")):
            vals = [telemetry[m].get(key) for m in modules]
            if any(v is not None for v in vals):
                out.append(svg.grouped_bars(title, modules, {unit: vals}, unit))
    return out


def efficiency_page(data: dict[str, Any]) -> str:
    """`bench efficiency` as one page: TFLOPS and TFLOPS per watt against the cap, knee marked."""
    by_module: dict[str, list[dict[str, Any]]] = {}
    for p in data.get("points", []):
        by_module.setdefault(p["module"], []).append(p)
    knees = {m: k for m, k in data.get("knees", {}).items() if k}
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


def fleet_page(analysis: Any, envelopes: list[tuple[str, dict[str, Any]]], statuses: list[dict[str, Any]]) -> str:
    """The fleet as one page: node status, outliers, each flagged metric's distribution with the
    outliers marked, and a node × metric heatmap (% of the fleet median)."""
    import statistics

    title = "gpuvet fleet"
    simulated = any(e.get("simulated") for _, e in envelopes)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
             f"<style>{_CSS}</style></head><body><h1>{title}" + (" — SIMULATED" if simulated else "") + "</h1>"]
    if statuses:
        parts.append("<h2>Nodes</h2><table><tr><th>node</th><th>status</th><th>verdict</th><th>detail</th></tr>")
        for s in statuses:
            parts.append(f"<tr><td>{escape(str(s.get('node')))}</td><td class='{'pass' if s['status'] == 'ok' else 'fail'}'>"
                         f"{escape(s['status'])}</td><td>{escape(str(s.get('verdict') or ''))}</td>"
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
    for _, env in envelopes:
        node = str(env.get("environment", {}).get("node"))
        for c in env.get("checks", []):
            v = c.get("value")
            if isinstance(v, (int, float)) and not isinstance(v, bool) and c.get("verdict") != "skip":
                per_node.setdefault((node, c["name"]), []).append(float(v))
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
