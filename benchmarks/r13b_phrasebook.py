"""Issue 46 (R13B): ibdiagnet2's PM counter blocks, UFM's unhealthy ports, HPE Slingshot's cxi driver error lines by
class, NCCL's NET/IB completion errors quoted by a poster (each ibv_wc_status), a segfault in libnccl/librccl and a
journal's header, as a phrasebook: each entry of benchmarks/data/r13b_phrases.json (its source named there) in the
framings real captures show (a driver line bare, under a dmesg stamp, a journal line, quoted; a tool's text as printed
and after a sentence), scored right / severity / subject / generic / clear / refused; the healthy ones clean / false /
refused.

    python -m benchmarks.r13b_phrasebook [--show clear,false,…]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks.support.phrasebook import run_placed

DATA = Path(__file__).parent / "data" / "r13b_phrases.json"
BUS = "0000:c3:00.0"


def framings(entry: dict[str, object]) -> list[tuple[str, str, bool]]:
    """(framing, text, quoted) of one entry: a tool's text, a driver line in four framings, or a poster's quote."""
    if "text" in entry:
        text = str(entry["text"])
        return [("as printed", text, False), ("after a sentence", "Here is the output:\n" + text, False)]
    if "quote" in entry:
        q = str(entry["quote"])
        return [
            ("single quotes", f"I have the same error as '{q}' although I run in a container.", False),
            ("double quotes", f'NCCL fails with "{q}" after a few minutes', False),
            ("backticks", f"We see `{q}` on rank 3.", False),
        ]
    line = str(entry["line"])
    return [
        ("bare", line, False),
        ("dmesg", f"[  123.456789] {line}", False),
        ("journal", f"Dec 07 12:00:00 node1 kernel: {line}", False),
        ("quoted", f'After the job dmesg says "{line}" and nothing works.', True),
    ]


def named(entry: dict[str, object], text: str) -> Callable[[str], bool]:
    """The subject a fault must be found on: the card's bus id where the entry has one, else any."""
    bus = bool(entry["bus"])
    return lambda module: module.lower() == BUS if bus else True


def main(argv: list[str] | None = None) -> int:
    return run_placed(__doc__, argv, DATA, framings, named, 20)


if __name__ == "__main__":
    sys.exit(main())
