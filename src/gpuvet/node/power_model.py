"""How a module's speed and power follow its power cap — the simulated node's model.

Power at clock share f is P(f) = P_static + (D − P_static)·f³, where D is what the load draws at
full clock (the TDP for compute-bound work: dynamic power ∝ f·V² with V roughly ∝ f);
throughput ∝ f. Under a cap c below D the module runs at the f where P(f) = c. The clock never
falls below ``floor_clock`` (the firmware's lowest clock); P_static = 20 % of TDP keeps the
power at that floor (≈ 21 % of TDP) under the lowest cap NVML allows (≈ 29 % of TDP on H100/H200),
so across the allowed range the clock falls continuously as the cap drops — no cliff.
A cap at 80 % of TDP keeps ~91 % of the speed (the seed's "a few percent of performance for
about a fifth of the power" in shape, if steeper).

Knee: the cap beyond which an extra watt buys less than ``fraction`` of the performance per
watt the module averages at that cap: (dperf/dc)/(perf/c) = c / (3 (c − P_static)) < fraction,
i.e. c > P_static / (1 − 3·fraction)… for fraction = 0.5 that is c > 3·P_static.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PowerModel:
    tdp_w: float
    static_share: float = 0.2
    exponent: float = 3.0
    floor_clock: float = 0.2  # share of the maximum clock the firmware never goes below

    @property
    def static_w(self) -> float:
        return self.tdp_w * self.static_share

    def speed(self, cap_w: float | None) -> float:
        """Throughput share of compute-bound work under ``cap_w`` (1.0 uncapped or at/above TDP)."""
        if cap_w is None:
            return 1.0
        return float(self.clock(np.array([self.tdp_w]), np.array([cap_w]))[0])

    def clock(self, demand_w: FloatArray, cap_w: FloatArray) -> FloatArray:
        """Clock share for loads drawing ``demand_w`` at full clock under caps ``cap_w`` (NaN: no
        cap): 1 where the cap does not bind, else the f where P(f) = cap, never below the floor."""
        s = self.static_w
        dynamic = np.maximum(demand_w - s, 1e-9)
        share = np.clip((cap_w - s) / dynamic, 0.0, None)  # NaN (no cap) stays NaN, quietly
        f = np.cbrt(share) if self.exponent == 3.0 else share ** (1 / self.exponent)
        binds = cap_w < demand_w  # False for NaN
        return np.where(binds, np.maximum(f, self.floor_clock), 1.0)

    def draw(self, demand_w: FloatArray, clock: FloatArray, slowdown: FloatArray | float = 1.0) -> FloatArray:
        """Power of a load drawing ``demand_w`` at full clock, run at ``clock`` (the power cap's
        share, voltage following) and slowed by ``slowdown`` (a thermal clock step at the same
        voltage: dynamic power ∝ clock)."""
        s = np.minimum(self.static_w, demand_w)
        return np.asarray(s + (demand_w - s) * clock**self.exponent * slowdown, dtype=np.float64)

    def power(self, cap_w: float | None) -> float:
        """Power drawn by compute-bound work under the cap."""
        demand = np.array([self.tdp_w])
        cap = np.array([np.nan if cap_w is None else cap_w])
        return float(self.draw(demand, self.clock(demand, cap))[0])

    def knee_w(self, fraction: float = 0.5) -> float:
        """Analytic knee (see the module docstring): the cap where the marginal/average ratio is
        ``fraction``; the TDP if that lies beyond it."""
        # c / (n (c − s)) = fraction  →  c = n·fraction·s / (n·fraction − 1)
        nf = self.exponent * fraction
        if nf <= 1:
            return self.tdp_w
        return min(nf * self.static_w / (nf - 1), self.tdp_w)
