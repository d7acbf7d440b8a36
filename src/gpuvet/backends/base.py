"""The interface every backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from gpuvet.backends.readings import HealthReadings, Inventory, Unavailable
from gpuvet.errors import BackendError
from gpuvet.node.model import Node

if TYPE_CHECKING:  # (the spec's pydantic models: imported by the backends built from a spec, not a capture's)
    from gpuvet.backends.engine import BenchEngine
    from gpuvet.backends.host_load import HostLoad, HostPlacement
    from gpuvet.backends.nic_readings import NicReadings
    from gpuvet.backends.power_control import PowerControl
    from gpuvet.backends.telemetry import TelemetrySource
    from gpuvet.node.spec import NodeSpec


class ModuleLost(BackendError):
    """A module stopped answering while being read (fallen off the bus, XID 79)."""


class Backend(ABC):
    """A source of readings: ``inventory()`` lists what is there, ``node()`` how it is linked."""

    name: str = "base"
    simulated: bool = False
    captured: bool = False  # readings come from files taken on another machine, not from this one
    why_no_modules: str | None = None  # set when the backend found no module, saying why
    declared: Node | None = None  # the node as designed, where the backend knows it (a simulated node's spec)
    spec: NodeSpec | None = None  # the spec it was built from (faults included), where there is one

    @abstractmethod
    def inventory(self) -> Inventory:
        """Modules, host and software as found now."""

    @abstractmethod
    def node(self) -> Node:
        """The detected node: modules, endpoints, links."""

    def engine(self) -> BenchEngine:
        """What runs benchmarks on this backend's modules."""
        raise BackendError(f"the {self.name} backend cannot run benchmarks",
                           fix="run on the machine itself, or on a simulated node with --node PRESET.")

    def telemetry(self) -> TelemetrySource:
        """What `watch` samples."""
        raise BackendError(f"the {self.name} backend has no live telemetry",
                           fix="watch the machine itself, or a simulated node with --node PRESET.")

    def power_control(self, engine: BenchEngine) -> PowerControl:
        """Reading and (with --apply) setting power limits."""
        raise BackendError(f"the {self.name} backend has no power limits to sweep",
                           fix="run on an NVIDIA machine, or on a simulated node with --node PRESET.")

    def notes(self) -> tuple[str, ...]:
        """What a reader of this backend's node should know (what a capture left out or skipped)."""
        return ()

    def health(self) -> HealthReadings:
        """ECC, row remapping, throttle reasons now, and the Xids since boot (for `health`)."""
        raise BackendError(f"the {self.name} backend cannot read module health",
                           fix="run on the machine itself, or on a simulated node with --node PRESET.")

    def host_load(self) -> HostLoad | Unavailable:
        """What other processes use of this process's CPUs now (a busy host explains slow CPU figures)."""
        if not self.local_host:
            return Unavailable(self._host_unmeasured)
        from gpuvet.backends.host_load import read_host_load

        return read_host_load()

    def host_placement(self) -> HostPlacement | Unavailable:
        """The host's CPU use and the NUMA nodes this process runs on, to set beside the modules'."""
        if not self.local_host:
            return Unavailable(self._host_unmeasured)
        from gpuvet.backends.host_load import read_host_placement

        return read_host_placement()

    def nics(self) -> NicReadings | Unavailable | None:
        """The node's RDMA NICs (InfiniBand HCAs, RoCE NICs) and its peer-memory module; None where
        this backend has none to read (a capture that holds no NIC listing)."""
        if not self.local_host:
            return None
        from gpuvet.backends.nic_sysfs import read_nics

        return read_nics()

    def listed_nics(self) -> NicReadings | Unavailable | None:
        """Every NIC the source names, for inventory: nics() here; a capture adds those only a topology names."""
        return self.nics()

    def nics_at(self, t: float) -> NicReadings | Unavailable | None:
        """The NICs as read at the source's time ``t`` (watch's slow ticks): now, on a real node."""
        return self.nics()

    @property
    def local_host(self) -> bool:
        """Whether the modules sit in the machine this process runs on (not simulated, not captured)."""
        return not self.simulated and not self.captured

    @property
    def _host_unmeasured(self) -> str:
        if self.captured:
            return "can't tell (captured node): its CPU load and NUMA placement were not captured"
        return "the host is not measured (simulated node)"

    def close(self) -> None:
        """Release whatever the backend holds (library handles)."""
