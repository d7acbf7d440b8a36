"""The simulated node's one thermal and power model. `watch --sim` (``SimTelemetry``), the
simulated engine's telemetry during benchmarks (`bench efficiency --sim`, validate) and
``health`` all ask it, so the same load at the same power cap shows the same temperature
everywhere.

Per module: the power a load draws follows its power cap (``node.power_model``: the clock falls
continuously as the cap drops); the temperature is the coolant/inlet temperature plus the thermal
resistance × power (``node.thermal``), with the seed's throttle steps. The coolant drifts through
the day; each module has its own resistance (±5 %) and offset, and thermal_creep faults raise the
resistance over time. Cooling is sized for each module's TDP (R ∝ 1/TDP around the seed's
700 W figure). Everything is seeded: same seed, same node."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuvet.node.model import Node
from gpuvet.node.power_model import PowerModel
from gpuvet.node.spec import FaultSpec, PowerCapLowFault, ThermalCreepFault
from gpuvet.node.thermal import SEED_REFERENCE_C, STEP_FACTORS, ThermalModel, throttle_levels

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
DAY = 86400.0
DEFAULT_TDP_W = 700.0
DEFAULT_SLOWDOWN_C = 89.2
SEED_R_MEAN = 0.0234  # °C/W, the seed's bring-up figure, on its 700 W modules
SEED_TDP_W = 700.0


@dataclass(frozen=True)
class OperatingPoint:
    """Modules at one moment (arrays in the order of the indexes asked for)."""

    power_w: FloatArray
    clock: FloatArray  # share of the maximum SM clock: power cap × thermal step
    temp_c: FloatArray  # steady state (no noise)
    level: IntArray  # thermal throttle level 0/1/2
    capped: npt.NDArray[np.bool_]  # the power cap holds the clock down


@dataclass(frozen=True)
class _Creep:
    index: int
    c_per_watt_per_day: float
    start_s: float


class SimPhysics:
    """The thermal and power model of every declared module of a simulated node."""

    def __init__(self, declared: Node, faults: Sequence[FaultSpec], seed: int = 0) -> None:
        modules = declared.modules
        self.ids = [m.id for m in modules]
        self.index = {m: i for i, m in enumerate(self.ids)}
        self.tdp = np.array([m.model.tdp_w or DEFAULT_TDP_W for m in modules], dtype=np.float64)
        self.first_point = np.array([m.model.slowdown_c or DEFAULT_SLOWDOWN_C for m in modules], dtype=np.float64)
        # cooling is sized for the module's TDP: a 1000 W module at full load runs as warm as the
        # seed's 700 W one (~78 °C), not 20 °C hotter into its slowdown point
        spread = [float(np.random.default_rng([seed, i, 2]).uniform(0.95, 1.05)) for i in range(len(modules))]
        self.r0: FloatArray = SEED_R_MEAN * SEED_TDP_W / self.tdp * np.array(spread)
        self.offset = np.array([float(np.random.default_rng([seed, i, 3]).normal(0, 0.4)) for i in range(len(modules))])
        self._phases = np.random.default_rng([seed, 999]).uniform(0, 2 * math.pi, 3)
        self.caps = np.full(len(modules), np.nan)  # power caps the spec sets (NaN: none)
        for f in faults:
            if isinstance(f, PowerCapLowFault) and f.module in self.index:
                self.caps[self.index[f.module]] = f.watts
        self._creep = [_Creep(self.index[f.module], f.c_per_watt_per_day, f.start_s) for f in faults
                       if isinstance(f, ThermalCreepFault) and f.module in self.index]
        self._power = PowerModel(1.0)  # in shares of each module's TDP: the model is linear in it

    def thermal_model(self, module: str) -> ThermalModel:
        return ThermalModel(first_point_c=float(self.first_point[self.index[module]]))

    # --- environment ---------------------------------------------------------------------
    def reference_c(self, times: FloatArray | float) -> FloatArray:
        """Coolant/inlet temperature: a daily swing, a few-hour drift, a quarter-hour wobble."""
        p, t = self._phases, np.asarray(times, dtype=np.float64)
        return np.asarray(SEED_REFERENCE_C + 1.5 * np.sin(2 * np.pi * t / DAY + p[0])
                          + 0.6 * np.sin(2 * np.pi * t / (3.7 * 3600) + p[1])
                          + 0.3 * np.sin(2 * np.pi * t / 1020 + p[2]), dtype=np.float64)

    def resistance(self, t: float) -> FloatArray:
        """Every module's thermal resistance (°C/W) at ``t``."""
        r = self.r0.copy()
        for c in self._creep:
            r[c.index] += c.c_per_watt_per_day * max(t - c.start_s, 0.0) / DAY
        return r

    def resistance_at(self, times: FloatArray) -> FloatArray:
        """``resistance`` at each of ``times`` (times × modules), the same figures."""
        r = np.tile(self.r0, (len(times), 1))
        for c in self._creep:
            r[:, c.index] += c.c_per_watt_per_day * np.maximum(times - c.start_s, 0.0) / DAY
        return r

    def resistance_series(self, i: int, times: FloatArray) -> FloatArray:
        """One module's thermal resistance over ``times``."""
        r = np.full(times.shape, self.r0[i])
        for c in self._creep:
            if c.index == i:
                r = r + c.c_per_watt_per_day * np.maximum(times - c.start_s, 0.0) / DAY
        return r

    # --- the operating point --------------------------------------------------------------
    def draw(self, idx: IntArray, demand_share: FloatArray, caps: FloatArray,
             level: IntArray) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
        """(power W, the cap's clock share, capped) of modules ``idx`` running loads that draw
        ``demand_share`` × TDP at full clock, under ``caps`` (NaN: none), at thermal ``level``
        (whose clock step multiplies the cap's share)."""
        tdp = self.tdp[idx]
        cap_clock = self._power.clock(demand_share, caps / tdp)
        factor = STEP_FACTORS[level]
        power = self._power.draw(demand_share, cap_clock, factor) * tdp
        return power, cap_clock, cap_clock < 1.0

    def steady(self, idx: IntArray, t: float, demand_share: FloatArray, caps: FloatArray) -> OperatingPoint:
        """Steady state of modules ``idx`` at ``t`` (the thermal lag, ~70 ms, is far below any
        benchmark's or sample's duration): the throttle level follows the temperature."""
        reference = self.reference_c(t) + self.offset[idx]
        r = self.resistance(t)[idx]
        level = np.zeros(len(idx), dtype=np.int64)
        for step in range(3):  # settle: a throttle step lowers the power, and so the temperature
            power, clock, capped = self.draw(idx, demand_share, caps, level)
            temp = reference + r * power
            new = throttle_levels(temp, level, self.first_point[idx])
            if step == 2 or np.array_equal(new, level):
                break  # (still stepping at the last: report the level the power was computed at)
            level = new
        return OperatingPoint(power, clock * STEP_FACTORS[level], temp, level, capped)
