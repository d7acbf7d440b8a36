"""Issue 46 (FX68D): vLLM's server and engine log, as its own logger prints it (vllm/logger.py: 'INFO 01-30
03:18:12 gpu_model_runner.py:848] …', since 0.8 '[kv_cache_utils.py:634]' in brackets; a worker's launcher prefix
'(VllmWorkerProcess pid=…)', '(RayWorkerWrapper pid=…, ip=…)' is the cleaner's), with the uvicorn lines of its API
server and instructlab's wait for it. What it says of the GPUs is kept as facts: the platform, the version, the
tensor/pipeline parallel sizes, each rank, NCCL's version, the memory profile ('total_gpu_memory (79.19GiB)', the
weights, the KV cache), the blocks and the concurrency they give, the GPUs its P2P access cache names and the
server's start. A start-up of these lines is healthy: nothing here is judged; an error in it (CUDA, out of memory,
NCCL) is app_errors' and app_lines' (vLLM's 'No available memory for the cache blocks')."""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.runtime_devices import LogFacts, RuntimeDevice
from gpuvet.captures.runtime_marks import VLLM_MARKS
from gpuvet.captures.text import MAX_MODULES, Line

MARKS = VLLM_MARKS
_RECORD = lazy(r"\b(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})? "
               r"\[?[\w.-]{1,80}\.py:\d{1,6}\] ")
_UVICORN = lazy(r"^\s*(?:INFO|WARNING|ERROR):\s+(?:Started server process \[\d+\]|Waiting for application startup|"
                r"Application startup complete|Uvicorn running on \S+|Shutting down|Finished server process)")
_INSTRUCTLAB = lazy(r"^\s*(?:INFO|WARNING|ERROR|DEBUG) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} instructlab\.[\w.]{1,80}:\d+: ")
_GIB = r"(\d{1,6}(?:\.\d{1,4})?) ?(GiB|GB)"
# (sentence, pattern): the facts a record's message says, each said once with the values it names
_FACTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("platform {}", lazy(r"Automatically detected platform (\w+)")),
    ("vLLM {}", lazy(r"vLLM API server version (\S+)|Initializing an? (?:V1 )?LLM engine \(v?([\w.+-]+)\)")),
    ("tensor parallel size {}", lazy(r"['\"]?tensor_parallel_size['\"]?[=:] ?(\d{1,4})")),
    ("pipeline parallel size {}", lazy(r"['\"]?pipeline_parallel_size['\"]?[=:] ?(\d{1,4})")),
    ("world size {} (rank {}, local rank {})", lazy(r"\bworld_size=(\d{1,5}) rank=(\d{1,5}) local_rank=(\d{1,4})")),
    ("rank {} of world size {}: {}", lazy(r"\brank (\d{1,5}) in world size (\d{1,5}) is assigned as ([\w ,]{1,80})")),
    ("NCCL {}", lazy(r"vLLM is using nccl==(\S+)|Found nccl from library (\S+)")),
    ("total_gpu_memory {} {} x gpu_memory_utilization {}", lazy(r"total_gpu_memory \(" + _GIB +
                                                             r"\) x gpu_memory_utilization \((\d\.\d{1,4})\)")),
    ("model weights {} {}", lazy(r"(?:[Mm]odel weights (?:took|take)|Model loading took) " + _GIB)),
    ("KV cache {} {}", lazy(r"reserved for KV Cache is " + _GIB + r"|Available KV cache memory: " + _GIB)),
    ("GPU KV cache size {} tokens", lazy(r"GPU KV cache size: ([\d,]{1,15}) tokens")),
    ("# {} blocks {}", lazy(r"# (GPU|cuda|rocm|xpu|hpu|tpu|npu) blocks: (\d{1,9})")),
    ("# CPU blocks {}", lazy(r"# CPU blocks: (\d{1,9})")),
    ("maximum concurrency {} for {} tokens per request", lazy(r"Maximum concurrency for ([\d,]{1,12}) tokens per "
                                                               r"request: (\d{1,6}(?:\.\d{1,3})?x)")),
    ("memory profiling {} s", lazy(r"Memory profiling takes (\d{1,6}(?:\.\d{1,3})?) seconds")),
)
_P2P = lazy(r"gpu_p2p_access_cache_for_(\d{1,3}(?:,\d{1,3}){0,63})\.json")
_PLATFORM = lazy(r"Automatically detected platform (\w+)|# (cuda|rocm) blocks:")
_TOTAL = lazy(r"total_gpu_memory \((\d{1,6}(?:\.\d{1,4})?) ?GiB\)")
_STARTED = lazy(r"Uvicorn running on (\S+)|Started server process")


_NAMED = re.compile(r"vllm", re.I)  # the text names vLLM (vllm/, vLLM API server, VLLM_ variables)


def _said(sentence: str, m: re.Match[str]) -> str:
    """The sentence with the values the match found (a pattern's two spellings: the group that matched)."""
    values = [g for g in m.groups() if g is not None]
    if sentence.startswith(("maximum concurrency",)):
        values = values[::-1]
    return sentence.format(*(values + [""] * sentence.count("{}"))[:sentence.count("{}")]).strip()


def _counted(values: dict[str, int]) -> str:
    """One pattern's sentences: the one it said (with its count), or the first two and how many more (a
    multi-node start prints each worker's KV cache size)."""
    lines = sum(values.values())
    if len(values) == 1:
        return next(iter(values)) + (f" ({lines} lines)" if lines > 1 else "")
    first = list(values)[:2]
    more = f" and {len(values) - 2} more" if len(values) > 2 else ""
    return f"{'; '.join(first)}{more} ({lines} lines)"


def _record(text: str) -> int | None:
    """Where a vLLM record's message starts on the line, None where the line is none of vLLM's."""
    m = _RECORD.search(text) if ".py:" in text else None
    return m.end() if m else None


def read(lines: list[Line]) -> LogFacts | None:
    """vLLM's lines in ``lines``: those read, the facts they say and the GPUs they name; None where none is vLLM's.
    Its record form ('ERROR 12-01 10:00:01 worker.py:88] …') is Python's logging as any program may set it: the
    text must name vLLM somewhere (its package path, its version line, `vllm serve`) or hold one of vLLM's own
    messages (its KV cache, blocks, concurrency, memory profile), or no line is vLLM's."""
    claimed: set[int] = set()
    facts: dict[str, dict[str, int]] = {}  # each pattern's sentences, each once, counted
    platform, started, profiles = "", "", 0
    ids: list[tuple[int, int]] = []
    memory: tuple[float, int] | None = None
    for ln in lines:
        if (at := _record(ln.text)) is None:
            if _UVICORN.search(ln.text) or _INSTRUCTLAB.search(ln.text):
                claimed.add(ln.no)
                if (up := _STARTED.search(ln.text)) is not None:
                    started = started if up.group(1) is None else f"server started (Uvicorn running on {up.group(1)})"
                    started = started or "server started"
            continue
        claimed.add(ln.no)
        msg = ln.text[at:at + 2000]
        for sentence, pattern in _FACTS:
            for m in pattern.finditer(msg):
                seen = facts.setdefault(sentence, {})
                key = _said(sentence, m)
                seen[key] = seen.get(key, 0) + 1
        if (p := _PLATFORM.search(msg)) is not None:
            platform = platform or (p.group(1) or p.group(2)).lower()
        if (g := _P2P.search(msg)) is not None and not ids:
            ids = [(int(i), ln.no) for i in g.group(1).split(",")]
        if (t := _TOTAL.search(msg)) is not None:
            memory = None if profiles else (float(t.group(1)) * 1024, ln.no)
            profiles += 1
    if not any(_record(ln.text) is not None for ln in lines if ln.no in claimed):
        return None
    if not (facts or ids or memory or platform or any(_NAMED.search(ln.text) for ln in lines)):
        return None  # Python logging's record form alone: another program's log
    said = [_counted(values) for values in facts.values()] + ([f"GPUs {','.join(str(i) for i, _ in ids)} (its P2P "
                                                                 "access cache)"] if ids else [])
    said += [started] if started else []
    parallel = any(k.startswith(("tensor parallel size", "pipeline parallel size")) and not k.endswith(" 1")
                   for values in facts.values() for k in values)  # workers' profiles: no one GPU is named
    return LogFacts("vLLM", _devices(platform, ids, None if parallel else memory), claimed, said)


def _devices(platform: str, ids: list[tuple[int, int]], memory: tuple[float, int] | None) -> list[RuntimeDevice]:
    """The GPUs the log names: those its P2P access cache lists (CUDA's custom all-reduce), else the one GPU a
    single worker's memory profile is of; their vendor by the platform it said (ROCm: AMD; CUDA or the P2P cache,
    a CUDA-only check: NVIDIA), none where it said none."""
    vendor = "AMD" if platform == "rocm" else "NVIDIA" if platform == "cuda" or ids else None
    if ids:
        return [RuntimeDevice("vLLM", str(i), "", no, vendor) for i, no in ids[:MAX_MODULES]]
    if memory is not None:
        return [RuntimeDevice("vLLM", "0", "", memory[1], vendor, memory_mib=round(memory[0], 1))]
    return []
