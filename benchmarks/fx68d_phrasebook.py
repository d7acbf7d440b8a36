"""Issue 46 (FX68D): the model servers' logs (benchmarks/data/fx68d_phrasebook.json names each source): vLLM's
start-up with nothing left for the KV cache or a KV cache too small for one request (info: out of memory), a CUDA
error behind Ray's worker prefix (warn), Triton's E line of a model that ran out of memory (info). Healthy texts of
the class (vLLM V0 and V1 starts, Ray workers' KV cache lines, Triton's start, llama.cpp's loader, ollama's
'inference compute') stay clean and are read, never refused.

    .venv/bin/python -m benchmarks.fx68d_phrasebook [--show generic,clear,false,refused]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support.phrasebook import run_posted

DATA = Path(__file__).parent / "data" / "fx68d_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return run_posted(__doc__, argv, DATA)


if __name__ == "__main__":
    sys.exit(main())
