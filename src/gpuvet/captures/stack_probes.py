"""Issue 46 (AGX1): a program that probes every vendor's stack prints the absence of the ones the host lacks.
Ray's accelerator detection imports AMD's SMI library on every node, which logs 'Driver not initialized (amdgpu
not found in modules)' (rocm_smi_lib / amdsmi, /sys/module/amdgpu/initstate absent) on an NVIDIA host; Blender's
Cycles, hashcat or a miner ask the OpenCL ICD loader for its platforms beside CUDA, and clGetPlatformIDs answers
CL_PLATFORM_NOT_FOUND_KHR (-1001) where no OpenCL driver is installed. Where the text shows the other vendor's
GPU or API in use, that line is the routine probe, read and said in a note, never a finding."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.lazy_re import lazy

if TYPE_CHECKING:
    from gpuvet.captures.records import AppError
    from gpuvet.captures.text import Line

AMD_ABSENT = "amd_smi_no_driver"  # app_errors' kind of the amdgpu-not-loaded line
# an NVIDIA GPU or the CUDA stack named as present: a model, nvidia-smi's banner, a CUDA device listed, torch's yes
_NVIDIA = lazy(
    r"\b(?:Tesla [A-Z]?\d|GeForce|Quadro|NVIDIA (?:[A-Z]\d{2,3}|RTX|GeForce|Tesla|A\d{2,3})|"
    r"[AHBL]\d{2,3}[- ](?:SXM|PCIE|PCIe|NVL)|NVIDIA-SMI \d|CUDA Version: \d|CUEW initialization succeeded|"
    r"PyTorch can use GPUs|device_cuda\.cpp|cuda:\d\b|CUDA device \d)"
)
# an AMD GPU or its stack named as present (a probe of AMD's stack on such a host is no probe)
_AMD = lazy(r"\b(?:Radeon|Instinct|MI\d{2,3}[A-Z]?\b|gfx\d{3,4}|ROCm version|HIP version|amdgpu \d{4}:)")
# OpenCL's word for no platform from the ICD loader (not clinfo's count, which is the user's own question)
_NO_PLATFORM = ("CL_PLATFORM_NOT_FOUND_KHR", "(-1001)")
_WORDS = ("Tesla", "GeForce", "Quadro", "NVIDIA", "SXM", "PCIE", "PCIe", "NVL", "CUDA", "CUEW", "PyTorch", "cuda")


def _names(lines: list[Line], pattern: re.Pattern[str], gate: tuple[str, ...]) -> bool:
    return any(pattern.search(ln.text) for ln in lines if any(w in ln.text for w in gate))


def nvidia_in_use(lines: list[Line]) -> bool:
    """The text names an NVIDIA GPU or the CUDA stack as present, and no AMD GPU."""
    return _names(lines, _NVIDIA, _WORDS) and not _names(
        lines, _AMD, ("Radeon", "Instinct", "MI", "gfx", "ROCm", "HIP", "amdgpu ")
    )


def kept(errors: list[AppError], lines: list[Line], notes: list[str]) -> list[AppError]:
    """``errors`` less the other vendor's probe: the amdgpu-not-loaded line where the text shows NVIDIA's stack in
    use, and OpenCL's no-platform answer where it shows CUDA's (each said in a note)."""
    probes = [e for e in errors if e.kind == AMD_ABSENT or any(w in e.text for w in _NO_PLATFORM)]
    if not probes or not nvidia_in_use(lines):
        return errors
    for e in probes:
        what = "AMD's SMI library found no amdgpu driver" if e.kind == AMD_ABSENT else "OpenCL found no platform"
        notes.append(
            f"line {e.line}: {what} on a host whose text shows NVIDIA's GPUs or CUDA: a program probing "
            "every vendor's stack (Ray, Blender, a miner), not a finding"
        )
    return [e for e in errors if e not in probes]
