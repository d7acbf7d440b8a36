"""Fan the executor out over a Ray cluster: one task per node that has modules, pinned to it with
node-affinity scheduling and asking for its GPUs as Ray resources; a per-node timeout, and a
status for each node (ok, failed with the error, timed out). Ray is the optional extra
``gpuvet[fleet]``.

Simulated fleets (tests, rehearsals): nodes that carry the custom resource ``gpuvet_sim`` get one
of the given specs per whole unit of it (at least one); their envelopes are named by the spec's ``name:``."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gpuvet.errors import GpuvetError

SIM_RESOURCE = "gpuvet_sim"


@dataclass
class NodeResult:
    ray_node: str
    host: str
    status: str  # ok, failed, timed_out
    envelope: dict[str, Any] | None = None
    error: str | None = None
    seconds: float = 0.0
    sim: str | None = None  # the spec a simulated node ran


def _ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise GpuvetError("Ray is not installed", where="--ray",
                          fix="pip install 'gpuvet[fleet]', or run validate on each node and use `gpuvet fleet merge`.") \
            from None
    module: ModuleType = ray
    return module


def _reachable(address: str, timeout_s: float = 3.0) -> str | None:
    """Why the head's GCS port cannot be reached (Ray itself retries for minutes), or None."""
    import socket

    target = address.removeprefix("ray://")
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        return None  # "auto" and the like: let Ray resolve it
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return None
    except OSError as exc:
        return str(exc) or type(exc).__name__


def connect(address: str) -> ModuleType:
    ray = _ray()
    why = _reachable(address)
    if why is not None:
        raise GpuvetError(f"cannot reach the Ray cluster at {address}: {why}", where="--ray",
                          fix="check the address (ray status on the head node shows it) and that the port is open.")
    try:
        ray.init(address=address, ignore_reinit_error=True, logging_level="ERROR", log_to_driver=False)
    except Exception as exc:  # ConnectionError, RuntimeError, TimeoutError depending on the Ray version
        raise GpuvetError(f"cannot reach the Ray cluster at {address}: {exc}", where="--ray",
                          fix="check the address (ray status on the head node shows it) and that the port is open.") \
            from None
    return ray


def error_text(exc: BaseException) -> str:
    """What a node's task raised, in one message: a refusal's own words where Ray wrapped it (Ray's
    text is the remote traceback, and its first 500 characters rarely reached the reason: a GPU
    node without its driver read as a crash); anything else as its type and text, cut at 500."""
    cause = getattr(exc, "cause", None)
    refusal = cause if isinstance(cause, GpuvetError) else exc
    if isinstance(refusal, GpuvetError):
        return refusal.message[:2000]
    return f"{type(exc).__name__}: {exc}"[:500]


def sim_slots(units: list[float]) -> list[int]:
    """Which node (by index) holds each simulated node: a node once per whole unit of ``gpuvet_sim``
    it carries (at least once), dealt round the nodes. A rehearsal of N nodes on fewer machines starts
    one with ``gpuvet_sim=N`` instead of N raylets (each costs seconds and two agent processes), and
    specs still spread over the machines first."""
    counts = [max(1, int(u)) for u in units]
    return [i for k in range(max(counts, default=0)) for i, count in enumerate(counts) if k < count]


def run_fleet(address: str, level: str = "quick", sims: list[str] | None = None, timeout_s: float = 600.0,
              progress: Callable[[int, int, str], None] | None = None) -> list[NodeResult]:
    ray = connect(address)
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from gpuvet.fleet.executor import validate_envelope

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    sim_nodes = [n for n in nodes if n.get("Resources", {}).get(SIM_RESOURCE)]
    gpu_nodes = [n for n in nodes if n.get("Resources", {}).get("GPU") and n not in sim_nodes]
    slots = [sim_nodes[i] for i in sim_slots([n["Resources"][SIM_RESOURCE] for n in sim_nodes])]
    if sims and len(sims) > len(slots):
        raise GpuvetError(f"{len(sims)} specs for {len(slots)} simulated nodes (units of the {SIM_RESOURCE} resource)",
                          where="--sim", fix=f"start Ray nodes with as many units of {SIM_RESOURCE} as specs in all.")
    remote = ray.remote(validate_envelope)
    pending: dict[object, tuple[dict[str, Any], float, str | None]] = {}  # Ray's object refs: node dicts of ray.nodes()
    plan: list[tuple[dict[str, Any], str | None]] = (
        [(n, sims[i]) for i, n in enumerate(slots[: len(sims)])] if sims else [])
    plan += [(n, None) for n in gpu_nodes]
    if not plan:
        raise GpuvetError("no node of the Ray cluster has modules (GPU resources)", where="--ray",
                          fix="start Ray on the GPU nodes with their GPUs (ray start --num-gpus N).")
    for node, sim in plan:
        strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
        gpus = 0 if sim else node["Resources"].get("GPU", 0)
        ref = remote.options(scheduling_strategy=strategy, num_gpus=gpus, num_cpus=0.5,
                             resources={SIM_RESOURCE: 0.01} if sim else None).remote(sim=sim, level=level)
        pending[ref] = (node, time.monotonic(), sim)
    results: list[NodeResult] = []
    deadline = time.monotonic() + timeout_s
    total = len(pending)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        ref = ready[0]
        node, started, sim = pending.pop(ref)
        host = node.get("NodeManagerHostname", "?")
        try:
            results.append(NodeResult(node["NodeID"], host, "ok", ray.get(ref), seconds=time.monotonic() - started,
                                      sim=sim))
        except Exception as exc:
            results.append(NodeResult(node["NodeID"], host, "failed", error=error_text(exc),
                                      seconds=time.monotonic() - started, sim=sim))
        if progress:
            progress(total - len(pending), total, host)
    for ref, (node, started, sim) in pending.items():
        ray.cancel(ref, force=True)
        results.append(NodeResult(node["NodeID"], node.get("NodeManagerHostname", "?"), "timed_out",
                                  error=f"no result within {timeout_s:g} s", seconds=time.monotonic() - started, sim=sim))
    return results
