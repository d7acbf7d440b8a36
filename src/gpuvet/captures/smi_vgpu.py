"""`nvidia-smi vgpu` on a vGPU host (issue 46, batch BJ): a box whose header names two rows per entry (``GPU  Name |
Bus-Id | GPU-Util`` over ``vGPU ID  Name | VM ID  VM Name | vGPU-Util``), then each physical GPU's row (its index,
name as the table cuts it, bus id, utilization) followed by one row per vGPU running on it (vGPU ID, vGPU type, the
VM's id - a number, or a UUID on KVM - and name, utilization). Read as one GPU with its vGPUs: the GPU is a module,
its vGPUs are said (none: none runs); the GPU is a vGPU host's (its virtualization mode Host VGPU). Nothing judged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.records import SmiTextModule
from gpuvet.captures.smi_text import SmiText, bus
from gpuvet.captures.text import MAX_MODULES, Line

MARKS = ("vGPU ID",)
_GPU_CELL = re.compile(r"^(\d{1,3})\s+(\S.{0,80})$")
_VGPU_CELL = re.compile(r"^(\d{4,20})\s+(\S.{0,80})$")  # a vGPU ID: a large number, never a GPU's index
_BUS = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")
_UTIL = re.compile(r"^(?:\d{1,3}\s?%|N/A)$")
_STAMP = re.compile(r"^\s*\w{3} \w{3}\s{1,2}\d{1,2} \d{2}:\d{2}:\d{2} \d{4}\s*$")  # the time nvidia-smi prints above
_DRIVER = re.compile(r"Driver Version:\s*(\d+\.\d+(?:\.\d+)?)")


@dataclass
class _Gpu:
    module: SmiTextModule
    vgpus: list[str] = field(default_factory=list)


def _border(text: str) -> bool:
    """A box's rule ('+----+', '|====|')."""
    s = text.strip()
    return len(s) > 8 and s[:2] in ("+-", "|-", "|=") and set(s) <= set("+-|= ")


def _cells(text: str) -> list[str] | None:
    """The three cells of a box row ('| a | b | c |'), None for another line."""
    s = text.strip()
    if not (s.startswith("|") and s.endswith("|")) or s.count("|") != 4:
        return None
    return [c.strip() for c in s[1:-1].split("|")]


def listing(lines: list[Line]) -> SmiText:
    """The GPUs of every `nvidia-smi vgpu` box in the lines, each with its vGPUs said (possibly none)."""
    out = SmiText()
    if not any("vGPU ID" in ln.text for ln in lines):
        return out
    gpus: list[_Gpu] = []
    inside = False
    for i, ln in enumerate(lines):
        t = ln.text
        if "vGPU ID" in t or "GPU-Util" in t or "vGPU-Util" in t:
            inside = True
            out.claimed.add(ln.no)
        elif "NVIDIA-SMI" in t and (d := _DRIVER.search(t)) is not None:
            out.driver, inside = d.group(1), True
            out.claimed |= {x.no for x in lines[max(0, i - 2):i] if _border(x.text) or _STAMP.match(x.text)}
            out.claimed.add(ln.no)
        elif inside and _border(t):
            out.claimed.add(ln.no)
        elif inside and (cells := _cells(t)) is not None:
            _row(cells, ln, gpus, out)
        elif t.strip():
            inside = False
    for g in gpus[:MAX_MODULES]:
        out.modules.append(g.module)
        running = f"{len(g.vgpus)} vGPU(s) running: {'; '.join(g.vgpus)}" if g.vgpus else "no vGPU running"
        out.notes.append(f"nvidia-smi vgpu: GPU {g.module.fields['Index']} {g.module.product} at {g.module.bus_id} "
                         f"(a vGPU host's GPU): {running}")
    return out


def _row(cells: list[str], ln: Line, gpus: list[_Gpu], out: SmiText) -> None:
    """A GPU's row (a bus id in its second cell) opens it; a vGPU's row under it is added to it."""
    first, second, util = cells
    if (g := _GPU_CELL.match(first)) is not None and _BUS.match(second) and _UTIL.match(util):
        fields = {"Index": g.group(1), "Product Name": g.group(2).strip(),
                  "GPU Virtualization Mode/Virtualization Mode": "Host VGPU"}
        gpus.append(_Gpu(SmiTextModule(bus(second), g.group(2).strip(), fields)))
        out.claimed.add(ln.no)
    elif gpus and (v := _VGPU_CELL.match(first)) is not None and _UTIL.match(util):
        vm_id, _, vm_name = second.partition(" ")
        vm = f"VM {vm_name.strip()} ({vm_id})" if vm_name.strip() else f"VM {vm_id}"
        gpus[-1].vgpus.append(f"vGPU {v.group(1)} {v.group(2).strip()} on {vm}, {util} busy")
        out.claimed.add(ln.no)
