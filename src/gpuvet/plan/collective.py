"""Predicted collective times on a node: the α–β model per algorithm with per-rank bandwidth
from the flow solver, the fastest algorithm chosen — the same model the simulated benchmarks
run (``gpuvet.backends.sim_engine``), not a second one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpuvet.backends.sim_engine import SimEngine
from gpuvet.node.collectives import Collective, bus_factor
from gpuvet.node.memory import PlanError
from gpuvet.node.model import Node
from gpuvet.node.spec import FaultSpec


@dataclass(frozen=True)
class CollectivePrediction:
    op: str
    size_bytes: int
    modules: int
    time_s: float
    algbw: float  # GB/s
    busbw: float  # GB/s
    algorithm: str


class CollectiveModel:
    def __init__(self, node: Node, faults: Sequence[FaultSpec] = ()) -> None:
        self.node = node
        self.engine = SimEngine(node, list(faults))

    def members(self, count: int | None) -> list[str]:
        ids = self.node.module_ids
        count = count or len(ids)
        if count < 1 or count > len(ids):
            raise PlanError("--modules", f"{count} modules asked, the node has {len(ids)}", f"use 1 to {len(ids)}")
        return ids[:count]

    def predict(self, op: str, size_bytes: int, members: Sequence[str]) -> CollectivePrediction:
        if size_bytes <= 0:
            raise PlanError("--bytes", f"{size_bytes} is not a positive size", "e.g. --bytes 1GiB")
        try:
            Collective(op)
        except ValueError:
            raise PlanError("--op", f"unknown collective {op!r}",
                            f"use one of {', '.join(c.value for c in Collective)}") from None
        if len(members) == 1:
            return CollectivePrediction(op, size_bytes, 1, 0.0, float("inf"), 0.0, "none")
        session = self.engine.collectives(list(members))
        seconds, algorithm = session.seconds(op, size_bytes)  # type: ignore[attr-defined]
        algbw = size_bytes / seconds / 1e9
        return CollectivePrediction(op, size_bytes, len(members), seconds, algbw,
                                    algbw * bus_factor(op, len(members)), algorithm)

    def transfer_gbps(self, src: str, dst: str) -> float:
        from gpuvet.backends.engine import Transfer

        return self.engine.transfer_rates([Transfer(src, dst, 1)])[0]


def calibrated(op: str, size_bytes: int, checks: list[dict[str, Any]], modules: int) -> CollectivePrediction | None:
    """The same prediction from a measured sweep: fit t = α + S/β to the ``<op>_busbw`` check's
    sweep kept in a logbook run of this node, and price ``size_bytes`` with the fitted α and β.
    None when the run has no such sweep."""
    from gpuvet.node.collectives import fit_alpha_beta

    for c in checks:
        if c.get("name") == f"{op}_busbw" and c.get("evidence", {}).get("sweep"):
            sweep = c["evidence"]["sweep"]
            ranks = int(c.get("evidence", {}).get("ranks") or modules)
            factor = bus_factor(op, ranks)
            sizes = [int(s) for s, _ in sweep]
            times = [s * factor / (bw * 1e9) for s, bw in sweep if bw]
            fit = fit_alpha_beta(sizes[: len(times)], times)
            if fit is None:
                return None
            seconds = fit.alpha_s + size_bytes / (fit.beta_gbps * 1e9)
            algbw = size_bytes / seconds / 1e9
            return CollectivePrediction(op, size_bytes, ranks, seconds, algbw, algbw * factor,
                                        f"calibrated (alpha {fit.alpha_s * 1e6:.1f} us, beta {fit.beta_gbps:.0f} GB/s)")
    return None
