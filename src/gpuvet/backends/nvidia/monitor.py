"""Telemetry sampled through NVML while a benchmark runs: SM and memory clocks, power and its
limit, temperature, and the clock-event (throttle) reasons — so a low figure has its reason
beside it. Read-only: nothing here changes a device setting."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuvet.backends.engine import PeriodicMonitor
from gpuvet.backends.nvidia.gateway import DeviceQuery, Nvml, NvmlHandle
from gpuvet.backends.readings import TelemetrySummary

NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0
# nvmlClocksEventReasons bits (nvml.h); gpu_idle is not a throttle and is left out
THROTTLE_REASONS = {
    0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x10: "sync_boost",
    0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def reason_names(mask: int) -> tuple[str, ...]:
    return tuple(name for bit, name in THROTTLE_REASONS.items() if mask & bit)


@dataclass
class _Series:
    sm: list[float] = field(default_factory=list)
    mem: list[float] = field(default_factory=list)
    power: list[float] = field(default_factory=list)
    limit: list[float] = field(default_factory=list)
    temp: list[float] = field(default_factory=list)
    reasons: set[str] = field(default_factory=set)
    samples: int = 0


class NvmlMonitor(PeriodicMonitor):
    def __init__(self, nvml: Nvml, handles: dict[str, NvmlHandle], modules: Sequence[str]) -> None:
        super().__init__()
        self.nvml = nvml
        self.handles = {m: handles[m] for m in modules if m in handles}
        self.series = {m: _Series() for m in self.handles}

    def sample(self) -> None:
        for module, handle in self.handles.items():
            s = self.series[module]
            q = DeviceQuery(self.nvml, handle, module).or_none
            s.samples += 1
            for target, value, scale in (
                (s.sm, q("nvmlDeviceGetClockInfo", NVML_CLOCK_SM), 1.0),
                (s.mem, q("nvmlDeviceGetClockInfo", NVML_CLOCK_MEM), 1.0),
                (s.power, q("nvmlDeviceGetPowerUsage"), 1e-3),
                (s.limit, q("nvmlDeviceGetEnforcedPowerLimit"), 1e-3),
                (s.temp, q("nvmlDeviceGetTemperature", NVML_TEMPERATURE_GPU), 1.0),
            ):
                if isinstance(value, (int, float)):
                    target.append(float(value) * scale)
            mask = q("nvmlDeviceGetCurrentClocksEventReasons")
            if mask is None:
                mask = q("nvmlDeviceGetCurrentClocksThrottleReasons")
            if isinstance(mask, int):
                s.reasons.update(reason_names(mask))

    def summary(self) -> dict[str, TelemetrySummary]:
        return {m: summarize_series(s) for m, s in self.series.items()}


def summarize_series(s: _Series) -> TelemetrySummary:
    def med(xs: list[float]) -> float | None:
        return statistics.median(xs) if xs else None

    return TelemetrySummary(
        samples=s.samples,
        core_clock_mhz_median=med(s.sm), core_clock_mhz_min=min(s.sm, default=None),
        core_clock_mhz_max=max(s.sm, default=None),
        mem_clock_mhz_median=med(s.mem), mem_clock_mhz_min=min(s.mem, default=None),
        mem_clock_mhz_max=max(s.mem, default=None),
        power_w_median=med(s.power), power_w_max=max(s.power, default=None),
        power_limit_w=med(s.limit), temp_c_max=max(s.temp, default=None),
        throttle_reasons=tuple(sorted(s.reasons)),
    )
