"""gpu-fryer's summary (huggingface/gpu-fryer): one block per GPU (``GPU #0:  51494 Gflops/s (min: …, max: …,
dev: …)``, its temperature and throttling lines), then the tool's verdict: ``All GPUs seem healthy`` or ``Some GPUs
are not healthy. Reasons:`` and one ``- GPU N - …`` line each. gpu-fryer judges each GPU against the best one
alone, so GPUs that all did nothing pass its own test: the figures are read here and the run is kept as a stress
run (gpu_burn's record, named gpu-fryer) so doctor judges a GPU that computed nothing as no pass, whatever the
tool concluded."""

from __future__ import annotations

import re

from gpuvet.captures.gpu_burn import GpuBurnParse
from gpuvet.captures.text import Line

TOOL = "gpu-fryer"
_GPU = re.compile(r"^\s*GPU #(\d{1,4}):\s+(-?\d+(?:\.\d+)?) Gflops/s\b")
_TEMP = re.compile(r"^\s*Temperature: (-?\d+(?:\.\d+)?)°?C\b")
_THROTTLE = re.compile(r"^\s*Throttling HW: (?:true|false), Thermal SW: (?:true|false), Thermal HW: (?:true|false)")
_HEALTHY = re.compile(r"^\s*All GPUs seem healthy\s*$")
_UNHEALTHY = re.compile(r"^\s*Some GPUs are not healthy\b")
_REASON = re.compile(r"^\s*-\s*GPU (\d{1,4}) - (.{1,200})$")
_OWN = re.compile(r"^\s*(?:Freeing GPUs|Creating random matrices|Matrices created|Using precision)")


def parse(lines: list[Line]) -> GpuBurnParse:
    """The summary's per-GPU Gflops/s (as the run's work) and temperatures, and gpu-fryer's verdict per GPU:
    OK under 'All GPUs seem healthy', UNHEALTHY for a GPU a reason names (OK for the others)."""
    out = GpuBurnParse(tool=TOOL)
    flops: dict[int, float] = {}
    temps: list[int] = []
    reasons: dict[int, str] = {}
    verdict: int | None = None
    for ln in lines:
        if (g := _GPU.match(ln.text)) is not None:
            flops[int(g.group(1))] = float(g.group(2))
        elif flops and (t := _TEMP.match(ln.text)) is not None:
            temps.append(round(float(t.group(1))))
        elif _HEALTHY.match(ln.text) or _UNHEALTHY.match(ln.text):
            verdict = verdict or ln.no
        elif verdict is not None and (r := _REASON.match(ln.text)) is not None:
            reasons.setdefault(int(r.group(1)), r.group(2).strip())
        elif not (flops and (_THROTTLE.match(ln.text) or _OWN.match(ln.text))):
            continue
        out.claimed.add(ln.no)
    if not flops:
        out.claimed.clear()
        return out
    out.work = [round(flops.get(i, 0.0)) for i in range(max(flops) + 1)]
    out.temps = temps
    if verdict is not None:
        out.verdict_line = verdict
        out.verdicts = {i: "UNHEALTHY" if i in reasons else "OK" for i in sorted(flops)}
    out.notes.append(f"gpu-fryer: {len(flops)} GPU(s), " + ", ".join(f"GPU {i} {flops[i]:g} Gflops/s" for i in sorted(
        flops)) + ("" if verdict is not None else " (no verdict line: the run was cut)"))
    return out
