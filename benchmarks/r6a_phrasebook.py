"""Issue 46 (R6A): PCIe and NIC state as lspci, lshca, ibstatus and the RDMA completions print it
(benchmarks/data/r6a_phrasebook.json names each source): lspci -vvv's ACSCtl (whole, or grep'd), LnkCap/LnkSta a
poster's sentence parts, lshca's LnkStat and '>!<' width, ibstatus' rates beside peers of no named model, and a
work completion named by mlx5's CQE syndrome or the verbs enum. Each message bare, quoted and fenced; healthy
texts of the class (ACS off, an endpoint's ACS, pasted source code) must stay clean.

    .venv/bin/python -m benchmarks.r6a_phrasebook [--show generic,clear,false]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support.phrasebook import run_posted

DATA = Path(__file__).parent / "data" / "r6a_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return run_posted(__doc__, argv, DATA)


if __name__ == "__main__":
    sys.exit(main())
