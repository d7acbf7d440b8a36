"""Issue 46 (R6C): AMD/ROCm tools' listings, Tenstorrent's tt-smi reset, NCCL's transport settings and a tool pasted
as a page's HTML source, read as a class. The lines (benchmarks/data/amd_tools_phrasebook.json, each source named
there) are set the ways a paste shows them: bare, under the command typed at a prompt, in a poster's fenced block
with a sentence, and as a page's HTML source (<pre><code>, <span> around the prompt). Faults are counted right
(cause and severity), severity (cause, other severity), generic (another loud finding), clear or refused; the
'said' rows (a fact gpuvet should say without a loud finding) said, unsaid, false (a loud finding) or refused;
healthy rows clean, false or refused.

    .venv/bin/python -m benchmarks.amd_tools_phrasebook [--show clear,unsaid,false,refused]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support.phrasebook import run_web_framed

DATA = Path(__file__).parent / "data" / "amd_tools_phrasebook.json"
PROMPT = {"tt-smi": "user@bh-04:~$ tt-smi -r 0", "nccl": "$ NCCL_DEBUG=INFO ./all_reduce_perf -b 8 -e 128M",
          "rocm-bandwidth-test": "root@node:~# rocm-bandwidth-test -t", "rocm-smi": "$ rocm-smi --showtemp",
          "hccn_tool": "$ hccn_tool -i 3 -ip -g", "amdgpu": "$ sudo dmesg | grep amdgpu"}


def main(argv: list[str] | None = None) -> int:
    return run_web_framed(__doc__, argv, DATA, PROMPT)


if __name__ == "__main__":
    sys.exit(main())
