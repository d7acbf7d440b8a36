"""Issue 46 (R12B): benchmarks and PCIe on any node, as the tools print them: p2pBandwidthLatencyTest's and
deviceQuery's peer access, nvidia-smi topo -p2p's statuses (r, w, p; a and an NVLink pair's p said, not judged),
lspci's LnkCap/LnkSta on GPUs, NVMe, RAID cards and bridge ports, bandwidthTest's host copies and nccl-tests on PCIe
GeForce cards, faults and the healthy lines of the same class. The lines (benchmarks/data/pcie_bench_phrasebook.json,
each tool's source named there) are set bare, under the command typed at a prompt, and fenced under a sentence.

    .venv/bin/python -m benchmarks.pcie_bench_phrasebook [--show clear,generic,false,refused,severity]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import lines_framings, run_framed

DATA = Path(__file__).parent / "data" / "pcie_bench_phrasebook.json"
PROMPT = {
    "p2p": "root@node01:~/cuda-samples# ./p2pBandwidthLatencyTest",
    "dq": "root@node01:~/cuda-samples# ./deviceQuery",
    "topo": "root@node01:~# nvidia-smi topo -m",
    "lspci": "root@node01:~# sudo lspci -vvv",
    "bt": "root@node01:~/cuda-samples# ./bandwidthTest",
    "nccl": "root@node01:~/nccl-tests# ./build/all_reduce_perf -b 8 -e 1G -f 2 -g 2",
}


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows the lines."""
    return lines_framings(case["lines"], PROMPT[case["tool"]], "On our node it prints this:")


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
