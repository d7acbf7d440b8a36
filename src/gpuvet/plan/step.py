"""Step time of a training job on a node: compute at a stated share of the module's peak, and
the communication each parallelism puts on the topology, priced by the collective model.

Per step (one global batch):
- compute: 6 × parameters × tokens (the weights' GEMMs, forward + backward) plus attention's
  12 × layers × hidden × sequence per token (QKᵀ and AV, forward + backward; PaLM, Chowdhery et al.
  2022, App. B: the FLOPs an MFU figure counts), spread over all modules, at ``mfu`` of the
  module's dense bf16 peak (fp8's with ``precision="fp8"``);
- data parallel: ZeRO 0 all-reduces the gradients (2 bytes/parameter of the module's model
  shard); ZeRO-1 and 2 reduce-scatter the gradients and all-gather the updated weights (2Ψ, the
  same volume: Rajbhandari et al. 2020 §7.2.1); ZeRO-3 all-gathers the weights once more (3Ψ);
  overlapped with the backward pass (2/3 of compute), the rest exposed;
- tensor parallel: 4 all-reduces per layer per micro-batch (2 forward, 2 backward) of
  b·s·h·2 bytes (Megatron-LM), on the critical path (no overlap: an assumption);
- pipeline parallel: 2 activation sends per micro-batch per stage boundary, and the 1F1B
  bubble (p − 1)/m of the ideal compute time (Narayanan et al. 2021, §2.2.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpuvet.node.collectives import bus_factor
from gpuvet.node.memory import Job, PlanError, fits, memory_per_module
from gpuvet.node.model import Node
from gpuvet.plan.collective import CollectiveModel


@dataclass(frozen=True)
class StepPlan:
    node: str
    modules: int
    micro_batch: int
    tokens: int
    compute_s: float
    dp_comm_s: float
    tp_comm_s: float
    pp_comm_s: float
    bubble_s: float
    exposed_comm_s: float
    step_s: float
    comm_share: float  # all communication time / (compute + communication)
    exposed_share: float  # exposed communication / step
    assumptions: list[str] = field(default_factory=list)
    module_memory_bytes: int | None = None  # the catalog's, for the module of the node
    memory_per_module_bytes: int = 0  # weights, gradients, optimizer and activations (plan memory's breakdown)
    fits: bool | None = None  # in the module's memory with 10 % headroom; None: the module's memory is unknown
    flops: float = 0.0  # training FLOPs of the step, all modules (6N·tokens + attention)
    dp_bytes: float = 0.0  # bytes each data-parallel rank sends per step (nccl-tests' bus traffic)


MEMORY_HEADROOM = 0.1  # share of the module's memory kept free (the allocator, the runtime, fragmentation)


def auto_micro_batch(job: Job, module_bytes: int, headroom: float = MEMORY_HEADROOM, limit: int = 1024) -> int:
    """The largest micro-batch that fits (at least 1)."""
    best = 1
    b = 1
    while b <= limit:
        if fits(memory_per_module(replace(job, micro_batch=b)).total_bytes, module_bytes, headroom):
            best = b
            b *= 2
        else:
            break
    return best


def step_flops(job: Job, tokens: int) -> float:
    """6·N per token for the weights, plus 12·L·h·s per token for attention's two matrix products
    (causal masking not subtracted, as MFU figures count them)."""
    a = job.arch
    assert a is not None
    return 6.0 * job.params * tokens + 12.0 * a.layers * a.hidden * job.seq_len * tokens


def dp_collectives(job: Job) -> list[str]:
    """The collectives one step runs on the data-parallel group, each of the gradient buffer's size."""
    if job.zero == 0:
        return ["all_reduce"]
    if job.zero <= 2:
        return ["reduce_scatter", "all_gather"]  # gradients scattered, updated weights gathered: 2Ψ, as all-reduce
    return ["reduce_scatter", "all_gather", "all_gather"]  # weights gathered for forward and backward: 3Ψ


def _dp_comm(job: Job, model: CollectiveModel, group: list[str], shard_bytes: float) -> tuple[float, float]:
    """(seconds, bytes each rank sends) of a step's data-parallel collectives."""
    if job.dp <= 1:
        return 0.0, 0.0
    ops = dp_collectives(job)
    seconds = sum(model.predict(op, int(shard_bytes), group).time_s for op in ops)
    per_rank = sum(bus_factor(op, job.dp) for op in ops) * shard_bytes
    return seconds, per_rank


def _no_rate(node: Node, module: str, rate: str, has_bf16: bool) -> PlanError:
    """The step is priced from the module's dense rate: say which figure is missing and how to give it."""
    spec = (f"give the module's figures in a spec file and plan with --node FILE, e.g. base: {node.name}, modules: "
            f"{{count: {len(node.modules)}, model: null, custom: {{name: {module}-rated, memory_bytes: BYTES, "
            f"tflops: {{{rate}: TFLOPS}}}}}} (docs/spec.md)")
    return PlanError("--precision" if rate == "fp8" else "--node",
                     f"{module} has no dense {rate} TFLOPS figure (the catalog holds none published), and the "
                     "step's compute is priced from it (--mfu is a share of it)",
                     f"use --precision bf16, or {spec}" if rate == "fp8" and has_bf16 else spec)


def plan_step(job: Job, node: Node, model: CollectiveModel | None = None, mfu: float = 0.45,
              micro_batches: int = 8, auto_batch: bool = False) -> StepPlan:
    job.validate()
    if job.arch is None:
        raise PlanError("--layers/--hidden/--heads", "the step planner needs the architecture",
                        "give --layers, --hidden and --heads")
    if job.modules > len(node.modules):
        raise PlanError("--dp/--tp/--pp", f"dp × tp × pp × cp = {job.modules} modules, the node has {len(node.modules)}",
                        "lower a parallel degree")
    module_model = node.modules[0].model
    rate = "fp8" if job.precision == "fp8" else "bf16"
    peak = module_model.peak_tflops(rate) or (module_model.peak_tflops("fp16") if rate == "bf16" else None)
    if peak is None:
        raise _no_rate(node, module_model.name, rate, module_model.peak_tflops("bf16") is not None)
    notes = [f"compute at {mfu:.0%} of {peak:g} TFLOPS dense {rate} ({module_model.name}); 6·N·tokens + attention "
             "12·L·h·s per token (PaLM App. B)"]
    if auto_batch:
        if module_model.memory_bytes is None:
            raise PlanError("--auto-batch", "the module's memory is unknown", "give --micro-batch")
        job = replace(job, micro_batch=auto_micro_batch(job, module_model.memory_bytes))
        notes.append(f"micro-batch {job.micro_batch}: the largest that fits {module_model.memory_bytes / 2**30:.1f} GiB")
    need = int(memory_per_module(job).total_bytes)  # a plan that does not fit cannot run: its times mean nothing
    fit = None if module_model.memory_bytes is None else fits(need, module_model.memory_bytes, MEMORY_HEADROOM)
    model = model or CollectiveModel(node)
    ids = node.module_ids[: job.modules]
    a = job.arch
    assert a is not None
    tokens = job.dp * job.micro_batch * micro_batches * job.seq_len
    flops = step_flops(job, tokens)
    compute = flops / (job.modules * peak * 1e12 * mfu)
    # groups: TP innermost (neighbouring modules), then PP, then DP
    tp_group = ids[: job.tp]
    dp_group = ids[:: job.tp * job.pp][: job.dp]
    shard_bytes = 2.0 * job.params / (job.tp * job.pp)
    dp_comm, dp_bytes = _dp_comm(job, model, dp_group, shard_bytes)
    tp_comm = 0.0
    act_bytes = int(job.micro_batch * job.seq_len * a.hidden * 2)
    if job.tp > 1:
        per = model.predict("all_reduce", act_bytes, tp_group).time_s
        tp_comm = 4 * per * (a.layers / job.pp) * micro_batches
    pp_comm, bubble = 0.0, 0.0
    if job.pp > 1:
        a_mod, b_mod = ids[0], ids[job.tp]
        gbps = model.transfer_gbps(a_mod, b_mod)
        pp_comm = 2 * micro_batches * act_bytes / (gbps * 1e9) * (job.pp - 1) / job.pp
        bubble = compute * (job.pp - 1) / micro_batches  # of the ideal time (Narayanan et al. 2021)
    exposed = max(dp_comm - compute * 2 / 3, 0.0) + tp_comm + pp_comm
    step = compute + exposed + bubble
    total_comm = dp_comm + tp_comm + pp_comm
    notes.append(f"{micro_batches} micro-batches per step; DP gradients overlap the backward pass (2/3 of compute)")
    return StepPlan(node.name, job.modules, job.micro_batch, tokens, compute, dp_comm, tp_comm, pp_comm, bubble,
                    exposed, step, total_comm / (compute + total_comm), exposed / step, notes,
                    module_model.memory_bytes, need, fit, flops, dp_bytes)


def scaling(job: Job, node: Node, counts: list[int], mfu: float = 0.45) -> list[tuple[int, float, float]]:
    """(modules, step seconds, scaling efficiency) as the data-parallel degree grows, the
    per-module batch held fixed (weak scaling)."""
    base = plan_step(replace(job, dp=1), node, mfu=mfu)
    out = []
    for n in counts:
        dp = n // (job.tp * job.pp)
        if dp < 1:
            continue
        p = plan_step(replace(job, dp=dp), node, mfu=mfu)
        out.append((p.modules, p.step_s, base.step_s / p.step_s))
    return out
