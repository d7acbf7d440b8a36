"""Issue 46 (R11A): nvidia-smi -q's memory-error sections and clock reasons read as a class: ECC Errors in each
driver's spelling (R470 Single/Double Bit with Device Memory and Total, R510 SRAM/DRAM Correctable/Uncorrectable,
R550 SRAM Uncorrectable Parity / SEC-DED) with Remapped Rows, judged as uncorrectable history (aggregate or
remapped rows only: warn), since boot (critical), remap pending (warn) or failed (critical); an idle module at P8
with SW Power Cap active (clean) beside the same clock on a busy module (warn). The blocks
(benchmarks/data/r11a_phrasebook.json, their source named there) are set bare, fenced under a sentence, after the
shell prompt that ran them and with CRLF line ends. Faults are counted right (cause and severity), severity,
generic, clear or refused; healthy rows clean, false or refused.

    .venv/bin/python -m benchmarks.r11a_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import run_framed

DATA = Path(__file__).parent / "data" / "r11a_phrasebook.json"


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows a -q block."""
    lines: list[str] = case["lines"]
    return {
        "bare": "\n".join(lines),
        "fenced": "\n".join(["Here is nvidia-smi -q from the node:", "```", *lines, "```"]),
        "prompt": "\n".join(["root@gpu-07:~# nvidia-smi -q", *lines]),
        "crlf": "\r\n".join(lines),
    }


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
