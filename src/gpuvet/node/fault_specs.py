"""The faults a spec may inject into a simulated node (``faults:``), one model per kind; the
discriminated union FaultSpec is what a spec's list holds. Kept apart from node/spec.py so
the node's shape and its failures are read (and grown) separately."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpuvet.node.timeunits import parse_duration


class Strict(BaseModel):
    """Every spec model: unknown keys, changes after parsing and nan / inf are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class _FaultBase(Strict):
    at: str | float | None = None  # simulated time it appears ("12h", seconds); None: from the start

    @field_validator("at")
    @classmethod
    def _duration(cls, value: str | float | None) -> str | float | None:
        parse_duration(value, "at")  # raises ValueError with a readable message
        return value

    @property
    def at_s(self) -> float:
        return parse_duration(self.at)


class MissingModuleFault(_FaultBase):
    kind: Literal["missing_module"]
    module: str


class LinkDownFault(_FaultBase):
    kind: Literal["link_down"]
    between: tuple[str, str]


class LinkDegradedFault(_FaultBase):
    kind: Literal["link_degraded"]
    between: tuple[str, str]
    factor: float = Field(gt=0, lt=1)


class WiringSwapFault(_FaultBase):
    kind: Literal["wiring_swap"]
    modules: tuple[str, str]


class MemClockFlappingFault(_FaultBase):
    """The memory clock drops and recovers while the module works: lower, jittery membw."""

    kind: Literal["mem_clock_flapping"]
    module: str


class PowerCapLowFault(_FaultBase):
    """The module's power limit is set below its rating: compute-bound work throttles."""

    kind: Literal["power_cap_low"]
    module: str
    watts: float = Field(gt=0, le=100_000)


class P2pDisabledFault(_FaultBase):
    """Peer-to-peer between modules is off (ACS, IOMMU, driver): module traffic goes through
    host memory."""

    kind: Literal["p2p_disabled"]


class ThermalCreepFault(_FaultBase):
    """The thermal interface ages: thermal resistance grows by ``c_per_watt_per_day`` °C/W per
    simulated day from ``start`` — the same load runs hotter every day."""

    kind: Literal["thermal_creep"]
    module: str
    c_per_watt_per_day: float = Field(default=0.002, gt=0, le=10)
    start: str | float = 0.0

    @property
    def start_s(self) -> float:
        return parse_duration(self.start)


class ModuleLostFault(_FaultBase):
    """The module stops answering at ``at`` (fell off the bus): no telemetry, gone from NVML."""

    kind: Literal["module_lost"]
    module: str


class ModuleAddedFault(_FaultBase):
    """The module is absent until ``at``, then appears (hot-plug, or a replacement)."""

    kind: Literal["module_added"]
    module: str


class EccRisingFault(_FaultBase):
    """Correctable ECC errors start rising at ``at`` (``per_hour`` at first, growing)."""

    kind: Literal["ecc_rising"]
    module: str
    per_hour: float = Field(default=30.0, gt=0, le=1e9)


class XidFault(_FaultBase):
    """The driver reports Xid ``code`` for the module at ``at`` (79: fallen off the bus)."""

    kind: Literal["xid"]
    module: str
    code: int = Field(default=79, gt=0, le=100_000)


class SilentCorruptionFault(_FaultBase):
    """The module computes wrong bits without raising an error (a failing SM, bad HBM)."""

    kind: Literal["silent_corruption"]
    module: str


class NicPortDownFault(_FaultBase):
    """A NIC's port is down (cable, transceiver, switch port, no subnet manager)."""

    kind: Literal["nic_port_down"]
    nic: str


class NicRateLowFault(_FaultBase):
    """A NIC's port trained below its design rate (a bad cable: 200 Gb/s on a 400 Gb/s card)."""

    kind: Literal["nic_rate_low"]
    nic: str
    gbps: float = Field(gt=0, le=10_000)


class NicErrorsFault(_FaultBase):
    """A NIC port's error counter rises from ``at`` at ``per_hour`` (a marginal cable or
    transceiver: symbol errors, link error recoveries, the link going down and back)."""

    kind: Literal["nic_errors"]
    nic: str
    counter: Literal["symbol_error", "link_downed", "port_rcv_errors", "excessive_buffer_overrun_errors",
                     "link_error_recovery", "local_link_integrity_errors"] = "symbol_error"
    per_hour: float = Field(default=60.0, gt=0, le=1e9)


class PeerMemoryMissingFault(_FaultBase):
    """GPUDirect RDMA's peer-memory module (nvidia_peermem) is not loaded."""

    kind: Literal["peer_memory_missing"]


class FabricRegistrationFault(_FaultBase):
    """A module of a switched NVLink domain is not registered with the fabric manager (its state
    stuck before completed) or the fabric reports it unhealthy: it cannot run the domain's
    collectives."""

    kind: Literal["fabric_registration"]
    module: str
    state: Literal["not_started", "in_progress", "unhealthy"] = "in_progress"


FaultSpec = Annotated[
    MissingModuleFault | LinkDownFault | LinkDegradedFault | WiringSwapFault | MemClockFlappingFault
    | PowerCapLowFault | P2pDisabledFault | SilentCorruptionFault | ThermalCreepFault | ModuleLostFault
    | ModuleAddedFault | EccRisingFault | XidFault | NicPortDownFault | NicRateLowFault | PeerMemoryMissingFault
    | FabricRegistrationFault | NicErrorsFault,
    Field(discriminator="kind"),
]
