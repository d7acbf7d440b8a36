"""A generated fleet's nvidia-smi logs with a known answer: the backtest's tests and the pinned
results of the speed work read the same node, made in one place."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

START = 1_767_225_600.0  # 2026-01-01 00:00 UTC

def node_csv(path: Path, days: float, creeping: int | None, seed: int) -> float | None:
    """A simulated node of 4 H200, a 5-minute nvidia-smi log; ``creeping`` warms by R from day 1.
    Returns the creeping module's first sample at or above 89 °C (the generator's own figure)."""
    rng = np.random.default_rng(seed)
    rows = ["timestamp, index, name, uuid, temperature.gpu, power.draw [W], utilization.gpu [%]"]
    crossing = None
    levels = rng.uniform(610, 690, 4)
    for k in range(int(days * 288)):
        t = START + k * 300
        day = k / 288
        if k % 96 == 0:  # new jobs every 8 h, each at its own power
            levels = rng.uniform(610, 690, 4)
        for g in range(4):
            r = 0.05 * (1 + 0.02 * g) + (0.006 * max(day - 1, 0) if g == creeping else 0.0)
            power = levels[g] + rng.normal(0, 4)
            temp = 24 + 2.5 * np.sin(2 * np.pi * day) + r * power + rng.normal(0, 0.3)
            if g == creeping and crossing is None and temp >= 89:
                crossing = t
            stamp = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(t))
            rows.append(f"{stamp}.000, {g}, NVIDIA H200, GPU-{path.stem}-{g}, {temp:.0f}, {power:.2f} W, 97 %")
    path.write_text("\n".join(rows) + "\n")
    return crossing
