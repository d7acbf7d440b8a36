"""Expected values from the performance model (``gpuvet.node.performance``) applied to what the
node should be — the declared spec or the nominal design inferred from the modules found, never
the degraded state being judged. So H2D is expected from the module's PCIe generation × its
maximum width, a pair's bandwidth from the links the design gives them, an aggregate from the
flow solver on the links they share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from gpuvet.node.collectives import bus_factor
from gpuvet.node.model import Node, Transfer

if TYPE_CHECKING:
    from gpuvet.node.performance import PerformanceModel


class Expectations:
    def __init__(self, design: Node) -> None:
        # imported here: the model's flow solver loads numpy, which a capture read without modules never needs
        from gpuvet.node.performance import PerformanceModel

        self.perf = PerformanceModel(design) if design.modules else None

    def _seconds(self, compute: Callable[[PerformanceModel], float]) -> float | None:
        if self.perf is None:
            return None
        from gpuvet.node.performance import NotModelled

        try:
            return compute(self.perf)
        except (NotModelled, KeyError):
            return None

    def gemm_tflops(self, module: str, dtype: str, n: int) -> float | None:
        s = self._seconds(lambda p: p.gemm_seconds(module, dtype, n))
        return 2 * n**3 / s / 1e12 if s else None

    def membw_gbps(self, module: str, kind: str, nbytes: int) -> float | None:
        s = self._seconds(lambda p: p.stream_seconds(module, kind, nbytes))
        return (2 if kind == "copy" else 3) * nbytes / s / 1e9 if s else None

    def transfers_gbps(self, transfers: Sequence[Transfer]) -> list[float] | None:
        """Rate of each transfer with all of them at once."""
        if self.perf is None:
            return None
        from gpuvet.node.performance import NotModelled

        try:
            return self.perf.transfer_rates(transfers)
        except (NotModelled, KeyError):
            return None

    def collective(self, op: str, members: Sequence[str], size_bytes: int) -> tuple[float, float, str] | None:
        """(seconds, busbw GB/s, algorithm) of one collective."""
        if self.perf is None or any(m not in self.perf.node.module_ids for m in members):
            return None
        seconds, algorithm = self.perf.collectives(members).seconds(op, size_bytes)
        return seconds, size_bytes / seconds / 1e9 * bus_factor(op, len(members)), algorithm
