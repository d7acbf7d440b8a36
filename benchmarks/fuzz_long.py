"""The long fuzz run: tests/hostile/test_hostile_fuzz.py with many more examples than CI runs (default
2,000 per property instead of 25), and a fresh random seed unless --seed is given, so each run
explores new inputs. Exit status is pytest's; a failure prints the smallest input that breaks.

    python benchmarks/fuzz_long.py [--examples 2000] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: a fresh one)")
    args = parser.parse_args()
    if args.examples < 1:
        parser.error("--examples must be at least 1")
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "GPUVET_FUZZ_EXAMPLES": str(args.examples), "GPUVET_FUZZ_RANDOM": "1"}
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "timeout=0",
           f"--hypothesis-seed={seed}", str(root / "tests" / "test_hostile_fuzz.py")]
    print(f"fuzzing with {args.examples} examples per property, seed {seed}", flush=True)
    start = time.monotonic()
    code = subprocess.call(cmd, cwd=root, env=env)
    print(f"{time.monotonic() - start:.0f} s, exit {code}")
    return code


if __name__ == "__main__":
    sys.exit(main())
