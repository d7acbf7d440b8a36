"""Issue 46 (FX68B): npu-smi info tables whose chips print no bus id (Atlas 200I A2 / 310B boards, npu-smi 25.x:
'NA'), Axera's axcl-smi table, Gaudi's hl-smi-async telemetry and the SYCL runtime's device lists (sycl-ls,
syclinfo-style, llama.cpp's) (benchmarks/data/fx68b_phrasebook.json names each source). Each text bare, quoted and
fenced: an NPU's Health word on a chip with no bus id is found at its severity; the healthy listings (a chip at OK,
0.0 W alone, a card, a telemetry stream, one card through two SYCL backends) stay clean and are never refused.

    .venv/bin/python -m benchmarks.fx68b_phrasebook [--show generic,clear,false]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support.phrasebook import run_posted

DATA = Path(__file__).parent / "data" / "fx68b_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return run_posted(__doc__, argv, DATA)


if __name__ == "__main__":
    sys.exit(main())
