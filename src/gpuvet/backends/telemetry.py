"""What `watch` reads from a backend: who is there, and their telemetry now."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass

from gpuvet.backends.readings import ModuleIdentity, Sample
from gpuvet.node.design import infer_design
from gpuvet.node.model import Node


@dataclass(frozen=True)
class SlowFields:
    """What a live backend reads on slow ticks only (counters and link state); all None on a
    fast one. ``nvlink_*`` count the module's fabric links, whatever the vendor calls them (the
    name is kept: it is a JSON key and a metric name)."""

    ecc_corrected: int | None = None
    ecc_uncorrected: int | None = None
    pcie_gen: int | None = None
    pcie_gen_max: int | None = None
    pcie_width: int | None = None
    pcie_width_max: int | None = None
    nvlink_up: int | None = None
    nvlink_expected: int | None = None
    nvlink_errors: int | None = None  # the fabric's error counters summed (CRC, replay, RAS), cumulative
    pcie_replays: int | None = None  # the module's PCIe replay counter, cumulative

    def sample_fields(self) -> dict[str, int | None]:
        """As ``Sample``'s keyword arguments."""
        return asdict(self)


def designed_fabric_links(node: Node, bonded: bool = True) -> dict[str, int]:
    """How many fabric links each module should have up, from the nominal design (catalog and
    the board's shape, node/design.py) rather than from the first reading: a link already down
    when `watch` starts is counted down. ``bonded``: count the links inside each bond (NVLink
    lanes to a switch or peer, NVML's unit); otherwise one per peer (amdsmi's unit). Empty
    where the source cannot see the fabric; a module the design gives none is left out."""
    if not node.fabric_known:
        return {}
    design = infer_design(node).node
    out = {}
    for m in design.module_ids:
        links = [lk for lk in design.links_of(m) if lk.kind.is_fabric]
        if n := sum(lk.width for lk in links) if bonded else len(links):
            out[m] = n
    return out


class TelemetrySource(ABC):
    simulated: bool = False

    @abstractmethod
    def present(self, t: float) -> list[ModuleIdentity]:
        """Modules there now (re-enumerating when the source can)."""

    @abstractmethod
    def sample(self, t: float, slow: bool) -> list[Sample]:
        """One sample per module that answered; slow fields only when ``slow``."""

    @abstractmethod
    def slowdown_c(self) -> dict[str, float]:
        """Each module's first thermal throttle point (°C)."""

    def host(self) -> dict[str, float]:
        """Host metrics: CPU load (0..1) and memory in use (bytes)."""
        import psutil

        return {"cpu_load_ratio": psutil.cpu_percent(interval=None) / 100.0,
                "memory_used_bytes": float(psutil.virtual_memory().used)}
