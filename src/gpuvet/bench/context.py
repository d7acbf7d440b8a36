"""What every benchmark gets: the engine, the timing plan, a progress callback — and the small
helpers they share (module selection, measuring one workload with telemetry around it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Unpack

from gpuvet.backends.engine import BenchEngine, BenchModule, Unsupported, Workload
from gpuvet.backends.readings import TelemetrySummary
from gpuvet.bench.records import BenchResult, Where
from gpuvet.bench.timing import Timing, TimingPlan, measure
from gpuvet.errors import GpuvetError

Progress = Callable[[int, int, str], None]  # (done, total, what is running now)


def _no_progress(done: int, total: int, label: str) -> None:
    pass


@dataclass
class BenchContext:
    engine: BenchEngine
    plan: TimingPlan = field(default_factory=TimingPlan)
    progress: Progress = _no_progress

    @property
    def simulated(self) -> bool:
        return self.engine.simulated

    def select(self, wanted: Sequence[str] | None) -> list[BenchModule]:
        """The modules named in ``wanted`` (all when None); a clear error for an unknown id."""
        modules = self.engine.modules()
        if not wanted:
            return modules
        by_id = {m.id: m for m in modules}
        unknown = [w for w in wanted if w not in by_id]
        if unknown:
            raise GpuvetError(f"no module named {', '.join(unknown)}", where="--modules",
                              fix=f"choose among: {', '.join(by_id) or '(none found)'}.")
        return [by_id[w] for w in wanted]

    def run(self, make: Callable[[], Workload], modules: Sequence[str]) -> tuple[Timing, dict[str, TelemetrySummary]]:
        """Build the workload, measure it with telemetry sampled around it, release it.
        Raises Unsupported from ``make``."""
        workload = make()
        try:
            with self.engine.monitoring(modules) as telemetry:
                timing = measure(workload, self.plan)
        finally:
            workload.close()
        return timing, telemetry


    def attempt(self, benchmark: str, metric: str, unit: str, make: Callable[[], Workload], modules: Sequence[str],
                **where: Unpack[Where]) -> tuple[Timing, dict[str, TelemetrySummary]] | BenchResult:
        """``run``, or the record saying why not: ``skipped`` when the engine cannot do it
        (Unsupported), ``failed`` for any other error — one module's driver error must not lose
        the others' figures."""
        try:
            return self.run(make, modules)
        except Unsupported as exc:
            return BenchResult.skipped(benchmark, metric, unit, str(exc), simulated=self.simulated, **where)
        except Exception as exc:
            return BenchResult.failed(benchmark, metric, unit, f"{type(exc).__name__}: {exc}", simulated=self.simulated,
                                      **where)


__all__ = ["BenchContext", "Progress", "Unsupported"]
