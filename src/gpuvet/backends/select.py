"""Choose the backend: simulated when asked, captured files when given, NVIDIA when NVML
loads and finds modules, otherwise the host alone (with the reason)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuvet.backends.base import Backend

if TYPE_CHECKING:  # a simulated node or captured files need neither NVML nor psutil
    from gpuvet.backends.nvml import Nvml


def open_backend(sim: str | None = None, from_files: list[str] | None = None,
                 nvml: Nvml | None = None) -> Backend:
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
        return HostBackend(exc.what)
    if backend.count() == 0:
        backend.close()
        return HostBackend("NVML loaded but reports no modules")
    return backend
