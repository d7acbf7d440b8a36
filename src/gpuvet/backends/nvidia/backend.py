"""NVIDIA modules through NVML: identity, memory, PCIe, NVLink, topology, settings.

Modules are keyed by UUID and PCI bus id; they are named gpu0… in bus-id order (the order
``CUDA_DEVICE_ORDER=PCI_BUS_ID`` gives), never by NVML's enumeration index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from gpuvet import __version__
from gpuvet.backends.base import Backend
from gpuvet.backends.host import read_host_info
from gpuvet.backends.live import host_of, inventory_of, own_pcie_link
from gpuvet.backends.nvidia.gateway import DeviceQuery, Nvml, NvmlHandle, fabric_state
from gpuvet.backends.readings import HealthReadings, Inventory, ModuleHealth, ModuleInfo, SoftwareInfo, Unavailable
from gpuvet.errors import BackendError
from gpuvet.node.bus import bus_key
from gpuvet.node.catalog import find_model, unknown_model
from gpuvet.node.infer import infer_pcie_tree
from gpuvet.node.model import Endpoint, EndpointKind, Link, LinkKind, Module, Node
from gpuvet.node.relations import PcieRelation

if TYPE_CHECKING:
    from gpuvet.backends.engine import BenchEngine
    from gpuvet.backends.power_control import NvmlPowerControl
    from gpuvet.backends.telemetry import TelemetrySource

# NVML_NVLINK_VERSION_* -> GB/s per link per direction
NVLINK_LANE_GBPS = {1: 20.0, 2: 25.0, 3: 25.0, 4: 25.0, 5: 25.0, 6: 25.0, 7: 50.0}
NVSWITCH = "nvswitch0"
NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC = 1, 0, 1


_T = TypeVar("_T")


class _Process(Protocol):
    """An entry of nvmlDeviceGetComputeRunningProcesses."""

    pid: int


def _text(value: _T) -> _T | str:
    return value.decode() if isinstance(value, bytes) else value


@dataclass
class NvidiaDevice:
    handle: NvmlHandle
    bus_id: str
    uuid: str
    name: str
    id: str = ""


class NvidiaBackend(Backend):
    name = "nvidia"
    simulated = False

    def __init__(self, nvml: Nvml | None = None, kernel_log: Path | None = None) -> None:
        self.nvml = nvml or Nvml()
        self.kernel_log = kernel_log  # where Xids are read (default /dev/kmsg); tests give a file
        self.nvml.init()
        self._devices = self._enumerate()

    def _enumerate(self) -> list[NvidiaDevice]:
        q = self.nvml.query
        count = q("nvmlDeviceGetCount")
        devices = []
        for index in range(count if isinstance(count, int) else 0):
            handle = q("nvmlDeviceGetHandleByIndex", index)
            if isinstance(handle, Unavailable):
                continue
            pci = q("nvmlDeviceGetPciInfo", handle)
            bus = bus_key(_text(pci.busId)) if not isinstance(pci, Unavailable) else f"index{index}"
            uuid = _text(q("nvmlDeviceGetUUID", handle))
            name = _text(q("nvmlDeviceGetName", handle))
            devices.append(NvidiaDevice(handle, bus, uuid if isinstance(uuid, str) else "",
                                   name if isinstance(name, str) else "unknown"))
        devices.sort(key=lambda d: d.bus_id)
        for i, d in enumerate(devices):
            d.id = f"gpu{i}"
        return devices

    def count(self) -> int:
        return len(self._devices)

    def power_control(self, engine: BenchEngine) -> NvmlPowerControl:
        from gpuvet.backends.power_control import NvmlPowerControl

        return NvmlPowerControl(self.nvml, {d.id: d for d in self._devices})

    def rescan(self) -> None:
        """Re-enumerate after a hot-plug: NVML only sees a new module after re-initialising."""
        self.nvml.shutdown()
        self.nvml.init()
        self._devices = self._enumerate()

    def telemetry(self) -> TelemetrySource:
        from gpuvet.backends.nvidia.telemetry import NvmlTelemetry

        return NvmlTelemetry(self)

    def engine(self) -> BenchEngine:
        """Benchmarks through PyTorch on CUDA; modules matched to CUDA devices by UUID (bus id
        as a fallback), never by enumeration order."""
        from gpuvet.backends.engine import BenchModule
        from gpuvet.backends.nvidia.monitor import NvmlMonitor
        from gpuvet.backends.torch.engine import TorchEngine, import_torch

        torch = import_torch()
        if not torch.cuda.is_available():
            raise BackendError("PyTorch cannot use CUDA on this machine", where=f"torch {torch.__version__}",
                               fix="install a CUDA build of PyTorch that matches the driver (pip install 'gpuvet[torch]').")
        devices: dict[str, str] = {}
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            uuid = str(getattr(props, "uuid", "")).lower()
            bus = bus_key(f"{getattr(props, 'pci_domain_id', 0):04X}:{getattr(props, 'pci_bus_id', 0):02X}:"
                          f"{getattr(props, 'pci_device_id', 0):02X}.0")
            for d in self._devices:
                if (uuid and d.uuid.lower().removeprefix("gpu-") == uuid) or bus_key(d.bus_id) == bus:
                    devices[d.id] = f"cuda:{index}"
        modules = []
        for d in self._devices:
            if d.id in devices:
                free, _ = torch.cuda.mem_get_info(devices[d.id])
                modules.append(BenchModule(d.id, find_model(d.name) or unknown_model(d.name), free_memory_bytes=free))
        handles = {d.id: d.handle for d in self._devices}
        driver = self.nvml.query("nvmlSystemGetDriverVersion")
        return TorchEngine(modules, devices, monitor_factory=lambda ids: NvmlMonitor(self.nvml, handles, ids),
                           driver_version=None if isinstance(driver, Unavailable) else str(_text(driver)))

    def close(self) -> None:
        self.nvml.shutdown()

    # --- inventory -------------------------------------------------------------------------
    def _module_info(self, d: NvidiaDevice) -> ModuleInfo:
        q = DeviceQuery(self.nvml, d.handle, d.id)

        mem = q("nvmlDeviceGetMemoryInfo")
        ecc = q("nvmlDeviceGetEccMode")
        constraints = q("nvmlDeviceGetPowerManagementLimitConstraints")
        mig = q("nvmlDeviceGetMigMode")  # (current, pending)
        err = self.nvml._errors
        return ModuleInfo(
            id=d.id, model=d.name, in_catalog=find_model(d.name) is not None, uuid=d.uuid,
            bus_id=d.bus_id, memory_bytes=mem if isinstance(mem, Unavailable) else int(mem.total),
            pcie_gen_current=q("nvmlDeviceGetCurrPcieLinkGeneration"),
            pcie_gen_max=q("nvmlDeviceGetMaxPcieLinkGeneration"),
            pcie_width_current=q("nvmlDeviceGetCurrPcieLinkWidth"),
            pcie_width_max=q("nvmlDeviceGetMaxPcieLinkWidth"),
            power_limit_w=_watts(q("nvmlDeviceGetPowerManagementLimit")),
            power_limit_default_w=_watts(q("nvmlDeviceGetPowerManagementDefaultLimit")),
            power_limit_max_w=constraints if isinstance(constraints, Unavailable) else constraints[1] / 1000,
            ecc_enabled=ecc if isinstance(ecc, Unavailable) else bool(ecc[0]),
            sm_clock_mhz=q("nvmlDeviceGetClockInfo", err.NVML_CLOCK_SM),
            mem_clock_mhz=q("nvmlDeviceGetClockInfo", err.NVML_CLOCK_MEM),
            sm_clock_max_mhz=q("nvmlDeviceGetMaxClockInfo", err.NVML_CLOCK_SM),
            mem_clock_max_mhz=q("nvmlDeviceGetMaxClockInfo", err.NVML_CLOCK_MEM),
            numa_node=q("nvmlDeviceGetNumaNodeId"),
            persistence_mode=_flag(q("nvmlDeviceGetPersistenceMode")),
            clocks_locked=_locked(q("nvmlDeviceGetApplicationsClock", err.NVML_CLOCK_SM),
                                  q("nvmlDeviceGetDefaultApplicationsClock", err.NVML_CLOCK_SM)),
            processes=_pids(q("nvmlDeviceGetComputeRunningProcesses")),
            serial=_serial(q("nvmlDeviceGetSerial")),
            vbios_version=_version(q("nvmlDeviceGetVbiosVersion")),
            inforom_version=_version(q("nvmlDeviceGetInforomImageVersion")),
            gsp_firmware=_version(q("nvmlDeviceGetGspFirmwareVersion")),
            mig_mode=_mig(mig, 0), mig_mode_pending=_mig(mig, 1),
        )

    def _software(self) -> SoftwareInfo:
        q = self.nvml.query
        cuda = q("nvmlSystemGetCudaDriverVersion_v2")
        if isinstance(cuda, Unavailable):
            cuda = q("nvmlSystemGetCudaDriverVersion")
        cuda_text = cuda if isinstance(cuda, Unavailable) else f"{cuda // 1000}.{cuda % 1000 // 10}"
        return SoftwareInfo(__version__, _text(q("nvmlSystemGetDriverVersion")), cuda_text,
                            _text(q("nvmlSystemGetNVMLVersion")))

    def inventory(self) -> Inventory:
        return inventory_of(self.name, self._devices, self._module_info, read_host_info(), self._software())

    # --- health ----------------------------------------------------------------------------
    def _module_health(self, d: NvidiaDevice) -> ModuleHealth:
        q = DeviceQuery(self.nvml, d.handle, d.id)

        remap = q("nvmlDeviceGetRemappedRows")  # (correctable rows, uncorrectable rows, pending, failed)
        mask = q("nvmlDeviceGetCurrentClocksEventReasons")
        if isinstance(mask, Unavailable):
            mask = q("nvmlDeviceGetCurrentClocksThrottleReasons")
        return ModuleHealth(
            d.id, q("nvmlDeviceGetTotalEccErrors", NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC),
            q("nvmlDeviceGetTotalEccErrors", NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC),
            remap if isinstance(remap, Unavailable) else bool(remap[2]),
            remap if isinstance(remap, Unavailable) else bool(remap[3]),
            mask if isinstance(mask, Unavailable) else int(mask), fabric_state(self.nvml, d.handle, d.id))

    def health(self) -> HealthReadings:
        """Raises ModuleLost when a module stops answering while being read."""
        from gpuvet.backends.kernel_log import KMSG, boot_id, kernel_log

        by_bus = {bus_key(d.bus_id): d.id for d in self._devices}  # NVML's 00000000:18:00.0, the Xid's 0000:18:00
        modules = tuple(self._module_health(d) for d in self._devices)
        xids, lines = kernel_log(lambda bus: by_bus.get(bus_key(bus)), self.kernel_log or KMSG)
        return HealthReadings(modules, xids, boot_id(), lines)

    # --- topology --------------------------------------------------------------------------
    def _nvlinks(self, d: NvidiaDevice, by_bus: dict[str, str]) -> dict[str, list[object]]:
        """Remote endpoint -> [link versions] for active links; key '?' collects inactive ones."""
        err = self.nvml._errors
        out: dict[str, list[object]] = {}
        for link in range(err.NVML_NVLINK_MAX_LINKS):
            state = self.nvml.query("nvmlDeviceGetNvLinkState", d.handle, link, module=d.id)
            if isinstance(state, Unavailable):
                if "not supported" in state.reason or "invalid" in state.reason:
                    break
                continue
            if state != err.NVML_FEATURE_ENABLED:
                out.setdefault("?", []).append(None)
                continue
            version = self.nvml.query("nvmlDeviceGetNvLinkVersion", d.handle, link, module=d.id)
            remote = self.nvml.query("nvmlDeviceGetNvLinkRemotePciInfo", d.handle, link, module=d.id)
            bus = bus_key(_text(remote.busId)) if not isinstance(remote, Unavailable) else ""
            out.setdefault(by_bus.get(bus, NVSWITCH), []).append(version)
        return out

    def _fabric_links(self) -> tuple[list[Link], bool]:
        by_bus = {d.bus_id: d.id for d in self._devices}
        remotes = {d.id: self._nvlinks(d, by_bus) for d in self._devices}
        switched = any(NVSWITCH in r for r in remotes.values())
        links: dict[frozenset[str], Link] = {}
        for module, found in remotes.items():
            inactive = len(found.pop("?", []))
            for remote, versions in found.items():
                key = frozenset((module, remote))
                if key not in links:
                    version = versions[0] if isinstance(versions[0], int) else None
                    lane = NVLINK_LANE_GBPS.get(version) if version else None
                    links[key] = Link(module, remote, LinkKind.NVLINK, len(versions), lane)
            if inactive and not found and switched:  # every link down: the module is cut off
                links[frozenset((module, NVSWITCH))] = Link(module, NVSWITCH, LinkKind.NVLINK, inactive,
                                                            None, up=False)
        return list(links.values()), switched

    def _relations(self) -> dict[frozenset[str], PcieRelation | None]:
        err = self.nvml._errors
        level = {
            err.NVML_TOPOLOGY_INTERNAL: PcieRelation.PIX, err.NVML_TOPOLOGY_SINGLE: PcieRelation.PIX,
            err.NVML_TOPOLOGY_MULTIPLE: PcieRelation.PXB, err.NVML_TOPOLOGY_HOSTBRIDGE: PcieRelation.PHB,
            err.NVML_TOPOLOGY_NODE: PcieRelation.NODE, err.NVML_TOPOLOGY_SYSTEM: PcieRelation.SYS,
        }
        rel: dict[frozenset[str], PcieRelation | None] = {}
        for i, a in enumerate(self._devices):
            for b in self._devices[i + 1:]:
                got = self.nvml.query("nvmlDeviceGetTopologyCommonAncestor", a.handle, b.handle, module=a.id)
                rel[frozenset((a.id, b.id))] = None if isinstance(got, Unavailable) else level.get(got)
        return rel

    def _own_pcie_link(self, d: NvidiaDevice) -> Link | None:
        q = DeviceQuery(self.nvml, d.handle, d.id)
        return own_pcie_link(d.id, q("nvmlDeviceGetMaxPcieLinkGeneration"), q("nvmlDeviceGetCurrPcieLinkWidth"))

    def node(self) -> Node:
        info = read_host_info()
        modules = []
        for d in self._devices:
            mem = self.nvml.query("nvmlDeviceGetMemoryInfo", d.handle, module=d.id)
            model = find_model(d.name) or unknown_model(d.name, None if isinstance(mem, Unavailable) else mem.total)
            modules.append(Module(d.id, model, d.bus_id, d.uuid))
        numa = {d.id: self.nvml.query("nvmlDeviceGetNumaNodeId", d.handle, module=d.id) for d in self._devices}
        sockets = {k: (v if isinstance(v, int) and v >= 0 else None) for k, v in numa.items()}
        own = {d.id: link for d in self._devices if (link := self._own_pcie_link(d)) is not None}
        endpoints, pcie_links, n_sockets = infer_pcie_tree([d.id for d in self._devices], self._relations(),
                                                          sockets, own)
        fabric, switched = self._fabric_links()
        if switched:
            endpoints.append(Endpoint(NVSWITCH, EndpointKind.FABRIC_SWITCH))
        return Node(info.node_name, tuple(modules), tuple(endpoints), tuple(pcie_links + fabric),
                    host_of(info, n_sockets))


def _serial(value: object) -> str | Unavailable:
    """The board serial NVML reads (what an RMA asks for, and what the module ledger follows a module
    by); a GeForce answers "not supported"."""
    if isinstance(value, Unavailable):
        return value
    text = _text(value) if isinstance(value, (str, bytes)) else str(value)
    text = str(text).strip()
    return text[:64] if text and text.upper() != "N/A" else Unavailable("no serial reported")


def _version(value: object) -> str | Unavailable:
    """A firmware version NVML reads (VBIOS, InfoROM image, GSP): what a vendor's RMA form asks for."""
    if isinstance(value, Unavailable):
        return value
    text = str(_text(value) if isinstance(value, (str, bytes)) else value).strip()
    return text[:64] if text and text.upper() != "N/A" else Unavailable("no version reported")


def _flag(value: object) -> bool | Unavailable:
    return value if isinstance(value, Unavailable) else bool(value)


def _mig(modes: object, which: int) -> bool | Unavailable:
    """One of nvmlDeviceGetMigMode's (current, pending): 1 is NVML_DEVICE_MIG_ENABLE; a module without MIG
    answers not supported, which stays n/a."""
    if isinstance(modes, Unavailable):
        return modes
    return bool(modes[which] == 1)  # type: ignore[index]


def _locked(current: object, default: object) -> bool | Unavailable:
    for v in (current, default):
        if isinstance(v, Unavailable):
            return v
    return bool(current != default)


def _pids(procs: Sequence[_Process] | Unavailable) -> tuple[int, ...] | Unavailable:
    if isinstance(procs, Unavailable):
        return procs
    return tuple(int(p.pid) for p in procs)


def _watts(milliwatts: float | Unavailable) -> float | Unavailable:
    return milliwatts if isinstance(milliwatts, Unavailable) else milliwatts / 1000.0
