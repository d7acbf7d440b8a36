"""Issue 46 (R12D): amdgpu's SMU power-management messages, a failed ASIC reset weighed by its outcome, RAS counts
of all-ones counters and the host's 'Machine check events logged', as a phrasebook: each message of
benchmarks/data/r12d_phrases.json (its source named there) in the framings real captures show (bare, a dmesg stamp
and the driver's bus prefix, a journal line, quoted by a poster), scored right / severity / subject / generic /
clear / refused; the healthy ones clean / false / refused.

    python -m benchmarks.r12d_phrasebook [--show clear,false,…]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import healthy_placed, healthy_said, placed, print_faults, run, shown

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


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    data = json.loads(DATA.read_text())
    faults: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for entry in data["faults"]:
            for name, text, quoted in framings(entry):
                code, found = run(text, where)
                bus = bool(entry["bus"]) and "$" not in text

                def named(module: str, bus: bool = bus) -> bool:
                    return module == BUS if bus else True

                verdict = placed(str(entry["cause"]), str(entry["severity"]), code, found, quoted, named, "subject")
                faults.setdefault(str(entry["source"]), Counter())[verdict] += 1
                if verdict in show:
                    print(f"{verdict:<9} {name:<16} {text[:100]!r} -> {found}")
        healthy = healthy_placed(((n, t) for e in data["healthy"] for n, t, _ in framings(e)), where, show, 16)
    print_faults("source", 18, faults)
    print(healthy_said(healthy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
