"""Deprecated: checks and verdicts live in the shared layer, ``gpuvet.checks.model``. This name
was promised to stay (its docstring said so before issue 42 moved it), so it re-exports the
current names and warns on import; import them from ``gpuvet.checks.model``."""

import warnings

from gpuvet.checks.model import Check, Layer, Verdict, overall, worse

warnings.warn("gpuvet.validate.checks is deprecated: import Check, Layer, Verdict, overall and worse from "
              "gpuvet.checks.model", DeprecationWarning, stacklevel=2)

__all__ = ["Check", "Layer", "Verdict", "overall", "worse"]
