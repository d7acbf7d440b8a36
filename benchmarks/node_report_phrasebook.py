"""Issue 46 (AX2): reports over many nodes read as a class. Each failing node's reason, taken from the suites'
own source (benchmarks/data/node_report_phrasebook.json names them), is set in the shapes such reports take: a
Markdown table (Primus' smoke report), a table aligned by spaces, a roll-up of reasons by node list (LLNL's CSM
epilog), a verdict line naming its host, and dshbak -c's blocks; 15 passing nodes beside it. ``gpuvet doctor
--from`` (in-process) reads each: a framing is counted right (the expected cause on the failing host), generic
(another finding), missed (no finding) or refused. A reason of no GPU or NIC must give no finding, and each
healthy report none.

    .venv/bin/python benchmarks/node_report_phrasebook.py [--show generic,missed,refused,false]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import LOUD, read, tally_said

DATA = Path(__file__).parent / "data" / "node_report_phrasebook.json"
HOST = "gpu-a017"
PASSING = [f"gpu-a{n:03d}" for n in range(1, 16)]


def framings(reason: str) -> dict[str, str]:
    """The failing node's reason as each kind of report shows it, among 15 passing nodes."""
    why = reason.replace("{host}", HOST)
    md = "\n".join(f"| {i} | {h} | PASS | 24.1s |  |" for i, h in enumerate(PASSING))
    aligned = "\n".join(f"{h:<12}  PASS" for h in PASSING)
    return {
        "markdown": "# Node-Local Smoke Test Report\n\n| Node | Hostname | Status | Duration | Top fail reason |\n"
        f"|------|----------|--------|----------|-----------------|\n{md}\n| 15 | {HOST} | FAIL | 23.0s | "
        f"{why.replace('|', '/')} |",
        "aligned": f"HOSTNAME      STATUS  REASON\n{aligned}\n{HOST:<12}  FAIL    {why}",
        "rollup": f'#### CSM maintenance\ncompute:    "{why}":    1: {HOST}',
        "verdict": "\n".join(f"PASSED: {h}" for h in PASSING) + f"\nFAILED: {HOST} {why}",
        "dshbak": f"----------------\ngpu-a[001-015]\n----------------\nPASS\n----------------\n{HOST}\n"
        f"----------------\nFAIL: {why}",
    }


def healthy() -> dict[str, str]:
    """Reports whose every node passed."""
    md = "\n".join(f"| {i} | {h} | PASS | 24.1s |  |" for i, h in enumerate(PASSING))
    return {
        "markdown": "| Node | Hostname | Status | Duration | Top fail reason |\n|---|---|---|---|---|\n" + md,
        "aligned": "HOSTNAME      STATUS  REASON\n" + "\n".join(f"{h:<12}  PASS" for h in PASSING),
        "verdict": "\n".join(f"PASSED: {h}" for h in PASSING),
        "dshbak": "----------------\ngpu-a[001-015]\n----------------\nPASS",
    }


def findings(text: str, where: Path) -> list[dict[str, str]] | None:
    """doctor --from's findings on ``text`` (None: refused)."""
    _, found = read(text, where)
    return None if found is None else [f for f in found if f["severity"] in LOUD]


def verdict(expected: str | None, found: list[dict[str, str]] | None) -> str:
    if found is None:
        return "refused"
    if expected is None:
        return "clean" if not found else "false"
    right = any(f["cause"] == expected and f.get("host") == HOST for f in found)
    return "right" if right else ("generic" if found else "missed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="generic,missed,refused,false", help="verdicts to list, comma-separated")
    show = set(parser.parse_args(argv).show.split(","))
    reasons = json.loads(DATA.read_text(encoding="utf-8"))["reasons"]
    tally: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "report.txt"
        cases = [
            (frame, text, expected, reason) for _, reason, expected in reasons for frame, text in framings(reason).items()
        ]
        cases += [(frame, text, None, "(all nodes pass)") for frame, text in healthy().items()]
        for frame, text, expected, reason in cases:
            found = findings(text, where)
            tally[v := verdict(expected, found)] += 1
            if v in show:
                said = None if found is None else sorted(f"{f['cause']}@{f.get('host')}" for f in found)
                print(f"{v:8} {frame:9} {reason[:70]!r} -> {said} (want {expected})")
    print(tally_said("framed reports", tally, ("right", "generic", "missed", "refused", "clean", "false")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
