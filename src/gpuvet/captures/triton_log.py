"""Issue 46 (FX68D): Triton Inference Server's log, as its glog-style logger prints it ('I0523 04:01:24.648712 1
metrics.cc:173]   GPU 0: TITAN RTX'; W and E lines the same; since 2.x also with the file in brackets), its banner
('== Triton Inference Server ==', 'NVIDIA Release 20.03') and the model and backend tables it prints at start
('| resnet50 | 1 | READY |', '| x | 1 | UNAVAILABLE: Internal: … |'). A glog line is Triton's only in a text that
names Triton (its banner, its services, its own source files): another C++ program's glog is not read here.
Kept: the GPUs its metrics and memory pools name, the services it started, the models not READY and its E lines,
said as facts; an E line's error is judged by app_errors' rules where its words are theirs, by nothing here."""

from __future__ import annotations

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.runtime_devices import LogFacts, RuntimeDevice, mib
from gpuvet.captures.runtime_marks import TRITON_MARKS
from gpuvet.captures.text import MAX_MODULES, Line

MARKS = TRITON_MARKS
_GLOG = lazy(r"^\s*([IWEF])\d{4} \d\d:\d\d:\d\d\.\d{6}\s{1,8}\d{1,9} \[?[\w.-]{1,80}\.(?:cc|h|cpp|c):\d{1,6}\]\s?")
_BANNER = lazy(r"^\s*(?:={3,}\s*)?(?:== Triton Inference Server ==|NVIDIA Release \d[\w.]* \(build \d+\)|"
               r"=+)\s*$")
_TABLE = lazy(r"^\s*(?:\+[-+]{3,}\+|\|\s{0,4}(?:Model|Backend|Option|Repository Agent|Path|Config|Version|Status|"
              r"Policy|Scope|Default|Name|[\w./-]{1,128}\s{0,80}\|).{0,4000}\|)\s*$")
_GPU = lazy(r"^\s{0,8}GPU (\d{1,3}): (.{1,80}?)\s*$")
_POOL = lazy(r"CUDA memory pool is created on device (\d{1,3}) with size (\d{1,15})")
_NVML = lazy(r"found (\d{1,3}) GPUs? supporting NVML metrics")
_SERVICE = lazy(r"Started (GRPCInferenceService|HTTPService|Metrics Service|SageMakerService|VertexAiService)\b")
_MODEL_ROW = lazy(r"^\s*\|\s{0,4}([\w./-]{1,128})\s{0,80}\|\s{0,8}(\d{1,6})\s{0,8}\|\s{0,8}(READY|UNAVAILABLE\b[^|]{0,300}|"
                  r"UNLOADING|LOADING)\s*\|")


def _of_triton(lines: list[Line]) -> bool:
    """The text names Triton: its banner, its services or its own source files (a glog line alone is anyone's)."""
    return any(w in ln.text for ln in lines for w in MARKS)


def read(lines: list[Line]) -> LogFacts | None:
    """Triton's lines in ``lines``, its facts and the GPUs it names; None where none is Triton's."""
    if not _of_triton(lines) or not any(_GLOG.match(ln.text) for ln in lines):
        return None
    claimed: set[int] = set()
    facts: list[str] = []
    gpus: dict[str, RuntimeDevice] = {}
    services: list[str] = []
    errors: list[str] = []
    for ln in lines:
        if (g := _GLOG.match(ln.text)) is not None:
            claimed.add(ln.no)
            _message(ln, ln.text[g.end():], facts, gpus, services)
            if g.group(1) in "EF":
                errors.append(f"line {ln.no}: {ln.text[g.end():].strip()[:160]}")
        elif _BANNER.match(ln.text) or _TABLE.match(ln.text):
            claimed.add(ln.no)
            if (row := _MODEL_ROW.match(ln.text)) is not None and row.group(3) != "READY":
                facts.append(f"model {row.group(1)} version {row.group(2)}: {row.group(3).strip()[:160]}")
    facts += [f"started {', '.join(services)}"] if services else []
    facts += [f"{len(errors)} E line(s): {errors[0]}" + (" …" if len(errors) > 1 else "")] if errors else []
    return LogFacts("Triton Inference Server", list(gpus.values())[:MAX_MODULES], claimed, facts)


def _message(ln: Line, msg: str, facts: list[str], gpus: dict[str, RuntimeDevice], services: list[str]) -> None:
    """What one glog message of Triton's says: a GPU its metrics name, a CUDA memory pool, a service started."""
    if (n := _NVML.search(msg)) is not None:
        facts.append(f"{n.group(1)} GPU(s) supporting NVML metrics")
    elif (g := _GPU.match(msg)) is not None:
        gpus.setdefault(g.group(1), RuntimeDevice("Triton Inference Server", g.group(1), g.group(2), ln.no, "NVIDIA"))
    elif (p := _POOL.search(msg)) is not None:
        facts.append(f"CUDA memory pool on device {p.group(1)}: {mib(p.group(2) + ' B')} MiB")
    elif (s := _SERVICE.search(msg)) is not None and s.group(1) not in services:
        services.append(s.group(1))
