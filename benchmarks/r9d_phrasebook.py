"""Issue 46 (R9D): display pipelines whose flips time out (DRM's atomic helpers, KWin's pageflip line) for i915, xe
and amdgpu alike, and amdgpu's PSP/SMU firmware loading failures (Linux and FreeBSD drm-kmod), as a phrasebook:
each message of benchmarks/data/r9d_phrases.json (its source named there), said as many times as it names, in the
framings real captures show (dmesg stamp, journal line, a poster's fenced paste), scored right / severity / subject
/ generic / clear / refused; the healthy ones (a one-off timeout, a virtual display's, a healthy boot's) clean /
false / refused.

    python -m benchmarks.r9d_phrasebook [--show clear,false,…]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks.support.phrasebook import run_placed

DATA = Path(__file__).parent / "data" / "r9d_phrases.json"


def framings(entry: dict[str, object]) -> list[tuple[str, str, bool]]:
    """(framing, text, quoted) of one entry: its line said ``times`` times, stamped as dmesg, the journal, a fenced
    paste."""
    line, times = str(entry["line"]), int(str(entry["times"]))
    dmesg = "".join(f"[  {100 + 5 * i}.123456] {line}\n" for i in range(times))
    journal = "".join(f"Dec 21 13:44:{i:02d} node1 kernel: {line}\n" for i in range(times))
    return [
        ("dmesg", dmesg, False),
        ("journal", journal, False),
        ("fenced", "After boot I get:\n```\n" + dmesg + "```\n", False),
    ]


def named(entry: dict[str, object], _text: str) -> Callable[[str], bool]:
    """The entry's module, or where it names none the log's unnamed subject."""
    want = str(entry["module"])
    return lambda module: module == want if want else "not in the log" in module


def main(argv: list[str] | None = None) -> int:
    return run_placed(__doc__, argv, DATA, framings, named, 12, 8)


if __name__ == "__main__":
    sys.exit(main())
