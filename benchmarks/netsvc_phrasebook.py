"""Issue 46 (R5B): NICs, fabric services and PCIe errors: systemd's failed unit of the fabric manager (its '×' head
line, 'Active: failed', the journal's 'Failed to start'), ibv_devinfo's and ibstat's port in INIT (no subnet manager),
a dual-port card's second PCI function switched off, ethtool's settings past its 'Cannot get' lines, a non-GPU
exporter's Prometheus text, NCCL's NET/IB 'client reregistration' once per rank or again in one process, completion
status 12 on one or two connections to a peer, and an AER excerpt naming its endpoint: how doctor reads each, in
the framings pastes show.

The messages are the tools' own (benchmarks/data/netsvc_phrasebook.json names each one's source); each is framed
bare, quoted by a poster ('> ' with GitHub's links of 'file.cc:N'), and in a Markdown code fence. A fault's verdict:
right (its cause at its severity on the module named), severity, misplaced, generic, clear or refused; a healthy
text's: clean, false (a finding at warn or above) or refused.

    python -m benchmarks.netsvc_phrasebook [--show false,generic]
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from benchmarks.support import phrasebook

DATA = Path(__file__).parent / "data" / "netsvc_phrasebook.json"
_SOURCE = re.compile(r"(\b[\w]+\.cc:\d+)")
_LINKED = r"[\1](http://\1/)"  # GitHub's autolink of a name that looks like a host
FRAMINGS: dict[str, Callable[[str], str]] = {
    "bare": lambda t: t,
    "quoted": lambda t: "\n".join("> " + _SOURCE.sub(_LINKED, ln) for ln in t.splitlines()),
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
            want = entry["module"]
            for frame, framed in FRAMINGS.items():
                code, found = phrasebook.run(framed(entry["text"]), where)
                verdict = phrasebook.placed(
                    entry["cause"],
                    entry["severity"],
                    code,
                    found,
                    False,
                    lambda m, want=want: not want or m == want,
                    "misplaced",
                )
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
    phrasebook.print_faults("source", 14, faults, ("right", "severity", "misplaced", "generic", "clear", "refused"))
    print(phrasebook.healthy_said(healthy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
