"""Expected values, derived from what was *found*: the same node model the simulator uses
(catalog peaks × what tuned runs reach, the flow solver on the found links, the α–β
collective model), applied to the detected topology without faults or noise. So H2D is
expected from the module's detected PCIe gen × width, a pair's bandwidth from the links
between them, an aggregate from the flow solver on the links they share."""

from __future__ import annotations

from collections.abc import Sequence

from gpuvet.backends.engine import Transfer, Unsupported
from gpuvet.backends.sim_engine import ModelledWorkload, SimEngine
from gpuvet.node.collectives import bus_factor
from gpuvet.node.model import Node


class Expectations:
    def __init__(self, found: Node) -> None:
        self.engine = SimEngine(found, []) if found.modules else None

    def _seconds(self, make: object) -> float | None:
        if self.engine is None:
            return None
        try:
            workload = make()  # type: ignore[operator]
        except (Unsupported, KeyError):
            return None
        assert isinstance(workload, ModelledWorkload)
        return workload.seconds

    def gemm_tflops(self, module: str, dtype: str, n: int) -> float | None:
        s = self._seconds(lambda: self.engine.gemm(module, dtype, n))  # type: ignore[union-attr]
        return 2 * n**3 / s / 1e12 if s else None

    def membw_gbps(self, module: str, kind: str, nbytes: int) -> float | None:
        s = self._seconds(lambda: self.engine.stream(module, kind, nbytes))  # type: ignore[union-attr,arg-type]
        return (2 if kind == "copy" else 3) * nbytes / s / 1e9 if s else None

    def transfers_gbps(self, transfers: Sequence[Transfer]) -> list[float] | None:
        """Rate of each transfer with all of them at once."""
        if self.engine is None:
            return None
        try:
            return self.engine.transfer_rates(transfers)
        except (Unsupported, KeyError):
            return None

    def collective(self, op: str, members: Sequence[str], size_bytes: int) -> tuple[float, float, str] | None:
        """(seconds, busbw GB/s, algorithm) of one collective."""
        if self.engine is None or any(m not in self.engine.node.module_ids for m in members):
            return None
        session = self.engine.collectives(members)
        seconds, algorithm = session.seconds(op, size_bytes)
        return seconds, size_bytes / seconds / 1e9 * bus_factor(op, len(members)), algorithm
