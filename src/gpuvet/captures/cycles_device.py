"""Issue 46 (AGX2): Blender Cycles' CUDA, OptiX or HIP error placed on the device Cycles was rendering on. Cycles
prints no device on its error line ('Failed to create CUDA context (Unknown error)', 'Illegal address in CUDA queue
copy_from_device'), but the log names the device it activated before it: a render script's 'Activating <bpy_struct,
CyclesDeviceSettings("Tesla K80")>' (the preferences' device), or Cycles' own debug line 'Added device "NVIDIA
GeForce RTX 3080" with id "CUDA_NVIDIA GeForce RTX 3080_0000:01:00"' (its id ends in the PCI bus id). Where one
device was named before the error, the error is that device's; where several were, it stays unplaced."""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key

_SETTINGS = re.compile(r"CyclesDeviceSettings\(\"([^\"\n]{2,80})\"\)")
_ADDED = re.compile(
    r"Added device \"([^\"\n]{2,80})\" with id \"(?:CUDA|OPTIX|HIP|ONEAPI|METAL)_[^\"\n]*?_"
    r"((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\""
)
_WORDS = ("CyclesDeviceSettings(", 'Added device "')


def placed(error: AppError, lines: list[Line]) -> AppError:
    """``error`` on the one device the log names before it (by its bus id where Cycles' id gives it)."""
    if error.tool != "Blender" or error.module is not None:
        return error
    named: dict[str, str] = {}
    for ln in lines:
        if ln.no >= error.line:
            break
        if not any(w in ln.text for w in _WORDS):
            continue
        for m in _SETTINGS.finditer(ln.text):
            named.setdefault(m.group(1), f"{m.group(1)} (the device Cycles activated)")
        for m in _ADDED.finditer(ln.text):
            bdf = m.group(2) if m.group(2).count(":") == 2 else "0000:" + m.group(2)
            named[m.group(1)] = bus_key(bdf if "." in bdf else bdf + ".0")
    return replace(error, module=next(iter(named.values()))) if len(named) == 1 else error
