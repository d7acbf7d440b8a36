"""Collectives: nccl-tests' size and bus-bandwidth conventions, and an α–β cost model.

Conventions (nccl-tests, doc/PERFORMANCE.md): ``size`` is the per-rank buffer the test names
(the full buffer for all_reduce, broadcast and all_to_all; the gathered output for all_gather;
the scattered input for reduce_scatter); ``algbw = size / time``; ``busbw = algbw × factor``
with the factor below, so that busbw compares with the link speed whatever the rank count.

The cost model is the textbook α–β (latency–bandwidth) one per algorithm and wire protocol,
and ``choose`` picks the fastest pair as NCCL's tuner does: a ring (n-1 steps per phase), a
double binary tree (log₂ n steps; NCCL runs it across nodes) and in-switch reduction (NVLink
SHARP: each rank sends its data to the switch once and receives the result once), each with the
LL, LL128 or Simple protocol. ``link_gbps`` is what one rank can push per direction while every
rank does the same; the simulated backend and the planner get it from the flow solver, and the
constants (``Tuning``) are fitted to published runs, so the model lives here once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum


class Collective(StrEnum):
    ALL_REDUCE = "all_reduce"
    ALL_GATHER = "all_gather"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_TO_ALL = "all_to_all"
    BROADCAST = "broadcast"
    REDUCE = "reduce"


COLLECTIVES = tuple(c.value for c in Collective)


def bus_factor(op: Collective | str, nranks: int) -> float:
    """nccl-tests' busbw/algbw factor for ``op`` on ``nranks`` ranks."""
    op = Collective(op)
    if nranks < 1:
        raise ValueError("a collective needs at least one rank")
    n = nranks
    if op is Collective.ALL_REDUCE:
        return 2 * (n - 1) / n
    if op in (Collective.ALL_GATHER, Collective.REDUCE_SCATTER, Collective.ALL_TO_ALL):
        return (n - 1) / n
    return 1.0  # broadcast, reduce


def algbw_gbps(size_bytes: int, seconds: float) -> float:
    return size_bytes / seconds / 1e9


def busbw_gbps(op: Collective | str, nranks: int, size_bytes: int, seconds: float) -> float:
    return algbw_gbps(size_bytes, seconds) * bus_factor(op, nranks)


class Algorithm(StrEnum):
    RING = "ring"
    TREE = "tree"
    IN_SWITCH = "in_switch"
    PAIRWISE = "pairwise"  # all_to_all as NCCL runs it: every rank sends to every other at once (grouped send/recv)


@dataclass(frozen=True)
class CollectiveCost:
    algorithm: Algorithm
    seconds: float


def _steps_and_traffic(op: Collective, algo: Algorithm, n: int) -> tuple[float, float] | None:
    """(latency steps, bytes each rank sends per byte of ``size``) or None if ``algo`` cannot do ``op``."""
    log_n = math.ceil(math.log2(n)) if n > 1 else 0
    if algo is Algorithm.RING:
        return {
            Collective.ALL_REDUCE: (2 * (n - 1), 2 * (n - 1) / n),
            Collective.ALL_GATHER: (n - 1, (n - 1) / n),
            Collective.REDUCE_SCATTER: (n - 1, (n - 1) / n),
            Collective.BROADCAST: (n - 1, 1.0),  # pipelined chain
            Collective.REDUCE: (n - 1, 1.0),
        }[op]
    if algo is Algorithm.PAIRWISE:
        # each rank sends (n-1)/n of its buffer, one piece to every other rank; n-1 exchanges
        return (n - 1, (n - 1) / n) if op is Collective.ALL_TO_ALL else None
    if algo is Algorithm.TREE:
        # double binary tree: log-depth, both trees together keep every link busy
        return {
            Collective.ALL_REDUCE: (2 * log_n, 2 * (n - 1) / n),
            Collective.BROADCAST: (log_n, 1.0),
            Collective.REDUCE: (log_n, 1.0),
        }.get(op)
    # in-switch: push once, the switch reduces/multicasts, pull once
    return {
        Collective.ALL_REDUCE: (2, 1.0),
        Collective.ALL_GATHER: (2, (n - 1) / n),
        Collective.REDUCE_SCATTER: (2, (n - 1) / n),
    }.get(op)


def collective_cost(op: Collective | str, nranks: int, size_bytes: int, *, link_gbps: float,
                    alpha_s: float, base_s: float = 0.0, algorithm: Algorithm | str = Algorithm.RING,
                    efficiency: float = 1.0) -> CollectiveCost | None:
    """Time of one collective: ``base + steps·α + traffic·size / (link·efficiency)``; None when
    ``algorithm`` does not implement ``op``."""
    op, algo = Collective(op), Algorithm(algorithm)
    if nranks == 1:
        return CollectiveCost(algo, base_s)
    shape = _steps_and_traffic(op, algo, nranks)
    if shape is None:
        return None
    steps, traffic = shape
    seconds = base_s + steps * alpha_s + traffic * size_bytes / (link_gbps * 1e9 * efficiency)
    return CollectiveCost(algo, seconds)


class Protocol(StrEnum):
    """NCCL's wire protocols: LL and LL128 trade bandwidth for latency (flags travel with the
    data, no separate synchronisation); Simple has the full bandwidth and the longest latency."""

    LL = "ll"
    LL128 = "ll128"
    SIMPLE = "simple"


# Share of Simple's bandwidth a protocol delivers, from its wire format: LL carries 4 bytes of
# data with a 4-byte flag in every 8-byte store, LL128 120 bytes of data in every 128-byte line.
# The upper bound; a medium's ``Tuning.share`` may say less (NCCL's own tuner caps LL further).
PROTOCOL_PAYLOAD = {Protocol.LL: 0.5, Protocol.LL128: 120 / 128, Protocol.SIMPLE: 1.0}


KiB = 1024
# NCCL's NVLink SHARP (NVLS) chunk rule, by the buffer: a chunk of at most 128 KiB, halved to
# 64, 32 and 16 KiB when the buffer holds fewer than 64, 8 and 2 such chunks for every concurrent
# operation (channel × head); source: NCCL src/enqueue.cc at v2.20.5-1 and v2.26.2-1.
_SWITCH_CHUNK_STEPS = ((64, 64 * KiB), (8, 32 * KiB), (2, 16 * KiB))


@dataclass(frozen=True)
class SwitchChunking:
    """How NVLink SHARP cuts a buffer: ``channels`` × heads (one head per rank, at most
    ``max_heads``) move one chunk each at a time, a round; each round passes ``stages`` pipelined
    stages (scatter into the switch buffers, reduce-and-multicast, gather out), so a collective
    takes (rounds + stages − 1) stage times, and each stage time is ``chunk_s`` plus the round's
    bytes. Small buffers get small chunks, so more rounds for their bytes and a shorter pipeline
    fill: the bandwidth ramp the library shows below ~1 GiB."""

    channels: int
    max_heads: int
    chunk_s: float
    max_chunk: int = 128 * KiB
    stages: int = 3

    def chunk_bytes(self, size_bytes: int, nranks: int) -> int:
        ops = self.channels * min(nranks, self.max_heads)
        chunk = self.max_chunk
        for multiple, smaller in _SWITCH_CHUNK_STEPS:
            if size_bytes < multiple * ops * chunk and chunk > smaller:
                chunk = smaller
        return chunk

    def loops(self, size_bytes: int, nranks: int) -> int:
        """Chunks each channel moves in turn (one, however small the buffer)."""
        ops = self.channels * min(nranks, self.max_heads)
        return max(1, math.ceil(size_bytes / (ops * self.chunk_bytes(size_bytes, nranks))))

    def seconds(self, size_bytes: int, nranks: int, traffic_gbps: float, stages: int | None = None) -> float:
        """What chunking adds to the collective's bytes over ``traffic_gbps``: a ``chunk_s`` per
        stage time, and the pipeline fill (stages − 1 rounds of bytes); ``stages`` when the
        collective's kernel has another count than all_reduce's."""
        stages = self.stages if stages is None else stages
        ops = self.channels * min(nranks, self.max_heads)
        round_bytes = min(size_bytes, ops * self.chunk_bytes(size_bytes, nranks))
        fill = (stages - 1) * round_bytes / (traffic_gbps * 1e9)
        return (self.loops(size_bytes, nranks) + stages - 1) * self.chunk_s + fill


# NVLink SHARP's all_gather on one node is a multicast store, not a reduction: each rank sends its
# piece once to the multicast address and receives the other n − 1 pieces, the bytes a ring moves,
# with no multimem.ld_reduce in the switch; NCCL's kernel runs it in two warp groups (broadcast
# through NVLS, gather out) where the all_reduce has three. Source: NCCL src/device/all_gather.h and
# src/device/all_reduce.h at v2.28.9-1 (dbc86fd06e8b0c4517b95d8958a09ccacf9520c9), the single-node
# (``oneNode``) NVLS branches.
_GATHER_STAGES = 2


@dataclass(frozen=True)
class Tuning:
    """The constants of one medium (NVLink fabric, PCIe): a fixed launch-and-completion time,
    the latency of one algorithm step per (algorithm, protocol) the library runs there, and the
    share of the link bandwidth each algorithm's Simple protocol delivers. A (algorithm,
    protocol) pair not in ``alpha_s`` is not run on this medium (NCCL runs LL128 on NVLink only,
    NVLink SHARP with Simple only). ``share``: the part of Simple's bandwidth each protocol
    delivers (its wire format's payload unless fitted)."""

    base_s: float
    alpha_s: dict[tuple[Algorithm, Protocol], float]
    efficiency: dict[Algorithm, float]
    share: dict[Protocol, float] = field(default_factory=lambda: dict(PROTOCOL_PAYLOAD))
    switch: SwitchChunking | None = None  # NVLink SHARP's per-chunk cost, where the medium has it

    def chunk_s(self, algorithm: Algorithm, size_bytes: int, nranks: int, traffic_gbps: float,
                op: Collective | str = Collective.ALL_REDUCE) -> float:
        """What chunking adds to ``algorithm``'s time (in-switch reduction only; zero elsewhere)."""
        if algorithm is not Algorithm.IN_SWITCH or self.switch is None:
            return 0.0
        stages = _GATHER_STAGES if Collective(op) is Collective.ALL_GATHER else None
        return self.switch.seconds(size_bytes, nranks, traffic_gbps, stages)

    def bandwidth_share(self, algorithm: Algorithm, protocol: Protocol, op: Collective | str) -> float:
        """The share of the link ``algorithm`` with ``protocol`` delivers for ``op``. An in-switch
        all_gather moves the ring's bytes with no reduction in the switch (``_GATHER_STAGES``), so it
        takes the ring's share; the fitted in-switch efficiency is the reduction's (all_reduce,
        reduce_scatter)."""
        if algorithm is Algorithm.IN_SWITCH and Collective(op) is Collective.ALL_GATHER \
                and Algorithm.RING in self.efficiency:
            algorithm = Algorithm.RING
        return self.efficiency[algorithm] * self.share[protocol]


@dataclass(frozen=True)
class CollectiveChoice:
    seconds: float
    algorithm: Algorithm
    protocol: Protocol


def choose(op: Collective | str, nranks: int, size_bytes: int, link_gbps: dict[Algorithm, float], tuning: Tuning,
           algorithm: Algorithm | str | None = None) -> CollectiveChoice | None:
    """The fastest (algorithm, protocol) for ``op`` of ``size_bytes`` on ``nranks`` ranks, as NCCL's
    tuner picks it: ``link_gbps`` is the per-rank bandwidth each available algorithm sees;
    ``algorithm`` forces one, as ``NCCL_ALGO`` does. None when nothing available implements ``op``."""
    forced = Algorithm(algorithm) if algorithm is not None else None
    best: CollectiveChoice | None = None
    for (algo, proto), alpha in tuning.alpha_s.items():
        if algo not in link_gbps or (forced is not None and algo is not forced):
            continue
        efficiency = tuning.bandwidth_share(algo, proto, op)
        chunking = tuning.chunk_s(algo, size_bytes, nranks, link_gbps[algo] * efficiency, op)
        cost = collective_cost(op, nranks, size_bytes, link_gbps=link_gbps[algo], alpha_s=alpha,
                               base_s=tuning.base_s + chunking, algorithm=algo, efficiency=efficiency)
        if cost is not None and (best is None or cost.seconds < best.seconds):
            best = CollectiveChoice(cost.seconds, algo, proto)
    return best


@dataclass(frozen=True)
class AlphaBetaFit:
    """t = α + S/β fitted over a size sweep: latency and bandwidth, separately."""

    alpha_s: float
    beta_gbps: float
    r_squared: float


def fit_alpha_beta(sizes_bytes: list[int], seconds: list[float]) -> AlphaBetaFit | None:
    """Fit t = α + S/β minimising *relative* residuals (weights 1/t²), so that the small,
    latency-bound sizes count as much as the large, bandwidth-bound ones. None with fewer
    than two distinct sizes or a time that does not grow with size."""
    pairs = sorted(zip(sizes_bytes, seconds, strict=True))
    if len({s for s, _ in pairs}) < 2 or any(t <= 0 for _, t in pairs):
        return None
    w = [1.0 / t**2 for _, t in pairs]
    sw = sum(w)
    mean_s = sum(wi * s for wi, (s, _) in zip(w, pairs, strict=True)) / sw
    mean_t = sum(wi * t for wi, (_, t) in zip(w, pairs, strict=True)) / sw
    sxx = sum(wi * (s - mean_s) ** 2 for wi, (s, _) in zip(w, pairs, strict=True))
    sxy = sum(wi * (s - mean_s) * (t - mean_t) for wi, (s, t) in zip(w, pairs, strict=True))
    slope = sxy / sxx
    if slope <= 0:
        return None
    alpha = mean_t - slope * mean_s
    ss_tot = sum(wi * (t - mean_t) ** 2 for wi, (_, t) in zip(w, pairs, strict=True))
    ss_res = sum(wi * (t - (alpha + slope * s)) ** 2 for wi, (s, t) in zip(w, pairs, strict=True))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return AlphaBetaFit(alpha, 1.0 / slope / 1e9, r2)
