"""The executor: `validate` on one node, returning its result envelope (the same JSON `gpuvet
validate --json` prints). Runs wherever the runner puts it: a Ray task, a Slurm step, a shell."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuvet.checks.model import Json


def validate_envelope(sim: str | None = None, level: str = "quick") -> dict[str, Json]:
    from gpuvet.backends.select import open_backend
    from gpuvet.validate.run import Level, Validator, no_accelerator

    backend = open_backend(sim=sim)
    try:
        refusal = no_accelerator(backend)  # a GPU node whose driver is missing: said, not judged as a host
        if refusal is not None:
            raise refusal
        return Validator(backend, Level(level), declared=backend.declared).run().to_json()
    finally:
        backend.close()
