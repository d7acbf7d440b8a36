"""Issue 46 (R13D): the edge accelerators' kernel drivers in their own words: Hailo's hailo_pci/hailo1x (probe,
interrupts, BARs, firmware load; a missing firmware file), Google Coral's apex on gasket (PCI bring-up, page table
and MSI-X init, the MMU fault dump), NVIDIA Jetson's nvgpu LS falcon bootstrap; and xe's EU attention reset a debug
test causes (healthy); Tenstorrent's tt-flash/luwen chip init and ARC checks, tt-umd's board type, tt-metal's eth
training wait. Each fault judged with its cause and severity, each healthy text read with no warn and never
refused. The lines (benchmarks/data/r13d_phrasebook.json, each source named there) are set bare, under the command
typed at a prompt, in a poster's fenced block with a sentence, quoted in a poster's sentence (one-line cases), with
dmesg stamps, /dev/kmsg's record prefix and dmesg -x's level prefix.

    .venv/bin/python -m benchmarks.r13d_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import run_framed

DATA = Path(__file__).parent / "data" / "r13d_phrasebook.json"


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows the lines."""
    lines: list[str] = case["lines"]
    out = {
        "bare": "\n".join(lines),
        "prompt": "\n".join([f"root@node01:~# {case['command']}", *lines]),
        "fenced": "\n".join(["After the reboot it prints this:", "```", *lines, "```"]),
    }
    if len(lines) == 1:
        out["sentence"] = f"- **Problem**: after a reboot of the CentOS server the driver is unusable: {lines[0]}"
    if case.get("kernel"):
        out["dmesg"] = "\n".join(f"[Thu Sep 19 02:29:4{i} 2024] {ln}" for i, ln in enumerate(lines))
        out["kmsg"] = "\n".join(f"6,3973,22799663{i},-;{ln}" for i, ln in enumerate(lines))
        out["dmesg_x"] = "\n".join(f"kern  :err   : 2025-02-10T16:28:06,50271{i}+00:00 {ln}" for i, ln in enumerate(lines))
    return out


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
