"""Issue 46 (R3C): NIC counters (sysfs hw_counters, ifconfig, ip -s link), a PCIe link from sysfs and NCCL's network
transport, read as a class. benchmarks/data/nic_link_bench.json holds written captures in the tools' own formats (each
class's source named there), faulty ones with the finding an engineer expects (cause, severity, subject) and healthy
ones that must stay quiet.

Each capture is set in the framings pastes show (bare; in a markdown fence under the command's prompt; quoted with
'> '; after a poster's sentence) and read by ``gpuvet doctor --from`` in-process. A faulty framing is right (the cause
at its severity on its subject; '*' any subject), generic (another finding only), clear (read, no finding) or refused
(exit 2); a healthy one clean, false (a finding at warn or above) or refused.

    .venv/bin/python -m benchmarks.nic_link_bench [--show generic,clear,refused,false]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from collections import Counter
from pathlib import Path

from gpuvet.cli.app import main as gpuvet

DATA = Path(__file__).parent / "data" / "nic_link_bench.json"
FRAMINGS = {
    "bare": lambda lines: lines,
    "fenced": lambda lines: ["Here is what the node shows:", "```", "$ sudo collect.sh", *lines, "```"],
    "quoted": lambda lines: [f"> {ln}" for ln in lines],
    "sentence": lambda lines: ["We see this on every run of the job, any idea?", "", *lines],
}


def _doctor(text: str, where: Path) -> tuple[int, list[tuple[str, str, str]]]:
    where.write_text(text + "\n", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = gpuvet(["doctor", "--from", str(where), "--json"])
    found = json.loads(out.getvalue())["findings"] if out.getvalue().strip() else []
    return code, [(f["cause"], f["severity"], f.get("module") or "") for f in found]


def _score(case: dict[str, object], code: int, found: list[tuple[str, str, str]]) -> str:
    loud = [f for f in found if f[1] in ("warn", "critical")]
    if code == 2:
        return "refused"
    if not case["fault"]:
        return "false" if loud else "clean"
    cause, severity, subject = case["want"]  # type: ignore[misc]
    if any(c == cause and s == severity and (subject == "*" or m.startswith(subject)) for c, s, m in found):
        return "right"
    return "generic" if loud else "clear"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", default="", help="comma-separated outcomes to print the framings of")
    args = ap.parse_args()
    show = set(filter(None, args.show.split(",")))
    cases = json.loads(DATA.read_text(encoding="utf-8"))["cases"]
    tally: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(cases):
            for name, frame in FRAMINGS.items():
                code, found = _doctor("\n".join(frame(case["lines"])), Path(tmp) / f"c{i}_{name}.txt")
                outcome = _score(case, code, found)
                tally.setdefault(f"{case['class']} {'fault' if case['fault'] else 'healthy'}", Counter())[outcome] += 1
                if outcome in show:
                    print(f"  {outcome}: case {i} ({case['class']}) {name}: {found}")
    for key, counts in sorted(tally.items()):
        print(f"{key:24} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    faults = sum((c for k, c in tally.items() if k.endswith("fault")), Counter())
    healthy = sum((c for k, c in tally.items() if k.endswith("healthy")), Counter())
    print(
        f"fault framings: right {faults['right']} of {sum(faults.values())} (generic {faults['generic']}, clear "
        f"{faults['clear']}, refused {faults['refused']}); healthy {sum(healthy.values())}: clean {healthy['clean']}, "
        f"false {healthy['false']}, refused {healthy['refused']}"
    )


if __name__ == "__main__":
    main()
