"""How a module's speed and power follow its power cap — the simulated node's model.

Power at clock share f is P(f) = P_static + (TDP − P_static)·f³ (dynamic power ∝ f·V² with V
roughly ∝ f); throughput ∝ f. Under a cap c the module runs at the f where P(f) = c, at most 1.
With P_static = 30 % of TDP, a cap at 80 % of TDP keeps ~89 % of the speed — the seed's "a few
percent of performance for about a fifth of the power" in shape, if steeper.

Knee: the cap beyond which an extra watt buys less than ``fraction`` of the performance per
watt the module averages at that cap: (dperf/dc)/(perf/c) = c / (3 (c − P_static)) < fraction,
i.e. c > P_static / (1 − 3·fraction)… for fraction = 0.5 that is c > 3·P_static.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PowerModel:
    tdp_w: float
    static_share: float = 0.3
    exponent: float = 3.0

    @property
    def static_w(self) -> float:
        return self.tdp_w * self.static_share

    def speed(self, cap_w: float | None) -> float:
        """Throughput share under ``cap_w`` (1.0 uncapped or at/above TDP)."""
        if cap_w is None or cap_w >= self.tdp_w:
            return 1.0
        if cap_w <= self.static_w:
            return 0.05  # barely clocked: the firmware floor
        return float(((cap_w - self.static_w) / (self.tdp_w - self.static_w)) ** (1 / self.exponent))

    def power(self, cap_w: float | None) -> float:
        """Power drawn by compute-bound work under the cap."""
        return self.tdp_w if cap_w is None else min(cap_w, self.tdp_w)

    def knee_w(self, fraction: float = 0.5) -> float:
        """Analytic knee (see the module docstring): the cap where the marginal/average ratio is
        ``fraction``; the TDP if that lies beyond it."""
        # c / (n (c − s)) = fraction  →  c = n·fraction·s / (n·fraction − 1)
        nf = self.exponent * fraction
        if nf <= 1:
            return self.tdp_w
        return min(nf * self.static_w / (nf - 1), self.tdp_w)
