"""GEMM per dtype on every module, against the module's dense peak; and a seeded product
compared across modules (different bits on one module than on its peers: silent data
corruption) and against a float64 reference."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from gpuvet.backends.engine import BenchModule, Unsupported, Workload
from gpuvet.bench.context import BenchContext
from gpuvet.bench.records import BenchResult, Status, Where, rate_stats
from gpuvet.bench.registry import LEVELS, Benchmark, Scope, involved
from gpuvet.checks.model import Check, Layer
from gpuvet.node.catalog import DTYPES

NAME = "gemm"
# Largest relative error against float64 a correct product of that dtype stays under
# (unit roundoff × a margin for K-long accumulation; fp8 and bf16 carry 3 and 8 mantissa bits).
TOLERANCE = {"fp64": 1e-10, "fp32": 1e-3, "tf32": 2e-2, "fp16": 2e-2, "bf16": 6e-2, "fp8": 0.5}
CHECK_SIZE = 1024


@dataclass(frozen=True)
class GemmOptions:
    modules: tuple[str, ...] | None = None
    dtypes: tuple[str, ...] = DTYPES
    size: int | None = None  # side of the square product; default fills the device
    check: bool = True
    seed: int = 20261202


def default_size(ctx: BenchContext, module: BenchModule, dtype: str) -> int:
    """Big enough to keep every compute unit busy: 8192 (fp64/fp32) or 16384 on a GPU. On a
    CPU, about 50 ms per product at the rate a 256-side probe reaches (CPUs without native
    fp16 arithmetic run it a hundred times slower than bf16, so no fixed size suits all)."""
    if not module.is_host:
        return 8192 if dtype in ("fp64", "fp32") else 16384
    probe = ctx.engine.gemm(module.id, dtype, 256)
    try:
        probe.timed(1)
        seconds = probe.timed(1)
    finally:
        probe.close()
    rate = 2 * 256**3 / max(seconds, 1e-9)
    side = (0.05 * rate / 2) ** (1 / 3)
    return int(min(4096, max(128, round(side / 128) * 128)))


def _validate(opts: GemmOptions) -> None:
    from gpuvet.errors import GpuvetError

    bad = [d for d in opts.dtypes if d not in DTYPES]
    if bad:
        raise GpuvetError(f"unknown dtype {', '.join(bad)}", where="--dtypes",
                          fix=f"use some of {', '.join(DTYPES)}.")
    if opts.size is not None and opts.size < 16:
        raise GpuvetError(f"size {opts.size} is too small to time", where="--size",
                          fix="use 16 or more (default fills the device).")


def run(ctx: BenchContext, opts: GemmOptions = GemmOptions()) -> list[BenchResult]:
    _validate(opts)
    modules = ctx.select(opts.modules)
    sim = ctx.simulated
    results: list[BenchResult] = []
    total = len(modules) * len(opts.dtypes)
    done = 0
    for module in modules:
        for dtype in opts.dtypes:
            ctx.progress(done, total, f"gemm {dtype} on {module.id}")
            done += 1
            where: Where = {"module": module.id, "dtype": dtype}
            side: list[int] = []

            def make(m: BenchModule = module, d: str = dtype, side: list[int] = side) -> Workload:
                side.append(opts.size or default_size(ctx, m, d))
                return ctx.engine.gemm(m.id, d, side[0])

            got = ctx.attempt(NAME, "tflops", "TFLOPS", make, [module.id], **where)
            if isinstance(got, BenchResult):
                results.append(got)
                continue
            timing, telemetry = got
            n = side[0]
            stats = rate_stats(timing, 2.0 * n**3 / 1e12)
            sized: Where = {**where, "detail": {"n": n}}
            record = BenchResult.measured(NAME, "tflops", "TFLOPS", stats, simulated=sim,
                                          peak=module.model.peak_tflops(dtype),
                                          peak_basis=module.model.sources.get(f"tflops.{dtype}"), **sized)
            results.append(replace(record, telemetry=telemetry))
    ctx.progress(total, total, "gemm")
    if opts.check:
        ran = {(r.module, r.dtype) for r in results if r.status == "ok"}
        for dtype in opts.dtypes:
            checked = [m for m in modules if (m.id, dtype) in ran]
            results.extend(cross_module_check(ctx, checked, dtype, opts.seed))
    return results


def cross_module_check(ctx: BenchContext, modules: list[BenchModule], dtype: str, seed: int) -> list[BenchResult]:
    """The same seeded product on every module: error against float64, and whether each
    module's bits agree with the majority of its peers of the same model."""
    if not modules:
        return []
    sim = ctx.simulated
    checks = {}
    out: list[BenchResult] = []
    for m in modules:
        try:
            checks[m.id] = ctx.engine.gemm_check(m.id, dtype, CHECK_SIZE, seed)
        except Unsupported as exc:
            out.append(BenchResult.skipped(NAME, "check", "rel_error", str(exc), simulated=sim, module=m.id, dtype=dtype))
    models = {m.id: m.model.name for m in modules}
    for model_name in sorted(set(models.values())):
        peers = [mid for mid in checks if models[mid] == model_name]
        majority, votes = Counter(checks[p].digest for p in peers).most_common(1)[0]
        for mid in peers:
            check = checks[mid]
            reasons = []
            if not math.isfinite(check.max_rel_error) or check.max_rel_error > TOLERANCE[dtype]:
                reasons.append(f"error {check.max_rel_error:.2e} against float64 exceeds {TOLERANCE[dtype]:.0e}")
            agrees = check.digest == majority
            if len(peers) > 1 and not agrees:
                reasons.append(f"computes different bits from its {votes} {model_name} peers "
                               "for the same seeded input (silent data corruption?)")
            out.append(BenchResult(
                NAME, "check", check.max_rel_error, "rel_error", Status.OK, sim, module=mid, dtype=dtype,
                size_bytes=None, correct=not reasons, reason="; ".join(reasons) or None,
                detail={"digest": check.digest, "agrees_with_peers": agrees, "peers": len(peers),
                        "n": CHECK_SIZE, "tolerance": TOLERANCE[dtype]},
            ))
    return out



_DTYPES_AT = {"gpu": {"quick": ("bf16",), "standard": ("fp64", "tf32", "bf16", "fp8"), "long": DTYPES},
              "cpu": {"quick": ("fp32",), "standard": ("fp64", "fp32", "bf16"), "long": ("fp64", "fp32", "bf16")}}


def _plan(scope: Scope) -> GemmOptions:
    """A quick run measures one dtype and skips the bit check; silent corruption is the longer levels' case."""
    return GemmOptions(dtypes=_DTYPES_AT[scope.device][scope.level], check=scope.level != "quick")


def _again(c: Check, first: Sequence[BenchResult], opts: GemmOptions) -> GemmOptions:
    """The one module and dtype again, at the size first measured, without the bit check."""
    size = next((r.detail.get("n") for r in first if r.module == c.module and r.dtype == c.dtype
                 and r.metric == "tflops"), None)
    return GemmOptions(modules=involved(c), dtypes=(c.dtype or "",), size=int(size) if size else None, check=False)


BENCHMARK = Benchmark(NAME, GemmOptions, run, (Layer.COMPUTE,), LEVELS, _plan, _again, module_peers=("gemm_",))
