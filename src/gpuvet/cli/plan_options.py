"""The records `gpuvet plan` prints as --json and the options its commands share: apart from
cli/plan.py so the commands read as commands (issue 45: no module over 600 lines)."""

from __future__ import annotations

from typing import Annotated, TypedDict

import typer

from gpuvet.cli.checks import ints

MAX_DEGREE = 1_000_000  # modules in one job: far above any cluster built
MAX_LAYERS = 100_000
MAX_WIDTH = 100_000_000  # hidden, heads, FFN, vocabulary
MAX_TOKENS = 100_000_000  # sequence length, micro-batches
MAX_WATTS = 1_000_000.0  # a node budget: well above any rack
DEFAULT_TDP_W = 700.0  # plan power without --node or --tdp: an H100/H200 SXM module


class Fit(TypedDict):
    module: str
    memory_bytes: int
    memory_mib: int | None
    headroom: float
    fits: bool


class Fewest(TypedDict):
    modules: int
    dp: int
    tp: int
    pp: int
    zero: int


class ArchitectureJson(TypedDict):
    """plan memory --json's ``architecture``: the shape the parameter count came from."""

    shape: str | None
    layers: int
    hidden: int
    heads: int
    kv_heads: int | None
    ffn: int | None
    vocab: int
    gated_mlp: bool
    experts: int
    tied: bool  # the output head shares the embedding matrix (GPT-2); False: its own (Llama)
    position_embeddings: int
    norm: str  # rmsnorm (Llama) or layernorm (GPT-2)
    biases: bool  # the linear layers' biases are counted (GPT-2)
    parameters: int


class MemoryPlan(TypedDict, total=False):
    """plan memory --json: the breakdown; with --model, the fit and the fewest modules that fit."""

    params: float
    modules: int
    breakdown: dict[str, float]
    assumptions: list[str]
    fits: Fit
    fewest_modules: Fewest | None
    accounting: str  # paper (the ZeRO paper's ideal), deepspeed (DeepSpeed's estimator) or fsdp (PyTorch FSDP's layout)
    allowances: dict[str, float]  # bytes the total includes beyond the model states and activations, by name
    architecture: ArchitectureJson  # when the architecture (or --shape) was given


JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of tables.")]
LaunchOpt = Annotated[str, typer.Option("--launch", metavar="per-gpu|one-process", help="How the GPUs are driven: "
                                        "per-gpu, a process (or thread) each; one-process, one thread drives them all "
                                        "(nccl-tests -g N): a call then takes at least a launch per GPU.")]
NodeOpt = Annotated[str | None, typer.Option("--node", metavar="SPEC", help="The node to plan for: a preset name "
                                             "(gpuvet spec presets) or a spec YAML file.")]
LogbookOpt = Annotated[str | None, typer.Option(
    "--logbook", metavar="FILE_OR_URL", help="The logbook: a file, or a postgresql:// URL (default: $GPUVET_LOGBOOK, "
    "else $GPUVET_HOME/logbook.db).")]
ParamsOpt = Annotated[str | None, typer.Option("--params", metavar="COUNT", help="Parameter count (7.5B, 175e9); or "
                                               "give the architecture (--layers, --hidden, --heads).")]
ShapeOpt = Annotated[str | None, typer.Option("--shape", metavar="NAME", help="A published model shape (llama-2-7b, "
                                             "llama-2-13b, llama-2-70b, llama-3-8b, llama-3-70b, gpt2, gpt2-medium, "
                                             "gpt2-large, gpt2-xl); architecture flags given too replace its figures.")]
HeadOpt = Annotated[str | None, typer.Option("--head", metavar="tied|untied", help="tied: the output head shares "
                                             "the token embedding's matrix (GPT-2); untied: it has its own (Llama: "
                                             "vocab × hidden more parameters). Default: the --shape's, else tied.")]
PositionsOpt = Annotated[int | None, typer.Option("--positions", metavar="N", help="Learned position embeddings "
                                                  "(GPT-2: 1024; rotary models: 0). Default: the --shape's, else 0.",
                                                  callback=ints(0, MAX_TOKENS))]
NormOpt = Annotated[str | None, typer.Option("--norm", metavar="rmsnorm|layernorm", help="The blocks' norms: "
                                             "rmsnorm (Llama: a weight, h a norm) or layernorm (GPT-2: weight and "
                                             "bias, 2h a norm); two a block and a final one. Default: the --shape's, "
                                             "else layernorm.")]
GatedOpt = Annotated[bool, typer.Option("--gated-mlp", help="SwiGLU-style MLP (3 matrices). Default: the --shape's, "
                                        "else 2 matrices.")]
KvHeadsOpt = Annotated[int | None, typer.Option("--kv-heads", help="Grouped-query attention.", callback=ints(1, MAX_WIDTH))]
FfnOpt = Annotated[int | None, typer.Option("--ffn", help="FFN size (default 4 × hidden).", callback=ints(1, MAX_WIDTH))]
VocabOpt = Annotated[int | None, typer.Option("--vocab", help="Vocabulary size (default 32000, or the --shape's).",
                                              callback=ints(1, MAX_WIDTH))]
StepLayersOpt = Annotated[int | None, typer.Option("--layers", help="Transformer blocks (default 32, or the --shape's).",
                                                   callback=ints(1, MAX_LAYERS))]
StepHiddenOpt = Annotated[int | None, typer.Option("--hidden", help="Hidden (model) width (default 4096, or the "
                                                   "--shape's).", callback=ints(1, MAX_WIDTH))]
StepHeadsOpt = Annotated[int | None, typer.Option("--heads", help="Attention heads (default 32, or the --shape's).",
                                                  callback=ints(1, MAX_WIDTH))]
RecomputeHelp = "Activation recomputation: none|selective|full."
PrecisionHelp = "Training precision: fp32|bf16|fp16|fp8 (fp16 and bf16 are mixed precision)."
OptimizerHelp = "Optimizer: adam, adamw, adam8bit, sgd or adafactor."
AccountingOpt = Annotated[str, typer.Option("--accounting", metavar="paper|deepspeed|fsdp", help="How model states "
                                            "are counted: the ZeRO paper's ideal (2Ψ + 2Ψ + 12Ψ, sharded by stage); "
                                            "DeepSpeed's estimator as implemented (ZeRO-2: 4Ψ + 16Ψ/N; ZeRO-3: "
                                            "18Ψ/N + the largest layer); or PyTorch FSDP as implemented, --zero "
                                            "choosing its sharding strategy: 3 FULL_SHARD (16Ψ/N + the root unit and "
                                            "two blocks gathered), 2 and 1 SHARD_GRAD_OP (FSDP has no optimizer-only "
                                            "sharding: 2Ψ + 16Ψ/N), 0 NO_SHARD (16Ψ + the gathered units); each adds "
                                            "one unit's unsharded gradient. fsdp needs --layers/--hidden/--heads.")]
