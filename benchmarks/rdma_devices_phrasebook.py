"""Issue 46 (R10C): RDMA devices as NCCL and libibverbs report them (captures/verbs_unseen.py,
doctor/rdma_verdicts.py), read as a class. The lines (benchmarks/data/rdma_devices_phrasebook.json, each source named
there) are set the ways a paste shows them: bare, under mpirun's --tag-output prefix, in a poster's fenced block with
a sentence, and quoted by a poster in a sentence. Faults are counted right (cause and severity), severity (cause,
other severity), generic (another loud finding), clear or refused; healthy rows clean, false or refused.

    .venv/bin/python -m benchmarks.rdma_devices_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import run_framed

DATA = Path(__file__).parent / "data" / "rdma_devices_phrasebook.json"


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows the lines."""
    lines: list[str] = case["lines"]
    out = {
        "bare": "\n".join(lines),
        "mpirun": "\n".join(f"[1,{i % 4}]<stderr>:{ln}" for i, ln in enumerate(lines)),
        "fenced": "\n".join(["The job prints this:", "```", *lines, "```"]),
    }
    quote = case.get("quote", lines[-1].strip())  # None: no one line of it says the fault alone
    return out | ({"quoted": f"Every run starts with `{quote}` and then hangs."} if quote else {})


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
