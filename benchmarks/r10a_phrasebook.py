"""Issue 46 (R10A): AMD, Intel and Tenstorrent kernel and tool lines and the PCI core's BAR failures, read as a
class: amdgpu's retry page fault, powerplay's unanswered SMU message in each source's spelling (and its tag alone
above it under one stamp), i915/xe's GT forcewake timeout, tt-kmd's chip with its firmware down, the reset scripts'
'Unsuccessful board reset', a NIC's (or GPU's) SR-IOV VF BAR and a NIC's own BAR left unassigned; and the healthy
lines that must stay clear (i915's pre-emption timeout bump, an SMU message 'not supported', a reset that then
succeeded, a VF BAR assigned on realloc, a SATA controller's VF BAR). The lines (benchmarks/data/r10a_phrasebook.json,
each source named there) are set bare, dmesg-stamped, in a journal, in a poster's fenced block with a sentence, and
(faults) quoted in a poster's sentence. Faults are counted right (cause and severity), severity, generic, clear or
refused; healthy rows clean, false or refused.

    .venv/bin/python -m benchmarks.r10a_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import run_framed

DATA = Path(__file__).parent / "data" / "r10a_phrasebook.json"
_KERNEL = ("amdgpu", "i915", "ttkmd", "pci")


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows the lines (a kernel line stamped as dmesg and journalctl print it)."""
    lines: list[str] = case["lines"]
    out = {"bare": "\n".join(lines), "fenced": "\n".join(["It prints this:", "```", *lines, "```"])}
    if case["source"] in _KERNEL and not lines[0].startswith("["):
        out["dmesg"] = "\n".join(f"[   21.{i:06d}] {ln}" for i, ln in enumerate(lines))
        out["journal"] = "\n".join(f"Feb 17 18:01:24 host kernel: {ln}" for ln in lines)
    return out | ({"quoted": f"The log says `{lines[-1].strip()}` every time."} if "cause" in case else {})


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
