"""The performance model: what a module, link, path, collective or workload should achieve on a
node — catalog peaks × what tuned runs reach, the flow solver for every transfer, the α–β
collective model per algorithm and protocol. Pure and noise-free.

It is the one source of "expected": the simulated engine adds noise, a clock and injected faults
on top of it; validate, doctor and admission take their expected values from it on the design;
plan predicts with it. The efficiency factors are cited beside each; they make modelled figures
look like field figures, not predict any particular machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuvet.node.catalog import ModuleModel
from gpuvet.node.collectives import (
    Algorithm,
    Collective,
    CollectiveChoice,
    Protocol,
    SwitchChunking,
    Tuning,
    choose,
)
from gpuvet.node.flow import solve_transfers
from gpuvet.node.model import HOST, EndpointKind, LinkKind, Node, Transfer
from gpuvet.node.power_model import PowerModel
from gpuvet.node.routing import Router, link_capacity_gbps

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
# per (algorithm, protocol); and the share of the bandwidth each protocol delivers (LL and LL128
# deliver less than their wire format allows: NCCL runs them on fewer channels and threads).
# NVLink's are fitted (robust least squares on ln busbw) to the 1 KiB - 16 GiB all_reduce_perf
# table of an 8x H100 DGX in NVIDIA/dgxc-benchmarking nccl/README.md and checked against the same
# table of an 8x H100 p5.48xlarge (aws-samples/awsome-distributed-training): largest error 8.8 %,
# every size. PCIe's LL step is fitted to NCCL's 28.6 us all-reduce of 256 B on 8 PCIe RTX PRO
# 6000 (p2pmark, same rtx6kpro source); PCIe's Simple step is a stated guess: no published PCIe
# table below 8 MiB was found to check it. all_to_all (pairwise send/recv) has no published table
# here: it takes the ring's constants.
# Refit with `python benchmarks/collective_vs_published.py --fit`; the same script checks every
# constant against published runs it was not fitted to (tests/jobs/test_plan.py holds it there).
_R, _S, _P = Algorithm.RING, Algorithm.IN_SWITCH, Algorithm.PAIRWISE
_LL, _LL128, _SIMPLE = Protocol.LL, Protocol.LL128, Protocol.SIMPLE
_FABRIC_RING = {(_R, _LL): 0.688e-6, (_R, _LL128): 1.26e-6, (_R, _SIMPLE): 2.51e-6}
_PCIE_RING = {(_R, _LL): 1.47e-6, (_R, _SIMPLE): 4.0e-6}
# NVLink SHARP (NVLS) from NCCL's own source, not fitted: its tuner counts 23 us for a single-node
# NVLS collective (src/graph/tuning.cc at v2.20.5-1), the model's 8 us fixed time plus its two
# steps (push, pull) at 7.5 us each; one head per rank, at most 32 (src/include/device.h at
# v2.26.2-1), 16 channels on Hopper and 32 on Blackwell (src/transport/nvls.cc at v2.20.5-1 and
# v2.26.2-1); the chunk rule is SwitchChunking's (src/enqueue.cc at v2.20.5-1), its three pipelined
# stages the single-node NVLS all_reduce kernel's scatter, reduce-multicast and gather warps
# (src/device/all_reduce.h at v2.20.5-1). Fitted: the per-chunk time and the bandwidth efficiency
# (``benchmarks/collective_vs_published.py --fit``, on the calibration figures only).
_SHARP_STEP = (23.0e-6 - 8.0e-6) / 2
_SHARP_CHUNK_S = 2.95e-6
_NVLS_ARITY = 32


def _pairwise_as_ring(alpha: dict[tuple[Algorithm, Protocol], float]) -> dict[tuple[Algorithm, Protocol], float]:
    return {(_P, proto): a for (algo, proto), a in alpha.items() if algo is _R}


_FABRIC = Tuning(base_s=8.0e-6,
                 alpha_s={**_FABRIC_RING, (_S, _SIMPLE): _SHARP_STEP, **_pairwise_as_ring(_FABRIC_RING)},
                 efficiency={_R: 0.82, _S: 0.646, _P: 0.82},
                 share={_LL: 0.445, _LL128: 0.695, _SIMPLE: 1.0},
                 switch=SwitchChunking(channels=16, max_heads=_NVLS_ARITY, chunk_s=_SHARP_CHUNK_S))
# xGMI mesh (RCCL on 8 MI300X): fitted to the all_reduce_perf table of AMD's ROCm blog "Understanding
# RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X" (RCCL 2.22.3, ROCm 6.3, 1 KiB - 16 GiB);
# checked against an independent 8x MI300X table (hisohara/ai-scripts, AAC8). The bandwidth it
# scales is every link of the mesh at once (``CollectiveTimes._mesh_gbps``).
_XGMI_RING = {(_R, _LL): 0.353e-6, (_R, _LL128): 0.794e-6, (_R, _SIMPLE): 3.68e-6}
# NVL72-class switched domain (GB200 NVL72): NVLink SHARP's step latency and efficiency fitted to
# the only full-rack table found (coreweave/nccl-tests#43, 72 ranks, 512 MiB - 8 GiB). Its ring is
# the 8-GPU NVSwitch (Hopper, NVLink 4) fit carried to Blackwell and NVLink 5 by two published
# ratios, neither taken from a GB200 run: the share of a link NCCL's topology counts usable
# (src/graph/topo.h of NCCL 2.26.2, the calibration run's version: SM100_NVLINK_BW 40.0 of NVLink
# 5's 50 GB/s against SM90_NVLINK_BW 20.6 of NVLink 4's 25: 0.971), and the step latency: 3.0
# against 2.3 us, the smallest all_reduce on 8 B200 against 8 H200/H800 with the same NCCL 2.27
# kernels (NVIDIA/nccl#1940, a user's measurement: 1.30). Checked, not fitted, on Azure's 4-GPU
# GB200 tray table (ring forced; docs/plan.md gives the errors).
_NVLINK5_LINK_SHARE = (40.0 / 50) / (20.6 / 25)
_BLACKWELL_STEP = 3.0 / 2.3
_NVL_RING = {key: alpha * _BLACKWELL_STEP for key, alpha in _FABRIC_RING.items()}
_NVL_RING_EFFICIENCY = _FABRIC.efficiency[_R] * _NVLINK5_LINK_SHARE
# NVL72 rack's NVLink SHARP: NCCL's chunk rule and pipeline, 32 channels on Blackwell (source above),
# the per-chunk time the 8-GPU fit's (an assumption); the step latency and the efficiency fitted to
# the rack's run. Not NCCL's 25 us (src/graph/tuning.cc at v2.26.2-1): with it the best fit misses
# the rack's 4 GiB row by 8.5 % (rms ln-error 0.051 against 0.018); the run has a fixed time of
# about 0.3 ms beyond the pipeline fill that NCCL's tuner does not count (docs/plan.md).
_NVL_SHARP_STEP = 147e-6
# An 8-GPU NVLink 5 board (HGX/DGX B200): the rack's ring (the NVLink 5 carry above, not fitted) and
# NVLink SHARP as NCCL runs it on one node: its NVLS latency, 25 us (src/graph/tuning.cc, hwLatencies
# NVLink NVLS Simple, the same at v2.28.9-1 and v2.29.7-1, the releases the fit and check runs name), the
# 8 us fixed time and two steps as on Hopper; 24 NVLS channels on a single Blackwell node
# (NVLS_NCHANNELS_SM100_NVL, src/transport/nvls.cc at v2.28.9-1; 32 only across nodes). The per-chunk
# time is the 8-GPU Hopper fit's (an assumption: no figure below 8 GiB fits it); the efficiency is fitted
# (``--fit``) to Together AI's forced-NVLS runs of one 8-B200 cluster (NCCL 2.28.9), checked on another
# cluster (NCCL 2.29.7) and on Google's a4-highgpu-8g board (docs/plan.md).
_BOARD5_SHARP_STEP = (25.0e-6 - 8.0e-6) / 2
_NVLS_CHANNELS_BLACKWELL_NODE = 24
COLLECTIVE_TUNING = {
    "fabric": _FABRIC,
    "nvlink_mesh": _FABRIC,  # an assumption: no published table of a 4-GPU NVLink mesh was found
    "nvl_domain": Tuning(base_s=8.0e-6,
                         alpha_s={**_NVL_RING, (_S, _SIMPLE): _NVL_SHARP_STEP, **_pairwise_as_ring(_NVL_RING)},
                         efficiency={_R: _NVL_RING_EFFICIENCY, _S: 0.498, _P: _NVL_RING_EFFICIENCY},
                         # the Hopper fit's protocol shares: NCCL 2.25.1 prices LL and LL128 on Blackwell as on
                         # Hopper relative to the ring (src/graph/tuning.cc; docs/plan.md gives the lines)
                         share=dict(_FABRIC.share),
                         switch=SwitchChunking(channels=32, max_heads=_NVLS_ARITY, chunk_s=_SHARP_CHUNK_S)),
    "nvlink5_board": Tuning(base_s=8.0e-6,
                            alpha_s={**_NVL_RING, (_S, _SIMPLE): _BOARD5_SHARP_STEP, **_pairwise_as_ring(_NVL_RING)},
                            efficiency={_R: _NVL_RING_EFFICIENCY, _S: 0.569, _P: _NVL_RING_EFFICIENCY},
                            share=dict(_FABRIC.share),
                            switch=SwitchChunking(channels=_NVLS_CHANNELS_BLACKWELL_NODE, max_heads=_NVLS_ARITY,
                                                  chunk_s=_SHARP_CHUNK_S)),
    "xgmi": Tuning(base_s=8.0e-6, alpha_s={**_XGMI_RING, **_pairwise_as_ring(_XGMI_RING)},
                   efficiency={_R: 0.710, _P: 0.710}, share={_LL: 0.301, _LL128: 0.714, _SIMPLE: 1.0}),
    "pcie": Tuning(base_s=8.0e-6,
                   alpha_s={**_PCIE_RING, **_pairwise_as_ring(_PCIE_RING)},
                   efficiency={_R: 0.657, _P: 0.657}),
}
# What each family's constants rest on, in words for plan's output: fitted, or assumed (and so
# not checked against any published run of that medium).
COLLECTIVE_BASIS = {  # each follows "constants: "
    "fabric": ("fitted to published all_reduce runs of 8x H100 NVSwitch boards", True),
    "nvlink_mesh": ("the 8-GPU NVSwitch fit's, an assumption: no published run of an NVLink mesh checks them",
                    False),
    "nvl_domain": ("NVLink SHARP's fitted to a published GB200 NVL72 run, the ring's the 8-GPU NVSwitch fit's "
                   "carried to NVLink 5 by NCCL's per-link figure and a published B200/H200 latency ratio", True),
    "nvlink5_board": ("NVLink SHARP's efficiency fitted to published forced-NVLS runs of 8x B200 boards, its latency "
                      "and channels NCCL's; the ring's the NVL72 domain's NVLink 5 carry of the 8-GPU NVSwitch fit",
                      True),
    "xgmi": ("fitted to published RCCL runs of 8x MI300X", True),
    "pcie": ("fitted to published runs of 8 PCIe RTX PRO 6000 (the Simple step latency a stated guess)", True),
}
SERDES_BASIS = ("the NVLink mesh's (the 8-GPU NVSwitch fit's) price the HCCS (serdes) mesh, an assumption not "
                "checked against published hccl_test figures", False)
Bandwidths = tuple[str, dict[Algorithm, float]]  # the medium (fabric, pcie) and each algorithm's per-rank GB/s
DTYPE_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1}


class NotModelled(Exception):
    """The model cannot say: an unknown module, a figure the catalog lacks, no route."""


def power_factor(model: ModuleModel, watts: float | None) -> float:
    """Speed of compute-bound work under a power cap (``gpuvet.node.power_model``)."""
    if watts is None or model.tdp_w is None:
        return 1.0
    return PowerModel(model.tdp_w).speed(watts)


class PerformanceModel:
    """What ``node`` should reach. ``p2p_disabled`` and ``power_caps`` are conditions the node is
    in (a simulated fault, a planned cap); the model itself knows no noise and no clock."""

    def __init__(self, node: Node, p2p_disabled: bool = False, power_caps: dict[str, float] | None = None) -> None:
        self.node = node
        self.p2p_disabled = p2p_disabled
        self.power_caps = power_caps if power_caps is not None else {}  # shared: a power sweep changes it live
        self.router = Router(node)  # copies: modules are endpoints
        self.ring_router = Router(node, forwarding=True)  # collectives: rings pass through the ranks
        self.collective_tuning = dict(COLLECTIVE_TUNING)  # per medium; the published-data fit swaps it
        self._socket: dict[str, str] = {}  # module -> nearest socket

    def model(self, module: str) -> ModuleModel:
        if module not in self.node.module_ids:
            raise NotModelled(f"the node has no module {module!r}")
        return self.node.module(module).model

    # --- compute and memory ------------------------------------------------------------
    def gemm_seconds(self, module: str, dtype: str, n: int) -> float:
        model = self.model(module)
        peak = model.peak_tflops(dtype)
        if peak is None:
            raise NotModelled(f"{model.name} has no published {dtype} rate (not supported or unknown)")
        eff = GEMM_EFFICIENCY[dtype] * n / (n + GEMM_HALF_N) * power_factor(model, self.power_caps.get(module))
        return 2.0 * n**3 / (peak * 1e12 * eff)

    def stream_seconds(self, module: str, kind: str, nbytes: int) -> float:
        model = self.model(module)
        if model.memory_bw_gbps is None:
            raise NotModelled(f"{model.name} has no published memory bandwidth")
        moved = (2 if kind == "copy" else 3) * nbytes
        return moved / (model.memory_bw_gbps * 1e9 * STREAM_EFFICIENCY[kind])

    def train_seconds(self, module: str, workload: str, amp: bool, flops_per_step: float) -> float:
        model = self.model(module)
        dtype = "bf16" if amp else "fp32"
        peak = model.peak_tflops(dtype) or model.peak_tflops("fp16")
        if peak is None:
            raise NotModelled(f"{model.name} has no published {dtype} rate")
        eff = TRAIN_EFFICIENCY[workload] * power_factor(model, self.power_caps.get(module))
        return flops_per_step / (peak * 1e12 * eff)

    # --- transfers ---------------------------------------------------------------------
    def socket_of(self, module: str) -> str:
        """The nearest socket: where a NUMA-aware runtime puts a module's host buffers (found
        once per module: a big domain has a socket per tray, and every copy asks)."""
        if module in self._socket:
            return self._socket[module]
        sockets = self.node.sockets()
        if not sockets:
            raise NotModelled("the node declares no host socket")
        hops, index = self.router.hops_from(module).tolist(), self.router.index  # route lengths, none listed
        reachable = [(hops[index[s]], s) for s in sockets if hops[index[s]] > 0]
        if not reachable:
            raise NotModelled(f"{module} has no route to host memory")
        self._socket[module] = min(reachable)[1]
        return self._socket[module]

    def _legs(self, t: Transfer) -> list[tuple[str, str]]:
        src = self.socket_of(t.dst) if t.src == HOST else t.src
        dst = self.socket_of(t.src) if t.dst == HOST else t.dst
        if t.src != HOST and t.dst != HOST and self.p2p_disabled:  # staged through host memory
            return [(t.src, self.socket_of(t.src)), (self.socket_of(t.dst), t.dst)]
        return [(src, dst)]

    def transfer_rates(self, transfers: Sequence[Transfer], raw: bool = False) -> list[float]:
        """GB/s each transfer gets with all of them running at once; ``raw``: for collectives —
        the flow solver's share of the links, routed as a ring routes (through modules), before
        what a copy engine achieves on them (collectives apply their own protocol efficiency)."""
        for t in transfers:
            for end in (t.src, t.dst):
                if end != HOST:
                    self.model(end)
        legs = [self._legs(t) for t in transfers]
        flat = [leg for group in legs for leg in group]
        solved = solve_transfers(self.node, flat, self.ring_router if raw else self.router)
        rates, i = [], 0
        for t, group in zip(transfers, legs, strict=True):
            parts = solved[i:i + len(group)]
            i += len(group)
            if any(p.gbps <= 0 for p in parts):
                raise NotModelled(f"no route from {t.src} to {t.dst}")
            rate = min(p.gbps for p in parts)
            if not raw:
                on_fabric = all(self._on_fabric(p.route) for p in parts)
                rate *= COPY_EFFICIENCY["fabric" if on_fabric else "pcie"]
                if HOST in (t.src, t.dst) and not t.pinned:
                    rate *= PAGEABLE_FACTOR
            rates.append(rate)
        return rates

    def _on_fabric(self, route: tuple[str, ...]) -> bool:
        kinds = {self.node.kind_of(e) for e in route}
        return kinds <= {EndpointKind.MODULE, EndpointKind.FABRIC_SWITCH}

    def copy_seconds(self, transfers: Sequence[Transfer]) -> float:
        rates = self.transfer_rates(transfers)
        return max(t.nbytes / (r * 1e9) for t, r in zip(transfers, rates, strict=True))

    def collectives(self, members: Sequence[str], memo: dict[str, Bandwidths] | None = None) -> CollectiveTimes:
        """``memo`` keeps the solved bandwidths across calls for the same members, for callers
        whose node does not change (the planner)."""
        for m in members:
            self.model(m)
        return CollectiveTimes(self, tuple(members), memo)


@dataclass
class CollectiveTimes:
    """Collective times among ``members``: per-rank bandwidth from the flow solver, the fastest
    (algorithm, protocol) as NCCL's tuner would pick it."""

    perf: PerformanceModel
    members: tuple[str, ...]
    memo: dict[str, Bandwidths] | None = field(default=None)

    @property
    def nranks(self) -> int:
        return len(self.members)

    def _ring_gbps(self) -> float:
        ring = [(self.members[i], self.members[(i + 1) % self.nranks]) for i in range(self.nranks)]
        return min(self.perf.transfer_rates([Transfer(a, b, 1) for a, b in ring], raw=True))

    def _all_to_all_gbps(self) -> float:
        pairs = [(a, b) for a in self.members for b in self.members if a != b]
        rates = self.perf.transfer_rates([Transfer(a, b, 1) for a, b in pairs], raw=True)
        egress = {m: 0.0 for m in self.members}
        for (a, _), r in zip(pairs, rates, strict=True):
            egress[a] += r
        return min(egress.values())

    def _mesh_gbps(self) -> float | None:
        """Per-rank bandwidth of rings over every link, where every pair of members has a direct
        fabric link (a full mesh: MI300X's xGMI, a 4-GPU NVLink board): the library runs a ring per
        link direction (a complete mesh splits into n - 1 rings that each use every rank once) and
        gives each the same share of the data, so the slowest pair sets the pace for all n - 1.
        None where some pair has no direct link (then one ring's slowest hop decides)."""
        node, members = self.perf.node, set(self.members)
        if self.perf.p2p_disabled or self.nranks < 3:
            return None
        pair: dict[frozenset[str], float] = {}
        for m in self.members:
            for link in node.links_of(m):
                if link.a == m and link.up and link.kind.is_fabric and link.b in members and link.b != m:
                    pair[link.ends] = pair.get(link.ends, 0.0) + link_capacity_gbps(link)
        if len(pair) < self.nranks * (self.nranks - 1) // 2:
            return None
        return (self.nranks - 1) * min(pair.values())

    def _domain_size(self) -> int:
        """Modules on the largest fabric switch a member reaches directly (8 on an HGX board, 72 in
        an NVL72 rack)."""
        node, best = self.perf.node, 0
        for m in self.members:
            for link in node.links_of(m):
                far = link.other(m)
                if link.kind.is_fabric and node.kind_of(far) is EndpointKind.FABRIC_SWITCH:
                    attached = {x.other(far) for x in node.links_of(far) if x.kind.is_fabric}
                    best = max(best, sum(1 for e in attached if node.kind_of(e) is EndpointKind.MODULE))
        return best

    def family(self) -> str:
        """Which constants apply (``COLLECTIVE_TUNING``): pcie where any member has no working
        fabric; xgmi on an xGMI mesh; nvlink_mesh on a direct NVLink mesh; nvl_domain in a switched
        domain of more than 8 modules; nvlink5_board on a board of NVLink 5 modules (B200); fabric
        otherwise (8-GPU NVLink 4 NVSwitch boards, partial meshes)."""
        if not self._uses_fabric():
            return "pcie"
        node = self.perf.node
        kinds = {link.kind for m in self.members for link in node.links_of(m) if link.up and link.kind.is_fabric}
        if LinkKind.XGMI in kinds:
            return "xgmi"
        if self._mesh_gbps() is not None:
            return "nvlink_mesh"
        if self._domain_size() > 8:
            return "nvl_domain"
        return "nvlink5_board" if self._nvlink5() else "fabric"

    def _nvlink5(self) -> bool:
        """Every member an NVLink 5 module by design (the catalog's 50 GB/s a link per direction):
        the model's figure, not the links' state, so a degraded board keeps its family."""
        models = [self.perf.node.module(m).model for m in self.members]
        return all(m.fabric == "nvlink" and (m.fabric_lane_gbps or 0.0) >= 50 for m in models)

    def basis(self) -> tuple[str, bool]:
        """What the constants ``family`` picks rest on, and whether a published run checks them:
        a serdes (HCCS) mesh takes the NVLink mesh's, which says nothing of Ascend's own runs."""
        family = self.family()
        node = self.perf.node
        serdes = any(link.kind is LinkKind.SERDES for m in self.members for link in node.links_of(m) if link.up)
        return SERDES_BASIS if family == "nvlink_mesh" and serdes else COLLECTIVE_BASIS[family]

    def _in_switch_gbps(self) -> float | None:
        """Per-module fabric bandwidth into a switch every member reaches directly, if the
        modules support in-switch reduction and p2p works."""
        node = self.perf.node
        if self.perf.p2p_disabled or not all(node.module(m).model.switch_reduction for m in self.members):
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
        node = self.perf.node
        return not self.perf.p2p_disabled and all(
            any(link.kind.is_fabric and link.up for link in node.links_of(m)) for m in self.members)

    def bandwidths(self, op: str) -> Bandwidths:
        """The medium (fabric or pcie) and the per-rank bandwidth each available algorithm sees."""
        key = "all_to_all" if op == Collective.ALL_TO_ALL else "other"
        if self.memo is not None and key in self.memo:
            return self.memo[key]
        if key == "all_to_all":  # every rank to every other at once: the flow solver's all-pairs share
            bandwidth = {Algorithm.PAIRWISE: self._all_to_all_gbps()}
        else:
            mesh = self._mesh_gbps()
            bandwidth = {Algorithm.RING: max(self._ring_gbps(), mesh or 0.0)}
            switch = self._in_switch_gbps()
            if switch is not None:
                bandwidth[Algorithm.IN_SWITCH] = switch
        result = (self.family(), bandwidth)
        if self.memo is not None:
            self.memo[key] = result
        return result

    def choice(self, op: str, size_bytes: int, algorithm: str | None = None) -> CollectiveChoice:
        """Fastest (algorithm, protocol) and its time; ``algorithm`` forces one, as ``NCCL_ALGO``
        does (ValueError when it cannot run ``op`` on these modules)."""
        medium, bandwidth = self.bandwidths(op)
        tuning = self.perf.collective_tuning[medium]
        if algorithm is not None and Algorithm(algorithm) is Algorithm.TREE:
            raise ValueError("inside one node NCCL's tree is a chain, no faster than the ring; its double binary "
                             "tree spans nodes, which this model does not")
        if algorithm is not None and Algorithm(algorithm) not in bandwidth:
            if Algorithm(algorithm) is Algorithm.IN_SWITCH and op != Collective.ALL_TO_ALL:
                raise ValueError(f"{algorithm} needs modules and a switch that reduce in the fabric")
            raise ValueError(f"{algorithm} does not implement {op}; "
                             f"the model runs it as {' or '.join(a.value for a in bandwidth)}")
        best = choose(op, self.nranks, size_bytes, bandwidth, tuning, algorithm)
        if best is None:
            raise ValueError(f"{algorithm} does not implement {op}")
        return best

    def seconds(self, op: str, size_bytes: int, algorithm: str | None = None) -> tuple[float, str]:
        c = self.choice(op, size_bytes, algorithm)
        return c.seconds, c.algorithm.value
