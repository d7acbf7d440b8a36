"""Benchmark records → checks now live in the shared layer (``gpuvet.checks.measured``); this name
stays for importers of the old place."""

from gpuvet.checks.measured import (
    collective_checks,
    compute_checks,
    copy_checks,
    evidence,
    from_result,
    memory_checks,
    model_checks,
)

__all__ = ["collective_checks", "compute_checks", "copy_checks", "evidence", "from_result", "memory_checks",
           "model_checks"]
