"""Telemetry of a simulated node over simulated time: jobs that load modules for hours and
leave them idle between, a coolant/inlet temperature that drifts through the day, the
first-order thermal model with the seed's throttle steps, ECC counters, Xids, links that fail
at a given time, modules that fall off the bus or appear — everything a detector must see.

The physics (power under a cap, temperature, throttle) is ``SimPhysics``, the same model the
simulated engine reports during benchmarks. Two ways in: ``sample_block(times)`` steps the whole
node over a run of ticks at once with numpy (stateful: thermal lag, throttle hysteresis, counters;
``sample(t)`` is a run of one tick, the same values either way: ``backends.sim.ticks``), and
``series(module, times)`` computes a whole trace for evaluations over simulated months
(steady-state temperature; the lag is far below a minute's sample)."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeGuard

import numpy as np
import numpy.typing as npt

from gpuvet import knowledge
from gpuvet.backends.readings import ModuleIdentity, Sample
from gpuvet.backends.sim.physics import FloatArray, IntArray, SimPhysics
from gpuvet.backends.sim.ticks import Draws, SimBlock, SlowFields, thermal_run
from gpuvet.backends.telemetry import TelemetrySource
from gpuvet.node.faults import apply_faults
from gpuvet.node.model import Node
from gpuvet.node.spec import (
    EccRisingFault,
    FaultSpec,
    MemClockFlappingFault,
    ModuleAddedFault,
    ModuleLostFault,
    XidFault,
)
from gpuvet.node.thermal import STEP_BITS, STEP_FACTORS, ThermalModel

if TYPE_CHECKING:
    from gpuvet.backends.sim.backend import SimBackend

IDLE_POWER_SHARE = 0.13
IDLE_SM_MHZ = 345.0
BASE_ECC_PER_HOUR = 0.02
BUSY_MEMORY_SHARE, IDLE_MEMORY_SHARE = 0.85, 0.004
POWER_CAP_BIT = 0x4  # sw_power_cap
DEFAULT_SM_MHZ, DEFAULT_MEM_MHZ = 1980.0, 2619.0


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

    def at(self, times: FloatArray) -> tuple[npt.NDArray[np.bool_], FloatArray]:
        self.extend_to(float(np.max(times)))
        idx = np.searchsorted(np.asarray(self.ends), times, side="right")
        return np.asarray(self.busy)[idx], np.asarray(self.level)[idx]


@dataclass(frozen=True)
class _Constants:
    """Per-module figures of one roster, in its order (``SimTelemetry._constants``)."""

    caps: FloatArray
    offset: FloatArray
    first_point: FloatArray
    sm_max: FloatArray
    mem_max: FloatArray
    fb_total: IntArray
    fb_totals: list[int]
    indices: list[int]


@dataclass(frozen=True)
class _Roster:
    """Who is there while one set of faults is active: identities, declared indexes, slow fields."""

    node: Node
    identities: list[ModuleIdentity]
    idx: IntArray
    slow: list[SlowFields]
    position: dict[int, int]  # declared index -> position in this roster


class _States:
    """Every declared module's running state, as arrays (NaN: no sample yet)."""

    def __init__(self, n: int) -> None:
        self.temp = np.full(n, np.nan)
        self.level = np.zeros(n, dtype=np.int64)
        self.ecc = np.zeros(n, dtype=np.int64)
        self.ecc_uncorrected = np.zeros(n, dtype=np.int64)
        self.nvlink_errors = np.zeros(n, dtype=np.int64)
        self.energy_j = np.zeros(n)
        self.last_t = np.full(n, np.nan)
        self.uuid: list[str | None] = [None] * n

    def reset(self, i: int) -> None:
        """A replacement module starts cold, with its own counters."""
        self.temp[i], self.level[i], self.ecc[i], self.ecc_uncorrected[i] = np.nan, 0, 0, 0
        self.nvlink_errors[i], self.energy_j[i], self.last_t[i] = 0, 0.0, np.nan


class SimTelemetrySource(TelemetrySource):
    """The simulated node's telemetry for `watch`: advancing it also moves the backend's
    clock, so benchmarks run for admission see the node as it is at that moment."""

    simulated = True

    def __init__(self, backend: SimBackend) -> None:
        self.backend = backend
        self.model = SimTelemetry(backend.declared, list(backend.spec.faults), seed=backend.seed,
                                  node_name=backend.spec.name, physics=backend.physics)

    def _advance(self, t: float) -> None:
        if t > self.backend.clock.now_s:
            self.backend.advance_to(t)

    def present(self, t: float) -> list[ModuleIdentity]:
        self._advance(t)
        return self.model.present(t)

    def sample(self, t: float, slow: bool) -> list[Sample]:
        self._advance(t)
        return self.model.sample(t, slow)

    def sample_block(self, times: Sequence[float], slow: Sequence[bool]) -> SimBlock:
        """Ticks at once while nothing comes or goes (``SimTelemetry.sample_block``)."""
        self._advance(times[0])
        block = self.model.sample_block(times, slow)
        self._advance(block.times[-1])
        return block

    def slowdown_c(self) -> dict[str, float]:
        return {m.id: self.model.thermal_model(m.id).first_point_c for m in self.backend.declared.modules}

    def host(self) -> dict[str, float]:
        return {}  # the simulated node models no host load


class SimTelemetry:
    def __init__(self, declared: Node, faults: list[FaultSpec], seed: int = 0, node_name: str = "sim",
                 physics: SimPhysics | None = None) -> None:
        self.declared = declared
        self.faults = faults
        self.seed = seed
        self.node_name = node_name
        self.physics = physics or SimPhysics(declared, faults, seed)
        self.index = dict(self.physics.index)
        n = len(self.index)
        self._schedules = [_Schedule(np.random.default_rng([seed, i, 1])) for i in range(n)]
        self._state = _States(n)
        self._draws = Draws.seeded(seed)  # a stream per kind of draw: ticks drawn in blocks (issue 43)
        models = [m.model for m in declared.modules]
        self._sm_max = np.array([m.sm_clock_max_mhz or DEFAULT_SM_MHZ for m in models])
        self._mem_max = np.array([m.mem_clock_max_mhz or DEFAULT_MEM_MHZ for m in models])
        self._fb_total = np.array([m.memory_bytes or 0 for m in models], dtype=np.int64)
        self._rosters: dict[tuple[tuple[int, ...], frozenset[int]], _Roster] = {}
        self._admitted: _Roster | None = None
        self._fired: set[int] = set()  # Xid faults (by index) already reported: one-time events fire once
        self._xids = [(j, self.index[f.module], f) for j, f in enumerate(faults)
                      if isinstance(f, XidFault) and f.module in self.index]
        self._off_bus = knowledge.off_bus_xids()
        self._ecc = [(self.index[f.module], f) for f in faults if isinstance(f, EccRisingFault) and f.module in self.index]
        self._flapping = [(self.index[f.module], f.at_s) for f in faults
                          if isinstance(f, MemClockFlappingFault) and f.module in self.index]
        self._consts: dict[int, _Constants] = {}  # id of a roster (kept in ``_rosters``) -> its constants

    # --- who is there ------------------------------------------------------------------
    def _active(self, t: float) -> tuple[int, ...]:
        return tuple(i for i, f in enumerate(self.faults) if f.at_s <= t)

    def _unreported_off_bus(self, t: float) -> frozenset[int]:
        """Off-bus Xids due by ``t`` but not yet reported: the module stays for the sample that
        carries its Xid (its last reading), then it is gone as a module_lost module is."""
        return frozenset(j for j, _, f in self._xids if f.code in self._off_bus and f.at_s <= t and j not in self._fired)

    def node_at(self, t: float) -> Node:
        return self._roster(t).node

    def uuid(self, module: str, t: float) -> str:
        """A module added after one of the same name was lost is a replacement: a new UUID."""
        replaced = any(self._takes_off(f) and f.module == module and f.at_s <= t for f in self.faults) and \
            any(isinstance(f, ModuleAddedFault) and f.module == module and f.at_s <= t for f in self.faults)
        spec_uuid = next((m.uuid for m in self.declared.modules if m.id == module and m.uuid), None)
        return (spec_uuid or f"GPU-sim-{self.node_name}-{module}") + ("-r1" if replaced else "")

    def _takes_off(self, f: FaultSpec) -> TypeGuard[ModuleLostFault | XidFault]:
        return isinstance(f, ModuleLostFault) or (isinstance(f, XidFault) and f.code in self._off_bus)

    def present(self, t: float) -> list[ModuleIdentity]:
        return list(self._roster(t).identities)

    def _roster(self, t: float) -> _Roster:
        pending = self._unreported_off_bus(t)
        key = (self._active(t), pending)
        roster = self._rosters.get(key)
        if roster is None:
            faults = [f for j, f in enumerate(self.faults) if j not in pending]
            node = apply_faults(self.declared, faults, t, self._off_bus)
            idents = [ModuleIdentity(m.id, self.uuid(m.id, t), m.bus_id, m.model.name) for m in node.modules]
            idx = np.array([self.index[m.id] for m in node.modules], dtype=np.int64)
            slow = [self._slow_static(node, m.id) for m in node.modules]
            roster = self._rosters[key] = _Roster(node, idents, idx, slow, {i: n for n, i in enumerate(idx.tolist())})
        return roster

    def _slow_static(self, node: Node, m: str) -> SlowFields:
        model = self.declared.module(m).model
        link = node.pcie_link(m)
        pcie = {}
        if link is not None:
            declared_link = self.declared.pcie_link(m)
            lane = declared_link.lane_gbps if declared_link else None
            slower = link.lane_gbps is not None and lane is not None and link.lane_gbps < lane * 0.99
            gen = (link.gen or model.pcie_gen or 5)
            pcie = {"pcie_gen_max": model.pcie_gen or link.gen, "pcie_width_max": model.pcie_width or link.width,
                    "pcie_width": link.width if link.up else 0,
                    "pcie_gen_busy": gen - 1 if slower else gen, "pcie_gen_idle": 1}  # an idle link downshifts
        expected = sum(lk.width for lk in self.declared.links_of(m) if lk.kind.is_fabric)
        if not expected:
            return SlowFields(**pcie)
        up = active = 0
        for lk in node.links_of(m):
            if not lk.kind.is_fabric or not lk.up:
                continue
            declared_lane = next((d.lane_gbps for d in self.declared.links_of(m) if d.ends == lk.ends
                                  and d.kind == lk.kind), lk.lane_gbps)
            share = (lk.lane_gbps / declared_lane) if lk.lane_gbps and declared_lane else 1.0
            up += round(lk.width * share)
            active += lk.width
        return SlowFields(**pcie, nvlink_up=up, nvlink_expected=expected, nvlink_down=max(expected - active, 0))

    # --- the physics -------------------------------------------------------------------
    def reference_c(self, times: FloatArray) -> FloatArray:
        """Coolant/inlet temperature (``SimPhysics.reference_c``)."""
        return self.physics.reference_c(times)

    def thermal_model(self, module: str) -> ThermalModel:
        return self.physics.thermal_model(module)

    def series(self, module: str, times: FloatArray, rng: np.random.Generator | None = None) -> dict[str, FloatArray]:
        """The whole trace at ``times`` (steady-state temperature; throttle without hysteresis)."""
        i = self.index[module]
        rng = rng or np.random.default_rng([self.seed, i, 4])
        ph = self.physics
        busy, share = self._schedules[i].at(times)
        demand = share * (1 + rng.normal(0, 0.01, times.shape))
        idx, caps = np.full(times.shape, i), np.full(times.shape, ph.caps[i])
        reference = ph.reference_c(times) + ph.offset[i]
        r = ph.resistance_series(i, times)
        power, cap_clock, capped = ph.draw(idx, demand, caps, np.zeros(times.shape, dtype=np.int64))
        hot, thermal = reference + r * power, ph.thermal_model(module)
        lvl = np.where(hot >= thermal.second_point_c, 2, np.where(hot >= thermal.first_point_c, 1, 0))
        power, _, _ = ph.draw(idx, demand, caps, lvl)  # a slower clock draws less
        temp = reference + r * power + rng.normal(0, 0.15, times.shape)
        sm = np.where(busy, self._sm_max[i] * cap_clock * STEP_FACTORS[lvl], IDLE_SM_MHZ)
        return {"t": times, "busy": busy, "util": np.where(busy, rng.uniform(0.93, 1.0, times.shape), 0.0),
                "power_w": power, "temp_c": temp, "reference_c": reference, "sm_clock_mhz": sm,
                "throttle": STEP_BITS[lvl] | np.where(capped & busy, POWER_CAP_BIT, 0)}

    # --- stepping ----------------------------------------------------------------------
    def _admit(self, roster: _Roster) -> None:
        if roster is self._admitted:
            return  # nobody came or went since the last sample
        self._admitted = roster
        st = self._state
        for ident, i in zip(roster.identities, roster.idx.tolist(), strict=True):
            if st.uuid[i] is not None and st.uuid[i] != ident.uuid:
                st.reset(i)
            st.uuid[i] = ident.uuid

    def sample(self, t: float, slow: bool) -> list[Sample]:
        """Every present module at ``t``: one tick of ``sample_block``."""
        return self.sample_block([t], [slow]).samples(0)

    def steady_ticks(self, times: Sequence[float]) -> int:
        """How many of ``times`` (ascending) one block takes: while the roster holds and no Xid
        falls due after the first tick (the next fault's time ends it; an Xid due at the first
        tick makes a block of that tick)."""
        t0 = times[0]
        present = set(self._roster(t0).idx.tolist())
        if any(j not in self._fired and f.at_s <= t0 and i in present for j, i, f in self._xids):
            return 1
        upcoming = min((f.at_s for f in self.faults if f.at_s > t0), default=math.inf)
        return max(1, bisect.bisect_left(times, upcoming))

    def sample_block(self, times: Sequence[float], slow: Sequence[bool]) -> SimBlock:
        """The ticks at ``times`` (ascending) at once, as many as ``steady_ticks`` allows: the
        same values as sampling them one by one."""
        n = self.steady_ticks(times)
        roster = self._roster(times[0])
        idx, k = roster.idx, len(roster.idx)
        tt = np.asarray(times[:n], dtype=np.float64)
        if not k:
            return _empty_block(list(times[:n]), list(slow[:n]))
        self._admit(roster)
        st, ph, d, c = self._state, self.physics, self._draws, self._constants(roster)
        busy, share = self._schedule_at(idx, tt)
        dt, first = self._dt(idx, tt), np.isnan(st.last_t[idx])
        demand = share * (1 + d.demand.normal(0, 0.01, (n, k)))
        reference = ph.reference_c(tt)[:, None] + c.offset
        th = thermal_run(ph, idx, demand, c.caps, reference, ph.resistance_at(tt)[:, idx], dt, st.temp[idx],
                         st.level[idx])
        sm = np.where(busy, c.sm_max * th.cap_clock * STEP_FACTORS[th.level], IDLE_SM_MHZ)
        mem = c.mem_max * np.where(busy & self._flapping_at(idx, tt) & (d.flap.random((n, k)) < 0.5), 0.6, 1.0)
        shown = th.temp + d.shown.normal(0, 0.15, (n, k))
        util = np.where(busy, d.util.uniform(0.93, 1.0, (n, k)), 0.0)
        weight = dt.copy()
        weight[0] = np.where(first, 0.0, dt[0])
        energy = np.cumsum(np.vstack((st.energy_j[idx][None, :], th.power * weight)), axis=0)[1:]
        ecc = st.ecc[idx] + np.cumsum(d.ecc.poisson(self._ecc_rate_at(idx, tt) * dt / 3600), axis=0)
        # a job holds most of the memory; an idle module only the driver's share
        used = (c.fb_total * np.where(busy, BUSY_MEMORY_SHARE, IDLE_MEMORY_SHARE)).astype(np.int64)
        bits = np.asarray(STEP_BITS[th.level] | np.where(th.capped & busy, POWER_CAP_BIT, 0), dtype=np.int64)
        xids = {roster.position[i]: codes for i, codes in self._fire_xids(idx, times[0]).items()}
        st.temp[idx], st.level[idx], st.ecc[idx], st.energy_j[idx] = th.temp[-1], th.level[-1], ecc[-1], energy[-1]
        st.last_t[idx] = tt[-1]
        counters = (ecc, np.broadcast_to(st.ecc_uncorrected[idx], (n, k)), np.broadcast_to(st.nvlink_errors[idx], (n, k)))
        return SimBlock(list(times[:n]), list(slow[:n]), roster.identities, roster.slow, shown, th.power, sm, mem,
                        util, bits, np.broadcast_to(reference, (n, k)), (energy * 1000).astype(np.int64), used,
                        c.fb_totals, busy, counters, xids)

    def _schedule_at(self, idx: IntArray, times: FloatArray) -> tuple[npt.NDArray[np.bool_], FloatArray]:
        """Busy flag and power share of modules ``idx`` at ``times`` (ticks × modules)."""
        busy, share = np.empty((len(times), len(idx)), dtype=bool), np.empty((len(times), len(idx)))
        for j, i in enumerate(idx.tolist()):
            busy[:, j], share[:, j] = self._schedules[i].at(times)
        return busy, share

    def _dt(self, idx: IntArray, times: FloatArray) -> FloatArray:
        """Seconds since each module's last sample (1 for its first), ticks × modules."""
        last = self._state.last_t[idx]
        dt = np.empty((len(times), len(idx)))
        dt[0] = np.where(np.isnan(last), 1.0, np.maximum(times[0] - last, 1e-3))
        dt[1:] = np.maximum(np.diff(times), 1e-3)[:, None]
        return dt

    def _constants(self, roster: _Roster) -> _Constants:
        """What ``sample`` reads of the modules present that does not change while they are (kept per roster)."""
        c = self._consts.get(id(roster))
        if c is None:
            idx, ph = roster.idx, self.physics
            c = self._consts[id(roster)] = _Constants(ph.caps[idx], ph.offset[idx], ph.first_point[idx],
                                                      self._sm_max[idx], self._mem_max[idx], self._fb_total[idx],
                                                      self._fb_total[idx].tolist(), idx.tolist())
        return c

    def _flapping_at(self, idx: IntArray, times: FloatArray) -> npt.NDArray[np.bool_]:
        on = np.zeros((len(times), len(self.index)), dtype=bool)
        for i, at in self._flapping:
            on[:, i] |= at <= times
        return on[:, idx]

    def _ecc_rate_at(self, idx: IntArray, times: FloatArray) -> FloatArray:
        rate = np.full((len(times), len(self.index)), BASE_ECC_PER_HOUR)
        for i, f in self._ecc:
            rate[:, i] += np.where(f.at_s <= times, f.per_hour * (1 + (times - f.at_s) / (6 * 3600)), 0.0)
        return rate[:, idx]

    def _fire_xids(self, idx: IntArray, t: float) -> dict[int, tuple[int, ...]]:
        """Xid faults due by ``t`` on a present module, each reported once — a replacement module
        does not inherit its predecessor's events."""
        present = set(idx.tolist())
        out: dict[int, tuple[int, ...]] = {}
        for j, i, f in self._xids:
            if j not in self._fired and f.at_s <= t and i in present:
                self._fired.add(j)
                out[i] = out.get(i, ()) + (f.code,)
        return out


def _empty_block(times: list[float], slow: list[bool]) -> SimBlock:
    """Ticks with no module present: nothing drawn, nothing sampled."""
    none = np.empty((len(times), 0))
    counts = np.empty((len(times), 0), dtype=np.int64)
    return SimBlock(times, slow, [], [], none, none, none, none, none, counts, none, counts, counts, [],
                    np.empty((len(times), 0), dtype=bool), (counts, counts, counts), {})
