"""What `watch` reads from a backend: who is there, and their telemetry now."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, TypedDict, TypeVar, cast

from gpuvet.backends.base import ModuleLost
from gpuvet.backends.readings import ModuleIdentity, Sample
from gpuvet.errors import GpuvetError
from gpuvet.node.model import EndpointKind, Node

if TYPE_CHECKING:
    from gpuvet.backends.base import Backend

D = TypeVar("D")


class SlowSampleFields(TypedDict):
    """SlowFields as ``Sample``'s keyword arguments (typed, so a misspelt key fails the type check)."""

    ecc_corrected: int | None
    ecc_uncorrected: int | None
    pcie_gen: int | None
    pcie_gen_max: int | None
    pcie_width: int | None
    pcie_width_max: int | None
    nvlink_up: int | None
    nvlink_expected: int | None
    nvlink_errors: int | None
    pcie_replays: int | None


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

    def sample_fields(self) -> SlowSampleFields:
        """As ``Sample``'s keyword arguments."""
        return cast(SlowSampleFields, asdict(self))  # the same keys (tests/jobs/test_watch.py)


def designed_fabric_links(node: Node, bonded: bool = True) -> dict[str, int]:
    """How many fabric links each module should have up, from the design rather than from the
    first reading, so a link already down when `watch` starts is counted down.

    ``bonded`` (NVML's unit, links inside each bond): a module on a fabric switch should have the
    catalog's count (H100/H200 SXM: 18) however many are up; a bond to a peer module counts at the
    width found (the catalog gives no per-pair design; a DGX-1V mixes NV1 and NV2 pairs). The
    total never exceeds the catalog's count, so a link whose far end NVML could not name (taken
    for a switch) does not double it. Otherwise one per peer (amdsmi's unit), down links included
    where the backend places them from the design (AMD's hive mesh). Empty where the source
    cannot see the fabric; a module with none is left out."""
    if not node.fabric_known:
        return {}
    out = {}
    for m in node.module_ids:
        links = [lk for lk in node.links_of(m) if lk.kind.is_fabric]
        catalog = node.module(m).model.fabric_links
        if not bonded:
            n = len(links)
        else:
            to_switch = [lk for lk in links if node.kind_of(lk.other(m)) is EndpointKind.FABRIC_SWITCH]
            n = sum(lk.width for lk in links if lk not in to_switch)
            if to_switch:
                n += max(sum(lk.width for lk in to_switch), catalog or 0)
            n = min(n, catalog) if catalog else n
        if n:
            out[m] = n
    return out


def designed_fabric_links_of(backend: Backend, bonded: bool = True) -> dict[str, int]:
    """``designed_fabric_links`` of the backend's node; empty when the node cannot be read now (a
    module lost at start): each module's count at its first reading stands in, and watch still
    starts on a node with a fallen-off module."""
    try:
        node = backend.node()
    except GpuvetError:
        return {}
    return designed_fabric_links(node, bonded)


def sample_each(devices: Iterable[D], read: Callable[[D], Sample]) -> list[Sample]:
    """One sample per module that answers: a module gone mid-read is left out (absence is the
    signal; watch turns it into module_lost), the rest are still read."""
    out = []
    for d in devices:
        try:
            out.append(read(d))
        except ModuleLost:
            continue
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
