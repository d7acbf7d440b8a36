"""HM1 (issue 46): the host's own memory errors as the kernel (EDAC's core, the machine check handler) and rasdaemon
print them, read as a class: a host DIMM's repeated corrected errors (warn) or an uncorrected one (critical), placed
on the DIMM ('host DIMM <label>'), never a GPU; a single corrected error and the EDAC drivers' boot lines stay quiet.
The lines (benchmarks/data/host_memory_phrasebook.json, each source named there) are set the ways a paste shows
them: bare, with dmesg's stamps, as journalctl prints them, fenced under a poster's sentence, and quoted one a
sentence. Faults are counted right (cause and severity), severity (cause, other severity), subject (placed on
something that is not a host DIMM or host memory), generic (another loud finding), clear or refused; healthy
framings clean, false (a loud finding) or refused.

    .venv/bin/python -m benchmarks.host_memory_phrasebook [--show right,severity,subject,generic,clear,false,refused]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import LOUD, doctor, healthy_said, print_faults, shown

DATA = Path(__file__).parent / "data" / "host_memory_phrasebook.json"


def framings(lines: list[str]) -> dict[str, str]:
    """The ways a paste shows the lines."""
    kernel = ["" if ln.startswith("rasdaemon[") else "kernel: " for ln in lines]
    return {
        "bare": "\n".join(lines),
        "dmesg": "\n".join(f"[ 5621.{i:06d}] {ln}" for i, ln in enumerate(lines)),
        "journal": "\n".join(
            f"May  7 06:45:{i:02d} node01 {k}{ln}" for i, (k, ln) in enumerate(zip(kernel, lines, strict=True))
        ),
        "fenced": "\n".join(["Checking dmesg on my node, I found a bunch of errors like:", "```", *lines, "```"]),
        "quoted": "\n".join(f'On my node dmesg printed "{ln}" and the job died.' for ln in lines),
    }


def _fault(case: dict[str, Any], found: list[dict[str, Any]], code: int) -> str:
    if code == 2:
        return "refused"
    mine = [f for f in found if f["cause"] == case["cause"]]
    if mine and not all(str(f.get("module") or "").startswith("host ") for f in mine):
        return "subject"
    if any(f["severity"] == case["severity"] for f in mine):
        return "right"
    if mine:
        return "severity"
    return "generic" if any(f["severity"] in LOUD for f in found) else "clear"


def main(argv: list[str] | None = None) -> int:
    return judge(json.loads(DATA.read_text()), lambda case: framings(case["lines"]), shown(__doc__, argv))


def judge(data: dict[str, Any], framings_of: Callable[[dict[str, Any]], dict[str, str]], show: set[str]) -> int:
    """Each fault and healthy case in each framing judged, the ones ``show`` names printed, then the tallies (the
    host RAS phrasebook judges its cases so too)."""
    faults: dict[str, Counter[str]] = {}
    healthy: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "paste.txt"
        for group in ("faults", "healthy"):
            for case in data[group]:
                for frame, text in framings_of(case).items():
                    code, found = doctor(text, where)
                    if group == "faults":
                        verdict = _fault(case, found, code)
                        faults.setdefault(frame, Counter())[verdict] += 1
                    else:
                        verdict = "refused" if code == 2 else "false" if any(f["severity"] in LOUD for f in found) \
                            else "clean"
                        healthy[verdict] += 1
                    if verdict in show:
                        print(f"{verdict:>8}  {frame:<7} {case['name']}: {[(f['severity'], f['cause']) for f in found]}")
    print_faults("framing", 10, faults)
    print(healthy_said(healthy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
