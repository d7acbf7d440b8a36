"""Issue 46 (R8A): Tenstorrent's tools and driver as they print faults (captures/tt_faults.py and accel_tools'
tt-smi reset), read as a class. The lines (benchmarks/data/tt_faults_phrasebook.json, each source named there) are
set the ways a paste shows them: bare, under the command typed at a prompt, in a poster's fenced block with a
sentence, and quoted by a poster in a sentence. Faults are counted right (cause and severity), severity (cause,
other severity), generic (another loud finding), clear or refused; healthy rows clean, false or refused.

    .venv/bin/python -m benchmarks.tt_faults_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import run_framed

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


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
