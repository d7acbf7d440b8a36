"""Issue 46 (R11B): IPoIB carrier lines as systemd-networkd and NetworkManager log them (flapping, lost), and the
healthy lines of the same class that must stay clear and never be refused: systemd's unit lines alone, one loss
regained, a container's veth, bnx2x's per-queue ethtool counters, Ethernet ports off beside InfiniBand rails up,
ibstat's abort on one device (a note). The lines (benchmarks/data/r11b_phrasebook.json, each source named there)
are set bare, under the command typed at a prompt, and in a poster's fenced block with a sentence.

    .venv/bin/python -m benchmarks.r11b_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import run_framed

DATA = Path(__file__).parent / "data" / "r11b_phrasebook.json"
PROMPT = {
    "networkd": "$ journalctl -u systemd-networkd --since today",
    "nm": "$ journalctl -u NetworkManager --since today",
    "systemd": "$ tail /var/log/syslog",
    "ethtool": "$ ethtool -S eth0",
    "ibstat": "$ ibstat",
}


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows the lines."""
    lines: list[str] = case["lines"]
    return {
        "bare": "\n".join(lines),
        "prompt": "\n".join([PROMPT[case["source"]], *lines]),
        "fenced": "\n".join(["It prints this:", "```", *lines, "```"]),
    }


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
