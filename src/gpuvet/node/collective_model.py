"""Predicted collective times on a node: the α–β model per algorithm and protocol with per-rank
bandwidth from the flow solver, the fastest pair chosen — the same model the simulated benchmarks
run (``gpuvet.node.performance``), not a second one. It lives with the node model so that every job
(plan, doctor judging a captured benchmark log, validate) prices a collective the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuvet.node.collectives import Algorithm, Collective, bus_factor
from gpuvet.node.memory import PlanError
from gpuvet.node.model import Node, Transfer
from gpuvet.node.performance import Bandwidths, PerformanceModel
from gpuvet.node.spec import FaultSpec, P2pDisabledFault, PowerCapLowFault


@dataclass(frozen=True)
class CollectivePrediction:
    op: str
    size_bytes: int
    modules: int
    time_s: float
    algbw: float  # GB/s
    busbw: float  # GB/s
    algorithm: str
    protocol: str = "none"  # NCCL's ll, ll128 or simple, as the model picks it
    launch: str = "per-gpu"  # per-gpu: one process (or thread) per GPU; one-process: one thread drives them all
    launch_floor_s: float = 0.0  # one-process: the fewest seconds a call takes, its launches in turn; 0 per-gpu

    @property
    def launch_bound(self) -> bool:
        """The launches, not the collective, set the time (one-process, at small sizes)."""
        return self.launch_floor_s > 0 and self.time_s <= self.launch_floor_s


# How the GPUs are driven. One process (one thread) driving N GPUs -- nccl-tests' ``-g N``, a single-process
# multi-GPU job -- does every GPU's host work in turn at ncclGroupEnd (NVIDIA/nccl src/group.cc, doLaunches:
# per communicator cudaSetDevice and ncclLaunchPrepare, then the kernels round by round, comm after comm), so a
# call takes at least N launches' host time however short the collective is. nccl-tests issues its timed calls
# back to back with no synchronisation between them (blocking off by default), so the host prepares the next
# call while the GPUs run this one: its serial work bounds the rate, it is not added to the GPUs' time, and the
# time is the larger of the two (an added term misses the Hopper -g 8 tables at 1 - 8 MiB: docs/plan.md). Per
# GPU: fitted (docs/plan.md, "One process driving several GPUs") to the launch_fit figures only, Together AI's
# two forced-ring all_reduce runs of one 8-H100 node (NCCL 2.26.2, -g 8, P49e) and a second host's run, 4 H100
# of a Lambda instance (NCCL 2.26.2, -g 4, P49j); no source gives it. It is a host's figure: published -g N
# floors run 3.2 - 6.2 us per GPU (Azure's H100 table 25.6 us for 8, the Lambda run 23.5 - 24.6 us for 4).
LAUNCHES = ("per-gpu", "one-process")
ONE_PROCESS_LAUNCH_S = 5.57e-6


class CollectiveModel:
    def __init__(self, node: Node, faults: Sequence[FaultSpec] = ()) -> None:
        self.node = node
        caps = {f.module: f.watts for f in faults if isinstance(f, PowerCapLowFault)}
        self.perf = PerformanceModel(node, any(isinstance(f, P2pDisabledFault) for f in faults), caps)
        self._memo: dict[tuple[str, ...], dict[str, Bandwidths]] = {}  # solved bandwidths per set of members

    def members(self, count: int | None, least: int = 1) -> list[str]:
        """The first ``count`` modules (all by default); ``least``: the fewest the caller takes, named
        in the fix (plan collective refuses one rank)."""
        ids = self.node.module_ids
        count = count or len(ids)
        if count < least or count > len(ids):
            raise PlanError("--modules", f"{count} modules asked, the node has {len(ids)}",
                            f"use {least} to {len(ids)}")
        return ids[:count]

    def basis(self, members: Sequence[str]) -> tuple[str, bool]:
        """What the constants pricing these members rest on, and whether a published run checks them."""
        if len(members) < 2:
            return "none (one rank moves nothing)", True
        return self.perf.collectives(list(members), memo=self._memo.setdefault(tuple(members), {})).basis()

    def predict(self, op: str, size_bytes: int, members: Sequence[str], algorithm: str | None = None,
                launch: str = "per-gpu") -> CollectivePrediction:
        """``algorithm`` (ring, in_switch) forces one as ``NCCL_ALGO`` does; None lets the model
        pick the fastest, as NCCL's tuner does. ``launch`` one-process: one thread drives every member,
        and the call takes at least their launches in turn (``ONE_PROCESS_LAUNCH_S`` each)."""
        if size_bytes <= 0:
            raise PlanError("--bytes", f"{size_bytes} is not a positive size", "e.g. --bytes 1GiB")
        try:
            Collective(op)
        except ValueError:
            raise PlanError("--op", f"unknown collective {op!r}",
                            f"use one of {', '.join(c.value for c in Collective)}") from None
        if algorithm is not None and algorithm not in {a.value for a in Algorithm}:
            raise PlanError("--algorithm", f"unknown algorithm {algorithm!r}",
                            f"use one of {', '.join(a.value for a in Algorithm)}, or leave it out")
        if launch not in LAUNCHES:
            raise PlanError("--launch", f"unknown launch {launch!r}", f"use one of {', '.join(LAUNCHES)}")
        if len(members) == 1:
            return CollectivePrediction(op, size_bytes, 1, 0.0, float("inf"), 0.0, "none")
        session = self.perf.collectives(list(members), memo=self._memo.setdefault(tuple(members), {}))
        try:
            choice = session.choice(op, size_bytes, algorithm)
        except ValueError as e:
            raise PlanError("--algorithm", str(e), "leave --algorithm out to let the model choose") from None
        floor = len(members) * ONE_PROCESS_LAUNCH_S if launch == "one-process" else 0.0
        seconds = max(choice.seconds, floor)
        algbw = size_bytes / seconds / 1e9
        return CollectivePrediction(op, size_bytes, len(members), seconds, algbw,
                                    algbw * bus_factor(op, len(members)), choice.algorithm.value,
                                    choice.protocol.value, launch, floor)

    def across_nodes(self, one_node: CollectivePrediction, nodes: int) -> CollectivePrediction:
        """The same collective over ``nodes`` such nodes: the busbw of one node's fabric, or what its
        NICs carry across nodes (node/network.py), whichever is lower; the bound named."""
        from gpuvet.node.network import node_network

        if nodes == 1:
            return one_node
        net = node_network(self.node)
        if net is None:
            raise PlanError("--nodes", f"{self.node.name} declares no NIC model, so what its NICs carry between "
                                       "nodes is not known", "give a spec whose NICs name their model "
                                       "(pcie.nic_model: ConnectX-7), e.g. --node hgx-h200-8")
        ranks = one_node.modules * nodes
        busbw = min(one_node.busbw, net.busbw_gbs)
        bound = f"the NICs ({net.words()})" if net.busbw_gbs < one_node.busbw else "the node's own fabric"
        algbw = busbw / bus_factor(one_node.op, ranks)
        return CollectivePrediction(one_node.op, one_node.size_bytes, ranks, one_node.size_bytes / (algbw * 1e9),
                                    algbw, busbw, f"{one_node.algorithm} in the node, rings over the NICs across "
                                    f"nodes; limited by {bound}", one_node.protocol, one_node.launch,
                                    one_node.launch_floor_s)

    def transfer_gbps(self, src: str, dst: str) -> float:
        return self.perf.transfer_rates([Transfer(src, dst, 1)])[0]
