"""Each benchmark's judgement against the expected figures: its results as checks, each with the
value the design expects (``gpuvet.checks.expected``). Kept here, beside the registry's other
facts about a benchmark (``gpuvet.bench.registry``), because judging needs the shared checks
layer and bench/ sits below it; a new benchmark adds its line to ``JUDGEMENTS``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gpuvet.bench.records import BenchResult
from gpuvet.bench.registry import Scope
from gpuvet.checks.expected import Expectations
from gpuvet.checks.measured import collective_checks, compute_checks, copy_checks, memory_checks, model_checks
from gpuvet.checks.model import Check
from gpuvet.errors import GpuvetError

Judgement = Callable[[Sequence[BenchResult], Expectations, Scope], list[Check]]

JUDGEMENTS: dict[str, Judgement] = {
    "gemm": lambda rs, exp, s: compute_checks(rs, exp, s.device),
    "copy": lambda rs, exp, s: copy_checks(rs, exp, s.ids, s.device),
    "collective": lambda rs, exp, s: collective_checks(rs, exp, s.ids if s.device == "gpu" else [], s.device),
    "membw": lambda rs, exp, s: memory_checks(rs, exp, s.device),
    "model": lambda rs, exp, s: model_checks(rs, s.device),
}


def judge(name: str, results: Sequence[BenchResult], exp: Expectations, scope: Scope) -> list[Check]:
    """Benchmark ``name``'s results as checks against the expected figures."""
    if name not in JUDGEMENTS:
        raise GpuvetError(f"benchmark {name!r} has no judgement", where="gpuvet.validate.expected",
                          fix="add its line to JUDGEMENTS (docs/architecture.md, 'a benchmark').")
    return JUDGEMENTS[name](results, exp, scope)


__all__ = ["JUDGEMENTS", "Expectations", "judge"]
