"""Issue 46 (OPS3): the operational logs and status screens of the software that runs GPU nodes, read as a class:
dcgm-exporter's start-up log and a query of its /metrics, gpud's component states, log lines and fabric-state box,
``kubectl get pods`` of the GPU operator and kubelet's Back-off event, the NVIDIA device plugin's klog and config
echo, Ray's and vLLM's words about GPU resources, Slurm's sinfo table, scontrol's Gres=, slurmd's gres.conf
errors, and a tool's own assertion. The lines are written in the tools' formats (benchmarks/data/ops_logs_bench.json
names each source) and set as a log shows them: bare, fenced under a poster's sentence, and (a daemon's lines)
behind journald's prefix. ``gpuvet doctor --from`` (in-process) reads each; a log is counted read as its class
(the expected cause found), generic (another finding only), missed, clear (a healthy log with no finding at
warn or above) or false (a finding on a healthy log); a refusal (nothing read, exit 2) is counted apart.

    .venv/bin/python -m benchmarks.ops_logs_bench [--show generic,missed,false,refused]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import LOUD, tally_said
from benchmarks.support.phrasebook import doctor as run_doctor

DATA = Path(__file__).parent / "data" / "ops_logs_bench.json"


def framings(family: str, prog: str, text: str) -> dict[str, str]:
    """The log as each kind of paste shows it."""
    shown = {"bare": text, "fenced": f"On our GPU nodes this is what we get:\n```\n{text}\n```\nAny idea?"}
    if family == "log" and prog:
        shown["journal"] = "\n".join(f"Feb 20 18:59:13 node2 {prog}[57977]: {line}" for line in text.splitlines())
    return shown


def doctor(text: str, where: Path) -> tuple[int, set[str]]:
    """doctor --from's exit and the causes it finds at warn or above in ``text``."""
    rc, found = run_doctor(text, where)
    return rc, {f["cause"] for f in found if f.get("severity") in LOUD}


def verdict(expected: str | None, rc: int, found: set[str]) -> str:
    if rc == 2:
        return "refused"
    if expected is None:
        return "clear" if not found else "false"
    return "class" if expected in found else ("generic" if found else "missed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="generic,missed,false,refused", help="the verdicts to list")
    args = parser.parse_args(argv)
    show = set(args.show.split(","))
    logs = json.loads(DATA.read_text(encoding="utf-8"))["logs"]
    tally: Counter[str] = Counter()
    healthy_refused = 0
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for log in logs:
            for frame, text in framings(log["family"], log["prog"], log["text"]).items():
                rc, found = doctor(text, where)
                tally[v := verdict(log["expected"], rc, found)] += 1
                healthy_refused += v == "refused" and log["expected"] is None
                if v in show:
                    head = log["text"].splitlines()[0][:70]
                    print(f"{v:8} {frame:8} {log['source']:14} {head!r} -> {sorted(found)} (want {log['expected']})")
    print(
        tally_said("framed logs", tally, ("class", "generic", "missed", "clear", "false", "refused"))
        + f"; healthy logs refused {healthy_refused}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
