"""Collective times for `plan collective`: the model itself is the node's
(``gpuvet.node.collective_model``, re-exported here for plan's callers); what plan adds is the price
taken from a measured sweep kept in the logbook (``calibrated``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gpuvet.node.collective_model import CollectiveModel, CollectivePrediction
from gpuvet.node.collectives import bus_factor

__all__ = ["CollectiveModel", "CollectivePrediction", "calibrated"]

if TYPE_CHECKING:
    from gpuvet.checks.model import Check


def calibrated(op: str, size_bytes: int, checks: Sequence[Check], modules: int) -> CollectivePrediction | None:
    """The same prediction from a measured sweep kept in a logbook run of this node (the
    ``<op>_busbw`` check): inside the sweep, the time interpolated between the two measured sizes
    around ``size_bytes`` (log-log: the library switches protocols along the way, which one α and
    β cannot follow); outside it, t = α + S/β fitted to the three measured sizes nearest that end.
    None when the run has no such sweep."""
    from gpuvet.node.collectives import fit_alpha_beta

    for c in checks:
        if c.name == f"{op}_busbw" and c.evidence.sweep:
            ranks = c.evidence.ranks or modules
            factor = bus_factor(op, ranks)
            measured = sorted((int(s), int(s) * factor / (bw * 1e9)) for s, bw in c.evidence.sweep if bw)
            if len(measured) < 2:
                return None
            sizes = [s for s, _ in measured]
            if sizes[0] <= size_bytes <= sizes[-1]:
                log_t = np.interp(np.log(size_bytes), np.log(sizes), np.log([t for _, t in measured]))
                seconds = float(np.exp(log_t))
                how = f"calibrated (interpolated in the measured sweep, {sizes[0]:,} to {sizes[-1]:,} B)"
            else:
                end = measured[-3:] if size_bytes > sizes[-1] else measured[:3]
                fit = fit_alpha_beta([s for s, _ in end], [t for _, t in end])
                if fit is None:
                    return None
                seconds = fit.alpha_s + size_bytes / (fit.beta_gbps * 1e9)
                how = f"calibrated (extrapolated: alpha {fit.alpha_s * 1e6:.1f} us, beta {fit.beta_gbps:.0f} GB/s)"
            algbw = size_bytes / seconds / 1e9
            return CollectivePrediction(op, size_bytes, ranks, seconds, algbw, algbw * factor, how)
    return None
