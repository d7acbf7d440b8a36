"""Issue 46 (R3D): the device an application's error names on a line of its own, after the error's line: ggml's
CUDA_CHECK (ggml-cuda.cu ggml_cuda_error, in llama.cpp, ollama, llama-cpp-python) prints 'CUDA error: <text>' and
then '  current device: 1, in function ggml_cuda_compute_forward at …'. The error goes on that device (the process's
CUDA numbering, as app_errors names a device its own line gives), not on the node."""

from __future__ import annotations

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Line

_CURRENT = lazy(r"^\s*current device: (\d{1,3}), in function\b")


def after(lines: list[Line], i: int) -> str | None:
    """The CUDA device ggml's line after line ``i`` names ('CUDA device 1 (process view)'), else None."""
    if i + 1 >= len(lines) or "current device:" not in lines[i + 1].text:
        return None
    m = _CURRENT.search(lines[i + 1].text)
    return f"CUDA device {int(m.group(1))} (process view)" if m else None
