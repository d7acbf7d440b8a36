"""Checks and verdicts now live in the shared layer (``gpuvet.checks.model``); this name stays
for the validate modules and faces that import it from here."""

from gpuvet.checks.model import Check, Layer, Verdict, overall, worse

__all__ = ["Check", "Layer", "Verdict", "overall", "worse"]
