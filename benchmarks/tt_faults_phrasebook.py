"""Issue 46 (R8A): Tenstorrent's tools and driver as they print faults (captures/tt_faults.py and accel_tools'
tt-smi reset), read as a class. The lines (benchmarks/data/tt_faults_phrasebook.json, each source named there) are
set the ways a paste shows them: bare, under the command typed at a prompt, in a poster's fenced block with a
sentence, and quoted by a poster in a sentence. Faults are counted right (cause and severity), severity (cause,
other severity), generic (another loud finding), clear or refused; healthy rows clean, false or refused.

    .venv/bin/python -m benchmarks.tt_faults_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import LOUD, doctor, shown

DATA = Path(__file__).parent / "data" / "tt_faults_phrasebook.json"
PROMPT = {"luwen": "$ tt-smi -r 0", "tt-smi": "$ tt-smi -r 0", "tt-umd": "$ pytest tests/ttnn/unit_tests/test_x.py",
          "tt-kmd": "$ sudo dmesg | grep -i tenstorrent"}


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows the lines."""
    lines: list[str] = case["lines"]
    body = [f"[5621799.{i:06d}] {ln}" for i, ln in enumerate(lines)] if case.get("stamped") else lines
    out = {"bare": "\n".join(body), "prompt": "\n".join([PROMPT[case["source"]], *body]),
           "fenced": "\n".join(["It prints this:", "```", *body, "```"])}
    quote = case.get("quote", lines[-1].strip())  # None: no one line of it says the fault alone
    return out | ({"quoted": f"After the reset I get `{quote}` every time."} if quote else {})


def _fault(case: dict[str, Any], text: str, where: Path) -> str:
    code, found = doctor(text, where)
    if code == 2:
        return "refused"
    if any(f["cause"] == case["cause"] and f["severity"] == case["severity"] for f in found):
        return "right"
    if any(f["cause"] == case["cause"] for f in found):
        return "severity"
    return "generic" if any(f["severity"] in LOUD for f in found) else "clear"


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    data = json.loads(DATA.read_text())
    tallies: dict[str, Counter[str]] = {"faults": Counter(), "healthy": Counter()}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "paste.txt"
        for group in ("faults", "healthy"):
            for case in data[group]:
                for frame, text in framings(case).items():
                    if group == "faults":
                        verdict = _fault(case, text, where)
                    else:
                        code, found = doctor(text, where)
                        verdict = "refused" if code == 2 else "false" if any(
                            f["severity"] in LOUD for f in found) else "clean"
                    tallies[group][verdict] += 1
                    if verdict in show:
                        print(f"{verdict:>8}  {frame:<7} {case['name']}")
    for group, tally in tallies.items():
        print(f"{group}: {sum(tally.values())} framings: " + ", ".join(f"{k} {n}" for k, n in sorted(tally.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
