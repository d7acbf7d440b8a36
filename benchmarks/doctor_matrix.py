"""Doctor's accuracy on the fault-injection matrix: every simulated fault kind (steps 1, 2
and 4), alone, on several modules of several presets, plus healthy nodes. Prints cases,
correct, wrong, missed per fault kind; targets >= 95 % correct and 0 findings on healthy nodes.

    python benchmarks/doctor_matrix.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

from gpuvet.watch.trend import thermal_trend

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the harness is tests/harness
from tests.harness.doctor_evaluate import evaluate  # noqa: E402
from tests.harness.doctor_matrix import cases  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one case per fault kind")
    args = parser.parse_args()
    started = time.perf_counter()
    outcomes = evaluate(cases(quick=args.quick), thermal_trend)
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for o in outcomes:
        kind = o.case.fault["kind"] if o.case.fault else "healthy"
        row = table[kind]
        row[0] += 1
        row[{"correct": 1, "wrong": 2, "missed": 3}[o.verdict]] += 1
        row[4] += int(o.triage_ok)
    print("doctor fault matrix (SIMULATED nodes)")
    print(f"{'fault':<20}{'cases':>6}{'correct':>9}{'wrong':>7}{'missed':>8}{'triage':>8}")
    for kind, (n, ok, wrong, missed, triage) in sorted(table.items()):
        print(f"{kind:<20}{n:>6}{ok:>9}{wrong:>7}{missed:>8}{triage:>8}")
    total = len(outcomes)
    correct = sum(o.verdict == "correct" for o in outcomes)
    healthy = [o for o in outcomes if o.case.fault is None]
    print(f"{'all':<20}{total:>6}{correct:>9}{sum(o.verdict == 'wrong' for o in outcomes):>7}"
          f"{sum(o.verdict == 'missed' for o in outcomes):>8}{sum(o.triage_ok for o in outcomes):>8}")
    print(f"correct: {100 * correct / total:.1f} % (target >= 95 %); findings on healthy nodes: "
          f"{sum(len(o.findings) for o in healthy)} (target 0); took {time.perf_counter() - started:.0f} s")
    for o in outcomes:
        if o.verdict != "correct":
            print(f"  {o.verdict}: {o.case.name} -> {[(f.cause, f.module or f.between, f.playbook) for f in o.findings]}")


if __name__ == "__main__":
    main()
