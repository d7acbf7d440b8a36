"""Issue 46 (FX68E): the NIC and fabric tools as a class (benchmarks/data/fx68e_phrasebook.json names each source):
libfabric's fi_info finding no provider (warn), AWS EFA's hw_counters with an error counter above zero (warn),
ibv_devinfo finding no device (one warn, no perftest run), nvidia-smi -q's Fabric registered on a degraded fabric
(fabric_degraded, warn) beside one not registered (critical), gpud's fabric manager check finding the service
inactive (critical). Healthy texts of the class (fi_info's three forms, EFA counters at zero, mstconfig's query and
its '-E- Unsupported device', lspci beside rdma link, a healthy Fabric section, gpud's not-needed and active
reasons) stay clean and are read, never refused.

    .venv/bin/python -m benchmarks.fx68e_phrasebook [--show generic,clear,false,refused]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support.phrasebook import run_posted

DATA = Path(__file__).parent / "data" / "fx68e_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return run_posted(__doc__, argv, DATA)


if __name__ == "__main__":
    sys.exit(main())
