"""Issue 46 (R7B): kernel lines beyond the GPU driver's own (the PCI core's bridge windows, a port's lone corrected
AER error, amdgpu's display-path and cancelled-context lines, i915's 4.x / FreeBSD hang words) and rocm-smi's
rsmi_init status, read as a class. The lines (benchmarks/data/r7b_phrasebook.json, each source named there) are set
bare, with dmesg stamps (kernel lines), under the command at a prompt and in a poster's fenced block with a
sentence. Faults count right (cause and severity), severity (cause, other severity), generic (another loud
finding), clear or refused; 'said' rows said, unsaid, false (a loud finding) or refused; healthy rows clean, false
or refused.

    .venv/bin/python -m benchmarks.r7b_phrasebook [--show clear,generic,unsaid,false,refused]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import LOUD, doctor, shown

DATA = Path(__file__).parent / "data" / "r7b_phrasebook.json"
PROMPT = {
    "pci": "$ sudo dmesg | grep -i pci",
    "aer": "$ journalctl -k | grep -i aer",
    "amdgpu": "$ sudo dmesg",
    "i915": "# dmesg",
    "rocm-smi": "$ rocm-smi",
}


def framings(tool: str, lines: list[str], stamped: bool) -> dict[str, str]:
    """The ways a paste shows the lines: bare, stamped as dmesg prints them (kernel lines), under the prompt, fenced."""
    out = {"bare": "\n".join(lines)}
    if stamped:
        out["dmesg"] = "\n".join(f"[    9.{220563 + i:06d}] {ln}" for i, ln in enumerate(lines))
    out["prompt"] = "\n".join([PROMPT[tool], *lines])
    out["fenced"] = "\n".join(["This is what I get:", "```", *lines, "```"])
    return out


def _verdict(group: str, case: dict[str, Any], text: str, where: Path) -> str:
    code, found = doctor(text, where)
    loud = any(f["severity"] in LOUD for f in found)
    if code == 2:
        return "refused"
    if group == "faults":
        if any(f["cause"] == case["cause"] and f["severity"] == case["severity"] for f in found):
            return "right"
        return "severity" if any(f["cause"] == case["cause"] for f in found) else "generic" if loud else "clear"
    if loud:
        return "false"
    if group == "said":
        return "said" if case["said"] in where.with_suffix(".notes").read_text() else "unsaid"
    return "clean"


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    data = json.loads(DATA.read_text())
    tallies: dict[str, Counter[str]] = {"faults": Counter(), "said": Counter(), "healthy": Counter()}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "paste.txt"
        for group in tallies:
            for case in data[group]:
                for frame, text in framings(case["tool"], case["lines"], case.get("stamped", False)).items():
                    if group == "said":
                        where.with_suffix(".notes").write_text(_notes(text, where))
                    verdict = _verdict(group, case, text, where)
                    tallies[group][verdict] += 1
                    if verdict in show:
                        print(f"{verdict:>8}  {frame:<7} {case['name']}")
    for group, tally in tallies.items():
        print(f"{group}: {sum(tally.values())} framings: " + ", ".join(f"{k} {n}" for k, n in sorted(tally.items())))
    return 0


def _notes(text: str, where: Path) -> str:
    """doctor's notes on the text (what it said without a finding)."""
    import contextlib
    import io

    from gpuvet.cli.app import main as gpuvet

    where.write_text(text + "\n", encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        gpuvet(["doctor", "--from", str(where), "--json"])
    return "\n".join(json.loads(out.getvalue())["notes"]) if out.getvalue().strip() else ""


if __name__ == "__main__":
    sys.exit(main())
