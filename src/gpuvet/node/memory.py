"""Memory per module for training a transformer: weights, gradients, optimizer states,
activations, communication buffers and runtime overhead. Pure arithmetic, every convention
stated.

Sources:
- Model states and ZeRO: Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training
  Trillion Parameter Models" (SC'20), §3 and Fig. 1: mixed precision with Adam keeps 2Ψ bytes
  of fp16 weights, 2Ψ of fp16 gradients and KΨ of optimizer states (K = 12: fp32 weights,
  momentum, variance) = 16Ψ; stage 1 divides the optimizer states by the data-parallel degree,
  stage 2 the gradients too, stage 3 the weights too.
- Megatron-LM keeps fp32 main gradients (4 bytes), giving 18 bytes per parameter
  (``fp32_grads=True``); this is where "16 vs 18 bytes" comes from.
- Activations: Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
  Models" (2022), Eq. 1–5, per layer in bytes with 16-bit activations:
  no parallelism sbh(34 + 5as/h); tensor parallel t: sbh(10 + 24/t + 5as/(ht)); with sequence
  parallel: sbh/t (34 + 5as/h); selective recomputation (with sequence parallel): 34 sbh/t;
  full recomputation: 2sbh (the layer input only). With 1F1B pipelining the first stage holds
  p microbatches of L/p layers: L layers' worth, whatever p (ibid. §4.2.3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

Precision = Literal["fp32", "bf16", "fp16", "fp8"]
Optimizer = Literal["adam", "adamw", "adam8bit", "sgd", "adafactor"]
Recompute = Literal["none", "selective", "full"]
Accounting = Literal["paper", "deepspeed", "fsdp"]
Norm = Literal["rmsnorm", "layernorm"]
NORMS = ("rmsnorm", "layernorm")
ACCOUNTINGS = ("paper", "deepspeed", "fsdp")
# The FSDP sharding strategy each ZeRO stage maps to under --accounting fsdp. FSDP has no strategy that
# shards the optimizer states alone, so ZeRO-1 takes SHARD_GRAD_OP (gradients sharded too).
FSDP_STRATEGY = {0: "NO_SHARD", 1: "SHARD_GRAD_OP", 2: "SHARD_GRAD_OP", 3: "FULL_SHARD"}
GiB = 2**30


class PlanError(ValueError):
    """An impossible or unknown input; ``param`` names the flag."""

    def __init__(self, param: str, message: str, fix: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param, self.message, self.fix = param, message, fix


@dataclass(frozen=True)
class Architecture:
    layers: int
    hidden: int
    heads: int
    kv_heads: int | None = None  # grouped-query attention; None: = heads
    ffn: int | None = None  # None: 4 × hidden
    vocab: int = 32000
    gated_mlp: bool = False  # SwiGLU-style: three FFN matrices instead of two
    experts: int = 1  # MoE experts per layer (every layer)
    tied: bool = True  # the output head reuses the embedding matrix (GPT-2, GPT-3); Llama's head is its own
    positions: int = 0  # learned position embeddings (GPT-2: 1024); rotary models (Llama) have none
    # Llama's RMSNorm has a weight only (h a norm); GPT-2's LayerNorm a weight and a bias (2h a norm)
    norm: Norm = "layernorm"
    biases: bool = False  # GPT-2's linear layers have biases; Llama's have none

    def norm_parameters(self) -> int:
        """One norm's weights: h for RMSNorm, 2h for LayerNorm (weight and bias)."""
        return self.hidden if self.norm == "rmsnorm" else 2 * self.hidden

    def layer_parameters(self) -> int:
        """Weights of one transformer block: attention, MLP (every expert), their biases where the
        architecture has them, and its two norms."""
        h, kv = self.hidden, (self.kv_heads or self.heads)
        head_dim = h // self.heads
        attention = h * h + 2 * h * kv * head_dim + h * h  # q, k and v, o
        ffn = self.ffn or 4 * h
        matrices = 3 if self.gated_mlp else 2
        mlp = matrices * h * ffn * self.experts
        if self.biases:  # q, k, v and o; each up (and gate) matrix's ffn and the down matrix's h
            attention += 2 * h + 2 * kv * head_dim
            mlp += ((matrices - 1) * ffn + h) * self.experts
        return attention + mlp + 2 * self.norm_parameters()

    def embedding_parameters(self) -> int:
        """The weights outside the blocks: the token embedding, the output head unless it is tied to
        it (a 7B Llama's untied head alone is 131 M), learned position embeddings and the final norm."""
        heads = 1 if self.tied else 2
        return heads * self.vocab * self.hidden + self.positions * self.hidden + self.norm_parameters()

    def parameters(self) -> int:
        """Weights of the blocks with their norms, plus the embedding (and head, when untied)."""
        return self.layers * self.layer_parameters() + self.embedding_parameters()

    def head_note(self) -> str:
        """How the count treats the output head, for a plan's stated assumptions."""
        head = ("output head tied to the token embedding (one vocab × hidden matrix)" if self.tied
                else "output head untied: a vocab × hidden matrix of its own beside the token embedding")
        positions = f", {self.positions:,} learned position embeddings" if self.positions else ""
        norms = "RMSNorm (h a norm)" if self.norm == "rmsnorm" else "LayerNorm (2h a norm)"
        return (f"architecture: {self.parameters() / 1e9:.4g}B parameters from {self.layers} layers × "
                f"{self.hidden} wide, {head}{positions}, {norms}" + (", biases counted" if self.biases else ""))


@dataclass(frozen=True)
class Job:
    params: float  # total parameters
    precision: Precision = "bf16"
    optimizer: Optimizer = "adamw"
    zero: int = 0  # 0..3; FSDP full sharding = 3
    dp: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1  # context parallel: the sequence split across modules
    sequence_parallel: bool = False
    recompute: Recompute = "none"
    fp32_grads: bool = False  # Megatron's fp32 main gradients (18 bytes/param instead of 16)
    offload_optimizer: bool = False
    arch: Architecture | None = None
    seq_len: int = 2048
    micro_batch: int = 1
    bucket_mb: float = 25.0  # gradient/all-gather buckets (DDP default 25 MB)
    runtime_overhead_bytes: int = int(1.5 * GiB)  # CUDA context, NCCL, cuBLAS workspaces
    accounting: Accounting = "paper"  # model states as the ZeRO paper counts them, or as DeepSpeed's estimator does

    def validate(self) -> None:
        if self.params <= 0:
            raise PlanError("--params", f"{self.params:g} is not a positive parameter count", "e.g. --params 7.5B")
        for name, value in (("--dp", self.dp), ("--tp", self.tp), ("--pp", self.pp), ("--cp", self.cp),
                            ("--micro-batch", self.micro_batch), ("--seq-len", self.seq_len)):
            if value < 1:
                raise PlanError(name, f"{value} must be at least 1", "give a positive integer")
        if self.zero not in (0, 1, 2, 3):
            raise PlanError("--zero", f"stage {self.zero} does not exist", "use 0, 1, 2 or 3")
        if self.accounting not in ACCOUNTINGS:
            raise PlanError("--accounting", f"unknown accounting {self.accounting!r}", "use paper, deepspeed or fsdp")
        if self.accounting == "deepspeed" and self.zero == 3 and self.arch is None:
            raise PlanError("--accounting", "DeepSpeed's ZeRO-3 estimate counts the largest layer, which needs the "
                            "architecture", "give --shape (e.g. llama-2-7b) or --layers, --hidden and --heads")
        if self.accounting == "fsdp" and self.arch is None:
            raise PlanError("--accounting", "FSDP gathers one wrapped unit (a transformer block, or the root with the "
                            "embedding) at a time, which needs the architecture",
                            "give --shape or --layers, --hidden and --heads")
        if self.accounting == "fsdp" and self.offload_optimizer:
            raise PlanError("--offload-optimizer", "FSDP cannot offload the optimizer alone: its CPUOffload moves the "
                            "parameters and gradients to the host too", "leave --offload-optimizer out, or use "
                            "--accounting deepspeed")
        if self.arch is not None:
            a = self.arch
            if a.hidden % a.heads:
                raise PlanError("--heads", f"{a.heads} heads do not divide hidden size {a.hidden}", "pick a divisor")
            if a.heads % self.tp:
                raise PlanError("--tp", f"tensor parallel {self.tp} does not divide {a.heads} heads",
                                "use a divisor of the head count")
            if (a.kv_heads or a.heads) % self.tp and self.tp % (a.kv_heads or a.heads):
                raise PlanError("--tp", f"tensor parallel {self.tp} and {a.kv_heads} KV heads do not divide",
                                "use a TP degree that divides or is a multiple of the KV heads")
            if a.layers % self.pp:
                raise PlanError("--pp", f"pipeline parallel {self.pp} does not divide {a.layers} layers",
                                "use a divisor of the layer count")
        if self.sequence_parallel and self.tp == 1:
            raise PlanError("--sequence-parallel", "needs tensor parallelism", "add --tp 2 or more")

    @property
    def modules(self) -> int:
        return self.dp * self.tp * self.pp * self.cp


OPTIMIZER_BYTES = {  # optimizer-state bytes per parameter, mixed precision (includes the fp32 master weights)
    "adam": 12.0, "adamw": 12.0,  # fp32 master + momentum + variance (ZeRO paper K = 12)
    "adam8bit": 6.0,  # fp32 master 4 + 8-bit momentum and variance (Dettmers et al. 2022)
    "sgd": 8.0,  # fp32 master 4 + momentum 4
    "adafactor": 4.0,  # fp32 master; factored second moments are O(rows + cols), left out
}


@dataclass(frozen=True)
class Breakdown:
    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    communication_bytes: float
    runtime_bytes: float
    assumptions: list[str] = field(default_factory=list)
    # bytes inside weights_bytes and gradients_bytes beyond the model states, by name (FSDP's gathered units)
    state_allowances: dict[str, float] = field(default_factory=dict)

    @property
    def total_bytes(self) -> float:
        return (self.weights_bytes + self.gradients_bytes + self.optimizer_bytes + self.activations_bytes
                + self.communication_bytes + self.runtime_bytes)


def state_bytes_per_param(job: Job) -> tuple[float, float, float, list[str]]:
    """(weights, gradients, optimizer) bytes per parameter before sharding."""
    notes = []
    if job.precision == "fp32":
        weights, grads = 4.0, 4.0
        optim = {"adam": 8.0, "adamw": 8.0, "adam8bit": 2.0, "sgd": 4.0, "adafactor": 0.0}[job.optimizer]
        notes.append("fp32 training: weights and gradients 4 bytes, no master copy")
    else:
        weights = 2.0  # fp8 training keeps 16-bit weights and casts per GEMM (Transformer Engine)
        grads = 4.0 if job.fp32_grads else 2.0
        optim = OPTIMIZER_BYTES[job.optimizer]
        notes.append(f"mixed precision ({job.precision}): 2-byte weights, {grads:g}-byte gradients"
                     + (" (fp32 main gradients, Megatron's convention: 18 bytes/param with Adam)" if job.fp32_grads
                        else " (ZeRO paper's convention: 16 bytes/param with Adam)")
                     + f", {optim:g} bytes of {job.optimizer} state including the fp32 master weights")
        if job.precision == "fp8":
            notes.append("fp8: weights kept in 16 bits and cast for each GEMM, so states are as bf16")
    return weights, grads, optim, notes


def activation_bytes_per_layer(s: int, b: int, h: int, a: int, t: int, sequence_parallel: bool,
                               recompute: Recompute) -> float:
    """Korthikanti et al. Eq. 1–5 (16-bit activations, dropout masks included)."""
    if recompute == "full":
        return 2.0 * s * b * h / (t if sequence_parallel else 1)
    if recompute == "selective":
        return 34.0 * s * b * h / t if sequence_parallel or t == 1 else s * b * h * (10 + 24 / t)
    if t == 1:
        return s * b * h * (34 + 5 * a * s / h)
    if sequence_parallel:
        return s * b * h / t * (34 + 5 * a * s / h)
    return s * b * h * (10 + 24 / t + 5 * a * s / (h * t))


def largest_layer_params(arch: Architecture, tp: int = 1) -> float:
    """The largest single weight matrix (DeepSpeed's 'layer': one module's parameters): the
    embedding or one FFN matrix, split by tensor parallelism."""
    return max(arch.vocab * arch.hidden, arch.hidden * (arch.ffn or 4 * arch.hidden)) / tp


def deepspeed_states(job: Job, psi: float, dp: int) -> tuple[float, float, float, list[str]]:
    """(weights, gradients, optimizer) bytes as DeepSpeed's estimators count them
    (deepspeed.runtime.zero: estimate_zero2_model_states_mem_needs, ..._zero3_...): ZeRO-2 keeps the
    16-bit weights and gradients whole, 4Ψ + 16Ψ/N (with optimizer offload, 2Ψ); ZeRO-3 keeps 18Ψ/N
    plus 4 bytes of the largest layer gathered (with optimizer offload, 2Ψ/N plus the layer)."""
    if job.zero == 2:
        if job.offload_optimizer:
            return 2 * psi, 0.0, 0.0, ["DeepSpeed's ZeRO-2 estimator with the optimizer offloaded: 2Ψ on the module "
                                       "(16-bit weights)"]
        return 2 * psi, 2 * psi, 16 * psi / dp, [
            f"DeepSpeed's ZeRO-2 estimator (estimate_zero2_model_states_mem_needs): 4Ψ + 16Ψ/N over N = {dp} ranks: "
            "16-bit weights and gradients whole, fp32 master weights, Adam moments and fp32 gradients sharded"]
    assert job.arch is not None
    layer = largest_layer_params(job.arch, job.tp)
    if job.offload_optimizer:
        return 2 * psi / dp + 2 * layer, 2 * layer, 0.0, [
            f"DeepSpeed's ZeRO-3 estimator with the optimizer offloaded: 2Ψ/N + 4 bytes × the largest layer "
            f"({layer / 1e6:.0f} M parameters)"]
    return 2 * psi / dp + 2 * layer, 2 * layer, 16 * psi / dp, [
        f"DeepSpeed's ZeRO-3 estimator (estimate_zero3_model_states_mem_needs): 18Ψ/N over N = {dp} ranks + 4 bytes "
        f"× the largest layer gathered ({layer / 1e6:.0f} M parameters: 16-bit weights and gradients)"]


@dataclass(frozen=True)
class FsdpStates:
    """Model states as PyTorch FSDP (FullyShardedDataParallel) holds them at its peak."""
    weights: float
    gradients: float
    optimizer: float
    allowances: dict[str, float]
    notes: list[str]


def fsdp_states(job: Job, psi: float, dp: int) -> FsdpStates:
    """FSDP as implemented (torch.distributed.fsdp, MixedPrecision, default BACKWARD_PRE): the flat
    parameters are kept sharded in fp32 (the optimizer's master copy, 4Ψ/N) with fp32 gradient shards
    (4Ψ/N, upcast after the reduce-scatter) and sharded optimizer states; the compute-dtype (c bytes)
    copies of the wrapped units are the allowance. FULL_SHARD and NO_SHARD hold the root unit R (the
    embedding) through the step plus the current and prefetched next block B: c(R + 2B); SHARD_GRAD_OP
    keeps every unit gathered from forward to backward: cΨ. Every strategy adds the unsharded
    gradient of the unit being reduced, c·max(R, B). NO_SHARD is N = 1."""
    assert job.arch is not None
    mixed = job.precision != "fp32"
    c = 2.0 if mixed else 4.0
    unit, root = job.arch.layer_parameters() / job.tp, job.arch.embedding_parameters() / job.tp
    strategy = FSDP_STRATEGY[job.zero]
    n = 1 if strategy == "NO_SHARD" else dp
    moments = OPTIMIZER_BYTES[job.optimizer] - 4.0 if mixed else state_bytes_per_param(job)[2]
    gathered = c * psi if strategy == "SHARD_GRAD_OP" else c * (root + 2 * unit)
    grad_unit = c * max(root, unit)
    if strategy == "NO_SHARD" and not mixed:
        gathered = grad_unit = 0.0  # no low-precision copy: the fp32 flat parameter and its gradient are used as is
    allowances = {"FSDP gathered units (compute dtype)": gathered, "FSDP unsharded gradient of one unit": grad_unit}
    where = ("every unit kept gathered from forward to backward (parameters are not resharded after forward)"
             if strategy == "SHARD_GRAD_OP" else f"the root unit ({root / 1e6:.0f} M, embedding"
             f"{'' if job.arch.tied else ' and output head'}) and the current "
             f"and prefetched next block ({unit / 1e6:.0f} M each; BackwardPrefetch.BACKWARD_PRE)")
    notes = [f"--accounting fsdp: PyTorch FSDP {strategy} (--zero {job.zero}) over N = {n} ranks: fp32 sharded flat "
             f"parameters 4Ψ/N (the optimizer's master copy), fp32 gradient shards 4Ψ/N, {moments:g}Ψ/N of "
             f"{job.optimizer} state (torch.distributed.fsdp ShardingStrategy, MixedPrecision)",
             f"FSDP allowance: {c:g}-byte copies of the gathered units, {where}: {gathered / 1e9:.3g} GB; the unsharded "
             f"gradient of the largest unit before its reduce-scatter: {grad_unit / 1e9:.3g} GB"]
    return FsdpStates(4 * psi / n + gathered, 4 * psi / n + grad_unit, moments * psi / n, allowances, notes)


def memory_per_module(job: Job) -> Breakdown:
    job.validate()
    notes: list[str] = []
    shard = job.tp * job.pp  # model parallel split of the weights
    psi = job.params / shard
    w, g, o, state_notes = state_bytes_per_param(job)
    notes += state_notes
    dp = job.dp * job.cp  # ZeRO shards over the data-parallel (and context-parallel) group
    allowances: dict[str, float] = {}
    if job.accounting == "fsdp":
        fsdp = fsdp_states(job, psi, dp)
        weights, grads, optim, notes, allowances = (fsdp.weights, fsdp.gradients, fsdp.optimizer, fsdp.notes,
                                                    fsdp.allowances)  # FSDP's own layout replaces the paper's
    elif job.accounting == "deepspeed" and job.zero >= 2 and job.precision != "fp32":
        weights, grads, optim, ds_notes = deepspeed_states(job, psi, dp)
        notes = ds_notes  # DeepSpeed's own byte counts replace the paper's
    else:
        weights = psi * w / (dp if job.zero >= 3 else 1)
        grads = psi * g / (dp if job.zero >= 2 else 1)
        optim = psi * o / (dp if job.zero >= 1 else 1)
        if job.zero:
            notes.append(f"ZeRO stage {job.zero} over {dp} data-parallel ranks, the paper's ideal accounting "
                         "(Rajbhandari et al. 2020: 2Ψ + 2Ψ + 12Ψ, each part sharded from its stage on)")
        if job.accounting == "deepspeed":
            notes.append("--accounting deepspeed: DeepSpeed has estimators for ZeRO-2 and ZeRO-3 of mixed-precision "
                         "training only; this job is counted as the paper does")
        if job.offload_optimizer:
            notes.append("optimizer states offloaded to host memory")
            optim = 0.0
    if job.arch is not None:
        a = job.arch
        notes.append(a.head_note())
        s = math.ceil(job.seq_len / job.cp)
        per_layer = activation_bytes_per_layer(s, job.micro_batch, a.hidden, a.heads, job.tp, job.sequence_parallel,
                                               job.recompute)
        activations = per_layer * a.layers  # 1F1B: L/p layers for p microbatches in flight on the first stage
        logits = 4.0 * s * job.micro_batch * a.vocab / job.tp  # fp32 logits of the last stage
        activations += logits
        recompute = "no recomputation" if job.recompute == "none" else f"{job.recompute} recomputation"
        notes.append(f"activations: Korthikanti et al. per-layer formula ({recompute}"
                     + (", sequence parallel" if job.sequence_parallel else "") + f"), {a.layers} layers' worth on "
                     "the first pipeline stage (1F1B), plus fp32 logits")
    else:
        activations = 0.0
        notes.append("activations not counted: give the architecture (--layers, --hidden, --heads) to include them")
    comm = 2 * job.bucket_mb * 1e6 * (2 if job.zero >= 3 else 1)
    if job.accounting == "fsdp":
        comm = 0.0
        notes.append("communication buffers: none apart; FSDP all-gathers into and reduce-scatters from the "
                     "unit copies counted above")
    else:
        notes.append(f"communication buffers: two {job.bucket_mb:g} MB buckets" + (
            " for reduce-scatter and two for all-gather" if job.zero >= 3 else ""))
    notes.append(f"runtime overhead {job.runtime_overhead_bytes / GiB:g} GiB (CUDA context, NCCL, workspaces)")
    notes.append("the total includes the allowances above (assumptions, not measurements); the model states "
                 "alone are weights + gradients + optimizer" + (" less FSDP's unit copies" if allowances else ""))
    return Breakdown(weights, grads, optim, activations, comm, float(job.runtime_overhead_bytes), notes, allowances)


def fits(total_bytes: float, module_bytes: int, headroom: float = 0.1) -> bool:
    """Within the module's memory less a headroom share (allocator fragmentation)."""
    return total_bytes <= module_bytes * (1 - headroom)


def fewest_modules(job: Job, module_bytes: int, headroom: float = 0.1, max_modules: int = 4096) -> Job | None:
    """The smallest dp × tp × pp (ZeRO stage as given; TP within powers of two up to 8) that fits."""
    best: Job | None = None
    heads = job.arch.heads if job.arch else None
    layers = job.arch.layers if job.arch else None
    for tp in (1, 2, 4, 8):
        if heads is not None and heads % tp:
            continue
        for pp in [p for p in range(1, 65) if layers is None or layers % p == 0]:
            for dp in range(1, max_modules // (tp * pp) + 1):
                if job.zero == 0 and dp > 1:
                    break  # without ZeRO, more data parallelism does not shrink a module's share
                trial = Job(**{**job.__dict__, "tp": tp, "pp": pp, "dp": dp,
                               "sequence_parallel": job.sequence_parallel and tp > 1})
                try:
                    need = memory_per_module(trial).total_bytes
                except PlanError:
                    break
                if fits(need, module_bytes, headroom):
                    if best is None or trial.modules < best.modules:
                        best = trial
                    break
    return best
