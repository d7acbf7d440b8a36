"""A module's thermal behaviour, first order: temperature follows power through a thermal
resistance R (°C/W) over a reference (coolant/inlet) with time constant τ. Figures from the
seed's bring-up log: a 150→680 W step raised the core 12.4 °C in 200 ms and settled by 300 ms
(R ≈ 0.023 °C/W, τ ≈ 70 ms); full load 78.3 °C; first throttle (−15 % clock) at 89.2 °C,
second (−30 %) at 94.7 °C; recovery once it cools."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

SEED_R_C_PER_W = 12.4 / 530.0
SEED_TAU_S = 0.07
SEED_FULL_LOAD_C = 78.3
SEED_FULL_LOAD_W = 680.0
SEED_REFERENCE_C = SEED_FULL_LOAD_C - SEED_R_C_PER_W * SEED_FULL_LOAD_W  # coolant/inlet, ≈ 62.4 °C
FIRST_STEP = 0.85  # clock factor at the first throttle point
SECOND_STEP = 0.70
SECOND_POINT_OFFSET_C = 94.7 - 89.2
RECOVERY_HYSTERESIS_C = 3.0
THERMAL_SLOWDOWN_BITS = 0x20  # sw_thermal_slowdown
THERMAL_HARD_BITS = 0x40  # hw_thermal_slowdown


@dataclass(frozen=True)
class ThermalModel:
    r_c_per_w: float = SEED_R_C_PER_W
    tau_s: float = SEED_TAU_S
    first_point_c: float = 89.2

    @property
    def second_point_c(self) -> float:
        return self.first_point_c + SECOND_POINT_OFFSET_C

    def steady(self, reference_c: float, power_w: float, r_c_per_w: float | None = None) -> float:
        return reference_c + (self.r_c_per_w if r_c_per_w is None else r_c_per_w) * power_w

    def step(self, temp_c: float, reference_c: float, power_w: float, dt_s: float,
             r_c_per_w: float | None = None) -> float:
        """Exact first-order response over ``dt_s`` with power held constant."""
        target = self.steady(reference_c, power_w, r_c_per_w)
        return target + (temp_c - target) * math.exp(-dt_s / self.tau_s)


def throttle_level(temp_c: float, level: int, model: ThermalModel) -> int:
    """0 none, 1 first step, 2 second; with hysteresis: recover once cooler than the point by
    RECOVERY_HYSTERESIS_C."""
    if temp_c >= model.second_point_c:
        return 2
    if temp_c >= model.first_point_c:
        return max(1, level if temp_c >= model.second_point_c - RECOVERY_HYSTERESIS_C else 1)
    if level and temp_c >= model.first_point_c - RECOVERY_HYSTERESIS_C:
        return 1
    return 0


def clock_factor(level: int) -> float:
    return (1.0, FIRST_STEP, SECOND_STEP)[level]


def throttle_bits(level: int) -> int:
    return (0, THERMAL_SLOWDOWN_BITS, THERMAL_SLOWDOWN_BITS | THERMAL_HARD_BITS)[level]


STEP_FACTORS = np.array([1.0, FIRST_STEP, SECOND_STEP])
STEP_BITS = np.array([0, THERMAL_SLOWDOWN_BITS, THERMAL_SLOWDOWN_BITS | THERMAL_HARD_BITS])


def throttle_levels(temp_c: npt.NDArray[np.float64], level: npt.NDArray[np.int64],
                    first_point_c: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """``throttle_level`` for many modules at once (same steps, same hysteresis)."""
    second = first_point_c + SECOND_POINT_OFFSET_C
    hot = np.where(temp_c >= second - RECOVERY_HYSTERESIS_C, np.maximum(level, 1), 1)
    cooling = np.where((level > 0) & (temp_c >= first_point_c - RECOVERY_HYSTERESIS_C), 1, 0)
    out = np.where(temp_c >= second, 2, np.where(temp_c >= first_point_c, hot, cooling))
    return np.asarray(out, dtype=np.int64)
