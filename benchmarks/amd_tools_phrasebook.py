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

from benchmarks.support.phrasebook import run_framed

DATA = Path(__file__).parent / "data" / "amd_tools_phrasebook.json"
PROMPT = {"tt-smi": "user@bh-04:~$ tt-smi -r 0", "nccl": "$ NCCL_DEBUG=INFO ./all_reduce_perf -b 8 -e 128M",
          "rocm-bandwidth-test": "root@node:~# rocm-bandwidth-test -t", "rocm-smi": "$ rocm-smi --showtemp",
          "hccn_tool": "$ hccn_tool -i 3 -ip -g", "amdgpu": "$ sudo dmesg | grep amdgpu"}


def framings(tool: str, lines: list[str], stamped: bool = False) -> dict[str, str]:
    """The ways a paste shows the lines."""
    body = [f"[5621799.{i:06d}] {ln}" for i, ln in enumerate(lines)] if stamped else lines
    html = [f"<div><pre><code><span>$ </span>{PROMPT[tool].split('$ ', 1)[-1].split('# ', 1)[-1]}", *body,
            "</code></pre></div>", "<p>That is all it printed.</p>"]
    return {"bare": "\n".join(body), "prompt": "\n".join([PROMPT[tool], *body]),
            "fenced": "\n".join(["It prints this:", "```", *body, "```"]), "html": "\n".join(html)}


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, lambda c: framings(c["tool"], c["lines"], c.get("stamped", False)))


if __name__ == "__main__":
    sys.exit(main())
