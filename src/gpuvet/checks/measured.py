"""Benchmark records → checks, layer by layer, each with its expected value and evidence.
Verdicts here are only the ones a figure cannot argue with (skipped, failed, wrong result);
thresholds come from the rules."""

from __future__ import annotations

from collections.abc import Sequence

from gpuvet.backends.engine import HOST, Transfer
from gpuvet.bench.copy import bisection_partner
from gpuvet.bench.records import BenchResult, Status
from gpuvet.checks.expected import Expectations
from gpuvet.checks.model import Check, Json, Layer, Verdict
from gpuvet.report.jsonable import to_jsonable


def evidence(r: BenchResult) -> dict[str, Json]:
    out: dict[str, Json] = {}
    if r.stats is not None:
        out["stats"] = {"n": r.stats.n, "median": r.stats.median, "iqr": r.stats.iqr, "min": r.stats.min,
                        "max": r.stats.max}
    if r.telemetry:
        out["telemetry"] = {m: to_jsonable(t) for m, t in r.telemetry.items()}
        reasons = sorted({why for t in r.telemetry.values() for why in t.throttle_reasons})
        if reasons:
            out["throttle_reasons"] = reasons
    if r.size_bytes:
        out["size_bytes"] = r.size_bytes
    return out


def _pct(value: float | None, ref: float | None) -> float | None:
    return 100.0 * value / ref if value is not None and ref else None


def from_result(layer: Layer, name: str, r: BenchResult, expected: float | None, device: str) -> Check:
    """One record as a check: skipped/failed/wrong become SKIP/FAIL with the record's reason."""
    where = Check(layer, name, Verdict.PASS, module=r.module, between=r.between, dtype=r.dtype, unit=r.unit,
                  device=device)
    if r.status is Status.SKIPPED:
        return where.but(verdict=Verdict.SKIP, reason=r.reason)
    if r.status is Status.FAILED:
        return where.but(verdict=Verdict.FAIL, reason=r.reason, fix="see the error; re-run the benchmark alone")
    figures = where.but(value=r.value, expected=expected, pct_of_peak=r.pct_of_peak,
                      pct_of_expected=_pct(r.value, expected), cv=r.cv, evidence=evidence(r))
    if r.status is Status.UNRELIABLE:
        return figures.but(verdict=Verdict.WARN, reason=f"unreliable measurement: {r.reason}",
                       fix="re-run on a quiet machine")
    if r.correct is False:
        return figures.but(verdict=Verdict.FAIL, reason=r.reason)
    return figures


def compute_checks(results: Sequence[BenchResult], exp: Expectations, device: str) -> list[Check]:
    out = []
    for r in results:
        if r.metric == "tflops":
            n = r.detail.get("n")
            expected = exp.gemm_tflops(r.module, r.dtype, n) if r.module and r.dtype and n else None
            out.append(from_result(Layer.COMPUTE, f"gemm_{r.dtype}", r, expected, device))
        elif r.metric == "check":
            check = from_result(Layer.COMPUTE, f"gemm_agreement_{r.dtype}", r, None, device)
            out.append(check)
    return out


def _transfer(metric: str, r: BenchResult) -> list[Transfer]:
    size = r.size_bytes or 1
    if metric.startswith("h2d") and r.module:
        return [Transfer(HOST, r.module, size, pinned="pageable" not in metric)]
    if metric.startswith("d2h") and r.module:
        return [Transfer(r.module, HOST, size, pinned="pageable" not in metric)]
    if metric == "p2p_one_way" and r.between:
        return [Transfer(r.between[0], r.between[1], size)]
    if metric == "p2p_two_way" and r.between:
        a, b = r.between
        return [Transfer(a, b, size), Transfer(b, a, size)]
    return []


def _set_transfers(name: str, modules: list[str], size: int) -> list[Transfer]:
    if name == "host_to_all":
        return [Transfer(HOST, m, size) for m in modules]
    if name == "all_to_host":
        return [Transfer(m, HOST, size) for m in modules]
    if name == "all_pairs":
        return [Transfer(a, modules[bisection_partner(i, len(modules))], size) for i, a in enumerate(modules)]
    return []


def copy_checks(results: Sequence[BenchResult], exp: Expectations, modules: list[str], device: str) -> list[Check]:
    """h2d/d2h and host sets → host_link; pairs and all_pairs → module_link."""
    out = []
    for r in results:
        metric = r.metric
        if metric in ("h2d", "d2h", "h2d_pageable", "d2h_pageable", "p2p_one_way", "p2p_two_way"):
            rates = exp.transfers_gbps(_transfer(metric, r))
            expected = sum(rates) if rates else None
            layer = Layer.MODULE_LINK if metric.startswith("p2p") else Layer.HOST_LINK
            out.append(from_result(layer, metric, r, expected, device))
        elif metric == "host_copy":
            out.append(from_result(Layer.HOST_LINK, "host_copy", r, None, device))
        elif metric in ("aggregate", "contention_ratio"):
            name = str(r.detail.get("set"))
            layer = Layer.MODULE_LINK if name == "all_pairs" else Layer.HOST_LINK
            rates = exp.transfers_gbps(_set_transfers(name, modules, r.size_bytes or 1))
            if metric == "aggregate":
                out.append(from_result(layer, f"aggregate_{name}", r, _aggregate(rates), device))
            else:
                alone = [exp.transfers_gbps([t]) for t in _set_transfers(name, modules, 1)]
                agg = _aggregate(rates)
                expected = agg / sum(a[0] for a in alone if a) if agg and all(alone) else None
                check = from_result(layer, f"contention_{name}", r, expected, device)
                out.append(check)
    return out


def _aggregate(rates: list[float] | None) -> float | None:
    """What the copy benchmark reports for equal-size transfers started together: all the bytes
    over the time of the slowest, i.e. count × the slowest rate (not the sum of the rates)."""
    return len(rates) * min(rates) if rates else None


def collective_checks(results: Sequence[BenchResult], exp: Expectations, members: list[str], device: str) -> list[Check]:
    out = []
    by_op: dict[str, list[BenchResult]] = {}
    for r in results:
        if r.metric == "busbw":
            by_op.setdefault(str(r.detail.get("op")), []).append(r)
    for op, rows in by_op.items():
        ok = [r for r in rows if r.status is Status.OK]
        if not ok:
            out.append(from_result(Layer.COLLECTIVE, f"{op}_busbw", rows[0], None, device))
            continue
        wrong = [r for r in ok if r.correct is False]
        checked = [r for r in ok if r.correct is not None]  # a size whose data was not compared says nothing
        if not checked:
            out.append(Check(Layer.COLLECTIVE, f"{op}_correct", Verdict.SKIP, expected=True, device=device,
                             reason="no size's result was compared with the expected data"))
        else:
            out.append(Check(Layer.COLLECTIVE, f"{op}_correct", Verdict.FAIL if wrong else Verdict.PASS,
                             value=not wrong, expected=True, device=device,
                             reason=f"wrong data at {', '.join(str(r.size_bytes) for r in wrong)} B" if wrong else None,
                             fix="a module or link corrupts data: run gemm --check and look at ECC/Xid" if wrong else None,
                             evidence={"sizes_checked": len(checked), "sizes_wrong": len(wrong),
                                       "largest_checked_bytes": max(r.size_bytes or 0 for r in checked)}))
        largest = max(ok, key=lambda r: r.size_bytes or 0)
        model = exp.collective(op, members, largest.size_bytes or 0)
        check = from_result(Layer.COLLECTIVE, f"{op}_busbw", largest, model[1] if model else None, device)
        sweep = [[r.size_bytes, r.value] for r in sorted(ok, key=lambda r: r.size_bytes or 0)]
        check = _with_detail(check, sweep=sweep, algorithm=largest.detail.get("algorithm"),
                             ranks=largest.detail.get("ranks"))
        out.append(check if not model else _with_detail(check, algorithm_expected=model[2]))
        smallest = min(ok, key=lambda r: r.size_bytes or 0)
        time_us = smallest.detail.get("time_us")
        small_model = exp.collective(op, members, smallest.size_bytes or 0)
        expected_us = small_model[0] * 1e6 if small_model else None
        out.append(Check(Layer.COLLECTIVE, f"{op}_latency", Verdict.PASS, value=time_us, unit="us",
                         expected=expected_us, pct_of_expected=_pct(time_us, expected_us), device=device,
                         evidence={"size_bytes": smallest.size_bytes}))
    return out


def _with_detail(check: Check, **extra: Json) -> Check:
    return check.with_evidence(**extra)


def memory_checks(results: Sequence[BenchResult], exp: Expectations, device: str) -> list[Check]:
    out = []
    for r in results:
        expected = exp.membw_gbps(r.module, r.metric, r.size_bytes) if r.module and r.size_bytes else None
        out.append(from_result(Layer.MEMORY, f"membw_{r.metric}", r, expected, device))
    return out


def model_checks(results: Sequence[BenchResult], device: str) -> list[Check]:
    out = []
    for r in results:
        model = r.detail.get("model", "model")
        out.append(from_result(Layer.MODEL, f"{model}_{r.metric}", r, None, device))
    return out
