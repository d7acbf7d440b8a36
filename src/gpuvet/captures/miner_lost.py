"""A mining program's own line saying NVML lost a card (issue 46): the miners read each card's fan, power and
temperature through NVML every few seconds and print its answer when the read fails. NVML's answer 15
(NVML_ERROR_GPU_IS_LOST) means the card no longer answers on the bus, whatever the miner's wording:

    PhoenixMiner   2021.09.24:22:57:10.022: hwmc GPU2: unable to get fan speed - GPU is lost (15)
    T-Rex          20211219 17:26:36 WARN: NVML: can't get fan speed for GPU #1, error code 15
    others         GPU #3: ... GPU is lost / GPU 3 is lost
    NiceHash Miner [NVML] ... get failed with status: GPUIsLost   (NVML's enum name, no card named)
                   [NVAPI] Tach get failed with status: NVIDIA_DEVICE_NOT_FOUND

Any other program's line that names NVML and carries its error text is the same answer (Slurm's gres/nvml
plugin in slurmstepd and slurmd: ``error: NVML: Failed to get usage(15): GPU is lost``, ``Failed to get device
handle for GPU 0: GPU is lost``; a wrapper's ``nvmlDeviceGetHandleByIndex ... GPU is lost``): NVML's string for
its code 15 names no card unless the line does.

NVML's error in any spelling (``GPU is lost``, ``GPUIsLost``, ``GPU_IS_LOST``, ``NVML_ERROR_GPU_IS_LOST``) and
NVAPI's ``NVIDIA_DEVICE_NOT_FOUND`` asked about a card it was reading a moment before are the same loss; a line
naming no card puts it on "bus id not in the log".

Each is the card lost from the bus, named by the miner's own index (not a bus id, and not always the driver's
index: PhoenixMiner counts from 1), once per card. A miner's other lines (NVML's 999 on one card, its CUDA errors,
its readings) are captures/app_gpu_lines.py's, which runs this reader first."""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures.kernel import NO_BUS, KernelEvent, KernelParse
from gpuvet.captures.marks import holding
from gpuvet.captures.text import Line

# the card's index, then NVML's 'GPU is lost' (its code 15 in brackets or not) on the same line
_LOST = re.compile(r"\bGPU\s?#?(\d{1,2})\b[^\n]{0,120}?\b(?:GPU )?is lost\b")
# T-Rex's wording: NVML, the card's index, and the error code 15 (GPU_IS_LOST)
_CODE = re.compile(r"\bNVML\b[^\n]{0,80}?\bGPU\s?#?(\d{1,2})\b[^\n]{0,40}?\berror(?: code)?:?\s*15\b", re.I)
# NVML's GPU_IS_LOST by its enum name (GPUIsLost, GPU_IS_LOST) or NVAPI's NVIDIA_DEVICE_NOT_FOUND, on a miner's line
# that names NVML/NVAPI (a card's index on it if any)
_ENUM = re.compile(r"\b(?:NVML_)?(?:ERROR_)?(?:GPUIsLost|GPU_IS_LOST)\b"
                   r"|\bNVAPI\b[^\n]{0,120}?\b(?:NVAPI_)?NVIDIA_DEVICE_NOT_FOUND\b")
# any program's line naming NVML (Slurm's 'NVML:', gres/nvml, an nvml* call) and NVML's text for its code 15
_NVML_TEXT = re.compile(r"(?:\bNVML\b|\bnvml\w*|gres/nvml)[^\n]{0,160}?\bGPU is lost\b", re.I)
_INDEX = re.compile(r"\bGPU\s?#?(\d{1,2})\b")
_BUS = re.compile(r"(?<![0-9A-Fa-f:])[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]\b")
_ASKED = re.compile(r"\b(?:what|why|how|does|is there)\b[^\n]*\?\s*$", re.I)  # a poster's question about the line
_WORDS = ("lost", "NVML", "Lost", "LOST", "NOT_FOUND")  # _card reads no line without one (issue 43: found, not tested)


def parse(lines: list[Line]) -> KernelParse:
    """One 'module lost' event per card a program's NVML line (a miner's, slurmstepd's) says was lost (the first
    line, and how often)."""
    out = KernelParse()
    lost: dict[str, KernelEvent] = {}
    for ln in (lines[i] for i in holding(lines, _WORDS)):
        s = ln.text
        card = _card(s)
        if card is None:
            continue
        out.claimed.add(ln.no)
        first = lost.get(card)
        lost[card] = replace(first, count=first.count + 1) if first else KernelEvent("gpu_lost", card, s.strip()[:240],
                                                                                      ln.no)
    out.events = list(lost.values())
    lost.pop(NO_BUS, None)
    if out.events:
        named = f"{', '.join(lost)} " if lost else "a card (none named) "
        out.notes.append(f"a program's NVML/NVAPI reads (a miner's, slurmstepd's): {named}'GPU is lost' (NVML error "
                         "15, GPU_IS_LOST, or NVAPI finding no NVIDIA device); a card is named by the program's "
                         "index, or by the bus id where the line prints one")
    return out


def _card(s: str) -> str | None:
    """The card a miner's line says NVML (or NVAPI) lost: its index, NO_BUS where none is named; None if no loss."""
    if not any(w in s for w in _WORDS):
        return None
    m = (_LOST.search(s) if "lost" in s else None) or (_CODE.search(s) if "NVML" in s else None)
    if _ASKED.search(s) or "the device handle" in s:  # a question, or nvidia-smi's own answer: kernel.py's
        return None
    if (bus := _BUS.search(s)) is not None and (m is not None or _NVML_TEXT.search(s) or _ENUM.search(s)):
        return bus.group(0)  # MGL: a line naming the module's bus id ('… GPU_IS_LOST for GPU 0000:3b:00.0')
    if m is not None:
        return f"GPU {m.group(1)}"
    if _NVML_TEXT.search(s) is not None and "GPU-" not in s:  # NVML's text on another program's line, no card
        return NO_BUS
    if _ENUM.search(s) is None or "GPU-" in s:  # a UUID's GPU_IS_LOST is plugin_xids' (monitors, by UUID)
        return None
    index = _INDEX.search(s)
    return f"GPU {index.group(1)}" if index else NO_BUS
