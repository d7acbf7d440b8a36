"""A fake of the nvidia-ml-py binding at its function boundary.

Same function names and return shapes as ``pynvml``; errors are the binding's real
``NVMLError`` classes, raised with the codes a driver returns. Handles are GPU indices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml


def nvml_error(code: int) -> pynvml.NVMLError:
    return pynvml.NVMLError(code)


@dataclass
class FakeGpu:
    name: str = "NVIDIA H200"
    bus_id: str = "00000000:18:00.0"
    uuid: str = "GPU-00000000-0000-0000-0000-000000000000"
    memory_total: int = 150_754_820_096  # 143771 MiB, what an H200 reports
    pcie: tuple[int, int, int, int] = (1, 5, 16, 16)  # current gen (idle), max gen, cur width, max width
    nvlinks: list[tuple[int, int, str]] = field(default_factory=list)  # (state, version, remote bus id)
    nvlink_error_counts: dict[tuple[int, int], int] = field(default_factory=dict)  # (link, counter) -> count
    pcie_replays: int = 0
    numa: int = 0
    power_mw: tuple[int, int, int, int] = (700_000, 700_000, 200_000, 700_000)  # limit, default, min, max
    ecc: tuple[int, int] = (1, 1)
    clocks: dict[int, int] = field(default_factory=lambda: {1: 345, 2: 2619})
    max_clocks: dict[int, int] = field(default_factory=lambda: {1: 1980, 2: 3201})
    lost: bool = False
    power_draw_mw: int = 650_000
    temperature_c: int = 61
    clock_event_mask: int = 0x1  # gpu_idle
    persistence: int = 1
    app_clocks: tuple[int, int] = (1980, 1980)  # current, default (SM)
    pids: tuple[int, ...] = ()
    energy_mj: int = 123_456_789
    util_pct: int = 0
    ecc_uncorrected: tuple[int, int] = (0, 0)  # volatile, aggregate
    remapped_rows: tuple[int, int, int, int] = (0, 0, 0, 0)  # correctable, uncorrectable, pending, failed
    unsupported: set[str] = field(default_factory=set)
    xid_events: list[int] = field(default_factory=list)  # critical Xids the event set still holds
    fabric: tuple[int, int] = (3, 0)  # NVLink fabric registration: state (3 completed), status (0 success)
    serial: str = "1652322054091"  # the board serial (nvidia-smi -q: Serial Number)
    vbios: str = "96.00.74.00.1C"  # nvidia-smi -q: VBIOS Version
    inforom_image: str = "G520.0200.00.05"  # nvidia-smi -q: Image Version (InfoROM)
    gsp_firmware: str = "570.86.15"  # nvidia-smi -q: GSP Firmware Version
    mig: tuple[int, int] = (0, 0)  # MIG mode: current, pending (1: NVML_DEVICE_MIG_ENABLE)


class FakeNvml:
    """Drop-in for ``pynvml`` in ``Nvml(lib=FakeNvml(...))``."""

    def __init__(self, gpus: list[FakeGpu], topology: dict[tuple[int, int], int] | None = None,
                 init_error: int | None = None, missing: set[str] | None = None,
                 driver: str = "570.86.15", cuda: int = 12080) -> None:
        self.gpus = gpus
        self.topology = topology or {}
        self.init_error = init_error
        self.missing = missing or set()
        self.driver, self.cuda = driver, cuda
        self.calls: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("nvml") and name in object.__getattribute__(self, "missing"):
            raise AttributeError(name)
        if name.startswith("nvml"):
            object.__getattribute__(self, "calls").append(name)
        return object.__getattribute__(self, name)

    def _gpu(self, handle: int, fn: str) -> FakeGpu:
        gpu = self.gpus[handle]
        if gpu.lost:
            raise nvml_error(pynvml.NVML_ERROR_GPU_IS_LOST)
        if fn in gpu.unsupported:
            raise nvml_error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return gpu

    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise nvml_error(self.init_error)

    def nvmlShutdown(self) -> None:
        return None

    def nvmlSystemGetDriverVersion(self) -> str:
        return self.driver

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        return self.cuda

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return self.cuda

    def nvmlSystemGetNVMLVersion(self) -> str:
        return "12." + self.driver

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if index >= len(self.gpus):
            raise nvml_error(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return index

    def nvmlDeviceGetName(self, h: int) -> str:
        return self._gpu(h, "nvmlDeviceGetName").name

    def nvmlDeviceGetSerial(self, h: int) -> str:
        return self._gpu(h, "nvmlDeviceGetSerial").serial

    def nvmlDeviceGetVbiosVersion(self, h: int) -> str:
        return self._gpu(h, "nvmlDeviceGetVbiosVersion").vbios

    def nvmlDeviceGetInforomImageVersion(self, h: int) -> str:
        return self._gpu(h, "nvmlDeviceGetInforomImageVersion").inforom_image

    def nvmlDeviceGetGspFirmwareVersion(self, h: int, version: Any = None) -> str:
        return self._gpu(h, "nvmlDeviceGetGspFirmwareVersion").gsp_firmware

    def nvmlDeviceGetMigMode(self, h: int) -> tuple[int, int]:
        return self._gpu(h, "nvmlDeviceGetMigMode").mig

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return self._gpu(h, "nvmlDeviceGetUUID").uuid

    def nvmlDeviceGetPciInfo(self, h: int) -> Any:
        return SimpleNamespace(busId=self._gpu(h, "nvmlDeviceGetPciInfo").bus_id)

    def nvmlDeviceGetMemoryInfo(self, h: int) -> Any:
        total = self._gpu(h, "nvmlDeviceGetMemoryInfo").memory_total
        return SimpleNamespace(total=total, used=0, free=total)

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetCurrPcieLinkGeneration").pcie[0]

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetMaxPcieLinkGeneration").pcie[1]

    def nvmlDeviceGetCurrPcieLinkWidth(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetCurrPcieLinkWidth").pcie[2]

    def nvmlDeviceGetMaxPcieLinkWidth(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetMaxPcieLinkWidth").pcie[3]

    def nvmlDeviceGetPowerManagementLimit(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetPowerManagementLimit").power_mw[0]

    def nvmlDeviceGetPowerManagementDefaultLimit(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetPowerManagementDefaultLimit").power_mw[1]

    def nvmlDeviceGetPowerManagementLimitConstraints(self, h: int) -> list[int]:
        g = self._gpu(h, "nvmlDeviceGetPowerManagementLimitConstraints")
        return [g.power_mw[2], g.power_mw[3]]

    def nvmlDeviceGetEccMode(self, h: int) -> list[int]:
        return list(self._gpu(h, "nvmlDeviceGetEccMode").ecc)

    def nvmlDeviceGetClockInfo(self, h: int, clock: int) -> int:
        return self._gpu(h, "nvmlDeviceGetClockInfo").clocks[clock]

    def nvmlDeviceGetMaxClockInfo(self, h: int, clock: int) -> int:
        return self._gpu(h, "nvmlDeviceGetMaxClockInfo").max_clocks[clock]

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetPowerUsage").power_draw_mw

    def nvmlDeviceGetEnforcedPowerLimit(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetEnforcedPowerLimit").power_mw[0]

    def nvmlDeviceGetTemperature(self, h: int, sensor: int) -> int:
        return self._gpu(h, "nvmlDeviceGetTemperature").temperature_c

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetCurrentClocksEventReasons").clock_event_mask

    def nvmlDeviceGetPersistenceMode(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetPersistenceMode").persistence

    def nvmlDeviceGetApplicationsClock(self, h: int, clock: int) -> int:
        return self._gpu(h, "nvmlDeviceGetApplicationsClock").app_clocks[0]

    def nvmlDeviceGetDefaultApplicationsClock(self, h: int, clock: int) -> int:
        return self._gpu(h, "nvmlDeviceGetDefaultApplicationsClock").app_clocks[1]

    def nvmlDeviceGetComputeRunningProcesses(self, h: int) -> list:
        from types import SimpleNamespace

        gpu = self._gpu(h, "nvmlDeviceGetComputeRunningProcesses")
        return [SimpleNamespace(pid=p, usedGpuMemory=1 << 30) for p in gpu.pids]

    def nvmlDeviceSetPowerManagementLimit(self, h: int, milliwatts: int) -> None:
        g = self._gpu(h, "nvmlDeviceSetPowerManagementLimit")
        if not g.power_mw[2] <= milliwatts <= g.power_mw[3]:
            raise nvml_error(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        g.power_mw = (milliwatts, *g.power_mw[1:])

    def nvmlDeviceGetTotalEnergyConsumption(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetTotalEnergyConsumption").energy_mj

    def nvmlDeviceGetTotalEccErrors(self, h: int, error_type: int, counter_type: int) -> int:
        g = self._gpu(h, "nvmlDeviceGetTotalEccErrors")
        return g.ecc_uncorrected[counter_type] if error_type == 1 else 0

    def nvmlDeviceGetRemappedRows(self, h: int) -> tuple[int, int, int, int]:
        return self._gpu(h, "nvmlDeviceGetRemappedRows").remapped_rows

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> int:
        for i, g in enumerate(self.gpus):
            if g.uuid == uuid:
                return i
        raise nvml_error(pynvml.NVML_ERROR_NOT_FOUND)

    def nvmlDeviceGetUtilizationRates(self, h: int) -> Any:
        from types import SimpleNamespace

        return SimpleNamespace(gpu=self._gpu(h, "nvmlDeviceGetUtilizationRates").util_pct, memory=0)

    def nvmlDeviceGetNumaNodeId(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetNumaNodeId").numa

    def _link(self, h: int, link: int, fn: str) -> tuple[int, int, str]:
        g = self._gpu(h, fn)
        if not g.nvlinks:
            raise nvml_error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        if link >= len(g.nvlinks):
            raise nvml_error(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return g.nvlinks[link]

    def nvmlDeviceGetNvLinkState(self, h: int, link: int) -> int:
        return self._link(h, link, "nvmlDeviceGetNvLinkState")[0]

    def nvmlDeviceGetPcieReplayCounter(self, h: int) -> int:
        return self._gpu(h, "nvmlDeviceGetPcieReplayCounter").pcie_replays

    def nvmlDeviceGetNvLinkErrorCounter(self, h: int, link: int, counter: int) -> int:
        """nvLinkErrorCounter_t 0..3 (replay, recovery, CRC flit, CRC data); per link, cumulative."""
        self._link(h, link, "nvmlDeviceGetNvLinkErrorCounter")
        return self._gpu(h, "nvmlDeviceGetNvLinkErrorCounter").nvlink_error_counts.get((link, counter), 0)

    def nvmlDeviceGetNvLinkVersion(self, h: int, link: int) -> int:
        return self._link(h, link, "nvmlDeviceGetNvLinkVersion")[1]

    def nvmlDeviceGetNvLinkRemotePciInfo(self, h: int, link: int) -> Any:
        return SimpleNamespace(busId=self._link(h, link, "nvmlDeviceGetNvLinkRemotePciInfo")[2])

    def nvmlDeviceGetGpuFabricInfo(self, h: int, info_ref: Any) -> int:
        """Fills the caller's structure, as the binding's function does (given ctypes.byref)."""
        gpu = self._gpu(h, "nvmlDeviceGetGpuFabricInfo")
        info = info_ref._obj
        info.state, info.status = gpu.fabric
        info.cliqueId = 1
        return 0

    # --- the event set (nvmlEventSetCreate / RegisterEvents / Wait_v2 / Free) ---------------------
    def nvmlEventSetCreate(self) -> object:
        self.event_sets = getattr(self, "event_sets", 0) + 1
        return SimpleNamespace(registered={})

    def nvmlDeviceRegisterEvents(self, h: int, types: int, event_set: Any) -> None:
        self._gpu(h, "nvmlDeviceRegisterEvents")
        event_set.registered[h] = types

    def nvmlEventSetWait_v2(self, event_set: Any, timeout_ms: int) -> Any:
        """The oldest pending Xid of a registered module; NVML_ERROR_TIMEOUT when none is waiting."""
        for h, types in event_set.registered.items():
            gpu = self.gpus[h]
            if types & pynvml.nvmlEventTypeXidCriticalError and gpu.xid_events:
                return SimpleNamespace(device=h, eventType=pynvml.nvmlEventTypeXidCriticalError,
                                       eventData=gpu.xid_events.pop(0), gpuInstanceId=0xFFFFFFFF,
                                       computeInstanceId=0xFFFFFFFF)
        raise nvml_error(pynvml.NVML_ERROR_TIMEOUT)

    def nvmlEventSetFree(self, event_set: Any) -> None:
        event_set.registered.clear()

    def nvmlDeviceGetTopologyCommonAncestor(self, h1: int, h2: int) -> int:
        self._gpu(h1, "nvmlDeviceGetTopologyCommonAncestor")
        self._gpu(h2, "nvmlDeviceGetTopologyCommonAncestor")
        return self.topology.get((min(h1, h2), max(h1, h2)), pynvml.NVML_TOPOLOGY_SYSTEM)


def hgx_h200(n: int = 8) -> FakeNvml:
    """An 8x H200 NVSwitch board as NVML reports it: 18 active NVLink 4 links per GPU to the
    switches, two GPUs per PCIe switch, four per socket."""
    gpus = []
    for i in range(n):
        bus = f"00000000:{0x18 + 0x10 * i:02X}:00.0"
        links = [(pynvml.NVML_FEATURE_ENABLED, 6, f"00000000:{0xA0 + k % 4:02X}:00.0") for k in range(18)]
        gpus.append(FakeGpu(bus_id=bus, uuid=f"GPU-{i:08d}-aaaa-bbbb-cccc-dddddddddddd", nvlinks=links,
                            numa=i // 4))
    topo = {}
    for a in range(n):
        for b in range(a + 1, n):
            if a // 2 == b // 2:
                topo[(a, b)] = pynvml.NVML_TOPOLOGY_SINGLE
            elif a // 4 == b // 4:
                topo[(a, b)] = pynvml.NVML_TOPOLOGY_NODE
            else:
                topo[(a, b)] = pynvml.NVML_TOPOLOGY_SYSTEM
    return FakeNvml(gpus, topo)
