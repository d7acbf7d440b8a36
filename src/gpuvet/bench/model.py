"""Training throughput: ResNet-50 (torchvision, synthetic images; images/s per module) and a
GPT-style stack of transformer blocks (tokens/s and model FLOPs utilisation, MFU).

FLOPs are analytic, so MFU means the same thing on every backend:
- ResNet-50: 4.09 GMAC forward per 224² image (torchvision's figure), ×2 FLOPs per MAC,
  ×3 for forward + backward, scaled by (image side / 224)².
- GPT: 6·N per token for N weights (12·L·d² in the blocks plus the V·d output layer) plus
  12·L·d·T for attention (PaLM, appendix B).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

from gpuvet.backends.engine import BenchModule, TrainSpec
from gpuvet.bench.context import BenchContext
from gpuvet.bench.records import BenchResult, Where, rate_stats
from gpuvet.bench.registry import Benchmark
from gpuvet.checks.model import Layer
from gpuvet.errors import GpuvetError

NAME = "model"
MODELS = ("resnet50", "gpt")
RESNET50_FWD_MACS_224 = 4.09e9


@dataclass(frozen=True)
class ModelOptions:
    modules: tuple[str, ...] | None = None
    models: tuple[str, ...] = MODELS
    batch: int | None = None  # default: 256 images / 8 sequences on a GPU, 4 / 2 on a CPU
    image_size: int = 224
    seq_len: int | None = None  # default: 2048 on a GPU, 128 on a CPU
    d_model: int | None = None  # default: 2048 on a GPU, 256 on a CPU
    layers: int | None = None  # default: 8 on a GPU, 2 on a CPU
    heads: int = 16
    vocab: int = 32000
    amp: bool | None = None  # default: on for GPUs (bf16 autocast), off on a CPU


def resnet50_flops_per_image(image_size: int) -> float:
    return RESNET50_FWD_MACS_224 * 2 * 3 * (image_size / 224) ** 2


def gpt_flops_per_token(layers: int, d_model: int, seq_len: int, vocab: int) -> float:
    weights = 12 * layers * d_model**2 + vocab * d_model
    return 6.0 * weights + 12.0 * layers * d_model * seq_len


def train_spec(model: str, module: BenchModule, opts: ModelOptions) -> TrainSpec:
    cpu = module.is_host
    amp = (not cpu) if opts.amp is None else opts.amp
    if model == "resnet50":
        batch = opts.batch or (4 if cpu else 256)
        flops = resnet50_flops_per_image(opts.image_size) * batch
        return TrainSpec("resnet50", batch, amp, flops, image_size=opts.image_size)
    batch = opts.batch or (2 if cpu else 8)
    seq = opts.seq_len or (128 if cpu else 2048)
    d = opts.d_model or (256 if cpu else 2048)
    layers = opts.layers or (2 if cpu else 8)
    flops = gpt_flops_per_token(layers, d, seq, opts.vocab) * batch * seq
    return TrainSpec("gpt", batch, amp, flops, seq_len=seq, d_model=d, layers=layers, heads=opts.heads,
                     vocab=opts.vocab)


def _validate(opts: ModelOptions) -> None:
    bad = [m for m in opts.models if m not in MODELS]
    if bad:
        raise GpuvetError(f"unknown model {', '.join(bad)}", where="--models", fix=f"use some of {', '.join(MODELS)}.")
    if opts.batch is not None and opts.batch < 1:
        raise GpuvetError("batch must be at least 1", where="--batch", fix="give a positive batch size.")
    if opts.image_size < 32:
        raise GpuvetError("ResNet-50 needs images of at least 32×32", where="--image-size", fix="use 32 or more.")
    d, heads = opts.d_model, opts.heads
    if d is not None and d % heads:
        raise GpuvetError(f"d_model {d} does not split into {heads} heads", where="--d-model/--heads",
                          fix="make d_model a multiple of heads.")


def run(ctx: BenchContext, opts: ModelOptions = ModelOptions()) -> list[BenchResult]:
    _validate(opts)
    modules = ctx.select(opts.modules)
    sim = ctx.simulated
    results: list[BenchResult] = []
    total, done = len(modules) * len(opts.models), 0
    for module in modules:
        for model in opts.models:
            ctx.progress(done, total, f"train {model} on {module.id}")
            done += 1
            spec = train_spec(model, module, opts)
            dtype = "bf16" if spec.amp else "fp32"
            peak = module.model.peak_tflops(dtype)
            metric, unit = ("images_per_s", "images/s") if model == "resnet50" else ("tokens_per_s", "tokens/s")
            items = spec.batch * (1 if model == "resnet50" else spec.seq_len)
            where: Where = {"module": module.id, "dtype": dtype,
                     "detail": {"model": model, "batch": spec.batch, "amp": spec.amp}}
            got = ctx.attempt(NAME, metric, unit, partial(ctx.engine.train, module.id, spec), [module.id], **where)
            if isinstance(got, BenchResult):
                results.append(got)
                continue
            timing, telemetry = got
            throughput = rate_stats(timing, items)
            tflops = rate_stats(timing, spec.flops_per_step / 1e12)
            detail = {"model": model, "batch": spec.batch, "amp": spec.amp, "step_ms": timing.stats.median * 1e3,
                      "tflops_achieved": tflops.median, "flops_per_step": spec.flops_per_step}
            if model == "gpt":
                detail |= {"seq_len": spec.seq_len, "d_model": spec.d_model, "layers": spec.layers}
            record = BenchResult.measured(NAME, metric, unit, throughput, simulated=sim, module=module.id, dtype=dtype,
                                          detail=detail)
            results.append(replace(record, telemetry=telemetry))
            if peak:
                mfu = rate_stats(timing, 100.0 * spec.flops_per_step / (peak * 1e12))
                results.append(BenchResult.measured(NAME, "mfu", "%", mfu, simulated=sim, module=module.id,
                                                    dtype=dtype, detail=detail | {"peak_tflops": peak}))
    ctx.progress(total, total, "model")
    return results


BENCHMARK = Benchmark(NAME, ModelOptions, run, (Layer.MODEL,), ("long",))
