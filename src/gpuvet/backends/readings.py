"""Typed readings every backend returns. Units are in field names; a value a backend cannot
read is an explicit ``Unavailable`` with the reason, never 0 or NaN."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntFlag
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Unavailable:
    """A reading that could not be taken, and why ("not supported", "driver too old")."""

    reason: str

    def __bool__(self) -> bool:  # so `if reading:` never mistakes it for a value
        return False


class ThrottleReason(IntFlag):
    """Why a module's clocks are held down, in gpuvet's own words. The values are the bits NVML
    and DCGM give the same reasons, so the integer a sample stores keeps one meaning in the
    logbook, in replayed captures and in exported metrics; only backends/nvidia/ reads NVML's."""

    APPLICATIONS_CLOCKS_SETTING = 0x2
    SW_POWER_CAP = 0x4
    HW_SLOWDOWN = 0x8
    SYNC_BOOST = 0x10
    SW_THERMAL_SLOWDOWN = 0x20
    HW_THERMAL_SLOWDOWN = 0x40
    HW_POWER_BRAKE_SLOWDOWN = 0x80
    DISPLAY_CLOCK_SETTING = 0x100

    @property
    def label(self) -> str:
        """'sw_thermal_slowdown': the name in events, JSON and metrics."""
        return (self.name or "").lower()

    @property
    def words(self) -> str:
        """'software thermal slowdown': the reason as a person reads it in a message."""
        return self.label.replace("sw_", "software ").replace("hw_", "hardware ").replace("_", " ")


THERMAL_SLOWDOWN = ThrottleReason.SW_THERMAL_SLOWDOWN | ThrottleReason.HW_THERMAL_SLOWDOWN
HW_SLOWDOWNS = ThrottleReason.HW_SLOWDOWN | THERMAL_SLOWDOWN | ThrottleReason.HW_POWER_BRAKE_SLOWDOWN


def throttle_reasons(mask: int) -> tuple[ThrottleReason, ...]:
    """The named reasons set in ``mask``, in a fixed order (bits gpuvet does not name are left out)."""
    return tuple(r for r in ThrottleReason if mask & r)


def throttle_labels(mask: int) -> tuple[str, ...]:
    return tuple(r.label for r in throttle_reasons(mask))


def value_or_none(reading: object) -> object:
    return None if isinstance(reading, Unavailable) else reading


@dataclass(frozen=True)
class ModuleInfo:
    id: str
    model: str
    in_catalog: bool
    uuid: str | Unavailable
    bus_id: str | Unavailable
    memory_bytes: int | Unavailable
    pcie_gen_current: int | Unavailable
    pcie_gen_max: int | Unavailable
    pcie_width_current: int | Unavailable
    pcie_width_max: int | Unavailable
    power_limit_w: float | Unavailable
    power_limit_default_w: float | Unavailable
    power_limit_max_w: float | Unavailable
    ecc_enabled: bool | Unavailable
    sm_clock_mhz: int | Unavailable
    mem_clock_mhz: int | Unavailable
    sm_clock_max_mhz: int | Unavailable
    mem_clock_max_mhz: int | Unavailable
    numa_node: int | Unavailable
    persistence_mode: bool | Unavailable = Unavailable("not read")
    clocks_locked: bool | Unavailable = Unavailable("not read")  # application clocks moved off their default
    processes: tuple[int, ...] | Unavailable = Unavailable("not read")  # pids of compute processes on it
    serial: str | Unavailable = Unavailable("not read")  # the board serial, where the backend reads it
    vbios_version: str | Unavailable = Unavailable("not read")  # what an RMA form asks beside the serial
    inforom_version: str | Unavailable = Unavailable("not read")  # the InfoROM image version
    gsp_firmware: str | Unavailable = Unavailable("not read")  # the GSP firmware version, where it runs one
    cpu_affinity: str | Unavailable = Unavailable("not read")  # the CPUs near it, as topo -m prints them ('0-27')
    gpu_numa_id: int | Unavailable = Unavailable("not read")  # its own NUMA node (topo -m's GPU NUMA ID; N/A: none)
    mig_mode: bool | Unavailable = Unavailable("not read")  # MIG mode on now (True: Enabled); n/a: not shown
    mig_mode_pending: bool | Unavailable = Unavailable("not read")  # the mode the next reset brings
    compute_capability: str | Unavailable = Unavailable("not read")  # CUDA's major.minor (deviceQuery, compute_cap)


@dataclass(frozen=True)
class HostInfo:
    hostname: str | None  # None: no capture names the host (the inventory view says so; --json null)
    cpu_model: str | Unavailable
    sockets: int | Unavailable
    cores_physical: int | Unavailable
    threads_logical: int | Unavailable
    numa_nodes: int | Unavailable
    memory_bytes: int | Unavailable
    os: str
    kernel: str
    python: str
    hosts: tuple[str, ...] = ()  # every host a capture names (a multi-node log's), in order; () where none or live

    @property
    def node_name(self) -> str:
        """The name a Node built from this host takes (a live host always has its hostname)."""
        return self.hostname if self.hostname is not None else "unnamed host"


@dataclass(frozen=True)
class SoftwareInfo:
    gpuvet_version: str
    driver_version: str | Unavailable
    cuda_driver_version: str | Unavailable
    nvml_version: str | Unavailable
    cuda_runtime_version: str | Unavailable = Unavailable("not read")  # a CUDA program's own (deviceQuery's)


@dataclass(frozen=True)
class Inventory:
    """Everything a backend found: modules, host, software, and notes a person should read."""

    backend: str
    simulated: bool
    modules: tuple[ModuleInfo, ...]
    host: HostInfo
    software: SoftwareInfo
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class TelemetrySummary:
    """What one module did while a benchmark ran: so a low or jittery figure has its reason
    beside it. None where the backend cannot read that sensor."""

    samples: int
    # core clock: the SM clock on a GPU, the core frequency on a CPU
    core_clock_mhz_median: float | None = None
    core_clock_mhz_min: float | None = None
    core_clock_mhz_max: float | None = None
    mem_clock_mhz_median: float | None = None
    mem_clock_mhz_min: float | None = None
    mem_clock_mhz_max: float | None = None
    power_w_median: float | None = None
    power_w_max: float | None = None
    power_limit_w: float | None = None
    temp_c_max: float | None = None
    throttle_reasons: tuple[str, ...] = ()  # every reason seen in any sample
    simulated: bool = False


@dataclass(frozen=True, slots=True)
class Sample:
    """One module's telemetry at time ``t`` (seconds since the watch began; simulated seconds on
    a simulated node). Fast fields every interval; slow fields (ECC, PCIe, NVLink) only on slow
    ticks, None otherwise. None: not readable, never a fake 0."""

    t: float
    module: str
    uuid: str
    temp_c: float | None
    power_w: float | None
    sm_clock_mhz: float | None
    mem_clock_mhz: float | None
    util: float | None  # 0..1
    throttle: int = 0  # ThrottleReason bits (see ``reasons``)
    ambient_c: float | None = None  # inlet/coolant, where a source has it
    ecc_corrected: int | None = None  # volatile counters, cumulative
    ecc_uncorrected: int | None = None
    pcie_gen: int | None = None
    pcie_gen_max: int | None = None
    pcie_width: int | None = None
    pcie_width_max: int | None = None
    nvlink_up: int | None = None  # active links
    nvlink_expected: int | None = None
    nvlink_errors: int | None = None  # CRC/replay counters, cumulative
    xids: tuple[int, ...] = ()
    fb_used_bytes: int | None = None  # device memory in use / free, fast ticks
    fb_free_bytes: int | None = None
    energy_mj: int | None = None  # energy counter since the driver loaded (millijoules), fast ticks
    pcie_replays: int | None = None  # the PCIe link's replay counter, cumulative, slow ticks
    nvlink_down: int | None = None  # fabric links inactive (of nvlink_expected); None: not told apart from slowed

    @property
    def reasons(self) -> tuple[ThrottleReason, ...]:
        """Why the clocks were held down at ``t`` (none: running free)."""
        return throttle_reasons(self.throttle)


@dataclass(frozen=True)
class ModuleIdentity:
    id: str
    uuid: str
    bus_id: str | None
    model: str


@dataclass(frozen=True)
class XidRecord:
    """One Xid the driver logged since boot. ``seq`` orders records within a boot (the kernel
    log's sequence number), so a later check can ask for those after the last one it saw."""

    seq: int
    bus_id: str
    module: str | None  # the module at that bus id, None when no found module matches
    code: int
    text: str


@dataclass(frozen=True)
class ModuleHealth:
    """What a pre/post-job health check reads for one module, in one pass and without load."""

    id: str
    ecc_uncorrected_volatile: int | Unavailable
    ecc_uncorrected_aggregate: int | Unavailable
    remap_pending: bool | Unavailable  # a row remap waits for a module reset
    remap_failed: bool | Unavailable  # the module ran out of spare rows
    clock_event_mask: int | Unavailable  # ThrottleReason bits now
    fabric: FabricState | Unavailable = Unavailable("not read")  # its place in a switched NVLink domain


@dataclass(frozen=True)
class FabricState:
    """A module's registration with the NVLink domain's fabric manager (NVML's GPU fabric info,
    nvidia-smi -q's Fabric section): until ``completed`` with status success it cannot use the domain."""

    state: str  # not_supported (no fabric manager on this board), not_started, in_progress, completed
    status: str | None = None  # "success", or the error the fabric manager gave
    health: str | None = None  # healthy / unhealthy / limited capacity, where the source says
    clique_id: int | None = None


@dataclass(frozen=True)
class KernelLine:
    """One driver (NVRM) line of the kernel log, as logged, with its sequence number (as an Xid's)."""

    seq: int
    text: str


NO_KERNEL_LINES = Unavailable("the driver's kernel messages are not supported by this backend")


@dataclass(frozen=True)
class HealthReadings:
    """Per-module health readings, the Xids since boot, and the boot they belong to; the driver's
    other kernel lines since boot, for the messages of modules that did not come up."""

    modules: tuple[ModuleHealth, ...]
    xids: tuple[XidRecord, ...] | Unavailable
    boot_id: str
    kernel_lines: tuple[KernelLine, ...] | Unavailable = NO_KERNEL_LINES


Column = list[float | None]
Counts = list[int | None]


@dataclass
class ModuleColumns:
    """One module's samples of a block, column by column: what a source that samples runs of ticks
    at once hands the detectors (``checks.blocks.ModuleBlock`` adds how they read it). A column not
    read in the whole block is None (a detector of it skips the block at once); slow fields are
    None on fast ticks."""

    module: str
    uuid: str
    t: list[float]
    rows: list[int]  # each sample's position in its node's stream
    temp: Column
    power: Column
    sm: Column
    mem: Column
    util: Column
    throttle: list[int]
    ambient: Column | None = None
    ecc_corrected: Counts | None = None
    ecc_uncorrected: Counts | None = None
    pcie: tuple[Counts, Counts, Counts, Counts] | None = None  # gen, gen max, width, width max
    pcie_replays: Counts | None = None
    nvlink: tuple[Counts, Counts, Counts] | None = None  # up, expected, errors
    xids: list[tuple[int, ...]] | None = None
    nvlink_down: Counts | None = None  # fabric links inactive, where the source tells them from slowed ones
    arrays: dict[str, FloatArray] = field(default_factory=dict, repr=False)  # float columns as arrays
