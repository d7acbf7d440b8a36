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

from benchmarks.support.phrasebook import node_framings, run_framed

DATA = Path(__file__).parent / "data" / "r13d_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, node_framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
