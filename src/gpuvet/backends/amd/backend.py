"""AMD Instinct modules through AMD SMI: identity, memory, PCIe, xGMI, NUMA, settings, health.

The same typed readings as the NVIDIA backend, so inventory, topo, validate and health judge
an AMD node with the same checks. Modules are named gpu0… in PCI bus-id order (never amdsmi's
handle order). What amdsmi cannot tell (the PCIe switches between modules, Xids, a lifetime
ECC count) is an ``Unavailable`` or an unseen relation, never a guess; docs/vendors.md lists it.
Health reads the amdgpu driver's lines of the kernel log (resets, ring timeouts, RAS errors), as
the NVIDIA backend reads its driver's, so ``kernel_messages`` judges them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuvet import __version__
from gpuvet.backends.amd.gateway import (
    GPU_BLOCK_UMC,
    IOLINK_XGMI,
    PAGE_PENDING,
    PAGE_UNRESERVABLE,
    AmdHandle,
    Amdsmi,
    ProcessorQuery,
    pick,
    pick_int,
)
from gpuvet.backends.base import Backend
from gpuvet.backends.host import read_host_info
from gpuvet.backends.live import host_of, inventory_of, own_pcie_link
from gpuvet.backends.readings import (
    HealthReadings,
    Inventory,
    ModuleHealth,
    ModuleInfo,
    SoftwareInfo,
    ThrottleReason,
    Unavailable,
)
from gpuvet.errors import BackendError
from gpuvet.node.bus import bus_key
from gpuvet.node.catalog import ModuleModel, find_model, unknown_model
from gpuvet.node.infer import infer_pcie_tree
from gpuvet.node.model import Link, LinkKind, Module, Node

if TYPE_CHECKING:
    from gpuvet.backends.engine import BenchEngine
    from gpuvet.backends.telemetry import TelemetrySource

# PCIe transfer rate (MT/s, as amdsmi's pcie_speed / max_pcie_speed give it) -> generation
PCIE_GEN_OF_MTS = {2500: 1, 5000: 2, 8000: 3, 16000: 4, 32000: 5, 64000: 6}

# amdsmi_get_violation_status "active_*" flags -> gpuvet's throttle reasons (the bits NVML gives
# the same reasons). PPT is the package power limit (a software cap); socket thermal is the
# firmware's temperature limit; PROCHOT is the hardware thermal signal; HBM thermal is the memory's
# temperature limit (NVML counts memory over-temperature as software thermal slowdown); VR
# thermal is the voltage regulator's (a hardware slowdown).
VIOLATION_REASONS = {
    "active_ppt_pwr": ThrottleReason.SW_POWER_CAP,
    "active_socket_thrm": ThrottleReason.SW_THERMAL_SLOWDOWN,
    "active_hbm_thrm": ThrottleReason.SW_THERMAL_SLOWDOWN,
    "active_prochot_thrm": ThrottleReason.HW_THERMAL_SLOWDOWN,
    "active_vr_thrm": ThrottleReason.HW_SLOWDOWN,
}
_NOT_NVIDIA = "not supported on AMD modules"


def bus_id(bdf: str) -> str:
    """amdsmi gives 0000:0c:00.0; gpuvet keeps bus ids in one spelling (node.bus: 0000:0C:00.0)."""
    return bus_key(bdf)


@dataclass
class AmdDevice:
    handle: AmdHandle
    bus_id: str
    uuid: str
    name: str
    serial: str | None
    id: str = ""


class AmdBackend(Backend):
    name = "amd"
    simulated = False

    def __init__(self, smi: Amdsmi | None = None, kernel_log: Path | None = None) -> None:
        self.smi = smi or Amdsmi()
        self.kernel_log = kernel_log  # where the amdgpu lines are read (default /dev/kmsg); tests give a file
        self.smi.init()
        self._devices = self._enumerate()

    def _enumerate(self) -> list[AmdDevice]:
        handles = self.smi.query("amdsmi_get_processor_handles")
        devices = []
        for index, handle in enumerate(handles if isinstance(handles, list) else []):
            bdf = self.smi.query("amdsmi_get_gpu_device_bdf", handle)
            uuid = self.smi.query("amdsmi_get_gpu_device_uuid", handle)
            asic = self.smi.query("amdsmi_get_gpu_asic_info", handle)
            name, serial = pick(asic, "market_name"), pick(asic, "asic_serial")
            devices.append(AmdDevice(handle, bus_id(bdf) if isinstance(bdf, str) else f"index{index}",
                                   uuid if isinstance(uuid, str) else "",
                                   name.strip() if isinstance(name, str) else "unknown",
                                   serial if isinstance(serial, str) else None))
        devices.sort(key=lambda d: d.bus_id)
        for i, d in enumerate(devices):
            d.id = f"gpu{i}"
        return devices

    def count(self) -> int:
        return len(self._devices)

    def close(self) -> None:
        self.smi.shutdown()

    def telemetry(self) -> TelemetrySource:
        from gpuvet.backends.amd.telemetry import AmdTelemetry

        return AmdTelemetry(self)

    def _model(self, d: AmdDevice) -> ModuleModel:
        found = find_model(d.name)
        if found is not None:
            return found
        mib = pick_int(self.smi.query("amdsmi_get_gpu_vram_info", d.handle, module=d.id), "vram_size")
        return unknown_model(d.name, None if isinstance(mib, Unavailable) else mib * 2**20)

    def engine(self) -> BenchEngine:
        """Benchmarks through a ROCm build of PyTorch (HIP answers torch.cuda), modules matched to
        its devices by PCI bus id."""
        from gpuvet.backends.engine import BenchModule
        from gpuvet.backends.torch.engine import TorchEngine, import_torch

        torch = import_torch()
        hip = getattr(torch.version, "hip", None)
        if not hip or not torch.cuda.is_available():
            build = f"ROCm {hip}" if hip else "not a ROCm build"
            raise BackendError("benchmarks on AMD modules need a ROCm build of PyTorch that sees them",
                               where=f"torch {torch.__version__} ({build})",
                               fix="install PyTorch for ROCm (pip install torch --index-url "
                                   "https://download.pytorch.org/whl/rocm6.4), or try --node mi300x-8.")
        by_bus = {d.bus_id: d for d in self._devices}
        devices: dict[str, str] = {}
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            bus = bus_id(f"{getattr(props, 'pci_domain_id', 0):04X}:{getattr(props, 'pci_bus_id', 0):02X}:"
                         f"{getattr(props, 'pci_device_id', 0):02X}.0")
            if bus in by_bus:
                devices[by_bus[bus].id] = f"cuda:{index}"
        modules = [BenchModule(d.id, self._model(d), free_memory_bytes=torch.cuda.mem_get_info(devices[d.id])[0])
                   for d in self._devices if d.id in devices]
        driver = self._software().driver_version
        return TorchEngine(modules, devices, driver_version=driver if isinstance(driver, str) else None)

    # --- inventory -------------------------------------------------------------------------
    def _module_info(self, d: AmdDevice) -> ModuleInfo:
        q = ProcessorQuery(self.smi, d.handle, d.id)
        vram = pick_int(q("amdsmi_get_gpu_vram_info"), "vram_size")  # MiB (the docs say "MB")
        pcie = q("amdsmi_get_pcie_info")
        caps = q("amdsmi_get_power_cap_info")  # microwatts
        gfx = q("amdsmi_get_clock_info", self.smi.enum("AmdSmiClkType", "GFX"))
        mem = q("amdsmi_get_clock_info", self.smi.enum("AmdSmiClkType", "MEM"))
        numa = q("amdsmi_topo_get_numa_node_number")
        return ModuleInfo(
            id=d.id, model=d.name, in_catalog=find_model(d.name) is not None, uuid=d.uuid or Unavailable("no UUID"),
            bus_id=d.bus_id, memory_bytes=vram if isinstance(vram, Unavailable) else vram * 2**20,
            pcie_gen_current=pcie_gen(pick_int(pcie, "pcie_metric", "pcie_speed")),
            pcie_gen_max=pcie_gen_max(pcie),
            pcie_width_current=pick_int(pcie, "pcie_metric", "pcie_width"),
            pcie_width_max=pick_int(pcie, "pcie_static", "max_pcie_width"),
            power_limit_w=_watts(pick_int(caps, "power_cap")),
            power_limit_default_w=_watts(pick_int(caps, "default_power_cap")),
            power_limit_max_w=_watts(pick_int(caps, "max_power_cap")),
            ecc_enabled=_ecc_on(q("amdsmi_get_gpu_ecc_enabled")),
            sm_clock_mhz=pick_int(gfx, "clk"), mem_clock_mhz=pick_int(mem, "clk"),
            sm_clock_max_mhz=pick_int(gfx, "max_clk"), mem_clock_max_mhz=pick_int(mem, "max_clk"),
            numa_node=numa if isinstance(numa, (int, Unavailable)) else Unavailable(f"NUMA node {numa!r}"),
            persistence_mode=Unavailable(f"{_NOT_NVIDIA}: amdgpu keeps modules initialised (no persistence mode)"),
            clocks_locked=_flag(pick(gfx, "clk_locked")),
            processes=_pids(q("amdsmi_get_gpu_process_list")),
        )

    def _software(self) -> SoftwareInfo:
        first = self._devices[0] if self._devices else None
        info = (self.smi.query("amdsmi_get_gpu_driver_info", first.handle, module=first.id) if first
                else Unavailable("no AMD module to ask"))
        version = pick(info, "driver_version")  # the amdgpu driver's version
        driver = version if isinstance(version, Unavailable) else str(version)
        return SoftwareInfo(__version__, driver,
                            Unavailable(f"{_NOT_NVIDIA}: ROCm has no CUDA driver API"),
                            Unavailable(f"{_NOT_NVIDIA}: AMD SMI is read instead of NVML"))

    def inventory(self) -> Inventory:
        return inventory_of(self.name, self._devices, self._module_info, read_host_info(), self._software())

    # --- health ----------------------------------------------------------------------------
    def _module_health(self, d: AmdDevice) -> ModuleHealth:
        q = ProcessorQuery(self.smi, d.handle, d.id)
        ecc = pick_int(q("amdsmi_get_gpu_total_ecc_count"), "uncorrectable_count")
        pages = q("amdsmi_get_gpu_bad_page_info")
        statuses = [pick_int(p, "status") for p in pages] if isinstance(pages, list) else pages
        pending = statuses if isinstance(statuses, Unavailable) else PAGE_PENDING in statuses
        failed = statuses if isinstance(statuses, Unavailable) else PAGE_UNRESERVABLE in statuses
        return ModuleHealth(d.id, ecc, Unavailable(f"{_NOT_NVIDIA}: amdsmi counts RAS errors since the driver "
                                                   "loaded; retired pages are its lasting record"),
                            pending, failed, throttle_mask(q("amdsmi_get_violation_status")))

    def health(self) -> HealthReadings:
        """Raises ModuleLost when a module stops answering while being read."""
        from gpuvet.backends.kernel_log import KMSG, amdgpu_log, boot_id

        modules = tuple(self._module_health(d) for d in self._devices)
        xids = Unavailable(f"{_NOT_NVIDIA}: amdgpu has no Xids; its resets, ring timeouts and RAS errors "
                           "are judged by kernel_messages")
        return HealthReadings(modules, xids, boot_id(), amdgpu_log(self.kernel_log or KMSG))

    # --- topology --------------------------------------------------------------------------
    def _xgmi_link(self, a: AmdDevice, b: AmdDevice, model: ModuleModel) -> Link | None:
        """The direct xGMI link between two modules, or None. amdsmi's "XGMI" type and hop count 1
        also cover modules reached through others over xGMI (github.com/ROCm/rocm-systems/issues/5763);
        a direct link is one with a bandwidth (the API gives one only for 1 xGMI hop) and, where
        read, a weight of 15 (15 per xGMI hop: github.com/ROCm/rocm-systems/pull/7372)."""
        kind = self.smi.query("amdsmi_topo_get_link_type", a.handle, b.handle, module=a.id)
        if pick_int(kind, "type") != IOLINK_XGMI:
            return None
        weight = self.smi.query("amdsmi_topo_get_link_weight", a.handle, b.handle, module=a.id)
        if isinstance(weight, int) and weight > 15:
            return None
        bw = pick_int(self.smi.query("amdsmi_get_minmax_bandwidth_between_processors", a.handle, b.handle,
                                     module=a.id), "max_bandwidth")  # MB/s
        lane = model.fabric_lane_gbps
        if isinstance(bw, Unavailable):
            return Link(a.id, b.id, LinkKind.XGMI, 1, lane)
        if bw <= 0:
            return None
        gbps = bw / 1000
        width = max(1, round(gbps / lane)) if lane else 1
        return Link(a.id, b.id, LinkKind.XGMI, width, gbps / width)

    def _hive_mesh(self, models: dict[str, ModuleModel]) -> set[frozenset[str]]:
        """Pairs the design joins directly: modules amdsmi puts in one xGMI hive (same hive id)
        whose catalog model has one xGMI link to every other module of a hive that size (MI300X:
        7 links, 8 modules). Expected from the catalog and the hive, never from the links' state."""
        hives: dict[int, list[str]] = {}
        for d in self._devices:
            hive = pick_int(self.smi.query("amdsmi_get_xgmi_info", d.handle, module=d.id), "xgmi_hive_id")
            if isinstance(hive, int) and hive:
                hives.setdefault(hive, []).append(d.id)
        pairs: set[frozenset[str]] = set()
        for members in hives.values():
            model = models[members[0]]
            if model.fabric == "xgmi" and model.fabric_links == len(members) - 1 \
                    and all(models[m].name == model.name for m in members):
                pairs |= {frozenset((a, b)) for i, a in enumerate(members) for b in members[i + 1:]}
        return pairs

    def _own_pcie_link(self, d: AmdDevice) -> Link | None:
        pcie = self.smi.query("amdsmi_get_pcie_info", d.handle, module=d.id)
        return own_pcie_link(d.id, pcie_gen_max(pcie), pick_int(pcie, "pcie_metric", "pcie_width"))

    def node(self) -> Node:
        """Modules, the xGMI links amdsmi reports, and the PCIe tree as far as NUMA tells: amdsmi
        names no PCIe switch between modules, so every module pair's PCIe relation is unseen."""
        info = read_host_info()
        models = {d.id: self._model(d) for d in self._devices}
        modules = tuple(Module(d.id, models[d.id], d.bus_id, d.uuid or None) for d in self._devices)
        numa = {d.id: self.smi.query("amdsmi_topo_get_numa_node_number", d.handle, module=d.id) for d in self._devices}
        sockets = {k: (v if isinstance(v, int) and v >= 0 else None) for k, v in numa.items()}
        ids = [d.id for d in self._devices]
        relations = {frozenset((a, b)): None for i, a in enumerate(ids) for b in ids[i + 1:]}
        own = {d.id: link for d in self._devices if (link := self._own_pcie_link(d)) is not None}
        endpoints, pcie_links, n_sockets = infer_pcie_tree(ids, relations, sockets, own)
        fabric = []
        mesh = self._hive_mesh(models)
        for i, a in enumerate(self._devices):
            for b in self._devices[i + 1:]:
                link = self._xgmi_link(a, b, models[a.id])
                if link is None and frozenset((a.id, b.id)) in mesh:  # the design joins them: that link is down
                    link = Link(a.id, b.id, LinkKind.XGMI, 1, models[a.id].fabric_lane_gbps, up=False)
                fabric += [link] if link else []
        return Node(info.node_name, modules, tuple(endpoints), tuple(pcie_links + fabric), host_of(info, n_sockets),
                    unseen_relations=frozenset(relations))


def pcie_gen(mts: int | Unavailable) -> int | Unavailable:
    if isinstance(mts, Unavailable):
        return mts
    return PCIE_GEN_OF_MTS.get(mts, Unavailable(f"PCIe rate {mts} MT/s is no known generation"))


def pcie_gen_max(pcie: object) -> int | Unavailable:
    """The link's top generation: the interface version, else the top rate (MT/s)."""
    version = pick_int(pcie, "pcie_static", "pcie_interface_version")
    if isinstance(version, int) and version > 0:
        return version
    return pcie_gen(pick_int(pcie, "pcie_static", "max_pcie_speed"))


def _watts(microwatts: int | Unavailable) -> float | Unavailable:
    return microwatts if isinstance(microwatts, Unavailable) else microwatts / 1e6


def _ecc_on(blocks: object) -> bool | Unavailable:
    """ECC on HBM: the UMC bit of the enabled-blocks mask."""
    if isinstance(blocks, Unavailable):
        return blocks
    return bool(blocks & GPU_BLOCK_UMC) if isinstance(blocks, int) else Unavailable(f"ECC blocks {blocks!r}")


def _flag(value: object) -> bool | Unavailable:
    if isinstance(value, Unavailable):
        return value
    return bool(value) if value in (0, 1, True, False) else Unavailable(f"clock lock state {value!r}")


def _pids(procs: object) -> tuple[int, ...] | Unavailable:
    if isinstance(procs, Unavailable):
        return procs
    if not isinstance(procs, list):
        return Unavailable(f"process list {procs!r}")
    pids = [pick_int(p, "pid") for p in procs]
    return tuple(p for p in pids if isinstance(p, int))


def throttle_mask(status: object) -> int | Unavailable:
    """ThrottleReason bits from the violation status's "active_*" flags."""
    if isinstance(status, Unavailable):
        return status
    if not isinstance(status, dict):
        return Unavailable(f"violation status {status!r}")
    mask = 0
    for key, reason in VIOLATION_REASONS.items():
        if status.get(key) is True:
            mask |= reason
    return mask
