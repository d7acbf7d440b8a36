"""The only way gpuvet changes a device setting: a module's power limit, when the user asked
with --apply. Setters live here and in the NVML gateway; everything that calls them goes
through ``settings_journal.guarded`` so the original is on disk before the first change and
put back after."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from gpuvet.backends.nvidia.gateway import DeviceQuery, Nvml, NvmlHandle
from gpuvet.backends.readings import Unavailable
from gpuvet.errors import BackendError

if TYPE_CHECKING:
    from gpuvet.backends.sim.engine import SimEngine


class NvmlDevice(Protocol):
    """A module as the NVIDIA backend enumerated it."""

    @property
    def handle(self) -> NvmlHandle: ...

    @property
    def uuid(self) -> str: ...


class PowerControl(ABC):
    simulated: bool = False
    backend_name: str = "unknown"

    @abstractmethod
    def uuid(self, module: str) -> str: ...

    @abstractmethod
    def limit_w(self, module: str) -> float: ...

    @abstractmethod
    def range_w(self, module: str) -> tuple[float, float]: ...

    @abstractmethod
    def set_limit_w(self, module: str, watts: float) -> None: ...

    @abstractmethod
    def energy_j(self, module: str) -> float | None:
        """The module's energy counter (cumulative joules), None where it has none."""

    @abstractmethod
    def now_s(self) -> float: ...

    def busy(self, module: str) -> list[int]:
        return []


class SimPowerControl(PowerControl):
    """Power limits of the simulated node: they change the simulated engine, nothing real."""

    simulated = True
    backend_name = "sim"

    def __init__(self, engine: SimEngine) -> None:
        self.engine = engine

    def uuid(self, module: str) -> str:
        return f"GPU-sim-{self.engine.node.name}-{module}"

    def _tdp(self, module: str) -> float:
        return float(self.engine.node.module(module).model.tdp_w or 700.0)

    def limit_w(self, module: str) -> float:
        return float(self.engine.power_cap.get(module, self._tdp(module)))

    def range_w(self, module: str) -> tuple[float, float]:
        return (round(self._tdp(module) * 0.2857), self._tdp(module))  # 200-700 W on a 700 W module, as NVML says

    def set_limit_w(self, module: str, watts: float) -> None:
        self.engine.power_cap[module] = watts

    def energy_j(self, module: str) -> float | None:
        return float(self.engine.energy_j.get(module, 0.0))

    def now_s(self) -> float:
        return float(self.engine.now_s)


class NvmlPowerControl(PowerControl):
    backend_name = "nvidia"

    def __init__(self, nvml: Nvml, devices: Mapping[str, NvmlDevice]) -> None:
        self.nvml = nvml
        self.devices = devices  # module id -> device (handle, uuid)

    def _on(self, module: str) -> DeviceQuery:
        return DeviceQuery(self.nvml, self.devices[module].handle, module)

    def uuid(self, module: str) -> str:
        return str(self.devices[module].uuid)

    def limit_w(self, module: str) -> float:
        mw = self._on(module)("nvmlDeviceGetPowerManagementLimit")
        if isinstance(mw, Unavailable):
            raise BackendError(f"cannot read {module}'s power limit: {mw.reason}", where=module,
                               fix="a power sweep needs a module whose limit NVML can read and set.")
        return float(mw) / 1000

    def range_w(self, module: str) -> tuple[float, float]:
        c = self._on(module)("nvmlDeviceGetPowerManagementLimitConstraints")
        if isinstance(c, Unavailable):
            raise BackendError(f"cannot read {module}'s allowed power range: {c.reason}", where=module,
                               fix="a power sweep needs the module's limit constraints.")
        return float(c[0]) / 1000, float(c[1]) / 1000

    def set_limit_w(self, module: str, watts: float) -> None:
        self.nvml.set_power_limit(self.devices[module].handle, watts, module)

    def energy_j(self, module: str) -> float | None:
        mj = self._on(module)("nvmlDeviceGetTotalEnergyConsumption")
        return None if isinstance(mj, Unavailable) else float(mj) / 1000

    def now_s(self) -> float:
        return time.monotonic()

    def busy(self, module: str) -> list[int]:
        procs = self._on(module)("nvmlDeviceGetComputeRunningProcesses")
        return [] if isinstance(procs, Unavailable) else [int(p.pid) for p in procs]
