"""Issue 46 (R13C): FPGA and NPU accelerators' own tools and drivers: XRT's xbutil/xbmgmt/xrt-smi (examine's device
table and readiness, validate's old and new test verdicts), the amdxdna NPU driver's firmware-start and mailbox
lines (and its benign debug-BO lookup), FastFlowLM's firmware check and the AWS Neuron runtime's NRT status codes.
Each fault judged with its cause and severity, each healthy text read with no warn and never refused. The lines
(benchmarks/data/r13c_phrasebook.json, each source named there) are set bare, under the command typed at a prompt,
in a poster's fenced block with a sentence, quoted in a poster's sentence (one-line cases) and, for kernel lines,
with dmesg stamps, /dev/kmsg's record prefix and dmesg -x's level prefix.

    .venv/bin/python -m benchmarks.r13c_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import NODE_KERNEL, case_framings, run_framed

DATA = Path(__file__).parent / "data" / "r13c_phrasebook.json"
KERNEL = {
    "dmesg": "[    5.57{i}771] ",
    "journal": "Mar 02 10:11:1{i} box kernel: ",
    "dmesg_x": NODE_KERNEL["dmesg_x"],
}


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows the lines: an NPU box's shell, dmesg's boot stamp, the journal, dmesg -x."""
    return case_framings(case, "user@npu-box:~$ ", "This is what I get on the card:",
                         "after installing the driver the device is unusable", KERNEL)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
