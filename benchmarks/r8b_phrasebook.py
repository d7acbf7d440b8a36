"""Issue 46 (R8B): AWS Neuron's runtime daemon nrtd, tpu-info, the device plugins' and kubelet's device-manager lines
of any vendor, and gpud's fabric state, read as a class. The lines (benchmarks/data/r8b_phrasebook.json, each
source named there) are set bare, with journal stamps, under the command at a prompt and in a poster's fenced
block with a sentence. Faults count right (cause and severity), severity (cause, other severity), generic (another
loud finding), clear or refused; healthy rows clean, false (a loud finding) or refused.

    .venv/bin/python -m benchmarks.r8b_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import LOUD, doctor, shown

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


def _verdict(group: str, case: dict[str, Any], text: str, where: Path) -> str:
    code, found = doctor(text, where)
    loud = any(f["severity"] in LOUD for f in found)
    if code == 2:
        return "refused"
    if group == "faults":
        if any(f["cause"] == case["cause"] and f["severity"] == case["severity"] for f in found):
            return "right"
        return "severity" if any(f["cause"] == case["cause"] for f in found) else "generic" if loud else "clear"
    return "false" if loud else "clean"


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    data = json.loads(DATA.read_text())
    tallies: dict[str, Counter[str]] = {"faults": Counter(), "healthy": Counter()}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "paste.txt"
        for group in tallies:
            for case in data[group]:
                for frame, text in framings(case["tool"], case["lines"]).items():
                    verdict = _verdict(group, case, text, where)
                    tallies[group][verdict] += 1
                    if verdict in show:
                        print(f"{verdict:>8}  {frame:<7} {case['name']}")
    for group, tally in tallies.items():
        print(f"{group}: {sum(tally.values())} framings: " + ", ".join(f"{k} {n}" for k, n in sorted(tally.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
