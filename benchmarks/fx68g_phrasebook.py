"""Issue 46 (FX68G): GPUs seen from VMs and containers (benchmarks/data/fx68g_phrasebook.json names each source): a vGPU
guest's -q licence Unlicensed, Unlicensed (Restricted) or (Unrestricted), whole or as its excerpt (warn
vgpu_unlicensed). Healthy texts of the classes read, never judged: a Licensed vGPU, nvidia-smi vgpu's box, a one-name
--query-gpu CSV with its header, nvidia-container-cli info, a GPU card's audio/USB/UCSI functions in lspci,
nvidia-ctk cdi generate's log, ls -l /dev/nvidia*, amd-ctk gpu list.

    .venv/bin/python -m benchmarks.fx68g_phrasebook [--show generic,clear,false]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support.phrasebook import run_posted

DATA = Path(__file__).parent / "data" / "fx68g_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return run_posted(__doc__, argv, DATA)


if __name__ == "__main__":
    sys.exit(main())
