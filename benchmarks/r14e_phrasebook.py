"""Issue 46 (R14E): benchmark outputs and host lines in their tools' own words: the OOM killer (mm/oom_kill.c), mlx5's
slot power report and port module events (events.c), libfabric's GDRCopy probe (hmem_cuda_gdrcopy.c), HPL's residual
check (HPL_pdtest.c), BabelStream's, superbench's and cuda-stream's STREAM tables, intel_gpu_top's three forms,
nvidia-smi's ERR!/Unknown Error on one card's fan, Fabric Manager's start line. Each fault judged with its cause and
severity, each healthy text read with no warn and never refused. The lines (benchmarks/data/r14e_phrasebook.json,
each source named there) are set bare, under the command typed at a prompt, in a poster's fenced block with a
sentence, quoted in a poster's sentence (one-line cases), with dmesg stamps, /dev/kmsg's record prefix and dmesg
-x's level prefix (kernel cases).

    .venv/bin/python -m benchmarks.r14e_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.support.phrasebook import node_framings, run_framed

DATA = Path(__file__).parent / "data" / "r14e_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, node_framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
