"""Issue 46 (FX68A): DCGM's smaller tools and the driver's refusals (benchmarks/data/fx68a_phrasebook.json names
each source): dcgmi modules -l with a module in Failed to load (info), dcgmproftester's FAILED (warn), NVRM's check
line with a status code of a software refusal (info), kubectl describe node's capacity above allocatable (warn, a
poster's trailing mark tolerated). Healthy texts of the class (modules lazily not loaded, denylisted or paused, a
PASSED proftester, dcgmi stats -j with 'Not Specified' ECC rows, a node with every GPU allocatable) stay clean.

    .venv/bin/python -m benchmarks.fx68a_phrasebook [--show generic,clear,false]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support.phrasebook import run_posted

DATA = Path(__file__).parent / "data" / "fx68a_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return run_posted(__doc__, argv, DATA)


if __name__ == "__main__":
    sys.exit(main())
