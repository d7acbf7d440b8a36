"""Issue 46 (R8B): AWS Neuron's runtime daemon nrtd, tpu-info, the device plugins' and kubelet's device-manager lines
of any vendor, and gpud's fabric state, read as a class. The lines (benchmarks/data/r8b_phrasebook.json, each
source named there) are set bare, with journal stamps, under the command at a prompt and in a poster's fenced
block with a sentence. Faults count right (cause and severity), severity (cause, other severity), generic (another
loud finding), clear or refused; healthy rows clean, false (a loud finding) or refused.

    .venv/bin/python -m benchmarks.r8b_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support.phrasebook import run_framed

DATA = Path(__file__).parent / "data" / "r8b_phrasebook.json"
PROMPT = {
    "nrtd": "$ sudo journalctl -u neuron-rtd",
    "nrt": "$ python infer.py",
    "tpu-info": "$ tpu-info",
    "k8s-device-plugin": "$ kubectl logs -n kube-system nvidia-device-plugin-daemonset-x7k2p",
    "kubelet": "$ kubectl describe pod vllm-0",
    "gpud": "$ gpud scan",
}


def framings(tool: str, lines: list[str]) -> dict[str, str]:
    """The ways a paste shows the lines: bare, journal-stamped, under the prompt, fenced under a sentence."""
    return {
        "bare": "\n".join(lines),
        "journal": "\n".join(f"Jan 08 21:53:{10 + i:02d} ip-10-0-0-31 {ln}" for i, ln in enumerate(lines)),
        "prompt": "\n".join([PROMPT[tool], *lines]),
        "fenced": "\n".join(["This is what I get:", "```", *lines, "```"]),
    }


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, lambda c: framings(c["tool"], c["lines"]), ("faults", "healthy"))


if __name__ == "__main__":
    sys.exit(main())
