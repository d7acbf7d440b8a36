"""Issue 46 (IGC): i915's and xe's firmware lines (GuC, HuC, GSC, DMC), read as a class. Each message is the
driver's own format (benchmarks/data/intel_fw_phrasebook.json names the files), set on a discrete part (DG2 at
0000:03:00.0, where the GuC submits the GPU's work) and an integrated one (00:02.0, execlists without it), in the
framings pastes show: a dmesg line, a journal line, a line pasted under a poster's sentence, one
quoted inside the sentence. ``gpuvet doctor --from`` (in-process)
reads each: counted as its class (the expected cause), generic (another finding only), missed, refused (nothing
read), clean (a healthy line with no finding at warn or above) or false (a healthy line given one).

    .venv/bin/python -m benchmarks.intel_fw_phrasebook [--show generic,missed,refused,false]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import read, tally_said

DATA = Path(__file__).parent / "data" / "intel_fw_phrasebook.json"
DRIVER_LINE = "i915 {bus}: {body}"


def framings(line: str) -> dict[str, str]:
    """One driver line as each kind of paste shows it."""
    return {
        "dmesg": f"[   12.238334] {line}",
        "journal": f"Dec 07 10:14:03 node7 kernel: {line}",
        "pasted": f"After the kernel update dmesg | grep i915 says:\n\n{line}\n\nAny idea?",
        "inline": f"After the kernel update dmesg says `{line}` and nothing else.",
    }


def causes(text: str, where: Path) -> tuple[set[str], bool]:
    """The causes doctor --from finds in ``text`` at warn or above (info kept apart), and whether it read it."""
    _, found = read(text, where)
    return ({f["cause"] for f in found}, True) if found is not None else (set(), False)


def verdict(expected: str | None, found: set[str], read: bool, severe: set[str]) -> str:
    if not read:
        return "refused"
    if expected is None:
        return "false" if found & severe else "clean"
    return "class" if expected in found else ("generic" if found else "missed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="generic,missed,refused,false", help="the verdicts to list")
    args = parser.parse_args(argv)
    show = set(args.show.split(","))
    data = json.loads(DATA.read_text(encoding="utf-8"))
    from gpuvet.knowledge import faults  # the causes at warn or above: a healthy line must give none

    severe = {name for name, k in faults().items() if k.severity in ("warn", "critical")}
    tally: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for part, fill in data["parts"].items():
            for msg in data["messages"]:
                line = DRIVER_LINE.format(bus=fill["bus"], body=msg["body"].format(**fill))
                for frame, text in framings(line).items():
                    found, read = causes(text, where)
                    tally[v := verdict(msg[part], found, read, severe)] += 1
                    if v in show:
                        print(f"{v:8} {part:10} {frame:8} {msg['body'][:60]!r} -> {sorted(found)} (want {msg[part]})")
    print(tally_said("framed lines", tally, ("class", "generic", "missed", "refused", "clean", "false")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
