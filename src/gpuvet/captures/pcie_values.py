"""What a PCIe link can physically be, for readers that take a width, a GT/s rate or a generation from
a tool's text: a figure outside these is a corrupt or made-up reading (x99, 'inf GT/s', Gen9), left
unread with a note rather than judged as a link that trained down or up."""

from __future__ import annotations

import math

WIDTHS = (1, 2, 4, 8, 12, 16, 32)  # the link widths the PCIe specification defines
GENERATIONS = range(1, 7)  # Gen1 (2.5 GT/s) to Gen6 (64 GT/s)
RATES_GTS = (2.5, 5.0, 8.0, 16.0, 32.0, 64.0)  # the per-lane rate of each generation, in that order


def width_fault(width: float | None) -> str | None:
    """Why ``width`` is no PCIe link width (None when it is one, or when the tool gave none)."""
    if width is None or width in WIDTHS:
        return None
    return f"x{width:g} is no PCIe link width (x{', x'.join(map(str, WIDTHS))})"


def rate_fault(gts: float | None) -> str | None:
    """Why ``gts`` is no PCIe per-lane rate: not finite, or not within 2 % of a generation's rate."""
    if gts is None:
        return None
    if math.isfinite(gts) and any(abs(gts - r) <= 0.02 * r for r in RATES_GTS):
        return None
    return f"{gts:g} GT/s is no PCIe rate (Gen1-6: {', '.join(f'{r:g}' for r in RATES_GTS)} GT/s)"


def generation_fault(gen: float | None) -> str | None:
    """Why ``gen`` is no PCIe generation (1 to 6)."""
    if gen is None or (math.isfinite(gen) and gen in GENERATIONS):
        return None
    return f"Gen{gen:g} is no PCIe generation (Gen1-Gen6)"


def generation(gts: float | None) -> int | None:
    """The generation whose per-lane rate ``gts`` is (within 2 %, as rate_fault allows); None for no rate."""
    if gts is None or not math.isfinite(gts):
        return None
    return next((gen for gen, rate in enumerate(RATES_GTS, 1) if abs(gts - rate) <= 0.02 * rate), None)
