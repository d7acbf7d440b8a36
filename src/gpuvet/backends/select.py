"""Choose the backend: simulated when asked, captured files when given, NVIDIA when NVML
loads and finds modules, else AMD when AMD SMI loads and finds modules, otherwise the host
alone (with the reason each vendor library gave)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuvet.backends.base import Backend

if TYPE_CHECKING:  # a simulated node or captured files need neither NVML nor psutil
    from gpuvet.backends.amdsmi_gateway import Amdsmi
    from gpuvet.backends.nvml import Nvml


def open_backend(sim: str | None = None, from_files: list[str] | None = None,
                 nvml: Nvml | None = None, amdsmi: Amdsmi | None = None) -> Backend:
    """Raises SpecError/CatalogError for a bad ``sim`` spec, CaptureError for a bad capture."""
    if sim:
        from gpuvet.backends.sim import SimBackend

        return SimBackend.from_ref(sim)
    if from_files:
        from gpuvet.backends.capture import CaptureBackend

        return CaptureBackend(from_files)
    from gpuvet.backends.host import HostBackend
    from gpuvet.backends.nvidia import NvidiaBackend
    from gpuvet.backends.nvml import NvmlUnavailable

    try:
        backend = NvidiaBackend(nvml)
    except NvmlUnavailable as exc:
        nvidia_why = exc.what
    else:
        if backend.count():
            return backend
        backend.close()
        nvidia_why = "NVML loaded but reports no modules"
    amd = _amd_backend(amdsmi)
    if isinstance(amd, str):
        return HostBackend(f"NVIDIA: {nvidia_why}; AMD: {amd}")
    return amd


def _amd_backend(amdsmi: Amdsmi | None) -> Backend | str:
    """The AMD backend when AMD SMI loads and finds modules, else why not."""
    from gpuvet.backends.amd import AmdBackend
    from gpuvet.backends.amdsmi_gateway import AmdsmiUnavailable

    try:
        backend = AmdBackend(amdsmi)
    except AmdsmiUnavailable as exc:
        return exc.what
    if backend.count() == 0:
        backend.close()
        return "AMD SMI loaded but reports no modules"
    return backend
