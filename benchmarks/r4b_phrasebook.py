"""Issue 46 (R4B): NVIDIA's and Intel's kernel messages and the reports people write about a node, read by doctor.

benchmarks/data/r4b_phrasebook.json holds each class's messages in the tools' own words (the sources named there:
NVIDIA's open kernel modules and Xid catalog, Linux's i915/xe, nvidia-smi, pciutils), each in a framing real
captures show (a dmesg or journal stamp, a fence, a poster's sentence in English or another language, a markdown
list under its lead line), with the cause and severity a right reading names. Each is written to a file and
`gpuvet doctor --from FILE --json` reads it: right (that cause at that severity), generic (a finding of another
cause: driver_error_unnamed, unread_failure_line, another severity), clear (read, no finding) or refused (exit 2).
Healthy lines of the same sources count false findings (warn or above). Usage:
PYTHONPATH=TREE/src .venv/bin/python benchmarks/r4b_phrasebook.py [--show]"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from collections import Counter
from pathlib import Path

from gpuvet.cli.app import main

DATA = Path(__file__).parent / "data" / "r4b_phrasebook.json"


def _doctor(text: str) -> tuple[int, list[tuple[str, str]]]:
    """doctor's exit code and its (cause, severity) findings on ``text`` written to a file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "capture.txt"
        path.write_text(text + "\n")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["doctor", "--from", str(path), "--json"])
    if rc == 2:
        return rc, []
    return rc, [(f["cause"], f["severity"]) for f in json.loads(out.getvalue())["findings"]]


def _verdict(want: str, rc: int, found: list[tuple[str, str]]) -> str:
    if rc == 2:
        return "refused"
    if not found:
        return "clear"
    cause, severity = want.split("/")
    return "right" if (cause, severity) in found else "generic"


def run(show: bool) -> None:
    data = json.loads(DATA.read_text())
    by_class: dict[str, Counter[str]] = {}
    for p in data["phrases"]:
        rc, found = _doctor(p["text"])
        verdict = _verdict(p["want"], rc, found)
        by_class.setdefault(p["class"], Counter())[verdict] += 1
        if show and verdict != "right":
            print(f"  {verdict:8} {p['class']}: want {p['want']}, got {found or rc}")
    total: Counter[str] = Counter()
    for name, counts in by_class.items():
        total += counts
        print(f"{name:24} " + ", ".join(f"{k} {counts[k]}" for k in ("right", "generic", "clear", "refused")))
    print(f"{'all':24} " + ", ".join(f"{k} {total[k]}" for k in ("right", "generic", "clear", "refused")))
    false = 0
    for h in data["healthy"]:
        rc, found = _doctor(h["text"])
        bad = [f for f in found if f[1] in ("warn", "critical")]
        false += bool(bad)
        if show and bad:
            print(f"  false finding ({h['source']}): {bad}")
    print(f"healthy: {len(data['healthy'])} texts, {false} with a false finding at warn or above")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print each phrase not read right, each false finding")
    run(parser.parse_args().show)
