"""Issue 46 (R12D): amdgpu's SMU power-management messages, a failed ASIC reset weighed by its outcome, RAS counts
of all-ones counters and the host's 'Machine check events logged', as a phrasebook: each message of
benchmarks/data/r12d_phrases.json (its source named there) in the framings real captures show (bare, a dmesg stamp
and the driver's bus prefix, a journal line, quoted by a poster), scored right / severity / subject / generic /
clear / refused; the healthy ones clean / false / refused.

    python -m benchmarks.r12d_phrasebook [--show clear,false,…]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks.support.phrasebook import run_placed

DATA = Path(__file__).parent / "data" / "r12d_phrases.json"
BUS = "0000:C3:00.0"


def framings(entry: dict[str, object]) -> list[tuple[str, str, bool]]:
    """(framing, text, quoted) of one entry: a driver line in four framings, a tool's text as printed and quoted."""
    if "text" in entry:
        text = str(entry["text"])
        return [("as printed", text, False), ("after a sentence", "Here is the output:\n" + text, False)]
    line = str(entry["line"])
    prefixed = (
        line
        if line.startswith(("amdgpu:", "kfd ", "[drm]", "[drm:", "mce:", "MCE:"))
        else f"amdgpu {BUS.lower()}: amdgpu: {line}"
    )
    return [
        ("bare", prefixed, False),
        ("dmesg", f"[  123.456789] {prefixed}", False),
        ("journal", f"Dec 07 12:00:00 node1 kernel: {prefixed}", False),
        ("quoted", f'After the update dmesg says "{prefixed}" and nothing works.', True),
    ]


def named(entry: dict[str, object], text: str) -> Callable[[str], bool]:
    """The subject a fault must be found on: the card's bus id where the entry has one, else any."""
    bus = bool(entry["bus"]) and "$" not in text
    return lambda module: module == BUS if bus else True


def main(argv: list[str] | None = None) -> int:
    return run_placed(__doc__, argv, DATA, framings, named, 18)


if __name__ == "__main__":
    sys.exit(main())
