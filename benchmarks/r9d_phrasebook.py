"""Issue 46 (R9D): display pipelines whose flips time out (DRM's atomic helpers, KWin's pageflip line) for i915, xe
and amdgpu alike, and amdgpu's PSP/SMU firmware loading failures (Linux and FreeBSD drm-kmod), as a phrasebook:
each message of benchmarks/data/r9d_phrases.json (its source named there), said as many times as it names, in the
framings real captures show (dmesg stamp, journal line, a poster's fenced paste), scored right / severity / subject
/ generic / clear / refused; the healthy ones (a one-off timeout, a virtual display's, a healthy boot's) clean /
false / refused.

    python -m benchmarks.r9d_phrasebook [--show clear,false,…]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import healthy_placed, healthy_said, placed, print_faults, run, shown

DATA = Path(__file__).parent / "data" / "r9d_phrases.json"


def framings(entry: dict[str, object]) -> list[tuple[str, str]]:
    """(framing, text) of one entry: its line said ``times`` times, stamped as dmesg, the journal, a fenced paste."""
    line, times = str(entry["line"]), int(str(entry["times"]))
    dmesg = "".join(f"[  {100 + 5 * i}.123456] {line}\n" for i in range(times))
    journal = "".join(f"Dec 21 13:44:{i:02d} node1 kernel: {line}\n" for i in range(times))
    return [("dmesg", dmesg), ("journal", journal), ("fenced", "After boot I get:\n```\n" + dmesg + "```\n")]


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    data = json.loads(DATA.read_text())
    faults: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for entry in data["faults"]:
            for name, text in framings(entry):
                code, found = run(text, where)

                def named(module: str, want: str = str(entry["module"])) -> bool:
                    return module == want if want else "not in the log" in module

                verdict = placed(str(entry["cause"]), str(entry["severity"]), code, found, False, named, "subject")
                faults.setdefault(str(entry["source"]), Counter())[verdict] += 1
                if verdict in show:
                    print(f"{verdict:<9} {name:<8} {text[:100]!r} -> {found}")
        healthy = healthy_placed(((n, t) for e in data["healthy"] for n, t in framings(e)), where, show, 8)
    print_faults("source", 12, faults)
    print(healthy_said(healthy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
