"""R9B (issue 46): the host platform's RAS lines beside the GPUs, read as a class: the kernel's machine check
records (print_mce, AMD's mce_amd decoder), rasdaemon's ras-mc-ctl (--errors, --summary, --status), mcelog's records
and dmidecode's 'Error Correction Type' (benchmarks/data/host_ras_phrasebook.json, each source named there). A
kernel case is set bare, with dmesg's stamps, as journalctl prints it, fenced under a poster's sentence and quoted;
a tool's output bare, under its command after a shell prompt, and fenced. Faults are counted right (cause and
severity), severity, subject (placed on something not 'host …'), generic (another loud finding), clear or refused;
healthy framings clean, false (a loud finding) or refused.

    .venv/bin/python -m benchmarks.host_ras_phrasebook [--show right,severity,subject,generic,clear,false,refused]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.host_memory_phrasebook import framings as kernel_framings
from benchmarks.host_memory_phrasebook import judge
from benchmarks.support.phrasebook import shown

DATA = Path(__file__).parent / "data" / "host_ras_phrasebook.json"


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows the case's lines: a kernel log's (host_memory_phrasebook's) or a tool's output's."""
    lines: list[str] = case["lines"]
    if case["frame"] == "kernel":
        return kernel_framings(lines)
    return {
        "bare": "\n".join(lines),
        "prompt": "\n".join([f"[root@node01 ~]# {case['command']}", *lines]),
        "fenced": "\n".join([f"Output of `{case['command']}` on the node:", "```", *lines, "```"]),
    }


def main(argv: list[str] | None = None) -> int:
    return judge(json.loads(DATA.read_text()), framings, shown(__doc__, argv))


if __name__ == "__main__":
    sys.exit(main())
