"""The one gateway to NVML (the nvidia-ml-py binding, module ``pynvml``).

Every NVML call in gpuvet goes through ``Nvml.query``: it initialises lazily, tolerates
functions missing from older bindings or drivers, and turns NVML's error classes into
outcomes — "not supported", "no permission" and "driver too old" become ``Unavailable``
readings; a lost GPU raises ``ModuleLost``; a missing library raises ``NvmlUnavailable``.
Tests pass a fake binding with the same function names (``lib=``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NewType, Protocol, cast

from gpuvet.backends.base import ModuleLost as ModuleLost  # NVML_ERROR_GPU_IS_LOST becomes the interface's ModuleLost
from gpuvet.backends.readings import FabricState, Unavailable
from gpuvet.errors import BackendError

NvmlHandle = NewType("NvmlHandle", object)  # an nvmlDevice_t: opaque, only passed back to NVML


class NvmlBinding(Protocol):
    """What gpuvet calls on the binding by name in code; every reading goes through ``query``."""

    def nvmlInit(self) -> None: ...

    def nvmlShutdown(self) -> None: ...

    def nvmlDeviceSetPowerManagementLimit(self, handle: NvmlHandle, milliwatts: int) -> None: ...


class NvmlUnavailable(BackendError):
    """NVML cannot be used on this machine (no library, no driver)."""


def _binding() -> ModuleType:
    import pynvml  # the official binding; cheap to import, loads libnvidia-ml only on init

    return pynvml  # type: ignore[no-any-return]


class Nvml:
    def __init__(self, lib: NvmlBinding | None = None) -> None:
        self._lib = lib if lib is not None else cast(NvmlBinding, _binding())
        self._errors = _binding()  # error codes and the NVMLError class come from the binding
        self._initialised = False

    @property
    def lib(self) -> NvmlBinding:
        return self._lib

    def init(self) -> None:
        """Load and initialise NVML. Raises NvmlUnavailable saying why it cannot."""
        if self._initialised:
            return
        err = self._errors
        try:
            self._lib.nvmlInit()
        except err.NVMLError as exc:
            code = getattr(exc, "value", None)
            reasons = {
                err.NVML_ERROR_LIBRARY_NOT_FOUND: "the NVML library (libnvidia-ml.so) is not installed",
                err.NVML_ERROR_DRIVER_NOT_LOADED: "the NVIDIA driver is not loaded",
                err.NVML_ERROR_NO_PERMISSION: "no permission to open the NVIDIA device files",
            }
            raise NvmlUnavailable(reasons.get(code, f"NVML failed to initialise: {exc}")) from None
        except OSError as exc:
            raise NvmlUnavailable(f"NVML could not be loaded: {exc}") from None
        self._initialised = True

    def shutdown(self) -> None:
        if self._initialised:
            try:
                self._lib.nvmlShutdown()
            except self._errors.NVMLError:
                pass
            self._initialised = False

    def set_power_limit(self, handle: NvmlHandle, watts: float, module: str) -> None:
        """The one NVML setter gpuvet has; called only under ``settings_journal.guarded``."""
        self.init()
        err = self._errors
        try:
            self._lib.nvmlDeviceSetPowerManagementLimit(handle, int(round(watts * 1000)))
        except err.NVMLError as exc:
            code = getattr(exc, "value", None)
            if code == err.NVML_ERROR_NO_PERMISSION:
                raise BackendError("no permission to change the power limit", where=module,
                                   fix="run as root (or with the needed capability), or drop --apply.") from None
            if code == err.NVML_ERROR_INVALID_ARGUMENT:
                raise BackendError(f"{watts:g} W is outside the allowed range", where=module,
                                   fix="see `nvidia-smi -q -d POWER` for Min/Max Power Limit.") from None
            raise BackendError(f"NVML refused the power limit: {exc}", where=module, fix="check the driver.") from None

    def query(self, function: str, *args: NvmlHandle | int | str, module: str | None = None) -> Any:
        """Call ``function(*args)``; see the module docstring for what errors become. The result is
        whatever that NVML function returns (a number, bytes, a ctypes structure, a tuple), or
        ``Unavailable``: the binding is untyped and the function is named at run time, so its
        callers narrow it (isinstance) where they read it."""
        self.init()
        fn: Callable[..., object] | None = getattr(self._lib, function, None)
        if fn is None:
            return Unavailable(f"{function} is not in this NVML binding")
        err = self._errors
        try:
            return fn(*args)
        except err.NVMLError as exc:
            code = getattr(exc, "value", None)
            if code == err.NVML_ERROR_GPU_IS_LOST:
                raise ModuleLost(f"{function} reports the GPU is lost", where=module,
                                 fix="check the kernel log for XID 79; reseat or replace the module.") from None
            outcomes = {
                err.NVML_ERROR_NOT_SUPPORTED: "not supported on this module",
                err.NVML_ERROR_FUNCTION_NOT_FOUND: "not in this driver (too old)",
                err.NVML_ERROR_NO_PERMISSION: "no permission (try as root)",
                err.NVML_ERROR_INVALID_ARGUMENT: "invalid argument (no such link or index)",
            }
            return Unavailable(outcomes.get(code, f"{function} failed: {exc}"))


def fabric_state(nvml: Nvml, handle: NvmlHandle, module: str) -> FabricState | Unavailable:
    """The module's NVLink fabric registration (nvmlDeviceGetGpuFabricInfo fills a structure the
    caller gives it)."""
    import ctypes

    info = nvml._errors.c_nvmlGpuFabricInfo_t()
    done = nvml.query("nvmlDeviceGetGpuFabricInfo", handle, NvmlHandle(ctypes.byref(info)), module=module)
    if isinstance(done, Unavailable):
        return done
    states = {0: "not_supported", 1: "not_started", 2: "in_progress", 3: "completed"}
    status = int(info.status)
    return FabricState(states.get(int(info.state), f"state {int(info.state)}"),
                       "success" if status == 0 else f"NVML error {status}", None, int(info.cliqueId))


@dataclass(frozen=True)
class DeviceQuery:
    """``Nvml.query`` bound to one module's handle: ``q("nvmlDeviceGetPowerUsage")``."""

    nvml: Nvml
    handle: NvmlHandle
    module: str

    def __call__(self, function: str, *args: int) -> Any:  # query's result, as it is
        return self.nvml.query(function, self.handle, *args, module=self.module)

    def or_none(self, function: str, *args: int) -> Any:  # query's result, None for Unavailable
        value = self.nvml.query(function, self.handle, *args, module=self.module)
        return None if isinstance(value, Unavailable) else value
