"""Issue 46 (AGX1): no GPU said from inside a container, another vendor's stack probed, and the init failures of
CUDA (error 3), DCMI (npu-smi) and ROCr (out of resources): how doctor reads each, in the framings pastes show.

The messages are the tools' own (benchmarks/data/probe_access_phrasebook.json names each one's source); each is
framed bare, behind a Python logger's stamp, a journal's launcher prefix and in a Markdown code fence. A fault's
verdict: right (its cause at its severity), severity, generic (another cause), clear or refused; a healthy text's:
clean, false (a finding at warn or above) or refused.

    python -m benchmarks.probe_access_phrasebook [--show false,generic]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from benchmarks.support import phrasebook

DATA = Path(__file__).parent / "data" / "probe_access_phrasebook.json"
FRAMINGS: dict[str, Callable[[str], str]] = {
    "bare": lambda t: t,
    "logger": lambda t: "\n".join(
        f"2024-04-20 05:06:56,239 ERROR worker.py:1740 -- {ln}" if not ln.startswith("$") else ln for ln in t.splitlines()
    ),
    "journal": lambda t: "\n".join(f"Apr 20 05:06:56 node7 python3[2211]: {ln}" for ln in t.splitlines()),
    "fenced": lambda t: f"Here is what I get:\n```\n{t}\n```",
}


def main(argv: list[str] | None = None) -> int:
    show = phrasebook.shown(__doc__, argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    faults: dict[str, Counter[str]] = {}
    healthy: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for entry in data["faults"]:
            tally = faults.setdefault(entry["source"], Counter())
            for frame, framed in FRAMINGS.items():
                code, found = phrasebook.run(framed(entry["text"]), where)
                verdict = phrasebook.placed(entry["cause"], entry["severity"], code, found, False, lambda _m: True, "right")
                tally[verdict] += 1
                if verdict in show:
                    print(f"{verdict:>9} {entry['name']} [{frame}]: {found}")
        for entry in data["healthy"]:
            for frame, framed in FRAMINGS.items():
                code, found = phrasebook.run(framed(entry["text"]), where)
                verdict = phrasebook.placed(None, "", code, found, False, lambda _m: True, "right")
                healthy[verdict] += 1
                if verdict in show:
                    print(f"{verdict:>9} {entry['name']} [{frame}]: {found}")
    phrasebook.print_faults("source", 14, faults, ("right", "severity", "generic", "clear", "refused"))
    print(phrasebook.healthy_said(healthy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
