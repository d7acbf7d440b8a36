"""Run a benchmark by name on a backend: the one entry point the CLI, validate and fleet use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpuvet import __version__
from gpuvet.backends.base import Backend
from gpuvet.bench import collective, copy, gemm, membw, model
from gpuvet.bench.context import BenchContext, Progress
from gpuvet.bench.records import BenchReport, BenchResult, Environment
from gpuvet.bench.timing import TimingPlan
from gpuvet.errors import GpuvetError

BENCHMARKS: dict[str, tuple[Callable[[BenchContext, Any], list[BenchResult]], type]] = {
    "gemm": (gemm.run, gemm.GemmOptions),
    "membw": (membw.run, membw.MembwOptions),
    "copy": (copy.run, copy.CopyOptions),
    "collective": (collective.run, collective.CollectiveOptions),
    "model": (model.run, model.ModelOptions),
}


def options_for(name: str, **values: Any) -> Any:
    """The options object of benchmark ``name`` from keyword values (None means default)."""
    _, cls = _lookup(name)
    return cls(**{k: v for k, v in values.items() if v is not None})


def _lookup(name: str) -> tuple[Callable[[BenchContext, Any], list[BenchResult]], type]:
    if name not in BENCHMARKS:
        raise GpuvetError(f"unknown benchmark {name!r}", fix=f"use one of {', '.join(BENCHMARKS)}.")
    return BENCHMARKS[name]


def run_benchmark(name: str, backend: Backend, options: Any = None, plan: TimingPlan | None = None,
                  progress: Progress | None = None) -> BenchReport:
    run, cls = _lookup(name)
    engine = backend.engine()
    load = engine.host_load
    try:
        ctx = BenchContext(engine, plan or TimingPlan(), progress or (lambda d, t, s: None))
        results = run(ctx, options if options is not None else cls())
        env = Environment(backend=backend.name, device=engine.device_name, node=backend.node().name,
                          gpuvet_version=__version__, collective_backend=engine.collective_backend,
                          cpu_threads=engine.cpu_threads, host_busy=load.busy if load else None,
                          host_load=load.describe() if load else None,
                          **{k: v for k, v in engine.versions().items() if k != "nccl_version"})
    finally:
        engine.close()
    notes: tuple[str, ...] = ()
    if engine.simulated:
        notes += ("simulated: every figure is modelled from the spec, not measured",)
    if load is not None and load.busy:
        notes += (f"host busy: {load.describe()}; ran {engine.cpu_threads} thread(s), and the CPU figures are "
                  "lower than this host reaches when quiet",)
    return BenchReport(name, engine.simulated, env, results, notes)
