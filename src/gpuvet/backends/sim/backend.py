"""A simulated node built from a spec, its faults applied.

Time is a ``SimClock`` the caller owns, so later telemetry can run faster than real time and
tests drive it by hand. Everything this backend returns is labelled simulated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from gpuvet import __version__, knowledge
from gpuvet.backends.base import Backend
from gpuvet.backends.engine import BenchEngine
from gpuvet.backends.readings import (
    HealthReadings,
    HostInfo,
    Inventory,
    ModuleHealth,
    ModuleInfo,
    SoftwareInfo,
    Unavailable,
    XidRecord,
)
from gpuvet.node.build import build_node
from gpuvet.node.catalog import find_model
from gpuvet.node.faults import apply_faults, check_faults
from gpuvet.node.model import Module, Node
from gpuvet.node.spec import NodeSpec, PowerCapLowFault, XidFault, load_spec

if TYPE_CHECKING:
    from gpuvet.backends.nic_readings import NicReadings
    from gpuvet.backends.power_control import SimPowerControl
    from gpuvet.backends.sim.engine import SimEngine
    from gpuvet.backends.sim.physics import SimPhysics
    from gpuvet.backends.sim.telemetry import SimTelemetrySource

_NOT_MODELLED = Unavailable("not modelled by the simulated node")


@dataclass
class SimClock:
    """Simulated seconds since the start; advanced only by whoever drives the simulation."""

    now_s: float = 0.0

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("simulated time cannot run backwards")
        self.now_s += seconds
        return self.now_s


_NO_FABRIC = Unavailable("not supported: no switched NVLink domain on this node")


@dataclass
class SimBackend(Backend):
    spec: NodeSpec
    where: str = "spec"
    clock: SimClock = field(default_factory=SimClock)
    seed: int = 0  # of the simulated noise: same seed, same figures

    name = "sim"
    simulated = True

    def __post_init__(self) -> None:
        self.declared: Node = build_node(self.spec, self.where)
        check_faults(self.declared, self.spec.faults, self.where)
        self._found = apply_faults(self.declared, self.spec.faults, off_bus=knowledge.off_bus_xids())

    @cached_property
    def physics(self) -> SimPhysics:
        """One thermal/power model for the engine and the telemetry, built when first asked for
        (``topo`` and ``inventory`` never ask: they need no numpy random streams)."""
        from gpuvet.backends.sim.physics import SimPhysics

        return SimPhysics(self.declared, self.spec.faults, self.seed)

    @classmethod
    def from_ref(cls, ref: str, clock: SimClock | None = None) -> SimBackend:
        """From a preset name or spec path. Raises SpecError/CatalogError on bad input."""
        spec, where = load_spec(ref)
        return cls(spec, where, clock or SimClock())

    def node(self) -> Node:
        return self._found

    def advance_to(self, t: float) -> None:
        """Move the simulated node to time ``t``: faults with ``at <= t`` now apply."""
        if t < self.clock.now_s:
            raise ValueError("simulated time cannot run backwards")
        self.clock.now_s = t
        self._found = apply_faults(self.declared, self.spec.faults, t, knowledge.off_bus_xids())

    def telemetry(self) -> SimTelemetrySource:
        from gpuvet.backends.sim.telemetry import SimTelemetrySource

        return SimTelemetrySource(self)

    def power_control(self, engine: BenchEngine) -> SimPowerControl:
        from gpuvet.backends.power_control import SimPowerControl
        from gpuvet.backends.sim.engine import SimEngine

        if not isinstance(engine, SimEngine):
            raise TypeError("a simulated node's power limits belong to its simulated engine")
        return SimPowerControl(engine)

    def engine(self) -> SimEngine:
        from gpuvet.backends.sim.engine import SimEngine

        return SimEngine(self._found, self.spec.faults, self.clock.advance, seed=self.seed, physics=self.physics,
                         now=lambda: self.clock.now_s)

    def health(self) -> HealthReadings:
        """The node now: throttle reasons from its thermal model, the Xid faults that have fired
        (as the driver would have logged them), no ECC or row-remap faults (none are modelled)."""
        from gpuvet.backends.sim.nics import simulated_fabric
        from gpuvet.backends.sim.telemetry import SimTelemetry

        now = self.clock.now_s
        telemetry = SimTelemetry(self.declared, list(self.spec.faults), seed=self.seed, node_name=self.spec.name,
                                 physics=self.physics)
        masks = {s.module: s.throttle for s in telemetry.sample(now, slow=False)}
        fabric = simulated_fabric(self.declared, self.spec.faults, now)
        modules = tuple(ModuleHealth(m.id, 0, 0, False, False, masks.get(m.id, 0), fabric.get(m.id, _NO_FABRIC))
                        for m in self._found.modules)
        buses = {m.id: m.bus_id or f"sim:{m.id}" for m in self.declared.modules}
        xids = tuple(XidRecord(i, buses[f.module], f.module, f.code,
                               f"NVRM: Xid (PCI:{buses[f.module]}): {f.code}, simulated")
                     for i, f in enumerate(self.spec.faults) if isinstance(f, XidFault) and f.at_s <= now)
        return HealthReadings(modules, xids, f"sim:{self.spec.name}")

    def nics(self) -> NicReadings:
        """The spec's NICs as sysfs would list them (mlx5_0, … in order), every port up at its model's
        rate until a fault (nic_port_down, nic_rate_low, peer_memory_missing) says otherwise."""
        from gpuvet.backends.sim.nics import simulated_nics

        return simulated_nics(self.declared, self.spec.faults, self.clock.now_s)

    def nics_at(self, t: float) -> NicReadings:
        """The NICs at simulated time ``t`` (watch samples the node's clock, not the backend's)."""
        from gpuvet.backends.sim.nics import simulated_nics

        return simulated_nics(self.declared, self.spec.faults, t)

    def _module_info(self, module: Module) -> ModuleInfo:
        model = module.model
        link = self._found.pcie_link(module.id)
        gen = link.gen if link and link.gen else _NOT_MODELLED
        width = link.width if link else _NOT_MODELLED
        tdp = model.tdp_w if model.tdp_w is not None else _NOT_MODELLED
        cap = next((f.watts for f in self.spec.faults if isinstance(f, PowerCapLowFault) and f.module == module.id),
                   None)
        return ModuleInfo(
            id=module.id, model=model.name, in_catalog=find_model(model.name) is not None,
            uuid=module.uuid or f"GPU-sim-{self.spec.name}-{module.id}",
            bus_id=module.bus_id or _NOT_MODELLED,
            memory_bytes=model.memory_bytes if model.memory_bytes is not None else _NOT_MODELLED,
            pcie_gen_current=gen, pcie_gen_max=model.pcie_gen or _NOT_MODELLED,
            pcie_width_current=width, pcie_width_max=model.pcie_width or _NOT_MODELLED,
            power_limit_w=cap if cap is not None else tdp, power_limit_default_w=tdp, power_limit_max_w=tdp,
            ecc_enabled=True, sm_clock_mhz=_NOT_MODELLED, mem_clock_mhz=_NOT_MODELLED,
            sm_clock_max_mhz=_NOT_MODELLED, mem_clock_max_mhz=_NOT_MODELLED,
            numa_node=_NOT_MODELLED, persistence_mode=True, clocks_locked=False, processes=(),
            serial=module.serial or Unavailable("no serial in the spec"),
        )

    def inventory(self) -> Inventory:
        host = self.declared.host
        info = HostInfo(
            hostname=self.spec.name, cpu_model=host.cpu_model or _NOT_MODELLED,
            sockets=host.sockets, cores_physical=(host.cores_per_socket or 0) * host.sockets or _NOT_MODELLED,
            threads_logical=_NOT_MODELLED, numa_nodes=host.sockets,
            memory_bytes=host.memory_bytes or _NOT_MODELLED, os="simulated", kernel="simulated",
            python="simulated",
        )
        software = SoftwareInfo(__version__, "simulated", "simulated", "simulated")
        faults = ", ".join(f.kind for f in self.spec.faults)
        notes = [f"Simulated node {self.spec.name!r} from {self.where}."]
        if faults:
            notes.append(f"Injected faults: {faults}.")
        modules = tuple(self._module_info(m) for m in self._found.modules)
        return Inventory(self.name, True, modules, info, software, tuple(notes))
