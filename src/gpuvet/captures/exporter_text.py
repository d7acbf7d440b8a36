"""Prometheus text exposition from exporters that are not a GPU's (issue 46, R5B): prometheus-slurm-exporter's
``slurm_*`` gauges, node-exporter's ``node_*``, the Go client's ``go_*``/``process_*``, as ``curl …/metrics``
prints them (``# HELP``/``# TYPE`` lines, then ``name{labels} value``). The GPU exporters' samples are
prom_metrics' (DCGM_FI_*, gpu_*, rocm_*); these are read and said in a note, never judged: a scheduler's count of
GPUs (``slurm_gpus_total 0``, ``slurm_gpus_idle -21``) is how the exporter parsed sinfo's output, not a GPU's
health (Prometheus' exposition format, prometheus/docs content/docs/instrumenting/exposition_formats.md)."""

from __future__ import annotations

import re

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

# the literals an exposition's metadata lines hold (runtime_marks.OPS_MARKS has each: the format's markers)
MARKS = ("# TYPE ", "# HELP ")
_META = re.compile(r"^\s*#\s+(?:HELP|TYPE)\s+([A-Za-z_:][A-Za-z0-9_:]{0,200})(?:\s|$)")
_SAMPLE = re.compile(
    r"^\s*([A-Za-z_:][A-Za-z0-9_:]{0,200})(?:\{[^{}]{0,2000}\})?\s+"
    r"([-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|NaN|Inf))(?:\s+-?\d{1,20})?\s*$"
)
# the GPU exporters' names (dcgm-exporter's, AMD's device-metrics-exporter's, omnistat's, NVIDIA's others): theirs
_GPU = re.compile(r"^(?:DCGM_|dcgm_|gpu_|rocm_|amd_|nvidia_|nv_|habana|neuron|xpu_|npu_)")
# where a name's exporter is one of these, the note names it (the first word of its metric names otherwise)
_FAMILIES = {
    "slurm": "prometheus-slurm-exporter",
    "node": "node-exporter",
    "go": "the Go client",
    "process": "the Go client",
    "promhttp": "the Go client",
    "kube": "kube-state-metrics",
}


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """Claims the exposition lines of exporters other than a GPU's and says what was read (no record)."""
    held = holding(lines, MARKS, marks)
    if not held:
        return
    names: dict[str, int] = {}
    meta = False
    for ln in lines[held[0] :]:
        m = _META.match(ln.text) or (_SAMPLE.match(ln.text) if meta else None)
        if m is None or _GPU.match(m.group(1)) or ln.no in out.claimed:
            continue
        meta = meta or ln.text.lstrip().startswith("#")
        out.claimed.add(ln.no)
        names[m.group(1)] = ln.no
    if not names:
        return
    families = dict.fromkeys(_FAMILIES.get(n.split("_", 1)[0], n.split("_", 1)[0] + "_*") for n in names)
    out.notes.append(
        f"Prometheus metrics of {', '.join(families)} ({len(names)} name(s)): read, not a GPU's own "
        "reading; an exporter's count of GPUs is its parse of the scheduler's output, no hardware fault"
    )
