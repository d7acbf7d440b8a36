"""validate against the design: every fault kind that changes what a module or link can do, on
every preset, at the default level with NO --expect and NO --baseline (a freshly racked node).
Prints per case whether a FAIL or WARN names the module or link, and the healthy presets'
verdicts. Target: every fault caught, healthy presets pass with no peer WARN.

    python benchmarks/validate_matrix.py [--presets mesh-4,hgx-h200-8]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from gpuvet.checks.model import Verdict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the harness is tests/harness
from tests.harness.fault_matrix import PRESETS, cases, run_case  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--presets", default=",".join(PRESETS), help="comma-separated presets")
    args = parser.parse_args()
    presets = tuple(p for p in args.presets.split(",") if p)
    print(f"{'case':<44}{'caught':>7}{'s':>6}  named by")
    total = ok = 0
    for case in cases(presets):
        began = time.perf_counter()
        hit, checks = run_case(case)
        took = time.perf_counter() - began
        named = sorted({c.name for c in checks if c.verdict in (Verdict.FAIL, Verdict.WARN)
                        and (case.place & ({c.module} | set(c.between or ())) or not case.place)})
        total += 1
        ok += hit
        print(f"{case.name:<44}{'yes' if hit else 'NO':>7}{took:>6.1f}  {', '.join(named[:4])}")
    print(f"caught {ok} of {total} ({100 * ok / total:.0f} %); target 100 %")


if __name__ == "__main__":
    main()
