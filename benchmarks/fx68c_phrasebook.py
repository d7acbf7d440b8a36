"""Issue 46 (FX68C): a kernel oops whose RIP or call trace names a GPU driver's module (amdgpu, amdkfd's code in
amdgpu, nvidia, nvidia_uvm, i915, xe, habanalabs) in a serial console's, dmesg's, syslog's and journalctl's forms
is gpu_driver_oops (critical, the node); deviceQuery's 'Device has ECC support: Disabled' is ecc_disabled (warn)
on a data-center part only, and clean on GeForce, NVS, Quadro, laptop and RTX workstation cards (it prints
'Disabled' where the model has no ECC). Each text bare, quoted and fenced (benchmarks/data/fx68c_phrasebook.json
names each source).

    .venv/bin/python -m benchmarks.fx68c_phrasebook [--show generic,clear,false]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support.phrasebook import run_posted

DATA = Path(__file__).parent / "data" / "fx68c_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return run_posted(__doc__, argv, DATA)


if __name__ == "__main__":
    sys.exit(main())
