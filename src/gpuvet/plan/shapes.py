"""Model shapes a plan can name (``--shape llama-2-7b``) instead of spelling out the architecture.

Each shape is the checkpoint's published configuration (its ``config.json``: layers, width,
heads, KV heads, FFN width, vocabulary, whether ``tie_word_embeddings`` is set, learned position
embeddings) with the checkpoint's exact parameter total (6,738,415,616 for Llama-2-7B, 124,439,808
for GPT-2: the "6.7B" and "124M" their model cards quote), so a test can hold the count to it.
The Llama family keeps its output head apart from the embedding (Llama 2 and 3, 7B and up), has
RMSNorm (a weight: h a norm) and no biases; GPT-2 ties the two, has LayerNorm (weight and bias: 2h
a norm) and a bias on every linear layer. Each block has two norms and the model one final norm,
so every count is the checkpoint's total exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gpuvet.node.memory import Architecture, PlanError


@dataclass(frozen=True)
class ModelShape:
    """A named architecture and the parameter total published for it."""

    name: str
    arch: Architecture
    published_parameters: int
    source: str


_EXACT = "total: every tensor of the checkpoint counted from that config (norms, biases and final norm included)"
_LLAMA2 = "meta-llama/Llama-2-{}-hf config.json (tie_word_embeddings false); " + _EXACT
_LLAMA3 = "meta-llama/Meta-Llama-3-{} config.json (tie_word_embeddings false); " + _EXACT
_GPT2 = "openai-community/{} config.json (n_positions 1024, lm_head tied to wte); " + _EXACT

_SHAPES = (
    ModelShape("llama-2-7b", Architecture(32, 4096, 32, None, 11008, 32000, True, tied=False, norm="rmsnorm"),
               6_738_415_616, _LLAMA2.format("7b")),
    ModelShape("llama-2-13b", Architecture(40, 5120, 40, None, 13824, 32000, True, tied=False, norm="rmsnorm"),
               13_015_864_320, _LLAMA2.format("13b")),
    ModelShape("llama-2-70b", Architecture(80, 8192, 64, 8, 28672, 32000, True, tied=False, norm="rmsnorm"),
               68_976_648_192, _LLAMA2.format("70b")),
    ModelShape("llama-3-8b", Architecture(32, 4096, 32, 8, 14336, 128256, True, tied=False, norm="rmsnorm"),
               8_030_261_248, _LLAMA3.format("8B")),
    ModelShape("llama-3-70b", Architecture(80, 8192, 64, 8, 28672, 128256, True, tied=False, norm="rmsnorm"),
               70_553_706_496, _LLAMA3.format("70B")),
    ModelShape("gpt2", Architecture(12, 768, 12, vocab=50257, tied=True, positions=1024, biases=True),
               124_439_808, _GPT2.format("gpt2")),
    ModelShape("gpt2-medium", Architecture(24, 1024, 16, vocab=50257, tied=True, positions=1024, biases=True),
               354_823_168, _GPT2.format("gpt2-medium")),
    ModelShape("gpt2-large", Architecture(36, 1280, 20, vocab=50257, tied=True, positions=1024, biases=True),
               774_030_080, _GPT2.format("gpt2-large")),
    ModelShape("gpt2-xl", Architecture(48, 1600, 25, vocab=50257, tied=True, positions=1024, biases=True),
               1_557_611_200, _GPT2.format("gpt2-xl")),
)

SHAPES: Mapping[str, ModelShape] = MappingProxyType({s.name: s for s in _SHAPES})


def get_shape(name: str) -> ModelShape:
    """The shape named ``name`` (case and separators ignored); PlanError naming the known ones."""
    norm = "".join(ch for ch in name.lower() if ch.isalnum())
    for shape in _SHAPES:
        if "".join(ch for ch in shape.name if ch.isalnum()) == norm:
            return shape
    raise PlanError("--shape", f"unknown model shape {name!r}",
                    f"use one of {', '.join(SHAPES)}, or give --layers, --hidden and --heads")
