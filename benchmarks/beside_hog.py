"""Run the test gate (or any command) several times in a row beside busy loops, as on a shared
2-core CI runner, and say whether it stayed green and within its budget each time.

    python benchmarks/beside_hog.py                       # the README's test command, 3 times
    python benchmarks/beside_hog.py --times 1 -- .ci/run  # CI's own script once

The budget is judged on the test command's own time (pytest's summary, "N passed in X s"), so
for ``.ci/run`` the install is not counted; the whole command's wall is printed beside it (and
judged instead, with a note, when no summary line is found). Any pytest the command runs gets
``--durations=5 --color=no`` through ``PYTEST_ADDOPTS``: the slowest tests are listed and any test
over the per-test budget is named.

The hogs are plain ``while True: pass`` processes at normal priority, one per core by default,
started here and stopped when the runs end (the test suite never starts them itself).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE_BUDGET_S = 300.0
TEST_BUDGET_S = 30.0
DURATION_LINE = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s+(call|setup|teardown)\s+(\S+)")
SUMMARY_LINE = re.compile(r"^=*\s*\d+ (?:passed|failed).* in (\d+(?:\.\d+)?)s")


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    wall_s: float
    tests_s: float | None  # pytest's own "in N s"; None when no pytest summary was printed
    slowest: tuple[tuple[float, str], ...]


def start_hogs(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def stop(hogs: list[subprocess.Popen[bytes]]) -> None:
    for hog in hogs:
        hog.kill()
        hog.wait()


def run_once(command: list[str]) -> Outcome:
    env = {**os.environ, "PYTEST_ADDOPTS": f"{os.environ.get('PYTEST_ADDOPTS', '')} --durations=5 --color=no".strip()}
    started = time.monotonic()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.monotonic() - started
    slowest, tests_s = [], None
    for line in proc.stdout.splitlines():
        match = DURATION_LINE.match(line)
        if match:
            slowest.append((float(match.group(1)), f"{match.group(2)} {match.group(3)}"))
        summary = SUMMARY_LINE.match(line)
        if summary:
            tests_s = float(summary.group(1))
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-2000:])
    return Outcome(proc.returncode, wall, tests_s, tuple(sorted(slowest, reverse=True)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--times", type=int, default=3, help="runs in a row (default 3)")
    parser.add_argument("--hogs", type=int, default=os.cpu_count() or 2, help="busy loops beside it (default: one per core)")
    parser.add_argument("command", nargs="*", help="the command (default: the README's pytest command)")
    args = parser.parse_args()
    command = args.command or [str(ROOT / ".venv/bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    hogs = start_hogs(args.hogs)
    print(f"{args.hogs} busy loops beside: {' '.join(command)}", flush=True)
    green = True
    try:
        for i in range(1, args.times + 1):
            out = run_once(command)
            over = [f"{s:.1f} s {name}" for s, name in out.slowest if s > TEST_BUDGET_S]
            suite_s = out.tests_s if out.tests_s is not None else out.wall_s
            if out.tests_s is None:
                print(f"run {i}: no pytest summary line in the output: the budget is judged on the whole wall")
            ok = out.exit_code == 0 and suite_s <= SUITE_BUDGET_S and not over
            green &= ok
            top = f"; slowest {out.slowest[0][0]:.1f} s {out.slowest[0][1]}" if out.slowest else ""
            tests = f"tests {out.tests_s:.0f} s of " if out.tests_s is not None else ""
            print(f"run {i}: exit {out.exit_code}, {tests}{out.wall_s:.0f} s wall (test budget {SUITE_BUDGET_S:.0f} s)"
                  f"{top} -> {'ok' if ok else 'NOT OK'}", flush=True)
            for line in over:
                print(f"  over {TEST_BUDGET_S:.0f} s: {line}")
    finally:
        stop(hogs)
    return 0 if green else 1


if __name__ == "__main__":
    sys.exit(main())
