"""Simulated benchmark figures: catalog peaks × efficiency, the flow solver for every
transfer, the α–β collective model, small seeded noise, and the faults a spec injects.

Every figure is *modelled*, never measured, and everything built here is labelled simulated.
The efficiency factors are what well-tuned runs reach on real modules (cited beside each);
they make simulated numbers look like field numbers so that rules and detectors can be tested
on them, not to predict any particular machine.

Time: each workload advances the backend's ``SimClock`` by the simulated seconds it reports,
so telemetry sampled "during" a benchmark sees the right number of samples.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gpuvet.backends.collective_data import (
    element_count,
    outputs_correct,
    rank_input,
    reference_collective,
)
from gpuvet.backends.engine import (
    HOST,
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
from gpuvet.node.catalog import ModuleModel
from gpuvet.node.collectives import Algorithm, Collective, CollectiveChoice, Protocol, Tuning, choose
from gpuvet.node.flow import solve_transfers
from gpuvet.node.model import EndpointKind, Node
from gpuvet.node.power_model import PowerModel
from gpuvet.node.routing import Router, link_capacity_gbps
from gpuvet.node.spec import (
    FaultSpec,
    MemClockFlappingFault,
    P2pDisabledFault,
    PowerCapLowFault,
    SilentCorruptionFault,
)

# Fraction of the datasheet peak a tuned benchmark reaches.
GEMM_EFFICIENCY = {  # cuBLAS on H100 SXM, large square products (published vendor and third-party runs)
    "fp64": 0.90, "fp32": 0.88, "tf32": 0.72, "fp16": 0.78, "bf16": 0.78, "fp8": 0.68,
}
GEMM_HALF_N = 512  # a product of side n reaches n/(n+512) of that: small products do not fill the device
STREAM_EFFICIENCY = {"copy": 0.91, "triad": 0.89}  # BabelStream/STREAM on HBM3 modules
COPY_EFFICIENCY = {"fabric": 0.85, "pcie": 0.86}  # nvbandwidth CE copies: NVLink4 ~380/450, Gen5 ~55/64
PAGEABLE_FACTOR = 0.45  # pageable copies are staged through a pinned bounce buffer by the CPU
TRAIN_EFFICIENCY = {  # share of the dense fp16/bf16 peak (AMP) a training step reaches
    "resnet50": 0.075,  # MLPerf Training ResNet-50: ~3,000 images/s per H100
    "gpt": 0.45,  # Megatron-style GPT blocks: 40–50 % MFU on H100
}
# The collective model's constants (gpuvet.node.collectives.Tuning), per medium.
# Bandwidth: NVLink rings deliver ~370 of 450 GB/s and NVLink SHARP peaks at busbw ~480 (algbw
# ~275) on 8 H100s (NCCL maintainer, NVIDIA/nccl-tests#212). PCIe rings: 0.66 of the link, fitted
# to all_reduce busbw ~40 GB/s on Gen5 x16 (63 GB/s) of 8 RTX PRO 6000 on four switches
# (voipmonitor/rtx6kpro hardware/pcie-bandwidth.md).
# Latency: 8 us to launch and complete a collective (a stated assumption), plus one step latency
# per (algorithm, protocol). NVLink's are fitted (rms error 6.5 %) to the complete 1 KiB - 16 GiB
# all_reduce_perf table of an 8x H100 DGX in NVIDIA/dgxc-benchmarking nccl/README.md. PCIe's LL
# step is fitted to NCCL's 28.6 us all-reduce of 256 B on 8 PCIe RTX PRO 6000 (p2pmark, same
# rtx6kpro source); PCIe's Simple step is a stated guess: no published PCIe table below 8 MiB
# was found to check it.
# Refit with `python benchmarks/collective_vs_published.py --fit`; the same script checks every
# constant against published runs it was not fitted to (tests/test_plan.py holds it there).
_R, _S = Algorithm.RING, Algorithm.IN_SWITCH
_LL, _LL128, _SIMPLE = Protocol.LL, Protocol.LL128, Protocol.SIMPLE
COLLECTIVE_TUNING = {
    "fabric": Tuning(base_s=8.0e-6,
                     alpha_s={(_R, _LL): 0.74e-6, (_R, _LL128): 2.0e-6, (_R, _SIMPLE): 2.4e-6, (_S, _SIMPLE): 41e-6},
                     efficiency={_R: 0.82, _S: 0.61}),
    "pcie": Tuning(base_s=8.0e-6,
                   alpha_s={(_R, _LL): 1.5e-6, (_R, _SIMPLE): 4.0e-6},
                   efficiency={_R: 0.66}),
}
Bandwidths = tuple[str, dict[Algorithm, float]]  # the medium (fabric, pcie) and each algorithm's per-rank GB/s
NOISE = 0.006  # lognormal sigma of one operation's time
TELEMETRY_PERIOD_S = 0.1


def _power_factor(model: ModuleModel, watts: float | None) -> float:
    """Speed of compute-bound work under a power cap (``gpuvet.node.power_model``)."""
    if watts is None or model.tdp_w is None:
        return 1.0
    return PowerModel(model.tdp_w).speed(watts)


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
    simulated = True
    collective_backend = "simulated"

    def __init__(self, node: Node, faults: Sequence[FaultSpec], clock_advance: Callable[[float], float] | None = None,
                 seed: int = 0) -> None:
        self.node = node
        self.device_name = f"simulated {node.name}"
        self.rng = np.random.default_rng(seed)
        self._advance = clock_advance
        self.faults = list(faults)
        self.p2p_disabled = any(isinstance(f, P2pDisabledFault) for f in faults)
        self.power_cap = {f.module: f.watts for f in faults if isinstance(f, PowerCapLowFault)}
        self.flapping = {f.module for f in faults if isinstance(f, MemClockFlappingFault)}
        self.corrupt = {f.module for f in faults if isinstance(f, SilentCorruptionFault)}
        self.router = Router(node)
        self.collective_tuning = dict(COLLECTIVE_TUNING)  # per medium; the published-data fit swaps it
        self.now_s = 0.0
        self.energy_j: dict[str, float] = {}  # what each module's energy counter would read

    def clock_advance(self, seconds: float) -> None:
        self.now_s += seconds
        if self._advance is not None:
            self._advance(seconds)

    def add_energy(self, module: str, seconds: float) -> None:
        model = self.node.module(module).model
        power = PowerModel(model.tdp_w or 700.0).power(self.power_cap.get(module))
        self.energy_j[module] = self.energy_j.get(module, 0.0) + power * seconds

    def modules(self) -> list[BenchModule]:
        return [BenchModule(m.id, m.model, free_memory_bytes=m.model.memory_bytes) for m in self.node.modules]

    def _model(self, module: str) -> ModuleModel:
        if module not in self.node.module_ids:
            raise Unsupported(f"the simulated node has no module {module!r}")
        return self.node.module(module).model

    def _fits(self, module: str, nbytes: int) -> None:
        memory = self._model(module).memory_bytes
        if memory is not None and nbytes > memory:
            raise Unsupported(f"needs {nbytes / 1e9:.1f} GB but {module} has {memory / 1e9:.1f} GB")

    # --- compute -----------------------------------------------------------------------
    def gemm(self, module: str, dtype: str, n: int) -> Workload:
        model = self._model(module)
        peak = model.peak_tflops(dtype)
        if peak is None:
            raise Unsupported(f"{model.name} has no published {dtype} rate (not supported or unknown)")
        self._fits(module, 3 * n * n * _dtype_bytes(dtype))
        eff = GEMM_EFFICIENCY[dtype] * n / (n + GEMM_HALF_N) * _power_factor(model, self.power_cap.get(module))
        return ModelledWorkload(self, 2.0 * n**3 / (peak * 1e12 * eff), module=module)

    def gemm_check(self, module: str, dtype: str, n: int, seed: int) -> GemmCheck:
        # Modelled: modules of one model compute identical bits for one input (the digest of
        # model, dtype, size and seed) with the dtype's typical error; a corrupting module does not.
        model = self._model(module)
        corrupt = module in self.corrupt
        key = f"{model.name}/{dtype}/{n}/{seed}" + (f"/corrupted-by-{module}" if corrupt else "")
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        return GemmCheck(digest, 0.25 if corrupt else _REL_ERROR.get(dtype, 1e-6))

    def stream(self, module: str, kind: StreamKind, nbytes: int) -> Workload:
        model = self._model(module)
        if model.memory_bw_gbps is None:
            raise Unsupported(f"{model.name} has no published memory bandwidth")
        arrays = 2 if kind == "copy" else 3
        self._fits(module, arrays * nbytes)
        moved = arrays * nbytes
        seconds = moved / (model.memory_bw_gbps * 1e9 * STREAM_EFFICIENCY[kind])
        jitter = (0.6, 0.5) if module in self.flapping else None
        return ModelledWorkload(self, seconds, jitter)

    def train(self, module: str, spec: TrainSpec) -> Workload:
        model = self._model(module)
        dtype = "bf16" if spec.amp else "fp32"
        peak = model.peak_tflops(dtype) or model.peak_tflops("fp16")
        if peak is None:
            raise Unsupported(f"{model.name} has no published {dtype} rate")
        eff = TRAIN_EFFICIENCY[spec.model] * _power_factor(model, self.power_cap.get(module))
        return ModelledWorkload(self, spec.flops_per_step / (peak * 1e12 * eff))

    # --- transfers ---------------------------------------------------------------------
    def _socket_of(self, module: str) -> str:
        sockets = self.node.sockets()
        if not sockets:
            raise Unsupported("the simulated node declares no host socket")
        routes = self.router.routes([(module, s) for s in sockets])
        reachable = [(len(route), s) for s, route in zip(sockets, routes, strict=True) if route]
        if not reachable:
            raise Unsupported(f"{module} has no route to host memory")
        return min(reachable)[1]  # the nearest socket: where a NUMA-aware runtime puts its buffers

    def _legs(self, t: Transfer) -> list[tuple[str, str]]:
        src = self._socket_of(t.dst) if t.src == HOST else t.src
        dst = self._socket_of(t.src) if t.dst == HOST else t.dst
        if t.src != HOST and t.dst != HOST and self.p2p_disabled:
            return [(t.src, self._socket_of(t.src)), (self._socket_of(t.dst), t.dst)]
        return [(src, dst)]

    def transfer_rates(self, transfers: Sequence[Transfer], raw: bool = False) -> list[float]:
        """GB/s each transfer gets with all of them running at once; ``raw``: the flow solver's
        share of the links, before what a copy engine achieves on them (collectives apply their
        own protocol efficiency)."""
        for t in transfers:
            for end in (t.src, t.dst):
                if end != HOST:
                    self._model(end)
        legs = [self._legs(t) for t in transfers]
        flat = [leg for group in legs for leg in group]
        solved = solve_transfers(self.node, flat, self.router)
        rates, i = [], 0
        for t, group in zip(transfers, legs, strict=True):
            parts = solved[i:i + len(group)]
            i += len(group)
            if any(p.gbps <= 0 for p in parts):
                raise Unsupported(f"no route from {t.src} to {t.dst} in the simulated node")
            rate = min(p.gbps for p in parts)
            if raw:
                rates.append(rate)
                continue
            on_fabric = all(self._on_fabric(p.route) for p in parts)
            rate *= COPY_EFFICIENCY["fabric" if on_fabric else "pcie"]
            if HOST in (t.src, t.dst) and not t.pinned:
                rate *= PAGEABLE_FACTOR
            rates.append(rate)
        return rates

    def _on_fabric(self, route: tuple[str, ...]) -> bool:
        kinds = {self.node.kind_of(e) for e in route}
        return kinds <= {EndpointKind.MODULE, EndpointKind.FABRIC_SWITCH}

    def copy(self, transfers: Sequence[Transfer]) -> Workload:
        rates = self.transfer_rates(transfers)
        seconds = max(t.nbytes / (r * 1e9) for t, r in zip(transfers, rates, strict=True))
        return ModelledWorkload(self, seconds)

    # --- collectives -------------------------------------------------------------------
    def collectives(self, modules: Sequence[str], memo: dict[str, Bandwidths] | None = None) -> SimCollectives:
        """``memo`` keeps the solved bandwidths across sessions of the same members, for callers
        whose node does not change (the planner)."""
        for m in modules:
            self._model(m)
        return SimCollectives(len(modules), tuple(modules), engine=self, memo=memo)

    def monitor(self, modules: Sequence[str]) -> Monitor:
        return _SimMonitor(self, list(modules))


def _dtype_bytes(dtype: str) -> int:
    return {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1}[dtype]


_REL_ERROR = {"fp64": 1e-15, "fp32": 1e-6, "tf32": 1e-3, "fp16": 1e-3, "bf16": 8e-3, "fp8": 6e-2}


@dataclass
class SimCollectives(CollectiveSession):
    engine: SimEngine | None = None
    _last_algorithm: str | None = None
    memo: dict[str, Bandwidths] | None = None  # solved bandwidths by op class (see SimEngine.collectives)

    @property
    def algorithm(self) -> str | None:
        return self._last_algorithm

    def _ring_gbps(self) -> float:
        ring = [(self.members[i], self.members[(i + 1) % self.nranks]) for i in range(self.nranks)]
        assert self.engine is not None
        return min(self.engine.transfer_rates([Transfer(a, b, 1) for a, b in ring], raw=True))

    def _all_to_all_gbps(self) -> float:
        assert self.engine is not None
        pairs = [(a, b) for a in self.members for b in self.members if a != b]
        rates = self.engine.transfer_rates([Transfer(a, b, 1) for a, b in pairs], raw=True)
        egress = {m: 0.0 for m in self.members}
        for (a, _), r in zip(pairs, rates, strict=True):
            egress[a] += r
        return min(egress.values())

    def _in_switch_gbps(self) -> float | None:
        """Per-module fabric bandwidth into a switch every member reaches directly, if the
        modules support in-switch reduction and p2p works."""
        assert self.engine is not None
        node = self.engine.node
        if self.engine.p2p_disabled:
            return None
        if not all(node.module(m).model.switch_reduction for m in self.members):
            return None
        per_module = []
        for m in self.members:
            to_switch = [link for link in node.links_of(m)
                         if link.up and link.kind.is_fabric and node.kind_of(link.other(m)) is EndpointKind.FABRIC_SWITCH]
            if not to_switch:
                return None
            per_module.append(sum(link_capacity_gbps(link) for link in to_switch))
        return min(per_module)

    def _uses_fabric(self) -> bool:
        assert self.engine is not None
        node = self.engine.node
        return not self.engine.p2p_disabled and all(
            any(link.kind.is_fabric and link.up for link in node.links_of(m)) for m in self.members)

    def choice(self, op: str, size_bytes: int, algorithm: str | None = None) -> CollectiveChoice:
        """Fastest (algorithm, protocol) and its modelled time, as NCCL's tuner would pick them;
        ``algorithm`` forces one, as ``NCCL_ALGO`` does (ValueError when it cannot run ``op`` on
        these modules)."""
        assert self.engine is not None
        medium, bandwidth = self._bandwidths(op)
        tuning = self.engine.collective_tuning[medium]
        if algorithm is not None and Algorithm(algorithm) is Algorithm.TREE:
            raise ValueError("inside one node NCCL's tree is a chain, no faster than the ring; its double binary "
                             "tree spans nodes, which this model does not")
        if algorithm is not None and Algorithm(algorithm) not in bandwidth:
            raise ValueError(f"{algorithm} needs modules and a switch that reduce in the fabric")
        best = choose(op, self.nranks, size_bytes, bandwidth, tuning, algorithm)
        if best is None:
            raise ValueError(f"{algorithm} does not implement {op}")
        return best

    def _bandwidths(self, op: str) -> Bandwidths:
        """The medium (fabric or pcie) and the per-rank bandwidth each available algorithm sees."""
        key = "all_to_all" if op == Collective.ALL_TO_ALL else "other"
        if self.memo is not None and key in self.memo:
            return self.memo[key]
        bandwidth = {Algorithm.RING: self._all_to_all_gbps() if key == "all_to_all" else self._ring_gbps()}
        switch = self._in_switch_gbps()
        if switch is not None:
            bandwidth[Algorithm.IN_SWITCH] = switch
        result = ("fabric" if self._uses_fabric() else "pcie", bandwidth)
        if self.memo is not None:
            self.memo[key] = result
        return result

    def seconds(self, op: str, size_bytes: int, algorithm: str | None = None) -> tuple[float, str]:
        c = self.choice(op, size_bytes, algorithm)
        return c.seconds, c.algorithm.value

    def workload(self, op: str, size_bytes: int, dtype: str) -> Workload:
        assert self.engine is not None
        seconds, self._last_algorithm = self.seconds(op, size_bytes)
        return ModelledWorkload(self.engine, seconds)

    def check(self, op: str, size_bytes: int, dtype: str, corrupt_rank: int | None = None) -> bool:
        count = min(element_count(op, size_bytes, 4, self.nranks), 4096 * self.nranks)
        count = element_count(op, count * 4, 4, self.nranks)
        inputs = [rank_input(op, r, self.nranks, count) for r in range(self.nranks)]
        outputs = reference_collective(op, inputs)
        if corrupt_rank is not None and outputs[corrupt_rank] is not None:
            out = outputs[corrupt_rank]
            assert out is not None
            out[0] += 1.0
        return outputs_correct(op, outputs, self.nranks, count)


class _SimMonitor(Monitor):
    """Telemetry consistent with the faults: a capped module sits at its cap with the power
    throttle reason; a flapping module's memory clock swings."""

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
            model = self.engine.node.module(m).model
            cap = self.engine.power_cap.get(m)
            sm = model.sm_clock_max_mhz
            sm_now = sm * _power_factor(model, cap) if sm is not None else None
            mem = model.mem_clock_max_mhz
            mem_low = mem * 0.6 if (mem is not None and m in self.engine.flapping) else mem
            limit = cap if cap is not None else model.tdp_w
            power = limit * (0.99 if cap is not None else 0.85) if limit is not None else None
            out[m] = TelemetrySummary(
                samples=samples, core_clock_mhz_median=sm_now, core_clock_mhz_min=sm_now, core_clock_mhz_max=sm_now,
                mem_clock_mhz_median=mem, mem_clock_mhz_min=mem_low, mem_clock_mhz_max=mem,
                power_w_median=power, power_w_max=power, power_limit_w=limit, temp_c_max=62.0,
                throttle_reasons=("sw_power_cap",) if cap is not None else (), simulated=True,
            )
        return out

