"""Choose the backend: simulated when asked, captured files when given, NVIDIA when NVML
loads and finds modules, else AMD when AMD SMI loads and finds modules, otherwise the host
alone (with the reason each vendor library gave)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuvet import knowledge
from gpuvet.backends.base import Backend

if TYPE_CHECKING:  # a simulated node or captured files need neither NVML nor psutil
    from collections.abc import Mapping

    from gpuvet.backends.amd.gateway import Amdsmi
    from gpuvet.backends.nvidia.gateway import Nvml
    from gpuvet.captures.read import FileCapture
    from gpuvet.node.model import Node
    from gpuvet.node.spec import FaultSpec


@dataclass(frozen=True)
class SpecNode:
    """A node given as a preset or spec file, with no backend to run on: what planning and
    ``spec check`` read. The same node ``open_backend(sim=ref)`` would simulate."""

    declared: Node  # as designed
    found: Node  # with the spec's faults applied
    faults: list[FaultSpec]


def load_node(ref: str) -> SpecNode:
    """Raises SpecError/CatalogError for a bad ref, as ``open_backend(sim=ref)`` does."""
    from gpuvet.node.build import build_node
    from gpuvet.node.faults import apply_faults, check_faults
    from gpuvet.node.spec import load_spec

    spec, where = load_spec(ref)
    declared = build_node(spec, where)
    check_faults(declared, spec.faults, where)
    return SpecNode(declared, apply_faults(declared, spec.faults, off_bus=knowledge.off_bus_xids()), list(spec.faults))


def open_backend(sim: str | None = None, from_files: list[str] | None = None,
                 nvml: Nvml | None = None, amdsmi: Amdsmi | None = None,
                 parsed: Mapping[str, FileCapture] | None = None) -> Backend:
    """Raises SpecError/CatalogError for a bad ``sim`` spec, CaptureError for a bad capture. ``parsed``: the
    files' parses a caller made already (doctor's), taken instead of reading them again."""
    if sim:
        from gpuvet.backends.sim.backend import SimBackend

        return SimBackend.from_ref(sim)
    if from_files:
        from gpuvet.backends.capture.backend import CaptureBackend

        return CaptureBackend(from_files, parsed)
    from gpuvet.backends.host import HostBackend
    from gpuvet.backends.nvidia.backend import NvidiaBackend
    from gpuvet.backends.nvidia.gateway import NvmlUnavailable

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
    from gpuvet.backends.amd.backend import AmdBackend
    from gpuvet.backends.amd.gateway import AmdsmiUnavailable

    try:
        backend = AmdBackend(amdsmi)
    except AmdsmiUnavailable as exc:
        return exc.what
    if backend.count() == 0:
        backend.close()
        return "AMD SMI loaded but reports no modules"
    return backend
