"""Telemetry of a simulated node over simulated time: jobs that load modules for hours and
leave them idle between, a coolant/inlet temperature that drifts through the day, the
first-order thermal model with the seed's throttle steps, ECC counters, Xids, links that fail
at a given time, modules that fall off the bus or appear — everything a detector must see.

Two ways in: ``sample(t)`` steps the node (stateful: thermal lag, throttle hysteresis,
counters), and ``series(module, times)`` computes a whole trace with numpy for evaluations
over simulated months (steady-state temperature; the lag is far below a minute's sample)."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuvet.backends.readings import ModuleIdentity, Sample
from gpuvet.backends.telemetry import TelemetrySource
from gpuvet.node.faults import apply_faults
from gpuvet.node.model import Node
from gpuvet.node.spec import (
    EccRisingFault,
    FaultSpec,
    MemClockFlappingFault,
    ModuleAddedFault,
    ModuleLostFault,
    ThermalCreepFault,
    XidFault,
)
from gpuvet.node.thermal import (
    SEED_REFERENCE_C,
    ThermalModel,
    clock_factor,
    throttle_bits,
    throttle_level,
)

DAY = 86400.0
IDLE_POWER_SHARE = 0.13
IDLE_SM_MHZ = 345.0
BASE_ECC_PER_HOUR = 0.02
BUSY_MEMORY_SHARE, IDLE_MEMORY_SHARE = 0.85, 0.004


@dataclass
class _Schedule:
    """Alternating busy and idle segments for one module, extended as time goes on."""

    rng: np.random.Generator
    ends: list[float] = field(default_factory=list)
    busy: list[bool] = field(default_factory=list)
    level: list[float] = field(default_factory=list)

    def extend_to(self, t: float) -> None:
        while not self.ends or self.ends[-1] <= t:
            start = self.ends[-1] if self.ends else 0.0
            was_busy = self.busy[-1] if self.busy else bool(self.rng.random() < 0.3)
            now_busy = not was_busy
            mean, low, high = (4 * 3600, 1800, 12 * 3600) if now_busy else (3600, 300, 4 * 3600)
            self.ends.append(start + float(np.clip(self.rng.exponential(mean), low, high)))
            self.busy.append(now_busy)
            self.level.append(float(self.rng.uniform(0.88, 0.97)) if now_busy else IDLE_POWER_SHARE)

    def at_one(self, t: float) -> tuple[bool, float]:
        self.extend_to(t)
        i = bisect.bisect_right(self.ends, t)
        return self.busy[i], self.level[i]

    def at(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.extend_to(float(np.max(times)))
        idx = np.searchsorted(np.asarray(self.ends), times, side="right")
        return np.asarray(self.busy)[idx], np.asarray(self.level)[idx]


@dataclass
class _State:
    temp: float | None = None
    level: int = 0
    ecc: int = 0
    ecc_uncorrected: int = 0
    nvlink_errors: int = 0
    energy_j: float = 0.0
    last_t: float | None = None
    uuid: str | None = None


class SimTelemetrySource(TelemetrySource):
    """The simulated node's telemetry for `watch`: advancing it also moves the backend's
    clock, so benchmarks run for admission see the node as it is at that moment."""

    simulated = True

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.model = SimTelemetry(backend.declared, list(backend.spec.faults), seed=backend.seed,
                                  node_name=backend.spec.name)

    def _advance(self, t: float) -> None:
        if t > self.backend.clock.now_s:
            self.backend.advance_to(t)

    def present(self, t: float) -> list[ModuleIdentity]:
        self._advance(t)
        return self.model.present(t)

    def sample(self, t: float, slow: bool) -> list[Sample]:
        self._advance(t)
        return self.model.sample(t, slow)

    def slowdown_c(self) -> dict[str, float]:
        return {m.id: self.model.thermal_model(m.id).first_point_c for m in self.backend.declared.modules}

    def host(self) -> dict[str, float]:
        return {}  # the simulated node models no host load


class SimTelemetry:
    def __init__(self, declared: Node, faults: list[FaultSpec], seed: int = 0, node_name: str = "sim") -> None:
        self.declared = declared
        self.faults = faults
        self.seed = seed
        self.node_name = node_name
        self.index = {m.id: i for i, m in enumerate(declared.modules)}
        self._schedules = {m.id: _Schedule(np.random.default_rng([seed, i, 1])) for m, i in
                           ((m, self.index[m.id]) for m in declared.modules)}
        rng = np.random.default_rng([seed, 999])
        self._phases = rng.uniform(0, 2 * math.pi, 3)
        self._r0 = {m.id: 0.0234 * float(np.random.default_rng([seed, self.index[m.id], 2]).uniform(0.95, 1.05))
                    for m in declared.modules}
        self._offset = {m.id: float(np.random.default_rng([seed, self.index[m.id], 3]).normal(0, 0.4))
                        for m in declared.modules}
        self._state = {m.id: _State() for m in declared.modules}
        self._node_cache: dict[tuple[int, ...], Node] = {}
        self._rngs = {m.id: np.random.default_rng([seed, self.index[m.id], 5]) for m in declared.modules}
        self._creep: dict[str, list[ThermalCreepFault]] = {}
        for f in faults:
            if isinstance(f, ThermalCreepFault):
                self._creep.setdefault(f.module, []).append(f)
        self._lost_before: set[str] = set()

    # --- who is there ------------------------------------------------------------------
    def _active(self, t: float) -> tuple[int, ...]:
        return tuple(i for i, f in enumerate(self.faults) if f.at_s <= t)

    def node_at(self, t: float) -> Node:
        key = self._active(t)
        if key not in self._node_cache:
            self._node_cache[key] = apply_faults(self.declared, self.faults, t)
        return self._node_cache[key]

    def uuid(self, module: str, t: float) -> str:
        """A module added after one of the same name was lost is a replacement: a new UUID."""
        replaced = any(isinstance(f, ModuleLostFault) and f.module == module and f.at_s <= t for f in self.faults) and \
            any(isinstance(f, ModuleAddedFault) and f.module == module and f.at_s <= t for f in self.faults)
        return f"GPU-sim-{self.node_name}-{module}" + ("-r1" if replaced else "")

    def present(self, t: float) -> list[ModuleIdentity]:
        node = self.node_at(t)
        return [ModuleIdentity(m.id, self.uuid(m.id, t), m.bus_id, m.model.name) for m in node.modules]

    # --- the physics -------------------------------------------------------------------
    def reference_c(self, times: np.ndarray) -> np.ndarray:
        """Coolant/inlet temperature: a daily swing, a few-hour drift, a quarter-hour wobble."""
        p = self._phases
        return np.asarray(SEED_REFERENCE_C + 1.5 * np.sin(2 * np.pi * times / DAY + p[0])
                + 0.6 * np.sin(2 * np.pi * times / (3.7 * 3600) + p[1]) + 0.3 * np.sin(2 * np.pi * times / 1020 + p[2]))

    def reference_one(self, t: float) -> float:
        p = self._phases
        return (SEED_REFERENCE_C + 1.5 * math.sin(2 * math.pi * t / DAY + p[0])
                + 0.6 * math.sin(2 * math.pi * t / (3.7 * 3600) + p[1]) + 0.3 * math.sin(2 * math.pi * t / 1020 + p[2]))

    def resistance_one(self, module: str, t: float) -> float:
        r = self._r0[module]
        for f in self._creep.get(module, ()):
            r += f.c_per_watt_per_day * max(t - f.start_s, 0.0) / DAY
        return r

    def resistance(self, module: str, times: np.ndarray) -> np.ndarray:
        r = np.full(times.shape, self._r0[module])
        for f in self.faults:
            if isinstance(f, ThermalCreepFault) and f.module == module:
                r = r + f.c_per_watt_per_day * np.maximum(times - f.start_s, 0.0) / DAY
        return r

    def thermal_model(self, module: str) -> ThermalModel:
        model = self.declared.module(module).model
        return ThermalModel(first_point_c=model.slowdown_c or 89.2)

    def series(self, module: str, times: np.ndarray, rng: np.random.Generator | None = None) -> dict[str, np.ndarray]:
        """The whole trace at ``times`` (steady-state temperature; throttle without hysteresis)."""
        rng = rng or np.random.default_rng([self.seed, self.index[module], 4])
        model = self.declared.module(module).model
        tdp = model.tdp_w or 700.0
        busy, level = self._schedules[module].at(times)
        power = tdp * level * (1 + rng.normal(0, 0.01, times.shape))
        reference = self.reference_c(times) + self._offset[module]
        r = self.resistance(module, times)
        thermal = self.thermal_model(module)
        temp = reference + r * power
        lvl = np.where(temp >= thermal.second_point_c, 2, np.where(temp >= thermal.first_point_c, 1, 0))
        factor = np.choose(lvl, [1.0, 0.85, 0.70])
        power = power * (0.5 + 0.5 * factor)  # a slower clock draws less
        temp = reference + r * power + rng.normal(0, 0.15, times.shape)
        sm = np.where(busy, (model.sm_clock_max_mhz or 1980.0) * factor, IDLE_SM_MHZ)
        return {"t": times, "busy": busy, "util": np.where(busy, rng.uniform(0.93, 1.0, times.shape), 0.0),
                "power_w": power, "temp_c": temp, "reference_c": reference, "sm_clock_mhz": sm,
                "throttle": np.choose(lvl, [0, 0x20, 0x60])}

    # --- stepping ----------------------------------------------------------------------
    def sample(self, t: float, slow: bool) -> list[Sample]:
        out = []
        for ident in self.present(t):
            out.append(self._sample_module(ident, t, slow))
        return out

    def _sample_module(self, ident: ModuleIdentity, t: float, slow: bool) -> Sample:
        m = ident.id
        st = self._state[m]
        if st.uuid is not None and ident.uuid != st.uuid:
            st = self._state[m] = _State()  # a replacement starts cold, with its own counters
        st.uuid = ident.uuid
        rng = self._rngs[m]
        model = self.declared.module(m).model
        tdp = model.tdp_w or 700.0
        is_busy, share = self._schedules[m].at_one(t)
        thermal = self.thermal_model(m)
        reference = self.reference_one(t) + self._offset[m]
        r = self.resistance_one(m, t)
        dt = 1.0 if st.last_t is None else max(t - st.last_t, 1e-3)
        power = tdp * share * (1 + float(rng.normal(0, 0.01))) * (0.5 + 0.5 * clock_factor(st.level))
        temp = thermal.steady(reference, power, r) if st.temp is None else thermal.step(st.temp, reference, power, dt, r)
        st.level = throttle_level(temp, st.level, thermal)
        st.temp = temp
        sm_max = model.sm_clock_max_mhz or 1980.0
        mem_max = model.mem_clock_max_mhz or 2619.0
        sm = sm_max * clock_factor(st.level) if is_busy else IDLE_SM_MHZ
        mem = mem_max
        if is_busy and any(isinstance(f, MemClockFlappingFault) and f.module == m and f.at_s <= t for f in self.faults):
            mem = mem_max * (0.6 if rng.random() < 0.5 else 1.0)
        sample = Sample(t, m, ident.uuid, temp + float(rng.normal(0, 0.15)), power, sm, mem,
                        float(rng.uniform(0.93, 1.0)) if is_busy else 0.0, throttle_bits(st.level), reference)
        st.energy_j += power * (dt if st.last_t is not None else 0.0)
        sample.energy_mj = int(st.energy_j * 1000)
        if model.memory_bytes:  # a job holds most of the memory; an idle module only the driver's share
            used = int(model.memory_bytes * (BUSY_MEMORY_SHARE if is_busy else IDLE_MEMORY_SHARE))
            sample.fb_used_bytes, sample.fb_free_bytes = used, model.memory_bytes - used
        ecc_rate = BASE_ECC_PER_HOUR
        for f in self.faults:
            if isinstance(f, EccRisingFault) and f.module == m and f.at_s <= t:
                ecc_rate += f.per_hour * (1 + (t - f.at_s) / (6 * 3600))
        st.ecc += int(rng.poisson(ecc_rate * dt / 3600))
        xids = tuple(f.code for f in self.faults if isinstance(f, XidFault) and f.module == m
                     and (st.last_t if st.last_t is not None else -1.0) < f.at_s <= t)
        st.last_t = t
        if slow:
            self._slow_fields(sample, t, is_busy)
            sample.ecc_corrected, sample.ecc_uncorrected, sample.nvlink_errors = st.ecc, st.ecc_uncorrected, st.nvlink_errors
        sample.xids = xids
        return sample

    def _slow_fields(self, sample: Sample, t: float, busy: bool) -> None:
        m = sample.module
        model = self.declared.module(m).model
        node = self.node_at(t)
        link = node.pcie_link(m)
        if link is not None:
            sample.pcie_gen_max, sample.pcie_width_max = model.pcie_gen or link.gen, model.pcie_width or link.width
            sample.pcie_width = link.width if link.up else 0
            declared_link = self.declared.pcie_link(m)
            lane = declared_link.lane_gbps if declared_link else None
            slower = link.lane_gbps is not None and lane is not None and link.lane_gbps < lane * 0.99
            gen = (link.gen or model.pcie_gen or 5)
            sample.pcie_gen = (gen - 1 if slower else gen) if busy else 1  # an idle link downshifts, as real ones do
        expected = sum(lk.width for lk in self.declared.links_of(m) if lk.kind.is_fabric)
        if expected:
            up = 0
            for lk in node.links_of(m):
                if not lk.kind.is_fabric or not lk.up:
                    continue
                declared_lane = next((d.lane_gbps for d in self.declared.links_of(m) if d.ends == lk.ends
                                      and d.kind == lk.kind), lk.lane_gbps)
                share = (lk.lane_gbps / declared_lane) if lk.lane_gbps and declared_lane else 1.0
                up += round(lk.width * share)
            sample.nvlink_up, sample.nvlink_expected = up, expected
