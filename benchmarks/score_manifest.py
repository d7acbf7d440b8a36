"""Score gpuvet on a blind batch of real captures: each file's expected diagnosis (doctor's causes and
modules, and where the MANIFEST says so what inventory and topo read) is held in the batch's test tables,
written from its MANIFEST.md; a file is a hit when every one of them matches what gpuvet gives now.

    .venv/bin/python -m benchmarks.score_manifest            # batch C (tests/data/captures/fresh_c)
    .venv/bin/python -m benchmarks.score_manifest --verbose  # and what is wrong on each miss
    .venv/bin/python -m benchmarks.score_manifest --batch d  # batch D (tests/data/captures/fresh_d)
    .venv/bin/python -m benchmarks.score_manifest --batch e  # batch E (tests/data/captures/fresh_e)

Prints hits / files and lists the misses; exits 0 (a score, not a gate: the tests pin the hits)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import time
from types import ModuleType


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="say what is wrong on each file that misses")
    parser.add_argument("--batch", choices=("c", "d", "e"), default="c", help="which blind batch (default: c)")
    args = parser.parse_args(argv)
    batch = _batch_tables(args.batch)

    start = time.perf_counter()
    misses: dict[str, list[str]] = {}
    for name in sorted(batch.CAUSES):
        wrong = batch.right(name)
        if wrong:
            misses[name] = wrong
    files = len(batch.CAUSES)
    hits = files - len(misses)
    took = time.perf_counter() - start
    print(f"batch {args.batch.upper()}: {hits}/{files} hits ({100 * hits / files:.0f} %), read in {took:.1f} s")
    for name, wrong in misses.items():
        print(f"  miss {name}" + ("".join(f"\n       {w}" for w in wrong) if args.verbose else ""))
    return 0


def _batch_tables(batch: str) -> ModuleType:
    """The batch's test module: in tests/captures/ where it has moved there, else at the top of tests/."""
    moved = f"tests.captures.test_captures_fresh_{batch}"
    if importlib.util.find_spec("tests.captures") is not None and importlib.util.find_spec(moved) is not None:
        return importlib.import_module(moved)
    return importlib.import_module(f"tests.captures.test_captures_fresh_{batch}")


if __name__ == "__main__":
    sys.exit(main())
