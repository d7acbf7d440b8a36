"""The one gateway to AMD SMI (AMD's ``amdsmi`` Python package, over ``libamd_smi.so``).

Every amdsmi call in gpuvet goes through ``Amdsmi.query``, as every NVML call goes through
``backends/nvidia/gateway.py``: the package is imported lazily (only when an AMD backend is opened);
functions missing from an older package become ``Unavailable``; the library's status codes
become outcomes — "not supported", "no permission" and "not implemented" are ``Unavailable``
readings, a module that stopped answering raises ``ModuleLost``, and a package, library or
driver that cannot be used raises ``AmdsmiUnavailable`` saying which. Values the package
itself marks ``"N/A"`` (it does so for UINT_MAX fields) are read through ``pick`` and become
``Unavailable`` too. Tests pass a fake with the same names (``lib=``, tests/fakes/fake_amdsmi.py).

Names, arguments and return shapes follow AMD's Python API reference
(https://rocm.docs.amd.com/projects/amdsmi/en/docs-6.4.1/reference/amdsmi-py-api.html) and the
package's source (github.com/ROCm/amdsmi, py-interface/amdsmi_interface.py); see docs/vendors.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NewType, Protocol, cast

from gpuvet.backends.base import ModuleLost as ModuleLost  # a module gone mid-read is the interface's ModuleLost
from gpuvet.backends.readings import Unavailable
from gpuvet.errors import BackendError

AmdHandle = NewType("AmdHandle", object)  # an amdsmi_processor_handle: opaque, only passed back

# amdsmi_status_t (include/amd_smi/amdsmi.h): the ABI's numbers, the same in every release.
STATUS_INVAL, STATUS_NOT_SUPPORTED, STATUS_NOT_YET_IMPLEMENTED = 1, 2, 3
STATUS_FAIL_LOAD_MODULE, STATUS_FAIL_LOAD_SYMBOL = 4, 5
STATUS_NO_PERM, STATUS_FILE_ERROR = 10, 14
STATUS_BUSY, STATUS_NOT_FOUND, STATUS_NOT_INIT, STATUS_DRIVER_NOT_LOADED = 30, 31, 32, 34
STATUS_NO_DATA = 40

# AMDSMI_IOLINK_TYPE_* (what amdsmi_topo_get_link_type returns as "type")
IOLINK_PCIE, IOLINK_XGMI = 1, 2
GPU_BLOCK_UMC = 0x1  # AMDSMI_GPU_BLOCK_UMC: the memory controller, HBM's ECC
PAGE_PENDING, PAGE_UNRESERVABLE = 1, 2  # AMDSMI_MEM_PAGE_STATUS_*


class AmdsmiBinding(Protocol):
    """What gpuvet calls on the package by name in code; every reading goes through ``query``."""

    def amdsmi_init(self) -> None: ...

    def amdsmi_shut_down(self) -> None: ...


class AmdsmiUnavailable(BackendError):
    """AMD SMI cannot be used on this machine (no package, no library, no amdgpu driver)."""


def _binding() -> ModuleType:
    """The real package. Raises AmdsmiUnavailable when it is not installed or cannot load its library."""
    try:
        import amdsmi  # AMD's package; loads libamd_smi.so when imported
    except ImportError as exc:
        raise AmdsmiUnavailable(f"the amdsmi Python package is not installed ({exc.msg})",
                                fix="pip install 'gpuvet[amd]' on a machine with ROCm's libamd_smi.") from None
    except OSError as exc:  # the package is there, its shared library is not
        raise AmdsmiUnavailable(f"the AMD SMI library (libamd_smi.so) could not be loaded: {exc}",
                                fix="install ROCm's amd-smi-lib, or point LD_LIBRARY_PATH at /opt/rocm/lib.") from None
    return amdsmi  # type: ignore[no-any-return]


_INIT_REASONS = {
    STATUS_DRIVER_NOT_LOADED: "the amdgpu driver is not loaded",
    STATUS_NO_PERM: "no permission to open the AMD device files (/dev/kfd, /dev/dri/*): join the render and video groups",
    STATUS_FAIL_LOAD_MODULE: "the AMD SMI library (libamd_smi.so) could not be loaded",
    STATUS_FAIL_LOAD_SYMBOL: "the AMD SMI library is older than its Python package (a symbol is missing)",
    STATUS_NOT_FOUND: "no AMD GPU was found",
}
_OUTCOMES = {
    STATUS_NOT_SUPPORTED: "not supported on this module",
    STATUS_NOT_YET_IMPLEMENTED: "not in this amdsmi (not implemented)",
    STATUS_NO_PERM: "no permission (try as root)",
    STATUS_INVAL: "invalid argument (no such link or sensor)",
    STATUS_NO_DATA: "no data reported",
    STATUS_BUSY: "the module was busy (try again)",
}


class Amdsmi:
    def __init__(self, lib: AmdsmiBinding | ModuleType | None = None) -> None:
        self._lib = lib if lib is not None else _binding()
        self._initialised = False

    @property
    def lib(self) -> AmdsmiBinding:
        return cast(AmdsmiBinding, self._lib)

    def _errors(self) -> tuple[type[BaseException], type[BaseException]]:
        """(the library's error class, the package's base error class) from the package itself."""
        base = getattr(self._lib, "AmdSmiException", Exception)
        return getattr(self._lib, "AmdSmiLibraryException", base), base

    def init(self) -> None:
        """Initialise AMD SMI for GPUs. Raises AmdsmiUnavailable saying why it cannot."""
        if self._initialised:
            return
        library_error, base = self._errors()
        try:
            self.lib.amdsmi_init()
        except library_error as exc:
            code = _code(exc)
            reason = _INIT_REASONS.get(code, f"AMD SMI failed to initialise: {exc}") if code is not None else str(exc)
            raise AmdsmiUnavailable(reason, fix="check `amd-smi list` and `dmesg | grep amdgpu`.") from None
        except (base, OSError) as exc:
            raise AmdsmiUnavailable(f"AMD SMI could not be used: {exc}",
                                    fix="check `amd-smi list` and `dmesg | grep amdgpu`.") from None
        self._initialised = True

    def shutdown(self) -> None:
        if self._initialised:
            _, base = self._errors()
            try:
                self.lib.amdsmi_shut_down()
            except base:
                pass
            self._initialised = False

    def enum(self, enum_class: str, member: str) -> Any:
        """A member of one of the package's argument enums (``AmdSmiClkType.GFX``): the package
        checks arguments with isinstance, so a plain int would be refused. Unavailable when this
        package has no such member."""
        found = getattr(getattr(self._lib, enum_class, None), member, None)
        return Unavailable(f"{enum_class}.{member} is not in this amdsmi package") if found is None else found

    def query(self, function: str, *args: object, module: str | None = None) -> Any:
        """Call ``function(*args)``; see the module docstring for what errors become. The result is
        what that amdsmi function returns (a dict, a list, a number, a string) or ``Unavailable``:
        the package is untyped and the function is named at run time, so callers narrow it."""
        self.init()
        fn: Callable[..., object] | None = getattr(self._lib, function, None)
        if fn is None:
            return Unavailable(f"{function} is not in this amdsmi package (too old)")
        for arg in args:
            if isinstance(arg, Unavailable):
                return arg
        library_error, base = self._errors()
        try:
            return fn(*args)
        except library_error as exc:
            code = _code(exc)
            if code == STATUS_NOT_FOUND:
                raise ModuleLost(f"{function} reports the module is gone (AMDSMI_STATUS_NOT_FOUND)", where=module,
                                 fix="check `dmesg | grep amdgpu` for a reset or a fall off the bus; reseat or "
                                     "replace the module.") from None
            return Unavailable(_OUTCOMES.get(code, f"{function} failed: {exc}") if code is not None
                               else f"{function} failed: {exc}")
        except base as exc:  # AmdSmiParameterException and the like: a package/library mismatch
            return Unavailable(f"{function} refused its arguments (amdsmi version mismatch?): {exc}")


def _code(exc: BaseException) -> int | None:
    """The status code an AmdSmiLibraryException carries (``get_error_code()``, ``err_code``)."""
    getter = getattr(exc, "get_error_code", None)
    code = getter() if callable(getter) else getattr(exc, "err_code", None)
    return abs(code) if isinstance(code, int) else None


def pick(result: object, *keys: str) -> object:
    """``result[k1][k2]…`` as the package returned it, or Unavailable when the call failed, a key is
    missing (older packages return fewer keys) or the package marks the value "N/A"."""
    value = result
    for key in keys:
        if isinstance(value, Unavailable):
            return value
        if not isinstance(value, dict) or key not in value:
            return Unavailable(f"{'.'.join(keys)} is not reported by this amdsmi")
        value = value[key]
    if isinstance(value, str) and value.strip().upper() in ("N/A", "NA", ""):
        return Unavailable(f"{'.'.join(keys)} is not supported on this module (N/A)")
    return value


def pick_int(result: object, *keys: str) -> int | Unavailable:
    value = pick(result, *keys)
    if isinstance(value, Unavailable):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return Unavailable(f"{'.'.join(keys)} is not a number here ({value!r})")
    return int(value)


@dataclass(frozen=True)
class ProcessorQuery:
    """``Amdsmi.query`` bound to one module's handle: ``q("amdsmi_get_power_info")``."""

    smi: Amdsmi
    handle: AmdHandle
    module: str

    def __call__(self, function: str, *args: object) -> Any:  # query's result, as it is
        return self.smi.query(function, self.handle, *args, module=self.module)
