"""Step time of a training job on a node: compute at a stated share of the module's peak, and
the communication each parallelism puts on the topology, priced by the collective model.

Per step (one global batch):
- compute: 6 × parameters × tokens FLOPs (forward + backward) spread over all modules, at
  ``mfu`` of the module's dense bf16 peak;
- data parallel: the gradients (2 bytes/parameter of the module's model shard) all-reduced
  across the DP group (ZeRO-2: reduce-scatter; ZeRO-3: reduce-scatter + two all-gathers of the
  weights); overlapped with the backward pass (2/3 of compute), the rest exposed;
- tensor parallel: 4 all-reduces per layer per micro-batch (2 forward, 2 backward) of
  b·s·h·2 bytes (Megatron-LM), on the critical path;
- pipeline parallel: 2 activation sends per micro-batch per stage boundary, and the 1F1B
  bubble (p − 1)/(m + p − 1) of compute.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

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
    peak = module_model.peak_tflops("bf16") or module_model.peak_tflops("fp16")
    if peak is None:
        raise PlanError("--sim", f"{module_model.name} has no published bf16 rate", "use a catalog module")
    notes = [f"compute at {mfu:.0%} of {peak:g} TFLOPS dense bf16 ({module_model.name})"]
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
    compute = 6.0 * job.params * tokens / (job.modules * peak * 1e12 * mfu)
    # groups: TP innermost (neighbouring modules), then PP, then DP
    tp_group = ids[: job.tp]
    dp_group = ids[:: job.tp * job.pp][: job.dp]
    shard_bytes = 2.0 * job.params / (job.tp * job.pp)
    dp_comm = 0.0
    if job.dp > 1:
        if job.zero >= 2:
            dp_comm += model.predict("reduce_scatter", int(shard_bytes), dp_group).time_s
            if job.zero >= 3:
                dp_comm += 2 * model.predict("all_gather", int(shard_bytes), dp_group).time_s
        else:
            dp_comm += model.predict("all_reduce", int(shard_bytes), dp_group).time_s
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
        bubble = compute * (job.pp - 1) / (micro_batches + job.pp - 1)
    exposed = max(dp_comm - compute * 2 / 3, 0.0) + tp_comm + pp_comm
    step = compute + exposed + bubble
    total_comm = dp_comm + tp_comm + pp_comm
    notes.append(f"{micro_batches} micro-batches per step; DP gradients overlap the backward pass (2/3 of compute)")
    return StepPlan(node.name, job.modules, job.micro_batch, tokens, compute, dp_comm, tp_comm, pp_comm, bubble,
                    exposed, step, total_comm / (compute + total_comm), exposed / step, notes,
                    module_model.memory_bytes, need, fit)


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
