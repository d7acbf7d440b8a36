"""A mining program's own line saying NVML lost a card (issue 46): the miners read each card's fan, power and
temperature through NVML every few seconds and print its answer when the read fails. NVML's answer 15
(NVML_ERROR_GPU_IS_LOST) means the card no longer answers on the bus, whatever the miner's wording:

    PhoenixMiner   2021.09.24:22:57:10.022: hwmc GPU2: unable to get fan speed - GPU is lost (15)
    T-Rex          20211219 17:26:36 WARN: NVML: can't get fan speed for GPU #1, error code 15
    others         GPU #3: ... GPU is lost / GPU 3 is lost

Each is the card lost from the bus, named by the miner's own index (not a bus id, and not always the driver's
index: PhoenixMiner counts from 1), once per card. A miner's other NVML codes (999, an unknown error) and its
restart lines say nothing of which fault it was and are left to the kernel log."""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures.kernel import KernelEvent, KernelParse
from gpuvet.captures.text import Line

# the card's index, then NVML's 'GPU is lost' (its code 15 in brackets or not) on the same line
_LOST = re.compile(r"\bGPU\s?#?(\d{1,2})\b[^\n]{0,120}?\b(?:GPU )?is lost\b")
# T-Rex's wording: NVML, the card's index, and the error code 15 (GPU_IS_LOST)
_CODE = re.compile(r"\bNVML\b[^\n]{0,80}?\bGPU\s?#?(\d{1,2})\b[^\n]{0,40}?\berror(?: code)?:?\s*15\b", re.I)
_ASKED = re.compile(r"\b(?:what|why|how|does|is there)\b[^\n]*\?\s*$", re.I)  # a poster's question about the line


def parse(lines: list[Line]) -> KernelParse:
    """One 'module lost' event per card a miner's NVML line says was lost (the first line, and how often)."""
    out = KernelParse()
    lost: dict[str, KernelEvent] = {}
    for ln in lines:
        s = ln.text
        if "lost" not in s and "NVML" not in s:
            continue
        m = (_LOST.search(s) if "lost" in s else None) or (_CODE.search(s) if "NVML" in s else None)
        if m is None or _ASKED.search(s) or "device handle" in s:  # nvidia-smi's own answer: kernel.py's
            continue
        out.claimed.add(ln.no)
        card = f"GPU {m.group(1)}"
        first = lost.get(card)
        lost[card] = replace(first, count=first.count + 1) if first else KernelEvent("gpu_lost", card, s.strip()[:240],
                                                                                      ln.no)
    out.events = list(lost.values())
    if lost:
        out.notes.append(f"a miner's NVML reads: {', '.join(lost)} 'GPU is lost' (NVML error 15); the card is named "
                         "by the miner's own index, its bus id is not in these lines")
    return out
