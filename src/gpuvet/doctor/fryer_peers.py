"""gpu-fryer's per-GPU Gflops/s judged against the run's own peers (issue 46): gpu-fryer names no model, so no
catalog figure applies, and the other GPUs of the same run under the same load are the design. A GPU that
computed nothing while its peers ran, or far below them (faults.yaml's peer_fail_below_pct), is that module's
finding; where no GPU computed (no peer ran), each is named as a stress run that did no work (hung or lost,
whatever the tool's 'seem healthy', which compares the GPUs with the best one only)."""

from __future__ import annotations

from statistics import median
from typing import TYPE_CHECKING

from gpuvet.doctor.model import Finding, finding
from gpuvet.doctor.outcome import MEDIUM
from gpuvet.knowledge import threshold
from gpuvet.node.vendor_tools import APP_ERROR_FIX

if TYPE_CHECKING:  # the parser loads when a file is read (issue 43)
    from gpuvet.captures.gpu_burn import GpuBurnParse

_IDLE = ("0 Gflops/s under gpu-fryer's load, no GPU of the run computing (its 'seem healthy' compares the GPUs "
         "with one another only): a GPU that computes nothing under load is hung or lost, not healthy")


def fryer_findings(label: str, burn: GpuBurnParse) -> list[Finding]:
    """One finding per GPU the summary names that computed nothing or far below its peers' median."""
    gpus = sorted(burn.verdicts) or list(range(len(burn.work)))
    work = {g: burn.work[g] for g in gpus if g < len(burn.work)}
    if work and not any(w > 0 for w in work.values()):
        return [finding("application_cuda_error", MEDIUM, module=f"GPU {g}", fix=APP_ERROR_FIX["gpu_fryer_idle"],
                        tool=burn.tool, file=label, line=burn.verdict_line, verdict=burn.verdicts.get(g),
                        work=0, detail=_IDLE) for g in work]
    below = threshold("peer_fail_below_pct") / 100
    out = []
    for g, w in work.items():
        peers = [v for p, v in work.items() if p != g]
        expected = median(peers) if peers else 0
        if expected > 0 and w < below * expected:
            out.append(_below_peers(label, burn, g, w, expected, len(peers)))
    return out


def _below_peers(label: str, burn: GpuBurnParse, gpu: int, gflops: int, expected: float, peers: int) -> Finding:
    said = ("computed nothing (0 Gflops/s) under gpu-fryer's load while its peers ran" if gflops <= 0
            else f"computed {gflops:g} Gflops/s under gpu-fryer's load, {round(100 * gflops / expected)} % of its peers'")
    return finding("compute_below_peak_unexplained", MEDIUM, module=f"GPU {gpu}", tool=burn.tool, file=label,
                   line=burn.verdict_line, verdict=burn.verdicts.get(gpu), measured_gflops=gflops,
                   expected_gflops=round(expected),
                   basis=f"the median of its {peers} peer(s) in the same gpu-fryer run (it names no model: no "
                   "catalog figure)", fix=APP_ERROR_FIX["gpu_fryer_idle"] if gflops <= 0 else None,
                   detail=f"{said}; their median: {expected:g} Gflops/s")
