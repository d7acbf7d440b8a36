"""Run a benchmark by name on a backend: the one entry point the CLI, validate and fleet use."""

from __future__ import annotations

from typing import Any

from gpuvet import __version__
from gpuvet.backends.base import Backend
from gpuvet.bench import collective, copy, gemm, membw, model
from gpuvet.bench.context import BenchContext, Progress
from gpuvet.bench.records import BenchReport, BenchResult, Environment
from gpuvet.bench.timing import TimingPlan
from gpuvet.errors import GpuvetError

BenchOptions = gemm.GemmOptions | membw.MembwOptions | copy.CopyOptions | collective.CollectiveOptions \
    | model.ModelOptions
OPTIONS: dict[str, type[BenchOptions]] = {
    "gemm": gemm.GemmOptions,
    "membw": membw.MembwOptions,
    "copy": copy.CopyOptions,
    "collective": collective.CollectiveOptions,
    "model": model.ModelOptions,
}
BENCHMARKS = tuple(OPTIONS)  # the names, in the order the CLI lists them


def _dispatch(ctx: BenchContext, options: BenchOptions) -> list[BenchResult]:
    """Each benchmark with its own options: their type names the benchmark."""
    if isinstance(options, gemm.GemmOptions):
        return gemm.run(ctx, options)
    if isinstance(options, membw.MembwOptions):
        return membw.run(ctx, options)
    if isinstance(options, copy.CopyOptions):
        return copy.run(ctx, options)
    if isinstance(options, collective.CollectiveOptions):
        return collective.run(ctx, options)
    return model.run(ctx, options)


def options_for(name: str, **values: Any) -> BenchOptions:
    """The options object of benchmark ``name`` from keyword values (None means default); the
    values come untyped from the command line and the options' constructor checks their names."""
    cls = _lookup(name)
    return cls(**{k: v for k, v in values.items() if v is not None})


def _lookup(name: str) -> type[BenchOptions]:
    if name not in OPTIONS:
        raise GpuvetError(f"unknown benchmark {name!r}", fix=f"use one of {', '.join(OPTIONS)}.")
    return OPTIONS[name]


def run_benchmark(name: str, backend: Backend, options: BenchOptions | None = None, plan: TimingPlan | None = None,
                  progress: Progress | None = None) -> BenchReport:
    cls = _lookup(name)
    opts = options if options is not None else cls()
    if not isinstance(opts, cls):
        raise GpuvetError(f"{type(opts).__name__} are not the options of benchmark {name!r}",
                          fix=f"pass {cls.__name__}.")
    engine = backend.engine()
    load = engine.host_load
    try:
        ctx = BenchContext(engine, plan or TimingPlan(), progress or (lambda d, t, s: None))
        results = _dispatch(ctx, opts)
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
