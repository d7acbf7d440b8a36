"""Run a benchmark by name on a backend: the one entry point the CLI, validate and fleet use."""

from __future__ import annotations

from typing import Any

from gpuvet import __version__
from gpuvet.backends.base import Backend
from gpuvet.bench import registry
from gpuvet.bench.context import BenchContext, Progress
from gpuvet.bench.records import BenchReport, Environment
from gpuvet.bench.timing import TimingPlan
from gpuvet.errors import GpuvetError


def options_for(name: str, **values: Any) -> object:
    """The options object of benchmark ``name`` from keyword values (None means default); the
    values come untyped from the command line and the options' constructor checks their names."""
    cls = registry.find(name).options
    return cls(**{k: v for k, v in values.items() if v is not None})


def run_benchmark(name: str, backend: Backend, options: object | None = None, plan: TimingPlan | None = None,
                  progress: Progress | None = None) -> BenchReport:
    """Its own options (default ones where none are given) checked, then dispatched through the registry."""
    bench = registry.find(name)
    cls = bench.options
    opts = options if options is not None else cls()
    if not isinstance(opts, cls):
        raise GpuvetError(f"{type(opts).__name__} are not the options of benchmark {name!r}",
                          fix=f"pass {cls.__name__}.")
    engine = backend.engine()
    load = engine.host_load
    try:
        ctx = BenchContext(engine, plan or TimingPlan(), progress or (lambda d, t, s: None))
        results = bench.run(ctx, opts)
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
