"""Issue 46 (R4A): amdgpu's bring-up and firmware failures, KFD's bring-up and the ROCm tools' texts read in part,
as a phrasebook: each message of benchmarks/data/amd_bringup_phrases.json (its source named there) in the framings
real captures show (bare, a dmesg stamp and the driver's bus prefix, a journal line, quoted by a poster), scored
right / severity / subject / generic / clear / refused; the healthy ones clean / false / refused.

    python -m benchmarks.amd_bringup_phrasebook [--show clear,false,…]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support.phrasebook import amdgpu_framings, bus_named, run_placed

DATA = Path(__file__).parent / "data" / "amd_bringup_phrases.json"
BUS = "0000:C3:00.0"


def framings(entry: dict[str, object]) -> list[tuple[str, str, bool]]:
    """(framing, text, quoted) of one entry: a driver line in four framings, a tool's text as printed and quoted."""
    return amdgpu_framings(entry, BUS, ("amdgpu:", "kfd ", "[drm]"))


def main(argv: list[str] | None = None) -> int:
    return run_placed(__doc__, argv, DATA, framings, bus_named(BUS), 18)


if __name__ == "__main__":
    sys.exit(main())
