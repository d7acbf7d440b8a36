"""Issue 46 (FX68D): what llama.cpp's model loader says it put on the GPU (llama-model.cpp / llama.cpp's
load_tensors: 'offloaded 62/62 layers to GPU', '      CUDA0 buffer size = 17284.05 MiB', llama_kv_cache's
'CUDA0 KV buffer size = 1952.00 MiB', the context's 'CUDA0 compute buffer size = …'), said as facts: a loader's
lines are read (app_lines' SAID rule) but were never told. A host buffer (CPU, CUDA_Host) is not a GPU's."""

from __future__ import annotations

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.runtime_devices import LogFacts
from gpuvet.captures.runtime_marks import GGML_LOAD_MARKS
from gpuvet.captures.text import Line

MARKS = GGML_LOAD_MARKS
_OFFLOADED = lazy(r"^\s*[\w.]{1,60}:\s{1,20}offloaded (\d{1,5})/(\d{1,5}) layers to GPU")
_BUFFER = lazy(r"^\s*[\w.]{1,60}:\s{1,40}((?:CUDA|ROCm|HIP|Vulkan|SYCL|MUSA|CANN|Metal)\d{0,3}) "
               r"((?:model |KV |compute |output |)buffer) size =\s{0,20}(\d{1,9}(?:\.\d{1,3})?) MiB")


def read(lines: list[Line]) -> LogFacts | None:
    """The loader's offload and GPU buffer lines: each said once (a log that loads twice: the first load's)."""
    facts: dict[str, int] = {}
    for ln in lines:
        if "offloaded" in ln.text and (o := _OFFLOADED.match(ln.text)) is not None:
            facts.setdefault(f"{o.group(1)}/{o.group(2)} layers offloaded to GPU", ln.no)
        elif "buffer size" in ln.text and (b := _BUFFER.match(ln.text)) is not None:
            facts.setdefault(f"{b.group(1)} {b.group(2)} {b.group(3)} MiB", ln.no)
    return LogFacts("llama.cpp", [], set(facts.values()), list(facts)) if facts else None
