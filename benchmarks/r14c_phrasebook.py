"""Issue 46 (R14C): the AMD, Intel, Ascend and AWS accelerators' listings read whole, and Level Zero's init refusals
judged by the result they print. clinfo in AMD's own form (whole or grepped), Oblomov clinfo's human, --raw and
--json forms; rocminfo's agents (gfx target, compute units, BDFID bus) and its head alone (the driver line);
npu-smi info -m (with and without Chip Phy-ID, a card's MCU row) and npu-smi info's process table; rocm-smi's
Partitions column on a CPX host; neuron-ls's NeuronCores per device; xpumd's and a program's Level Zero init
refusals (the driver's state, or a tools layer's missing dependency: configuration). Facts said with no warn,
faults with their cause and severity, healthy texts clean, none refused. The lines
(benchmarks/data/r14c_phrasebook.json, each source named there) are set bare, under the command typed at a prompt,
fenced under a poster's sentence and as a page's HTML source.

    .venv/bin/python -m benchmarks.r14c_phrasebook [--show said,unsaid,false,refused,right,severity,generic,clear]
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.support.phrasebook import run_web_framed

DATA = Path(__file__).parent / "data" / "r14c_phrasebook.json"
PROMPTS = {"clinfo": "$ clinfo", "clinfo --raw": "$ clinfo --raw", "clinfo --json": "$ clinfo --json",
           "rocminfo": "$ rocminfo", "npu-smi info -m": "[root@atlas ~]# npu-smi info -m",
           "npu-smi info": "[root@atlas ~]# npu-smi info", "rocm-smi": "$ rocm-smi",
           "xpumd": "$ sudo journalctl -u xpum", "app": "$ ./metrics_sample",
           "neuron-ls": "ubuntu@ip-10-0-0-5:~$ neuron-ls"}


def main(argv: list[str] | None = None) -> int:
    return run_web_framed(__doc__, argv, DATA, PROMPTS)


if __name__ == "__main__":
    raise SystemExit(main())
