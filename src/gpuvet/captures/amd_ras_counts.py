"""Issue 46 (R12D): amdgpu's RAS error counts that are no count. amdgpu_ras.c (amdgpu_ras_error_print, its
query of a block's error status) prints '%ld correctable hardware errors detected in %s block' and the
uncorrectable twin after summing each channel's counter. A memory controller (UMC) queried while the module is
runtime-suspended or off the bus reads every channel's counter as all ones: the sum is a multiple of 0xFFFF
(16 channels: 1048560, and the same step again at every query), which no burst of real ECC events gives. Such a
count is read as a reading that cannot be trusted (kernel_messages.yaml's amd_ras_count_garbled: warn,
module_sensors_unreadable: read the counters again with the module awake), never as an uncorrectable error to RMA
for; any other count keeps its reading (amd_ras_uncorrectable: critical)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelEvent

GARBLED = "amd_ras_count_garbled"
_ALL_ONES = 0xFFFF
_COUNT = re.compile(r"\b(\d{5,12}) (?:new )?(?:un)?correctable hardware errors? detected in \w+ block", re.I)
# (kind, pattern): kernel_phrases makes them its KernelMessage records; the correctable twin (no kind of kernel.py's
# reads it) of up to 64 channels' all-ones counters
AMD: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        GARBLED,
        re.compile(
            r"\b(?:" + "|".join(str(_ALL_ONES * k) for k in range(64, 0, -1)) + r") (?:new )?correctable hardware errors? "
            r"detected in \w+ block",
            re.I,
        ),
    ),
)


def garbled(events: list[KernelEvent]) -> list[KernelEvent]:
    """``events`` with each amd_ras_uncorrectable whose count is a multiple of 0xFFFF read as GARBLED."""
    return [replace(e, kind=GARBLED) if e.kind == "amd_ras_uncorrectable" and _sentinel(e.text) else e for e in events]


def _sentinel(text: str) -> bool:
    m = _COUNT.search(text)
    return m is not None and int(m.group(1)) % _ALL_ONES == 0
