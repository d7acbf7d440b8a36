"""`gpuvet plan memory|collective|step|power`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Annotated, ParamSpec, TypeVar

import typer

from gpuvet.cli import exits, term
from gpuvet.cli.checks import floats, ints, renamed
from gpuvet.cli.common import SimOpt, chosen_node
from gpuvet.cli.jsonout import write_json
from gpuvet.cli.plan_options import (
    DEFAULT_TDP_W,
    MAX_DEGREE,
    MAX_LAYERS,
    MAX_TOKENS,
    MAX_WATTS,
    MAX_WIDTH,
    AccountingOpt,
    ArchitectureJson,
    FfnOpt,
    GatedOpt,
    HeadOpt,
    JsonOpt,
    KvHeadsOpt,
    LaunchOpt,
    LogbookOpt,
    MemoryPlan,
    NodeOpt,
    NormOpt,
    OptimizerHelp,
    ParamsOpt,
    PositionsOpt,
    PrecisionHelp,
    RecomputeHelp,
    ShapeOpt,
    StepHeadsOpt,
    StepHiddenOpt,
    StepLayersOpt,
    VocabOpt,
)
from gpuvet.quantities import parse_bytes, parse_count

if TYPE_CHECKING:
    from gpuvet.node.catalog import ModuleModel
    from gpuvet.node.memory import Architecture, Job
    from gpuvet.node.model import Node
    from gpuvet.node.spec import FaultSpec
    from gpuvet.plan.step import StepPlan

P = ParamSpec("P")
R = TypeVar("R")


plan_app = typer.Typer(
    short_help="Memory, collectives, step time and power, from the node model.",
    help="Plan jobs and nodes: memory per module, collective times, step time and communication "
                       "share on a topology, power caps under a budget. Arithmetic from the node model; every "
                       "assumption is printed.", no_args_is_help=True)

def _errors(fn: Callable[P, R]) -> Callable[P, R]:
    """PlanError (a bad parameter) becomes the CLI's clear error naming it."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from gpuvet.errors import GpuvetError
        from gpuvet.node.memory import PlanError

        try:
            return fn(*args, **kwargs)
        except PlanError as exc:
            raise GpuvetError(exc.message, where=exc.param, fix=exc.fix) from None

    return wrapper


@dataclass(frozen=True)
class ArchFlags:
    """The architecture as the flags give it: a --shape, and any figure given beside it (None: not given)."""

    shape: str | None
    layers: int | None
    hidden: int | None
    heads: int | None
    kv_heads: int | None
    ffn: int | None
    vocab: int | None
    gated: bool | None  # None: the shape's (a plain flag can only turn it on)
    tied: bool | None
    positions: int | None
    experts: int | None = None
    norm: str | None = None


# the flags that change an architecture's figures, by Architecture field: without one they describe nothing
_ARCH_FLAGS = {"kv_heads": "--kv-heads", "ffn": "--ffn", "vocab": "--vocab", "gated_mlp": "--gated-mlp",
               "tied": "--head", "positions": "--positions", "experts": "--experts", "norm": "--norm"}


def _arch(f: ArchFlags) -> Architecture | None:
    """The architecture: the --shape's with the flags given replacing its figures, or the flags
    alone (tied head, no position embeddings, LayerNorm, 32,000 tokens unless given); None when
    neither (a figure flag given then would be ignored: refused instead)."""
    from gpuvet.node.memory import NORMS, Architecture, PlanError
    from gpuvet.plan.shapes import get_shape

    if f.norm is not None and f.norm not in NORMS:
        raise PlanError("--norm", f"unknown norm {f.norm!r}", "use rmsnorm (Llama) or layernorm (GPT-2)")
    given = {k: v for k, v in (("layers", f.layers), ("hidden", f.hidden), ("heads", f.heads), ("kv_heads", f.kv_heads),
                               ("ffn", f.ffn), ("vocab", f.vocab), ("gated_mlp", f.gated), ("tied", f.tied),
                               ("positions", f.positions), ("experts", f.experts), ("norm", f.norm)) if v is not None}
    if f.shape:
        arch = replace(get_shape(f.shape).arch, **given)  # type: ignore[arg-type]  # typed by the flags
    elif f.layers or f.hidden or f.heads:
        if not (f.layers and f.hidden and f.heads):
            raise PlanError("--layers/--hidden/--heads", "give all three to describe the architecture (or --shape)",
                            "add the rest")
        arch = Architecture(**given)  # type: ignore[arg-type]  # typed by the flags
    elif given:
        flags = ", ".join(_ARCH_FLAGS[k] for k in given)
        raise PlanError(flags, "changes the architecture's figures, but no architecture is given: the plan would "
                        "ignore it", "add --shape (e.g. llama-2-7b) or --layers, --hidden and --heads, or leave "
                        f"{flags} out")
    else:
        return None
    if arch.heads > arch.hidden:
        raise PlanError("--heads", f"{arch.heads} heads exceed --hidden {arch.hidden}", "give at most one head per unit")
    kv = arch.kv_heads
    if kv is not None and (kv > arch.heads or arch.heads % kv):
        raise PlanError("--kv-heads", f"{kv} does not divide --heads {arch.heads}",
                        "grouped-query attention shares each KV head among heads/kv_heads query heads")
    return arch


def _tied(head: str | None) -> bool | None:
    """--head tied|untied as the architecture's flag (None: not given)."""
    from gpuvet.node.memory import PlanError

    if head is None:
        return None
    if head not in ("tied", "untied"):
        raise PlanError("--head", f"unknown head {head!r}", "use tied (GPT-2) or untied (Llama)")
    return head == "tied"


def _arch_json(arch: Architecture, shape: str | None) -> ArchitectureJson:
    from gpuvet.plan.shapes import get_shape

    return {"shape": get_shape(shape).name if shape else None, "layers": arch.layers, "hidden": arch.hidden,
            "heads": arch.heads, "kv_heads": arch.kv_heads, "ffn": arch.ffn, "vocab": arch.vocab,
            "gated_mlp": arch.gated_mlp, "experts": arch.experts, "tied": arch.tied,
            "position_embeddings": arch.positions, "norm": arch.norm, "biases": arch.biases,
            "parameters": arch.parameters()}


def _params_agree(params: str | None, arch: Architecture | None, described: str) -> None:
    """--params beside an architecture the user described (``described``: its flags) must be its
    count (within 1 %): the activations and FSDP units come from the architecture, so a different
    count would plan a model that is neither."""
    from gpuvet.node.memory import PlanError

    if not params or arch is None or not described:
        return
    count, own = parse_count(params, "--params"), arch.parameters()
    if abs(count - own) > 0.01 * own:
        raise PlanError("--params", f"{count / 1e9:.4g}B conflicts with {described}, which counts "
                        f"{own:,} parameters ({own / 1e9:.4g}B; its activations and FSDP units are planned from it)",
                        "leave --params out (the architecture's count is used), or describe the model of that size "
                        "(another --shape, or --layers, --hidden and --heads)")


def _described(shape: str | None, layers: int | None, hidden: int | None, heads: int | None) -> str:
    """The architecture flags the user gave, in words ('' when none)."""
    if shape:
        return f"--shape {shape}" + (" with --layers/--hidden/--heads" if layers or hidden or heads else "")
    return "--layers/--hidden/--heads" if layers or hidden or heads else ""


def _job(params: str | None, precision: str, optimizer: str, zero: int, dp: int, tp: int, pp: int, cp: int,
         recompute: str, sequence_parallel: bool, fp32_grads: bool, offload: bool, arch: Architecture | None,
         seq_len: int, micro_batch: int) -> Job:
    from gpuvet.node.memory import Job, PlanError

    if precision not in ("fp32", "bf16", "fp16", "fp8"):
        raise PlanError("--precision", f"unknown precision {precision!r}", "use fp32, bf16, fp16 or fp8")
    if optimizer not in ("adam", "adamw", "adam8bit", "sgd", "adafactor"):
        raise PlanError("--optimizer", f"unknown optimizer {optimizer!r}", "use adam, adamw, adam8bit, sgd or adafactor")
    if recompute not in ("none", "selective", "full"):
        raise PlanError("--recompute", f"unknown mode {recompute!r}", "use none, selective or full")
    count = parse_count(params, "--params") if params else (float(arch.parameters()) if arch else 0.0)
    if not count:
        raise PlanError("--params", "give the parameter count or the architecture", "e.g. --params 7B")
    return Job(count, precision, optimizer, zero, dp, tp, pp, cp, sequence_parallel, recompute, fp32_grads,  # type: ignore[arg-type]
               offload, arch, seq_len, micro_batch)


@plan_app.command("memory", short_help="Bytes per module: weights, gradients, optimizer, activations; fit.")
@_errors
def memory(
    params: ParamsOpt = None,
    precision: Annotated[str, typer.Option("--precision", metavar="fp32|bf16|fp16|fp8", help=PrecisionHelp)] = "bf16",
    optimizer: Annotated[str, typer.Option("--optimizer", metavar="NAME", help=OptimizerHelp)] = "adamw",
    zero: Annotated[int, typer.Option("--zero", metavar="0-3", help="ZeRO stage 0-3; under --accounting fsdp the "
                                      "FSDP strategy: 3 FULL_SHARD, 2 and 1 SHARD_GRAD_OP, 0 NO_SHARD.",
                                      callback=ints(0, 3))] = 0,
    dp: Annotated[int, typer.Option("--dp", help="Data-parallel degree.", callback=ints(1, MAX_DEGREE))] = 1,
    tp: Annotated[int, typer.Option("--tp", help="Tensor-parallel degree.", callback=ints(1, MAX_DEGREE))] = 1,
    pp: Annotated[int, typer.Option("--pp", help="Pipeline-parallel degree.", callback=ints(1, MAX_DEGREE))] = 1,
    cp: Annotated[int, typer.Option("--cp", help="Context-parallel degree.", callback=ints(1, MAX_DEGREE))] = 1,
    recompute: Annotated[str, typer.Option("--recompute", metavar="none|selective|full", help=RecomputeHelp)] = "none",
    sequence_parallel: Annotated[bool, typer.Option("--sequence-parallel", help="Megatron sequence parallelism.")]
    = False,
    fp32_grads: Annotated[bool, typer.Option("--fp32-grads", help="fp32 main gradients (Megatron: 18 bytes/param).")]
    = False,
    offload: Annotated[bool, typer.Option("--offload-optimizer", help="Optimizer states in host memory.")] = False,
    layers: Annotated[int | None, typer.Option("--layers", help="Transformer blocks.", callback=ints(1, MAX_LAYERS))] = None,
    hidden: Annotated[int | None, typer.Option("--hidden", help="Hidden (model) width.",
                                                   callback=ints(1, MAX_WIDTH))] = None,
    heads: Annotated[int | None, typer.Option("--heads", help="Attention heads.", callback=ints(1, MAX_WIDTH))] = None,
    kv_heads: KvHeadsOpt = None,
    ffn: FfnOpt = None,
    vocab: VocabOpt = None,
    seq_len: Annotated[int, typer.Option("--seq-len", help="Sequence length in tokens.",
                                                callback=ints(1, MAX_TOKENS))] = 2048,
    micro_batch: Annotated[int, typer.Option("--micro-batch", help="Sequences per micro-batch per module.",
                                                    callback=ints(1, MAX_TOKENS))] = 1,
    experts: Annotated[int | None, typer.Option("--experts", help="MoE experts per layer (default 1).",
                                                callback=ints(1, MAX_LAYERS))] = None,
    gated: GatedOpt = False,
    shape: ShapeOpt = None,
    head: HeadOpt = None,
    positions: PositionsOpt = None,
    norm: NormOpt = None,
    model: Annotated[str | None, typer.Option("--model", metavar="MODEL", help="Check the fit on this catalog "
                                              "model (gpuvet catalog, e.g. H200-SXM) and find the fewest modules "
                                              "that fit.")] = None,
    module_old: Annotated[str | None, typer.Option("--module", hidden=True, help="Old name of --model.")] = None,
    node_ref: Annotated[str | None, typer.Option("--node", metavar="SPEC", help="Check the fit on this node's "
                                                 "modules (preset or spec file) instead of naming --model.")]
    = None,
    headroom: Annotated[float, typer.Option("--headroom", help="Share of memory kept free (0 to under 1).",
                                                   callback=floats(0, 1, hi_open=True))] = 0.1,
    accounting: AccountingOpt = "paper",
    as_json: JsonOpt = False,
) -> None:
    """Bytes per module: weights, gradients, optimizer states, activations, communication buffers,
    runtime overhead; whether it fits a module; the fewest modules that fit."""
    arch = _arch(ArchFlags(shape, layers, hidden, heads, kv_heads, ffn, vocab, gated or None, _tied(head), positions,
                           experts, norm))
    _params_agree(params, arch, _described(shape, layers, hidden, heads))
    job = _job(params, precision, optimizer, zero, dp, tp, pp, cp, recompute, sequence_parallel, fp32_grads, offload,
               arch, seq_len, micro_batch)
    job = replace(job, accounting=accounting)  # type: ignore[arg-type]  # checked by Job.validate
    out = _memory_plan(job, _fit_model(renamed(model, module_old, "--module", "--model"), node_ref), headroom)
    if arch is not None:
        out["architecture"] = _arch_json(arch, shape)
    if as_json:
        write_json(out, indent=1)
        return
    _memory_text(job, out, headroom)


def _fit_model(model: str | None, node_ref: str | None) -> ModuleModel | None:
    """The module model to fit on: --model from the catalog, or the module of --node with the
    least memory (the one a job spread over the node must fit)."""
    from gpuvet.node.catalog import get_model
    from gpuvet.node.memory import PlanError

    if model and node_ref:
        raise PlanError("--node", "--model and --node both given", "give one: a module model or a node")
    if model:
        return get_model(model, "--model")
    if not node_ref:
        return None
    node, _ = _node(node_ref)
    if not node.modules:
        raise PlanError("--node", f"{node.name} declares no module", "give a node with modules, or --model")
    return min((m.model for m in node.modules), key=lambda m: m.memory_bytes or 0)


def _memory_plan(job: Job, m: ModuleModel | None, headroom: float) -> MemoryPlan:
    """plan memory --json: the breakdown, and with a module model the fit and the fewest modules."""
    from gpuvet.node.memory import fewest_modules, fits, memory_per_module

    b = memory_per_module(job)
    out: MemoryPlan = {"params": job.params, "modules": job.modules, "breakdown": {
        "weights_bytes": b.weights_bytes, "gradients_bytes": b.gradients_bytes, "optimizer_bytes": b.optimizer_bytes,
        "activations_bytes": b.activations_bytes, "communication_bytes": b.communication_bytes,
        "runtime_bytes": b.runtime_bytes, "total_bytes": b.total_bytes}, "assumptions": b.assumptions,
        "accounting": job.accounting, "allowances": {"communication buffers": b.communication_bytes,
                                                     "runtime (CUDA context, NCCL, workspaces)": b.runtime_bytes}
        | b.state_allowances}
    if m is not None:
        if m.memory_bytes:
            out["fits"] = {"module": m.name, "memory_bytes": m.memory_bytes, "memory_mib": m.memory_mib,
                           "headroom": headroom, "fits": fits(b.total_bytes, m.memory_bytes, headroom)}
            best = fewest_modules(job, m.memory_bytes, headroom)
            out["fewest_modules"] = None if best is None else {"modules": best.modules, "dp": best.dp, "tp": best.tp,
                                                               "pp": best.pp, "zero": best.zero}
    return out


def _memory_text(job: Job, out: MemoryPlan, headroom: float) -> None:
    from rich.text import Text

    t = term.table(f"memory per module — {job.params / 1e9:.3g}B parameters, {job.modules} modules "
                   f"(dp {job.dp} tp {job.tp} pp {job.pp})")
    term.column(t, "part", key=True)
    term.column(t, "GiB", right=True)
    term.column(t, "GB", right=True)
    for k, v in out["breakdown"].items():
        t.add_row(k.removesuffix("_bytes"), term.sig(v / 2**30), term.sig(v / 1e9))
    c = term.console()
    c.print(t)
    if "fits" in out:
        f = out["fits"]
        c.print(Text.assemble(f"fits {f['module']} ({f['memory_bytes'] / 2**30:.1f} GiB = "
                              f"{f['memory_bytes'] / 1e9:.1f} GB, {headroom:.0%} headroom): ",
                              ("yes", "green") if f["fits"] else ("no", "red")))
        best = out.get("fewest_modules")
        c.print(Text("fewest modules that fit: " + (f"{best['modules']} (dp {best['dp']} tp {best['tp']} pp "
                                                    f"{best['pp']})" if best else "none up to 4096")))
    for note in out["assumptions"]:
        c.print(Text(f"- {note}", style="dim"))


def _node_ref(node: str | None, sim: str | None) -> str:
    """--node (or its old name --sim), required."""
    from gpuvet.errors import GpuvetError

    ref = chosen_node(node, sim)
    if ref is None:
        raise GpuvetError("no node given", where="--node", fix="give --node PRESET_OR_SPEC, e.g. --node hgx-h200-8.")
    return ref


def _node(ref: str) -> tuple[Node, list[FaultSpec]]:
    """The node as its spec gives it, faults applied: planning needs no backend to run on."""
    from gpuvet.backends.select import load_node

    loaded = load_node(ref)
    return loaded.found, loaded.faults


@plan_app.command("collective", short_help="Predicted time, algbw, busbw and algorithm of one collective.")
@_errors
def collective(node_ref: NodeOpt = None, sim: SimOpt = None,
               op: Annotated[str, typer.Option("--op", metavar="OP", help="The collective: all_reduce, all_gather, "
                                               "reduce_scatter, all_to_all, broadcast or reduce.")] = "all_reduce",
               size: Annotated[str, typer.Option("--bytes", "--size", metavar="SIZE", help="Size in nccl-tests' "
                                                 "convention, e.g. 1GiB, 256MB, 4096.")] = "1GiB",
               ranks: Annotated[int | None, typer.Option("--ranks", metavar="COUNT", help="How many modules take "
                                                         "part, at least 2 (default: every module).",
                                                         callback=ints(2, MAX_DEGREE))] = None,
               ranks_old: Annotated[int | None, typer.Option("--modules", hidden=True, help="Old name of --ranks.",
                                                             callback=ints(2, MAX_DEGREE))] = None,
               algorithm: Annotated[str | None, typer.Option("--algorithm", metavar="ring|in_switch", help="Force ring "
                                                             "or in_switch (NVLink SHARP), as NCCL_ALGO does "
                                                             "(default: the fastest).")]
               = None,
               nodes: Annotated[int, typer.Option("--nodes", metavar="COUNT", help="Nodes the collective spans "
                                                  "(each like this one): across nodes it is bound by what the "
                                                  "NICs carry.", callback=ints(1, 100_000))] = 1,
               launch: LaunchOpt = "per-gpu",
               calibrate: Annotated[str | None, typer.Option("--calibrate", metavar="RUN",
                                                             help="A validate run of this node in the "
                                                             "logbook: price the size with its measured α and β.")]
               = None,
               logbook: LogbookOpt = None,
               as_json: JsonOpt = False) -> None:
    """Predicted time, algbw and busbw of one collective, and the algorithm a library would pick
    (ring, tree, in-switch reduction) — the model the simulated benchmarks use."""
    from gpuvet.node.memory import PlanError
    from gpuvet.plan.collective import CollectiveModel

    node, faults = _node(_node_ref(node_ref, sim))
    model = CollectiveModel(node, faults)
    try:
        members = model.members(renamed(ranks, ranks_old, "--modules", "--ranks"), least=2)
    except PlanError as exc:  # the model names its count --modules; here it is --ranks
        raise PlanError("--ranks", exc.message.replace("modules asked", "ranks asked"), exc.fix) from None
    p = model.across_nodes(model.predict(op, parse_bytes(size, "--bytes"), members, algorithm, launch), nodes)
    basis, checked = model.basis(members)
    data = {**asdict(p), "simulated": True, "node": node.name, "nodes": nodes,
            "model": f"alpha-beta per algorithm and protocol, flow-solver bandwidth; constants: {basis}",
            "constants_checked": checked}
    if calibrate:
        data["calibrated"] = _calibrated(calibrate, logbook, node.name, op, p.size_bytes, p.modules)
    if as_json:
        write_json(data, indent=1)
    else:
        from rich.text import Text

        term.console().print(Text(
            f"{op} of {term.size(p.size_bytes)} on {p.modules} modules of {node.name}"
            f"{f' x {nodes} nodes' if nodes > 1 else ''} (modelled): "
            f"{term.sig(p.time_s * 1e6, 'µs')}, algbw {term.sig(p.algbw, 'GB/s')}, busbw {term.sig(p.busbw, 'GB/s')}, "
            f"algorithm {p.algorithm} ({p.protocol} protocol)"))
        if p.launch_bound:  # one process drives every GPU: its launches in turn, not the collective, set the time
            term.console().print(Text(f"one process driving {len(members)} GPUs: its launches in turn set the time, "
                                      f"{len(members)} x {term.sig(p.launch_floor_s / len(members) * 1e6, 'µs')}"))
        term.console().print(Text(f"constants: {basis}", style="" if checked else "yellow"))


@plan_app.command("step", short_help="Step time and communication share of a training job on a node.")
@_errors
def step(node_ref: NodeOpt = None, sim: SimOpt = None,
         params: ParamsOpt = None,
         layers: StepLayersOpt = None, hidden: StepHiddenOpt = None, heads: StepHeadsOpt = None,
         seq_len: Annotated[int, typer.Option("--seq-len", help="Sequence length in tokens.",
                                                callback=ints(1, MAX_TOKENS))] = 4096,
         micro_batch: Annotated[int, typer.Option("--micro-batch", help="Sequences per micro-batch per module.",
                                                    callback=ints(1, MAX_TOKENS))] = 1,
         micro_batches: Annotated[int, typer.Option("--micro-batches", help="Per step (gradient accumulation).",
                                                                    callback=ints(1, MAX_TOKENS))] = 8,
         auto_batch: Annotated[bool, typer.Option("--auto-batch", help="Largest micro-batch that fits memory.")] = False,
         zero: Annotated[int, typer.Option("--zero", metavar="0-3", help="ZeRO stage 0-3 (under --accounting fsdp: "
                                           "3 FULL_SHARD, 2 and 1 SHARD_GRAD_OP, 0 NO_SHARD).", callback=ints(0, 3))]
         = 1,
         dp: Annotated[int | None, typer.Option("--dp", help="Default: the modules left after tp × pp.",
                                                         callback=ints(1, MAX_DEGREE))] = None,
         tp: Annotated[int, typer.Option("--tp", help="Tensor-parallel degree.", callback=ints(1, MAX_DEGREE))] = 1,
         pp: Annotated[int, typer.Option("--pp", help="Pipeline-parallel degree.", callback=ints(1, MAX_DEGREE))] = 1,
         recompute: Annotated[str, typer.Option("--recompute", metavar="none|selective|full",
                                                         help=RecomputeHelp)] = "selective",
         mfu: Annotated[float, typer.Option("--mfu", help="Share of the dense bf16 peak compute reaches "
                                           "(above 0, at most 1).", callback=floats(0, 1, lo_open=True))] = 0.45,
         compare: Annotated[str | None, typer.Option("--compare", metavar="SPEC", help="A second node (preset or "
                                                     "spec file) to compare with.")] = None,
         precision: Annotated[str, typer.Option("--precision", metavar="bf16|fp8", help="Compute at the dense bf16 "
                                                "or fp8 peak (fp8 keeps bf16 states, as Transformer Engine does).")]
         = "bf16",
         kv_heads: KvHeadsOpt = None, ffn: FfnOpt = None, vocab: VocabOpt = None, gated: GatedOpt = False,
         shape: ShapeOpt = None, head: HeadOpt = None, positions: PositionsOpt = None, norm: NormOpt = None,
         accounting: AccountingOpt = "paper",
         as_json: JsonOpt = False) -> None:
    """Step time, communication share (all of it, and the exposed part) of a training job on a
    node; --compare puts two topologies side by side (e.g. full mesh vs grouped).

    Exit 1 when the job does not fit a node's module memory (DOES NOT FIT), 2 on bad input."""
    from gpuvet.plan.collective import CollectiveModel
    from gpuvet.plan.step import plan_step

    arch = _arch(ArchFlags(shape, *_step_size(shape, layers, hidden, heads), kv_heads, ffn, vocab, gated or None,
                           _tied(head), positions, norm=norm))
    _params_agree(params, arch, _described(shape, layers, hidden, heads))
    results: list[StepPlan] = []
    for ref in [_node_ref(node_ref, sim)] + ([compare] if compare else []):
        node, faults = _node(ref)
        degree = _step_degree(node, tp, pp, dp, precision)
        job = _job(params, precision, "adamw", zero, degree, tp, pp, 1, recompute, tp > 1, False, False, arch,
                   seq_len, micro_batch)
        job = replace(job, accounting=accounting)  # type: ignore[arg-type]  # checked by Job.validate
        results.append(plan_step(job, node, CollectiveModel(node, faults), mfu, micro_batches, auto_batch))
    with exits.verdict(1 if any(map(_does_not_fit, results)) else 0):  # a plan that cannot run is a finding
        if as_json:
            write_json({"simulated": True, "plans": [asdict(r) for r in results]}, indent=1)
        else:
            _step_text(results)


def _step_size(shape: str | None, layers: int | None, hidden: int | None,
               heads: int | None) -> tuple[int | None, int | None, int | None]:
    """The step planner always has an architecture: the --shape's, else 32 × 4096 with 32 heads unless told."""
    return (layers, hidden, heads) if shape else (layers or 32, hidden or 4096, heads or 32)


def _step_degree(node: Node, tp: int, pp: int, dp: int | None, precision: str) -> int:
    """The data-parallel degree (given, else the modules left after tp × pp), once tp × pp fits the
    node and the precision is one the step planner prices; PlanError (exit 2) otherwise."""
    from gpuvet.node.memory import PlanError

    if tp * pp > len(node.modules):
        raise PlanError("--tp/--pp", f"tp × pp = {tp * pp} is more than the {len(node.modules)} modules of "
                        f"{node.name}", "give tp × pp at most the module count")
    if precision not in ("bf16", "fp8"):
        raise PlanError("--precision", f"{precision!r} is not a training rate the step planner prices",
                        "use bf16 or fp8")
    return dp or max(len(node.modules) // (tp * pp), 1)


def _does_not_fit(r: StepPlan) -> bool:
    """The job's memory per module is known to exceed the module's (the table's DOES NOT FIT)."""
    return r.fits is False and bool(r.module_memory_bytes)


_STEP_ROWS = (("modules", "modules", 1, "{:.0f}"), ("micro-batch", "micro_batch", 1, "{:.0f}"),
              ("compute", "compute_s", 1e3, "ms"), ("DP communication", "dp_comm_s", 1e3, "ms"),
              ("TP communication", "tp_comm_s", 1e3, "ms"), ("PP communication", "pp_comm_s", 1e3, "ms"),
              ("pipeline bubble", "bubble_s", 1e3, "ms"), ("step", "step_s", 1e3, "ms"),
              ("communication share", "comm_share", 100, "%"), ("exposed share", "exposed_share", 100, "%"))


def _calibrated(run: str, logbook: str | None, node: str, op: str, size_bytes: int, modules: int) -> dict[str, object]:
    """The prediction priced with a kept validate run's measured α and β for this op."""
    from gpuvet.errors import GpuvetError
    from gpuvet.logbook.store import Logbook
    from gpuvet.plan.collective import calibrated

    book = Logbook(logbook, existing=True)
    try:
        row = book.run(run)
        if row.node != node:
            raise GpuvetError(f"run {row.run_id} is of node {row.node}, not {node}", where="--calibrate",
                              fix="calibrate with a run of the same node.")
        cal = calibrated(op, size_bytes, book.checks(row.run_id), modules)
    finally:
        book.close()
    if cal is None:
        raise GpuvetError(f"run {run} has no {op} sweep to calibrate with", where="--calibrate",
                          fix=f"run `gpuvet validate` (its collective layer measures {op}) and use that run.")
    return asdict(cal)


def _step_text(results: list[StepPlan]) -> None:
    from rich.text import Text

    from gpuvet.plan.step import MEMORY_HEADROOM

    t = term.table("step plan (modelled)")
    term.column(t, "", key=True)
    for r in results:
        term.column(t, r.node, right=True)
    for label, key, scale, unit in _STEP_ROWS:
        values = [float(getattr(r, key)) * scale for r in results]
        t.add_row(label, *[unit.format(v) if "{" in unit else term.sig(v, unit) for v in values])
    c = term.console()
    c.print(t)
    for r in results:
        if r.fits is False and r.module_memory_bytes:  # as _does_not_fit (written out: the type narrows)
            c.print(Text(f"{r.node}: DOES NOT FIT: {r.memory_per_module_bytes / 2**30:,.1f} GiB per module against "
                         f"{r.module_memory_bytes / 2**30:.1f} GiB ({MEMORY_HEADROOM:.0%} kept free): the times "
                         "above cannot be reached; raise --zero, --tp or --pp, or lower --micro-batch "
                         "(gpuvet plan memory shows the breakdown)", style="bold yellow"))
    for note in results[0].assumptions:
        c.print(Text(f"- {note}", style="dim"))


@plan_app.command("power", short_help="Split a power budget so busy modules get more (advice only).")
@_errors
def power(budget: Annotated[float, typer.Option("--budget", metavar="WATTS", help="Node power budget for the modules, W.",
                                                   callback=floats(0, MAX_WATTS, lo_open=True, unit="W"))],
          loads: Annotated[str, typer.Option("--loads", metavar="SHARES", help="Each module's busy share from 0 "
                                             "to 1, comma-separated, e.g. 1,1,0.3,0.")],
          node_ref: Annotated[str | None, typer.Option("--node", metavar="SPEC", help="The node (preset or spec "
                                                       "file): its modules' TDP from the catalog, one load each.")]
          = None,
          tdp: Annotated[float | None, typer.Option("--tdp", metavar="WATTS", help="Each module's maximum, W "
                                                    "(default: --node's catalog TDP, else 700).",
                                                    callback=floats(0, MAX_WATTS, lo_open=True, unit="W"))] = None,
          floor: Annotated[float, typer.Option("--floor", metavar="WATTS", help="Least a module keeps, W.",
                                               callback=floats(0, MAX_WATTS, unit="W"))] = 100.0,
          as_json: JsonOpt = False) -> None:
    """How to split power caps so busy modules get more, and what it buys. Advice only: gpuvet
    changes no setting."""
    from gpuvet.node.memory import PlanError
    from gpuvet.plan.power import split_power
    from gpuvet.quantities import parse_float_list

    shares = list(parse_float_list(loads, "--loads", 0, 1, example="1,1,0.3,0"))
    name, tdp = _power_node(node_ref, len(shares), tdp) if node_ref else (None, tdp or DEFAULT_TDP_W)
    if floor > tdp:
        raise PlanError("--floor", f"{floor:g} W is above --tdp {tdp:g} W", "give a floor at most the TDP")
    s = split_power(budget, shares, tdp, floor)
    if as_json:
        write_json(asdict(s) | ({"node": name, "tdp_w": tdp} if name else {}), indent=1)
        return
    from rich.text import Text

    c = term.console()
    if name:
        c.print(Text(f"{name}: {len(shares)} modules, TDP {tdp:g} W each"))
    c.print(Text("caps (W): " + ", ".join(f"{c:.0f}" for c in s.caps_w)))
    c.print(Text(f"throughput: {s.throughput_equal:.2f} → {s.throughput_split:.2f} module-equivalents "
                 f"({100 * (s.throughput_split / s.throughput_equal - 1):+.0f} %); budget doing work: "
                 f"{100 * s.utilisation_equal:.0f} % → {100 * s.utilisation_split:.0f} %"))
    c.print(Text("advice only: apply with nvidia-smi -pl if you agree; gpuvet changes nothing"))


def _power_node(ref: str, loads: int, typed_tdp: float | None) -> tuple[str, float]:
    """plan power --node: the node's name and its modules' TDP (the catalog's, unless --tdp was
    typed); one load per module, so a share is never silently dropped or invented."""
    from gpuvet.node.memory import PlanError

    node, _ = _node(ref)
    if loads != len(node.modules):
        raise PlanError("--loads", f"{loads} loads for the {len(node.modules)} modules of {node.name}",
                        "give one busy share per module")
    if typed_tdp is not None:
        return node.name, typed_tdp
    tdps = {m.model.tdp_w for m in node.modules}
    tdp = tdps.pop() if len(tdps) == 1 else None
    if tdp is None:
        raise PlanError("--tdp", f"the catalog gives no single TDP for the modules of {node.name}",
                        "give --tdp WATTS")
    return node.name, float(tdp)
