"""Collectives through the backend's communication library (NCCL on GPUs, gloo on CPU, the
α–β model on a simulated node): a size sweep with nccl-tests' algbw/busbw conventions, every
result checked against known data, and a fit of t = α + S/β per collective."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

from gpuvet.backends.engine import BenchModule, CollectiveSession, Unsupported
from gpuvet.bench.context import BenchContext
from gpuvet.bench.records import BenchResult, Status, Where, rate_stats
from gpuvet.bench.registry import LEVELS, Benchmark, Scope
from gpuvet.checks.model import Check, Layer, Verdict
from gpuvet.errors import GpuvetError
from gpuvet.node.collectives import COLLECTIVES, bus_factor, fit_alpha_beta

NAME = "collective"
DEFAULT_OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
ELEM_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


@dataclass(frozen=True)
class CollectiveOptions:
    modules: tuple[str, ...] | None = None
    ops: tuple[str, ...] = DEFAULT_OPS
    min_bytes: int = 8
    max_bytes: int | None = None  # default: 256 MiB on GPUs, 1 MiB on CPU
    factor: int = 2
    dtype: str = "fp32"
    nprocs: int | None = None  # ranks (--ranks): processes on the host backend (default 2), else the first N modules
    check: bool = True
    torchrun: bool = False  # this process is one rank of a torchrun job (several nodes)


def sweep(min_bytes: int, max_bytes: int, factor: int) -> list[int]:
    sizes, size = [], min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size *= factor
    return sizes


def _validate(opts: CollectiveOptions) -> None:
    bad = [o for o in opts.ops if o not in COLLECTIVES]
    if bad:
        raise GpuvetError(f"unknown collective {', '.join(bad)}", where="--ops",
                          fix=f"use some of {', '.join(COLLECTIVES)}.")
    if opts.dtype not in ELEM_BYTES:
        raise GpuvetError(f"dtype {opts.dtype} is not checked exactly by collectives", where="--dtype",
                          fix=f"use one of {', '.join(ELEM_BYTES)}.")
    if opts.factor < 2:
        raise GpuvetError("factor must be at least 2", where="--factor", fix="use 2 (nccl-tests' -f 2) or more.")
    if opts.min_bytes < 1 or (opts.max_bytes is not None and opts.max_bytes < opts.min_bytes):
        raise GpuvetError("the size range is empty", where="--min-bytes/--max-bytes", fix="give 1 <= min <= max.")
    if opts.nprocs is not None and opts.nprocs < 2:
        raise GpuvetError("a collective needs at least 2 ranks", where="--ranks", fix="use 2 or more.")


def run(ctx: BenchContext, opts: CollectiveOptions = CollectiveOptions()) -> list[BenchResult]:
    _validate(opts)
    sim = ctx.simulated
    if opts.torchrun:
        try:
            joined = ctx.engine.joined_collectives()
        except Unsupported as exc:
            raise GpuvetError(str(exc), where="--torchrun",
                              fix="start every rank with torchrun (docs/benchmarks.md), or drop --torchrun.") from None
        return _run_sweep(_deterministic(ctx), opts, joined, host=ctx.engine.collective_backend == "gloo")
    modules = ctx.select(opts.modules)
    host = any(m.is_host for m in modules)
    members = [f"{modules[0].id}:{r}" for r in range(opts.nprocs or 2)] if host else _members(modules, opts.nprocs)
    if len(members) < 2:
        return [BenchResult.skipped(NAME, "busbw", "GB/s", "a collective needs at least two modules", simulated=sim)]
    return _run_sweep(ctx, opts, ctx.engine.collectives(members), host)


def _members(modules: list[BenchModule], ranks: int | None) -> list[str]:
    """One rank per module: every selected module, or the first ``ranks`` of them (--ranks is never
    dropped: more ranks than modules is refused)."""
    if ranks is not None and ranks > len(modules):
        raise GpuvetError(f"{ranks} ranks asked, {len(modules)} module(s) to run them on (one rank per module)",
                          where="--ranks", fix=f"use 2 to {len(modules)}, or leave --ranks out for every module.")
    return [m.id for m in modules[:ranks]]


def _deterministic(ctx: BenchContext) -> BenchContext:
    """Ranks of a torchrun job must take the same timing decisions: a fixed sample count, no
    wall-clock budget (each rank's clock differs; the reduced times do not)."""
    plan = replace(ctx.plan, max_samples=ctx.plan.min_samples, budget_s=float("inf"))
    return BenchContext(ctx.engine, plan, ctx.progress)


def _run_sweep(ctx: BenchContext, opts: CollectiveOptions, session: CollectiveSession, host: bool) -> list[BenchResult]:
    sim = ctx.simulated
    known = {m.id for m in ctx.engine.modules()}
    watched = [m for m in session.members if m in known]  # telemetry for the modules that are ours
    max_bytes = opts.max_bytes or (2**20 if host else 256 * 2**20)
    sizes = sweep(opts.min_bytes, max_bytes, opts.factor)
    n = session.nranks
    results: list[BenchResult] = []
    total, done = len(opts.ops) * len(sizes), 0
    try:
        for op in opts.ops:
            fit_sizes: list[int] = []
            fit_times: list[float] = []
            for size in sizes:
                ctx.progress(done, total, f"{op} {size} B on {n} ranks")
                done += 1
                where: Where = {"size_bytes": size, "dtype": opts.dtype, "detail": {"op": op, "ranks": n}}
                try:
                    timing, telemetry = ctx.run(partial(session.workload, op, size, opts.dtype),
                                                watched)
                    correct = session.check(op, size, opts.dtype) if opts.check else None
                except Unsupported as exc:
                    for metric in ("algbw", "busbw"):
                        results.append(BenchResult.skipped(NAME, metric, "GB/s", str(exc), simulated=sim, **where))
                    continue
                except Exception as exc:
                    for metric in ("algbw", "busbw"):
                        results.append(BenchResult.failed(NAME, metric, "GB/s", f"{type(exc).__name__}: {exc}",
                                                          simulated=sim, **where))
                    continue
                algbw = rate_stats(timing, size / 1e9)
                factor = bus_factor(op, n)
                busbw = rate_stats(timing, size * factor / 1e9)
                detail = {"op": op, "ranks": n, "time_us": timing.stats.median * 1e6, "bus_factor": factor,
                          "algorithm": session.algorithm, "backend": ctx.engine.collective_backend}
                for metric, stats in (("algbw", algbw), ("busbw", busbw)):
                    record = BenchResult.measured(NAME, metric, "GB/s", stats, simulated=sim, size_bytes=size,
                                                  dtype=opts.dtype, detail=detail)
                    reason = None if correct is not False else f"{op} at {size} B returned wrong data on some rank"
                    results.append(replace(record, correct=correct, reason=reason, telemetry=telemetry))
                fit_sizes.append(size)
                fit_times.append(timing.stats.median)
            results.extend(_fit_records(op, n, fit_sizes, fit_times, sim))
    finally:
        session.close()
    ctx.progress(total, total, "collective")
    return results


def _fit_records(op: str, n: int, sizes: list[int], times: list[float], sim: bool) -> list[BenchResult]:
    fit = fit_alpha_beta(sizes, times)
    if fit is None:
        return [BenchResult.skipped(NAME, "latency", "us", "needs at least two sizes with rising time", simulated=sim,
                                    detail={"op": op})]
    detail = {"op": op, "ranks": n, "fit": "t = alpha + S/beta", "r_squared": fit.r_squared,
              "sizes": len(sizes), "beta_busbw_gbps": fit.beta_gbps * bus_factor(op, n)}
    return [
        BenchResult(NAME, "latency", fit.alpha_s * 1e6, "us", Status.OK, sim, median=fit.alpha_s * 1e6, detail=detail),
        BenchResult(NAME, "bandwidth", fit.beta_gbps, "GB/s", Status.OK, sim, median=fit.beta_gbps, detail=detail),
    ]


_SWEEP_AT = {"quick": (("all_reduce",), 64 * 2**20, 8), "standard": (("all_reduce",), 256 * 2**20, 4),
             "long": (DEFAULT_OPS, 256 * 2**20, 2)}  # ops, largest size on GPUs, size factor


def _plan(scope: Scope) -> CollectiveOptions | Check:
    """The collectives over every module (the host's cores on a CPU node, up to 1 MiB); one module has none."""
    if len(scope.ids) < 2 and scope.device == "gpu":
        return Check(Layer.COLLECTIVE, "all_reduce_busbw", Verdict.SKIP, reason="one module: nothing to reduce with")
    ops, max_bytes, factor = _SWEEP_AT[scope.level]
    return CollectiveOptions(ops=ops, min_bytes=8, factor=factor, max_bytes=max_bytes if scope.device == "gpu" else 2**20)


BENCHMARK = Benchmark(NAME, CollectiveOptions, run, (Layer.COLLECTIVE,), LEVELS, _plan)
