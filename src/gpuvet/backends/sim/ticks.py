"""A run of ticks of the simulated node computed at once (issue 43): every module and every tick
of the run in a few numpy operations, the same values tick by tick or in one go.

Each kind of random draw has its own stream (``Draws``: children of one seed), so the draws of n
ticks taken in one call are the draws the same ticks take one by one. The thermal lag and the
throttle steps are recurrences over ticks: the lag is solved as a fixed point of the tick-by-tick
formula (exact: each pass fixes at least one more tick, and with a lag of milliseconds against
ticks of seconds it settles in a few passes), the throttle level by assuming it holds and
re-computing from the first tick where it does not."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuvet.backends.readings import ModuleColumns, ModuleIdentity, Sample
from gpuvet.backends.sim.physics import FloatArray, IntArray, SimPhysics
from gpuvet.node.thermal import SEED_TAU_S, throttle_levels

BoolArray = npt.NDArray[np.bool_]
LAG_PASSES = 8  # fixed-point passes of the thermal lag before solving it tick by tick
FIRST_SPAN = 32  # ticks tried at once after the throttle level changed


@dataclass(frozen=True)
class Draws:
    """The sampler's random streams, one per kind of draw (children of one seed)."""

    demand: np.random.Generator  # load noise, normal
    flap: np.random.Generator  # memory clock flapping, uniform [0, 1)
    shown: np.random.Generator  # sensor noise, normal
    util: np.random.Generator  # utilisation, uniform
    ecc: np.random.Generator  # corrected ECC counts, Poisson

    @classmethod
    def seeded(cls, seed: int) -> Draws:
        kids = np.random.SeedSequence([seed, 5]).spawn(5)
        return cls(*(np.random.default_rng(k) for k in kids))


@dataclass(frozen=True)
class Thermal:
    """Power, clock and thermal state over a run of ticks (ticks × modules)."""

    power: FloatArray
    cap_clock: FloatArray
    capped: BoolArray
    temp: FloatArray
    level: IntArray


def lagged(target: FloatArray, before: FloatArray, decay: FloatArray) -> FloatArray:
    """``temp[i] = target[i] + (temp[i-1] - target[i]) * decay[i]`` (``temp[-1]`` = ``before``;
    NaN before: the target), exactly as computed tick by tick."""
    temp = target
    for _ in range(LAG_PASSES):
        prev = np.vstack((before[None, :], temp[:-1]))
        new = np.where(np.isnan(prev), target, target + (prev - target) * decay)
        if np.array_equal(new, temp, equal_nan=True):
            return new
        temp = new
    out = np.empty_like(target)
    prev_row = before
    for i in range(len(target)):
        out[i] = np.where(np.isnan(prev_row), target[i], target[i] + (prev_row - target[i]) * decay[i])
        prev_row = out[i]
    return out


def thermal_run(ph: SimPhysics, idx: IntArray, demand: FloatArray, caps: FloatArray, base: FloatArray,
                resistance: FloatArray, dt: FloatArray, temp0: FloatArray, level0: IntArray) -> Thermal:
    """Tick by tick: the power at the level the tick before left, the temperature lagging its
    target (``base`` + resistance × power), the throttle level with hysteresis."""
    n, k = demand.shape
    power, clock, temp = np.empty((n, k)), np.empty((n, k)), np.empty((n, k))
    capped, level = np.empty((n, k), dtype=bool), np.empty((n, k), dtype=np.int64)
    decay = np.exp(-dt / SEED_TAU_S)
    first_point = ph.first_point[idx]
    start, span, before, lvl = 0, n, temp0, level0
    while start < n:
        seg = slice(start, min(n, start + span))
        p, c, cap = ph.draw(idx, demand[seg], caps, lvl)
        t = lagged(base[seg] + resistance[seg] * p, before, decay[seg])
        new = throttle_levels(t, np.broadcast_to(lvl, t.shape), first_point)
        moved = np.flatnonzero((new != lvl).any(axis=1))
        take = int(moved[0]) + 1 if len(moved) else len(t)
        done = slice(start, start + take)
        power[done], clock[done], capped[done], temp[done], level[done] = p[:take], c[:take], cap[:take], \
            t[:take], new[:take]
        before, lvl = t[take - 1], new[take - 1]
        start += take
        span = max(FIRST_SPAN, 2 * take) if len(moved) else n
    return Thermal(power, clock, capped, temp, level)


@dataclass(frozen=True)
class SlowFields:
    """A module's slow fields while its roster holds (busy and idle PCIe generation)."""

    pcie_gen_max: int | None = None
    pcie_width_max: int | None = None
    pcie_width: int | None = None
    pcie_gen_busy: int | None = None
    pcie_gen_idle: int | None = None
    nvlink_up: int | None = None
    nvlink_expected: int | None = None
    nvlink_down: int | None = None  # links of the declared bonds not up (a link down, not a slowed one)


@dataclass(frozen=True)
class SimBlock:
    """Ticks of the simulated node with one roster: each array ticks × modules, in roster order."""

    times: list[float]
    slow: list[bool]
    identities: list[ModuleIdentity]
    slow_fields: list[SlowFields]
    temp: FloatArray  # as shown (sensor noise included)
    power: FloatArray
    sm: FloatArray
    mem: FloatArray
    util: FloatArray
    throttle: IntArray
    reference: FloatArray
    energy_mj: IntArray
    fb_used: IntArray
    fb_totals: list[int]
    busy: BoolArray
    counters: tuple[IntArray, IntArray, IntArray]  # ecc corrected, uncorrected, nvlink errors, after each tick
    xids: dict[int, tuple[int, ...]]  # roster position -> Xids on the first tick

    def __len__(self) -> int:
        return len(self.times)

    @property
    def count(self) -> int:
        """Module samples in the block."""
        return len(self.times) * len(self.identities)

    def samples(self, i: int) -> list[Sample]:
        """Tick ``i`` as ``Sample``s (positional, in Sample's field order)."""
        t, slow = self.times[i], self.slow[i]
        cols = (self.temp[i].tolist(), self.power[i].tolist(), self.sm[i].tolist(), self.mem[i].tolist(),
                self.util[i].tolist(), self.throttle[i].tolist(), self.reference[i].tolist(),
                self.energy_mj[i].tolist(), self.fb_used[i].tolist(), self.busy[i].tolist())
        counters = [c[i].tolist() for c in self.counters]
        xids = self.xids if i == 0 else {}
        out = []
        for n, (ident, tc, pw, sm, mem, u, b, ref, mj, used, busy) in enumerate(zip(self.identities, *cols,
                                                                                     strict=True)):
            total = self.fb_totals[n]
            used_b, free_b = (used, total - used) if total else (None, None)
            f = _slow_values(self.slow_fields[n], busy, *(c[n] for c in counters)) if slow else _NOT_READ
            out.append(Sample(t, ident.id, ident.uuid, tc, pw, sm, mem, u, b, ref, f[0], f[1], f[2], f[3], f[4],
                              f[5], f[6], f[7], f[8], xids.get(n, ()), used_b, free_b, mj, f[9], f[10]))
        return out

    def module_columns(self, first_row: int = 0) -> list[ModuleColumns]:
        """Each module's samples as columns (stream rows tick-major from ``first_row``)."""
        k, n = len(self.identities), len(self.times)
        slow_at = [i for i, s in enumerate(self.slow) if s]
        out = []
        for j, ident in enumerate(self.identities):
            a = {name: np.ascontiguousarray(getattr(self, attr)[:, j]) for name, attr in _FLOATS}
            b = ModuleColumns(ident.id, ident.uuid, self.times, list(range(first_row + j, first_row + n * k, k)),
                              a["temp"].tolist(), a["power"].tolist(), a["sm"].tolist(), a["mem"].tolist(),
                              a["util"].tolist(), self.throttle[:, j].tolist(), a["ambient"].tolist(), arrays=a)
            if slow_at:
                self._slow_columns(b, j, slow_at)
            if j in self.xids:
                b.xids = [self.xids[j]] + [()] * (n - 1)
            out.append(b)
        return out

    def _slow_columns(self, b: ModuleColumns, j: int, slow_at: list[int]) -> None:
        """The slow fields of module ``j`` on the slow ticks (None on the others), as ``from_samples`` has them."""
        n, f = len(self.times), self.slow_fields[j]
        busy = self.busy[:, j]

        def column(values: list[int | None] | int | None) -> list[int | None]:
            col: list[int | None] = [None] * n
            for pos, i in enumerate(slow_at):
                col[i] = values[pos] if isinstance(values, list) else values
            return col

        ecc, unc, nvl = (c[slow_at, j].tolist() for c in self.counters)
        b.ecc_corrected, b.ecc_uncorrected = column(ecc), column(unc)
        gens: list[int | None] = [f.pcie_gen_busy if busy[i] else f.pcie_gen_idle for i in slow_at]
        pcie = (column(gens), column(f.pcie_gen_max), column(f.pcie_width), column(f.pcie_width_max))
        b.pcie = pcie if any(v is not None for col in pcie for v in col) else None
        b.pcie_replays = column(0) if f.pcie_width_max is not None else None
        link = (column(f.nvlink_up), column(f.nvlink_expected), column(nvl))
        b.nvlink = link if any(v is not None for col in link for v in col) else None
        b.nvlink_down = column(f.nvlink_down) if f.nvlink_down is not None else None

    def logbook_columns(self) -> tuple[list[float], list[float], list[float], list[float], list[float],
                                       list[float], list[int]]:
        """t, temperature, power, SM and memory clocks, utilisation, throttle bits: tick-major lists."""
        t = np.repeat(np.asarray(self.times, dtype=np.float64), len(self.identities))
        return (t.tolist(), self.temp.ravel().tolist(), self.power.ravel().tolist(), self.sm.ravel().tolist(),
                self.mem.ravel().tolist(), self.util.ravel().tolist(), self.throttle.ravel().tolist())


_FLOATS = (("temp", "temp"), ("power", "power"), ("sm", "sm"), ("mem", "mem"), ("util", "util"),
           ("ambient", "reference"))

# a fast tick's slow fields: ecc_corrected, ecc_uncorrected, pcie_gen, pcie_gen_max, pcie_width,
# pcie_width_max, nvlink_up, nvlink_expected, nvlink_errors, pcie_replays, nvlink_down (none read)
_NOT_READ: tuple[int | None, ...] = (None,) * 11


def _slow_values(slow: SlowFields, busy: bool, ecc: int, ecc_uncorrected: int,
                 nvlink_errors: int) -> tuple[int | None, ...]:
    """A slow tick's fields (PCIe, NVLink, ECC) in ``_NOT_READ``'s order."""
    return (ecc, ecc_uncorrected, slow.pcie_gen_busy if busy else slow.pcie_gen_idle, slow.pcie_gen_max,
            slow.pcie_width, slow.pcie_width_max, slow.nvlink_up, slow.nvlink_expected, nvlink_errors,
            0 if slow.pcie_width_max is not None else None,  # no replay fault modelled
            slow.nvlink_down)
