"""The pair of modules a failed peer-access call was enabling (issue 46, R7C): the line itself names none
(simpleP2P's 'code=205(cudaErrorMapBufferObjectFailed) "cudaDeviceEnablePeerAccess(gpuid[1], 0)"'), the program's
line above it does ('Enabling peer access between GPU0 and GPU1...'), so the finding names the pair, not the node."""

from __future__ import annotations

import re

from gpuvet.captures.text import Line

_BETWEEN = re.compile(r"peer access between (?:GPU|device|dev)\s?(\d{1,3}) and (?:GPU|device|dev)\s?(\d{1,3})", re.I)


def pair(lines: list[Line], i: int) -> str | None:
    """'GPU 0–GPU 1 (CUDA devices, process view)' from the nearest line above (up to eight) naming the pair."""
    for ln in reversed(lines[max(i - 8, 0) : i + 1]):
        if "eer access between" in ln.text and (m := _BETWEEN.search(ln.text)):
            return f"GPU {m.group(1)}–GPU {m.group(2)} (CUDA devices, process view)"
    return None
