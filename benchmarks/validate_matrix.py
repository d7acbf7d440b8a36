"""Root cause first on every preset (issue 42): a seeded mix of one to three planted faults per
preset (presets from the catalog), validated simulated without --expect (the default level;
quick above 16 modules, where the faults quick cannot see are not planted),
judged on three properties per case: the roots are the planted faults (no fewer, no more), every
failed or warned check is attached to one root, and the first 24 lines at 80 columns hold the
verdict and every root. Prints a table and the totals. --single: the older table, one fault per
case at the default level, and whether a FAIL or WARN names its module or link.

    python benchmarks/validate_matrix.py [--presets mesh-4,hgx-h200-8] [--seed 42] [--single]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from gpuvet.checks.model import Verdict
from gpuvet.node.spec import preset_names

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the harness is tests/harness
from tests.harness import fault_matrix  # noqa: E402
from tests.harness.root_matrix import cases, run_case  # noqa: E402


def roots_table(presets: tuple[str, ...], seed: int) -> None:
    print(f"{'case':<62}{'roots':>6}{'attach':>7}{'24x80':>6}{'s':>6}  (simulated)")
    total = {"cases": 0, "roots": 0, "attached": 0, "screen": 0, "all": 0}
    for case in cases(presets, seed=seed):
        began = time.perf_counter()
        got = run_case(case)
        took = time.perf_counter() - began
        marks = [got.roots_match, got.all_attached, got.fits_screen]
        print(f"{case.name[:61]:<62}" + "".join(f"{'ok' if m else 'NO':>{w}}" for m, w in zip(marks, (6, 7, 6), strict=True))
              + f"{took:>6.1f}" + (f"  {got.detail[:150]}" if got.detail else ""))
        for k, m in zip(("roots", "attached", "screen", "all"), [*marks, got.ok], strict=True):
            total[k] += m
        total["cases"] += 1
    n = total["cases"]
    print(f"cases {n}: roots == planted {total['roots']}/{n}, every fail attached {total['attached']}/{n}, "
          f"verdict and roots in 24x80 {total['screen']}/{n}; all three {total['all']}/{n} (seed {seed})")


def single_table(presets: tuple[str, ...]) -> None:
    print(f"{'case':<44}{'caught':>7}{'s':>6}  named by")
    total = ok = 0
    for case in fault_matrix.cases(presets):
        began = time.perf_counter()
        hit, checks = fault_matrix.run_case(case)
        took = time.perf_counter() - began
        named = sorted({c.name for c in checks if c.verdict in (Verdict.FAIL, Verdict.WARN)
                        and (case.place & ({c.module} | set(c.between or ())) or not case.place)})
        total += 1
        ok += hit
        print(f"{case.name:<44}{'yes' if hit else 'NO':>7}{took:>6.1f}  {', '.join(named[:4])}")
    print(f"caught {ok} of {total} ({100 * ok / total:.0f} %); target 100 %")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--presets", default=None, help="comma-separated presets (default: every preset)")
    parser.add_argument("--seed", type=int, default=42, help="the mixes' seed")
    parser.add_argument("--single", action="store_true", help="one fault per case: caught or not")
    args = parser.parse_args()
    every = tuple(fault_matrix.PRESETS) if args.single else tuple(preset_names())
    presets = tuple(p for p in args.presets.split(",") if p) if args.presets else every
    if args.single:
        single_table(presets)
    else:
        roots_table(presets, args.seed)


if __name__ == "__main__":
    main()
