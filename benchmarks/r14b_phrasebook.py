"""Issue 46 (R14B): RDMA/verbs and benchmark logs beyond NCCL in their own words: libmlx5's completion error print
(its dump rows whole or cut, its hostname or 'host_unknown', under Ray's worker prefix), perftest's own failure lines
(parameter mismatches, the side channel, a work request), AWS Neuron's nccom-test table (read, no expected figure),
HCCL plog failures placed from the plog's own fields, a topo -m cut after its first row. Each fault judged with its
cause and severity, each fact said, each healthy text read with no warn and never refused. The lines
(benchmarks/data/r14b_phrasebook.json, each source named there) are set bare, under the command typed at a prompt,
in a poster's fenced block with a sentence, quoted in a poster's sentence (one-line cases), and behind Ray's
'(Actor pid=N, ip=…)' prefix where a program's log carries it.

    .venv/bin/python -m benchmarks.r14b_phrasebook [--show severity,generic,clear,refused,unsaid,false]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import case_framings, run_framed

DATA = Path(__file__).parent / "data" / "r14b_phrasebook.json"
RAY = "(RayWorkerWrapper pid=31337, ip=10.0.0.3) "


def framings(case: dict[str, Any]) -> dict[str, str]:
    """case_framings on a user's shell, and Ray's worker prefix on each line where the case is a program's log."""
    out = case_framings(case, "user@gpu-node-2:~$ ", "It fails with this:", "the transfer between the two nodes fails",
                        kernel={})
    if case.get("ray"):
        out["ray"] = "\n".join(RAY + ln for ln in case["lines"])
    return out


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings)


if __name__ == "__main__":
    raise SystemExit(main())
