"""Issue 43: the detectors and the forecaster fed a block at a time (gpuvet.checks.blocks) raise the
same events, in the same order, and end in the same state as fed one sample at a time."""

from __future__ import annotations

import numpy as np
import pytest

from gpuvet.backends.readings import Sample
from gpuvet.checks.blocks import from_samples, observe_all
from gpuvet.checks.detectors import default_detectors
from gpuvet.watch.forecast import ThermalForecaster


def _stream(seed: int, modules: int = 4, minutes: int = 3 * 1440) -> list[Sample]:
    """Minute samples of a node: jobs, a flapping memory clock, throttling, ECC that jumps and resets,
    a narrowed PCIe link, missing cells."""
    rng = np.random.default_rng(seed)
    out = []
    ecc = [0] * modules
    for k in range(minutes):
        busy = (k // 200) % 3 != 2
        for g in range(modules):
            power = None if rng.random() < 0.01 else (80 + 560 * busy) + rng.normal(0, 5)
            temp = 25 + (0.05 + (0.00005 * k / 60 if g == 1 else 0)) * (power or 80) + rng.normal(0, 0.4)
            ecc[g] = 0 if (g == 2 and k == 2000) else ecc[g] + int(g == 2 and rng.random() < 0.3) * 2
            mem = 2619.0 * (0.6 if g == 3 and 1000 < k < 1400 and rng.random() < 0.5 else 1.0)
            throttle = 0x20 if g == 0 and 300 <= k < 330 else (0x4 if g == 1 and k % 97 < 4 else 0)
            width = 8 if g == 3 and k > 3000 else 16
            out.append(Sample(60.0 * k, f"gpu{g}", f"GPU-{g}", float(round(temp)), power, 1980.0 if busy else 345.0,
                              mem, 0.95 if busy else 0.0, throttle, ecc_corrected=ecc[g], pcie_gen=5, pcie_gen_max=5,
                              pcie_width=width, pcie_width_max=16))
    return out


def _one_by_one(samples: list[Sample]) -> tuple[list[tuple[str, str | None, float]], ThermalForecaster]:
    detectors, fc = default_detectors(), ThermalForecaster({f"gpu{g}": 89.0 for g in range(4)})
    events = []
    for s in samples:
        for d in detectors:
            events += d.observe(s)
        events += fc.observe(s)
    return [(e.kind, e.module, e.time) for e in events], fc


@pytest.mark.parametrize("chunk", [1440, 97, 20_000])
def test_blocks_raise_what_samples_raise(chunk: int) -> None:
    samples = _stream(7)
    want, fc_want = _one_by_one(samples)
    detectors, fc = default_detectors(), ThermalForecaster({f"gpu{g}": 89.0 for g in range(4)})
    got = []
    for start in range(0, len(samples), chunk):
        part = samples[start:start + chunk]
        by: dict[str, list[int]] = {}
        for i, s in enumerate(part):
            by.setdefault(s.module, []).append(i)
        blocks = [from_samples([part[i] for i in rows], [start + i for i in rows]) for rows in by.values()]
        placed = observe_all(detectors, blocks)
        windows = fc.observe_blocks(blocks, slot=10**6)
        assert windows is not None
        got += [e for _, _, e in sorted(placed + windows, key=lambda x: (x[0], x[1]))]
    assert [(e.kind, e.module, e.time) for e in got] == want
    assert {"throttle", "clock_flapping", "link_degraded"} <= {k for k, _, _ in want}
    for m in fc.uuids:
        assert fc.status(m, samples[-1].t) == fc_want.status(m, samples[-1].t)


class _Recording(ThermalForecaster):
    """The forecaster, keeping every window it closes (module, time, figures) to compare."""

    def __init__(self) -> None:
        super().__init__({f"gpu{g}": 89.0 for g in range(4)})
        self.windows: list[tuple[str, float, float, float, bool]] = []

    def _closed(self, stats):  # type: ignore[no-untyped-def]
        self.windows += [(m, w.t, round(w.temp, 9), round(w.power, 9), w.steady) for m, w in stats.items()]
        return super()._closed(stats)


@pytest.mark.parametrize("chunk", [20_000, 1440])
def test_a_module_in_two_blocks_of_one_call_sums_as_samples_do(chunk: int) -> None:
    """Two blocks of one module in the same call share that module's open windows (the replay's
    at-once closing holds only where each module comes in one block; review finding on 6b3be6d)."""
    samples = _stream(11)
    want = _Recording()
    for s in samples:
        want.observe(s)
    fc = _Recording()
    for start in range(0, len(samples), chunk):
        part = samples[start:start + chunk]
        by: dict[str, list[int]] = {}
        for i, s in enumerate(part):
            by.setdefault(s.module, []).append(i)
        blocks = []
        for rows in by.values():
            half = len(rows) // 2 + 7  # cut mid-window: the second block continues the first one's window
            blocks += [from_samples([part[i] for i in r], [start + i for i in r]) for r in (rows[:half], rows[half:])]
        if fc.observe_blocks(blocks, slot=10**6) is None:  # refused: fed one by one, as the callers do
            for _, i, block in sorted((b.rows[i], i, b) for b in blocks for i in range(len(b))):
                fc.observe(block.sample(i))
    assert len(fc.windows) > 100
    assert sorted(fc.windows) == sorted(want.windows)
    for m in fc.uuids:
        assert fc.status(m, samples[-1].t) == want.status(m, samples[-1].t)
