"""Issue 46 (R14A): NCCL's and RCCL's runtime logs judged by one rule per family: the job's configuration (the
socket interface or address family, the container's /dev/shm) a note (collective_job_config, info), a queue pair that
will not connect the path between nodes (collective_link_failed, warn), a collective benchmark's failed run a warn
unless the CUDA runtime names the module's fault, a missing libibverbs a warn only where the log shows the job needed
IB; RCCL's init advice said as a note (the said group); 'NET/IB : Using [RO]' with no device and NCCL's INFO about
libibverbs are healthy texts (no warn, never refused). The lines (benchmarks/data/r14a_phrasebook.json, each source
named there) are set bare, under the command typed at a prompt, fenced under a poster's sentence, under Open MPI's
--tag-output prefix and under srun --label's.

    .venv/bin/python -m benchmarks.r14a_phrasebook [--show right,severity,generic,clear,unsaid,false,refused]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import lines_framings, run_framed

DATA = Path(__file__).parent / "data" / "r14a_phrasebook.json"


def framings(case: dict[str, Any]) -> dict[str, str]:
    """A job's log as posted: bare, under the launch command, fenced, and under two launchers' rank prefixes."""
    lines: list[str] = case["lines"]
    out = lines_framings(lines, "$ NCCL_DEBUG=INFO torchrun --nproc_per_node 4 train.py", "The job stops with:")
    out["mpi"] = "\n".join(f"[1,{i % 4}]<stdout>:{ln}" for i, ln in enumerate(lines))
    out["srun"] = "\n".join(f"{i % 4}: {ln}" for i, ln in enumerate(lines))
    return out


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "said", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
