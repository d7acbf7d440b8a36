"""dcgmi's NVLink error box (``dcgmi nvlink -e -g N``): its GPU row, then one row per link whose counters
are written 'CRC FLIT Error => 0', the link's later counters on rows of their own. Read into the NVLink
error records nvidia-smi nvlink -e fills (records.NvLinkErrors), so one check judges both tools' counts."""

from __future__ import annotations

import re

from gpuvet.captures.links import NvLinkParse
from gpuvet.captures.records import NvLinkErrors
from gpuvet.captures.text import Line

_GPU = re.compile(r"^\|\s*GPU (\d+)\s*\|?\s*$")
_COUNTER = re.compile(r"^\|\s*(?:Link (\d+))?\s*\|\s*([A-Za-z ]+?) Errors? => (\d+)\s*\|?\s*$")


def parse(lines: list[Line]) -> NvLinkParse:
    """Every counter the box gives, by DCGM's GPU id and link; a counter row before any link row is not read."""
    out = NvLinkParse()
    gpu: str | None = None
    link: int | None = None
    for ln in lines:
        s = ln.text.strip()
        if not s.startswith("|"):
            if not s.startswith("+"):
                gpu = link = None  # the box ended
            continue
        if (g := _GPU.match(s)) is not None:
            gpu, link = f"GPU {g.group(1)}", None
            out.claimed.add(ln.no)
        elif gpu is not None and (c := _COUNTER.match(s)) is not None:
            link = int(c.group(1)) if c.group(1) is not None else link
            if link is not None:
                out.errors.append(NvLinkErrors(gpu, link, c.group(2).strip(), int(c.group(3))))
                out.claimed.add(ln.no)
    if out.errors:
        out.notes.append(f"dcgmi nvlink -e: {len(out.errors)} counter(s) of "
                         f"{len({e.gpu for e in out.errors})} GPU(s) read (DCGM's GPU ids)")
    return out
