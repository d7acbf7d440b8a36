"""Issue 46 (R12C): the NVIDIA stack's own words on a node: nvidia-smi's and NVML's init failures (driver not loaded,
permissions, library mismatch), the driver's /proc information with its VBIOS unread, and the stack's error-worded
lines that are no fault (nvidia-peermem's 'detected invalid context', dcgmi's help legends). Each fault judged with
its cause and severity, each healthy text read with no warn and never refused. The lines
(benchmarks/data/r12c_phrasebook.json, each source named there) are set bare, under the command typed at a prompt,
in a poster's fenced block with a sentence, quoted in a poster's sentence (one-line cases) and, for kernel lines,
with dmesg stamps, /dev/kmsg's record prefix and dmesg -x's level prefix.

    .venv/bin/python -m benchmarks.r12c_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.support.phrasebook import node_framings, run_framed

DATA = Path(__file__).parent / "data" / "r12c_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, node_framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
