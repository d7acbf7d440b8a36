"""Device memory bandwidth: STREAM copy (b = a) and triad (a = b + s·c), bytes read plus
bytes written, against the module's peak."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

from gpuvet.backends.engine import BenchModule, StreamKind
from gpuvet.bench.context import BenchContext
from gpuvet.bench.records import BenchResult, Where, rate_stats
from gpuvet.bench.registry import Benchmark
from gpuvet.checks.model import Layer
from gpuvet.errors import GpuvetError

NAME = "membw"
KINDS: tuple[StreamKind, ...] = ("copy", "triad")
_ARRAYS = {"copy": 2, "triad": 3}


@dataclass(frozen=True)
class MembwOptions:
    modules: tuple[str, ...] | None = None
    kinds: tuple[str, ...] = KINDS
    size_bytes: int | None = None  # per array; default: far beyond every cache


def default_size(module: BenchModule) -> int:
    """2 GiB per array on a GPU (L2 is tens of MB); 256 MiB on a CPU (L3 is at most hundreds of MB).
    Never more than an eighth of the free memory."""
    size = 256 * 2**20 if module.is_host else 2 * 2**30
    if module.free_memory_bytes:
        size = min(size, module.free_memory_bytes // 8)
    return size


def run(ctx: BenchContext, opts: MembwOptions = MembwOptions()) -> list[BenchResult]:
    bad = [k for k in opts.kinds if k not in KINDS]
    if bad:
        raise GpuvetError(f"unknown kind {', '.join(bad)}", where="--kinds", fix="use copy and/or triad.")
    if opts.size_bytes is not None and opts.size_bytes < 4096:
        raise GpuvetError("arrays under 4 KiB measure caches and launch overhead, not memory",
                          where="--size-bytes", fix="use at least 4096 (default fills far beyond the caches).")
    modules = ctx.select(opts.modules)
    results: list[BenchResult] = []
    total, done = len(modules) * len(opts.kinds), 0
    for module in modules:
        size = opts.size_bytes or default_size(module)
        for kind in opts.kinds:
            ctx.progress(done, total, f"membw {kind} on {module.id}")
            done += 1
            where: Where = {"module": module.id, "size_bytes": size}
            got = ctx.attempt(NAME, kind, "GB/s", partial(ctx.engine.stream, module.id, kind, size),  # type: ignore[arg-type]
                              [module.id], **where)
            if isinstance(got, BenchResult):
                results.append(got)
                continue
            timing, telemetry = got
            moved = _ARRAYS[kind] * size
            described: Where = {**where, "detail": {"bytes_moved_per_op": moved}}
            record = BenchResult.measured(NAME, kind, "GB/s", rate_stats(timing, moved / 1e9), simulated=ctx.simulated,
                                          peak=module.model.memory_bw_gbps, **described)
            results.append(replace(record, telemetry=telemetry))
    ctx.progress(total, total, "membw")
    return results


BENCHMARK = Benchmark(NAME, MembwOptions, run, (Layer.MEMORY,), ("standard", "long"),
                      module_peers=("membw_",))  # memory clock flapping is a standard run's case
