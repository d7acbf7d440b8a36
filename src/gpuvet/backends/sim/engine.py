"""Simulated benchmark figures: the performance model (``gpuvet.node.performance``) with small
seeded noise, a simulated clock, and the behaviour of the faults a spec injects.

Every figure is *modelled*, never measured, and everything built here is labelled simulated.

Time: each workload advances the backend's ``SimClock`` by the simulated seconds it reports,
so telemetry sampled "during" a benchmark sees the right number of samples.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from gpuvet.backends.collective_data import (
    element_count,
    outputs_correct,
    rank_input,
    reference_collective,
)
from gpuvet.backends.engine import (
    BenchEngine,
    BenchModule,
    CollectiveSession,
    GemmCheck,
    Monitor,
    StreamKind,
    TrainSpec,
    Transfer,
    Unsupported,
    Workload,
)
from gpuvet.backends.readings import TelemetrySummary
from gpuvet.backends.sim.physics import OperatingPoint, SimPhysics
from gpuvet.node import performance
from gpuvet.node.catalog import ModuleModel
from gpuvet.node.collectives import CollectiveChoice, Tuning
from gpuvet.node.model import Node
from gpuvet.node.spec import (
    FaultSpec,
    MemClockFlappingFault,
    P2pDisabledFault,
    PowerCapLowFault,
    SilentCorruptionFault,
)

NOISE = 0.006  # lognormal sigma of one operation's time
TELEMETRY_PERIOD_S = 0.1


@contextmanager
def _unsupported() -> Iterator[None]:
    """What the model cannot say becomes a benchmark the engine cannot run."""
    try:
        yield
    except performance.NotModelled as exc:
        raise Unsupported(str(exc)) from None


@dataclass
class ModelledWorkload:
    """Runs nothing: reports ``k`` operations of a modelled duration with noise. ``seconds`` is
    the noise-free modelled time of one operation (what validate expects)."""

    engine: SimEngine
    seconds: float
    jitter: tuple[float, float] | None = None  # (low-state speed, share of samples there)
    module: str | None = None  # whose energy counter runs while it computes

    def timed(self, repeats: int) -> float:
        rng = self.engine.rng
        per_op = self.seconds * rng.lognormal(0.0, NOISE, size=repeats)
        total = float(per_op.sum())
        if self.jitter is not None:
            low_speed, _ = self.jitter
            share_low = float(rng.uniform(0.15, 0.85))  # how long the clock sat low in this sample
            total *= (1 - share_low) + share_low / low_speed
        self.engine.clock_advance(total)
        if self.module is not None:
            self.engine.add_energy(self.module, total)
        return total

    def close(self) -> None:
        pass


class SimEngine(BenchEngine):
    """The performance model (``gpuvet.node.performance``) + seeded noise + a simulated clock +
    the behaviour of injected faults (power caps, p2p off, memory clock flapping, corruption)."""

    simulated = True
    collective_backend = "simulated"

    def __init__(self, node: Node, faults: Sequence[FaultSpec], clock_advance: Callable[[float], float] | None = None,
                 seed: int = 0, physics: SimPhysics | None = None, now: Callable[[], float] | None = None) -> None:
        """``physics``: the node's thermal/power model (the backend shares its own with watch and
        health); ``now``: the node's clock, for the coolant's drift (default: this engine's)."""
        self.node = node
        self.device_name = f"simulated {node.name}"
        self.rng = np.random.default_rng(seed)
        self._advance = clock_advance
        self.faults = list(faults)
        self.p2p_disabled = any(isinstance(f, P2pDisabledFault) for f in faults)
        self.power_cap = {f.module: f.watts for f in faults if isinstance(f, PowerCapLowFault)}
        self.flapping = {f.module for f in faults if isinstance(f, MemClockFlappingFault)}
        self.corrupt = {f.module for f in faults if isinstance(f, SilentCorruptionFault)}
        self.perf = performance.PerformanceModel(node, self.p2p_disabled, self.power_cap)
        self.router = self.perf.router
        self.now_s = 0.0
        self.energy_j: dict[str, float] = {}  # what each module's energy counter would read
        self.physics = physics or SimPhysics(node, self.faults, seed)
        self._now = now or (lambda: self.now_s)
        self.telemetry_rng = np.random.default_rng([seed, 7])  # its own: the figures' noise stays as it was

    @property
    def collective_tuning(self) -> dict[str, Tuning]:
        """The collective constants per medium (the published-data fit swaps them)."""
        return self.perf.collective_tuning

    def clock_advance(self, seconds: float) -> None:
        self.now_s += seconds
        if self._advance is not None:
            self._advance(seconds)

    def operating_point(self, module: str) -> OperatingPoint:
        """``module`` running compute-bound work (drawing its TDP at full clock) now, under its
        power cap: power, clock share, temperature, throttle — from the node's one model."""
        i = np.array([self.physics.index[module]])
        cap = np.array([self.power_cap.get(module, np.nan)], dtype=np.float64)
        return self.physics.steady(i, self._now(), np.ones(1), cap)

    def add_energy(self, module: str, seconds: float) -> None:
        power = float(self.operating_point(module).power_w[0])
        self.energy_j[module] = self.energy_j.get(module, 0.0) + power * seconds

    def modules(self) -> list[BenchModule]:
        return [BenchModule(m.id, m.model, free_memory_bytes=m.model.memory_bytes) for m in self.node.modules]

    def _model(self, module: str) -> ModuleModel:
        with _unsupported():
            return self.perf.model(module)

    def _fits(self, module: str, nbytes: int) -> None:
        memory = self._model(module).memory_bytes
        if memory is not None and nbytes > memory:
            raise Unsupported(f"needs {nbytes / 1e9:.1f} GB but {module} has {memory / 1e9:.1f} GB")

    # --- compute -----------------------------------------------------------------------
    def gemm(self, module: str, dtype: str, n: int) -> Workload:
        with _unsupported():
            seconds = self.perf.gemm_seconds(module, dtype, n)
        self._fits(module, 3 * n * n * performance.DTYPE_BYTES[dtype])
        return ModelledWorkload(self, seconds, module=module)

    def gemm_check(self, module: str, dtype: str, n: int, seed: int) -> GemmCheck:
        # Modelled: modules of one model compute identical bits for one input (the digest of
        # model, dtype, size and seed) with the dtype's typical error; a corrupting module does not.
        model = self._model(module)
        corrupt = module in self.corrupt
        key = f"{model.name}/{dtype}/{n}/{seed}" + (f"/corrupted-by-{module}" if corrupt else "")
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        return GemmCheck(digest, 0.25 if corrupt else _REL_ERROR.get(dtype, 1e-6))

    def stream(self, module: str, kind: StreamKind, nbytes: int) -> Workload:
        with _unsupported():
            seconds = self.perf.stream_seconds(module, kind, nbytes)
        self._fits(module, (2 if kind == "copy" else 3) * nbytes)
        jitter = (0.6, 0.5) if module in self.flapping else None
        return ModelledWorkload(self, seconds, jitter)

    def train(self, module: str, spec: TrainSpec) -> Workload:
        with _unsupported():
            return ModelledWorkload(self, self.perf.train_seconds(module, spec.model, spec.amp, spec.flops_per_step))

    # --- transfers ---------------------------------------------------------------------
    def transfer_rates(self, transfers: Sequence[Transfer], raw: bool = False) -> list[float]:
        """The model's rates (``PerformanceModel.transfer_rates``)."""
        with _unsupported():
            return self.perf.transfer_rates(transfers, raw)

    def copy(self, transfers: Sequence[Transfer]) -> Workload:
        with _unsupported():
            return ModelledWorkload(self, self.perf.copy_seconds(transfers))

    # --- collectives -------------------------------------------------------------------
    def collectives(self, modules: Sequence[str], memo: dict[str, performance.Bandwidths] | None = None) -> SimCollectives:
        """``memo`` keeps the solved bandwidths across sessions of the same members, for callers
        whose node does not change (the planner)."""
        with _unsupported():
            times = self.perf.collectives(modules, memo)
        return SimCollectives(len(modules), tuple(modules), engine=self, times=times)

    def monitor(self, modules: Sequence[str]) -> Monitor:
        return _SimMonitor(self, list(modules))


_REL_ERROR = {"fp64": 1e-15, "fp32": 1e-6, "tf32": 1e-3, "fp16": 1e-3, "bf16": 8e-3, "fp8": 6e-2}


@dataclass
class SimCollectives(CollectiveSession):
    """A simulated group of ranks: the model's collective times (``CollectiveTimes``) with noise
    and the clock; results checked on real data computed by the reference collective."""

    engine: SimEngine | None = None
    times: performance.CollectiveTimes | None = None
    _last_algorithm: str | None = None

    @property
    def algorithm(self) -> str | None:
        return self._last_algorithm

    def choice(self, op: str, size_bytes: int, algorithm: str | None = None) -> CollectiveChoice:
        assert self.times is not None
        return self.times.choice(op, size_bytes, algorithm)

    def seconds(self, op: str, size_bytes: int, algorithm: str | None = None) -> tuple[float, str]:
        assert self.times is not None
        return self.times.seconds(op, size_bytes, algorithm)

    def workload(self, op: str, size_bytes: int, dtype: str) -> Workload:
        assert self.engine is not None
        seconds, self._last_algorithm = self.seconds(op, size_bytes)
        return ModelledWorkload(self.engine, seconds)

    def check(self, op: str, size_bytes: int, dtype: str, corrupt_rank: int | None = None) -> bool:
        # every rank holds count elements and an all_gather's output is count × ranks: bound the
        # whole check (at 576 ranks the old 4096 × ranks per rank was gigabytes), never below one per rank
        count = min(element_count(op, size_bytes, 4, self.nranks), 4096 * self.nranks,
                    max(self.nranks, 2**22 // self.nranks))
        count = element_count(op, count * 4, 4, self.nranks)
        inputs = [rank_input(op, r, self.nranks, count) for r in range(self.nranks)]
        outputs = reference_collective(op, inputs)
        if corrupt_rank is not None and outputs[corrupt_rank] is not None:
            out = outputs[corrupt_rank]
            assert out is not None
            out[0] += 1.0
        return outputs_correct(op, outputs, self.nranks, count)


_THERMAL_REASONS: tuple[tuple[str, ...], ...] = ((), ("sw_thermal_slowdown",),
                                                 ("sw_thermal_slowdown", "hw_thermal_slowdown"))


class _SimMonitor(Monitor):
    """Telemetry from the node's one thermal/power model (``SimPhysics``, as `watch` sees it): a
    capped module sits at its cap with the power throttle reason and a lower clock, and is cooler;
    a flapping module's memory clock swings."""

    def __init__(self, engine: SimEngine, modules: list[str]) -> None:
        self.engine, self.modules = engine, modules
        self.started = 0.0

    def start(self) -> None:
        self.started = self.engine.now_s

    def stop(self) -> dict[str, TelemetrySummary]:
        elapsed = self.engine.now_s - self.started
        samples = max(1, math.floor(elapsed / TELEMETRY_PERIOD_S))
        out = {}
        for m in self.modules:
            if m not in self.engine.node.module_ids:
                continue
            out[m] = self._summary(m, samples)
        return out

    def _summary(self, m: str, samples: int) -> TelemetrySummary:
        model = self.engine.node.module(m).model
        op = self.engine.operating_point(m)
        cap = self.engine.power_cap.get(m)
        sm = model.sm_clock_max_mhz
        sm_now = sm * float(op.clock[0]) if sm is not None else None
        mem = model.mem_clock_max_mhz
        mem_low = mem * 0.6 if (mem is not None and m in self.engine.flapping) else mem
        limit = cap if cap is not None else model.tdp_w
        power = float(op.power_w[0]) if limit is not None else None
        hottest = float(op.temp_c[0]) + abs(float(self.engine.telemetry_rng.normal(0, 0.15)))  # the sensor's noise
        reasons = (("sw_power_cap",) if bool(op.capped[0]) else ()) + _THERMAL_REASONS[int(op.level[0])]
        return TelemetrySummary(
            samples=samples, core_clock_mhz_median=sm_now, core_clock_mhz_min=sm_now, core_clock_mhz_max=sm_now,
            mem_clock_mhz_median=mem, mem_clock_mhz_min=mem_low, mem_clock_mhz_max=mem,
            power_w_median=power, power_w_max=power, power_limit_w=limit, temp_c_max=round(hottest, 1),
            throttle_reasons=reasons, simulated=True,
        )
