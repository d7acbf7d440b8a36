"""Admission checks for a module that appeared while watching: a short compute and a short
host→module transfer, each against what its model and links should give. Pass both: ready;
otherwise quarantined (no work should land on it)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuvet.backends.base import Backend
from gpuvet.bench import copy, gemm
from gpuvet.bench.context import BenchContext
from gpuvet.bench.timing import QUICK
from gpuvet.checks.expected import Expectations
from gpuvet.checks.measured import compute_checks, copy_checks
from gpuvet.checks.model import EvidenceMap
from gpuvet.errors import GpuvetError
from gpuvet.node.design import infer_design

MIN_PCT_OF_EXPECTED = 85.0


@dataclass(frozen=True)
class Admission:
    module: str
    ready: bool
    reason: str
    evidence: EvidenceMap


def admit(backend: Backend, module: str) -> Admission:
    try:
        engine = backend.engine()
    except GpuvetError as exc:
        return Admission(module, False, f"cannot benchmark it: {exc.what}", {})
    try:
        ctx = BenchContext(engine, QUICK)
        ids = [m.id for m in engine.modules()]
        if module not in ids:
            return Admission(module, False, "the benchmark engine does not see it", {"seen": ids})
        model = next(m for m in engine.modules() if m.id == module).model
        dtype = "bf16" if "bf16" in model.tflops else "fp32"
        exp = Expectations(infer_design(backend.node()).node)  # the design, not the state being admitted
        checks = compute_checks(gemm.run(ctx, gemm.GemmOptions(modules=(module,), dtypes=(dtype,), check=False,
                                                               size=4096 if not model.tflops else None)), exp, "gpu")
        checks += copy_checks(copy.run(ctx, copy.CopyOptions(modules=(module,), tests=("h2d",), size_bytes=64 * 2**20)),
                              exp, [module], "gpu")
    finally:
        engine.close()
    evidence = {c.name: {"value": c.value, "unit": c.unit, "expected": c.expected, "pct_of_expected": c.pct_of_expected}
                for c in checks}
    bad = [c for c in checks if c.verdict.value in ("fail", "skip")
           or (c.pct_of_expected is not None and c.pct_of_expected < MIN_PCT_OF_EXPECTED)]
    if bad:
        why = "; ".join(f"{c.name} {c.pct_of_expected:.0f} % of expected" if c.pct_of_expected is not None
                        else f"{c.name}: {c.reason}" for c in bad)
        return Admission(module, False, why, evidence)
    return Admission(module, True, "compute and host transfer as expected", evidence)
