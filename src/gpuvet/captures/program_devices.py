"""The module a program names as the one it runs on, where nothing else in the capture lists modules:
TensorFlow's ``Created device … -> physical GPU (device: 0, name: Tesla K80, pci bus id: 0000:00:04.0,
compute capability: 3.7)`` (since 2.5 without 'physical GPU ('), a test harness's ``Testing using device
Tesla K80`` (Julia's CUDA packages), ``Using device 0: NVIDIA A100-SXM4-40GB``. A program that failed says
which module it failed on only there; its model (and bus id where printed) is all that is known of it."""

from __future__ import annotations

import re

from gpuvet.captures.records import UNNAMED, SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import MAX_MODULES, Line
from gpuvet.node.bus import bus_key

_FAMILY = r"(?:NVIDIA|Tesla|Quadro|GeForce|TITAN)\b"  # NVIDIA's names: the list is read as nvidia-smi's
_TF = re.compile(r"-> (?:physical GPU \()?device: (\d{1,4}), name: (" + _FAMILY + r"[^,()]{1,60}), pci bus id: "
                 r"([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
_USING = re.compile(r"\b[Uu]sing (?:CUDA |GPU )?device (?:(\d{1,4}):? )?(" + _FAMILY + r"[\w .-]{1,60}?)\s*(?:\(|,|$)")


def listing(lines: list[Line]) -> SmiText:
    """The modules the program's own lines name, once each (by device index, or by name where none is printed)."""
    seen: dict[str, SmiTextModule] = {}
    for ln in lines:
        if "device" not in ln.text or len(seen) >= MAX_MODULES:
            continue
        if (t := _TF.search(ln.text)) is not None:
            name = t.group(2).strip()
            seen.setdefault(t.group(1), SmiTextModule(bus_key(t.group(3)), name, {"Product Name": name}))
        elif (u := _USING.search(ln.text)) is not None:
            name = u.group(2).strip()
            seen.setdefault(u.group(1) or name, SmiTextModule(f"{UNNAMED} #{len(seen) + 1}", name,
                                                              {"Product Name": name}))
    out = SmiText(modules=list(seen.values()))
    if out.modules:
        out.notes.append(f"the program's own lines name {len(out.modules)} module(s) it runs on "
                         f"({', '.join(m.product for m in out.modules[:4])}); only their model, and a bus id where "
                         "printed, are known")
    return out
