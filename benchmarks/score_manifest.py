"""Score gpuvet on a blind batch of real captures: each file's expected diagnosis (doctor's causes and
modules, and where the MANIFEST says so what inventory and topo read) is held in the batch's test tables,
written from its MANIFEST.md; a file is a hit when every one of them matches what gpuvet gives now.

    .venv/bin/python -m benchmarks.score_manifest            # batch C (tests/data/captures/fresh_c)
    .venv/bin/python -m benchmarks.score_manifest --verbose  # and what is wrong on each miss
    .venv/bin/python -m benchmarks.score_manifest --batch d  # batch D (tests/data/captures/fresh_d)
    .venv/bin/python -m benchmarks.score_manifest --batch e  # batch E (tests/data/captures/fresh_e)
    .venv/bin/python -m benchmarks.score_manifest --batch f  # batch F (tests/data/captures/fresh_f)
    .venv/bin/python -m benchmarks.score_manifest --batch g  # batch G (tests/data/captures/fresh_g)
    .venv/bin/python -m benchmarks.score_manifest --batch h  # batch H, once tests/captures/test_captures_fresh_h.py
    .venv/bin/python -m benchmarks.score_manifest --batch i  # batch I (tests/data/captures/fresh_i)
    .venv/bin/python -m benchmarks.score_manifest --batch j  # batch J, once tests/captures/test_captures_fresh_j.py
    .venv/bin/python -m benchmarks.score_manifest --batch k  # batch K (tests/data/captures/fresh_k)
    .venv/bin/python -m benchmarks.score_manifest --batch l  # batch L (tests/data/captures/fresh_l)
    .venv/bin/python -m benchmarks.score_manifest --batch m  # batch M (tests/data/captures/fresh_m)
    .venv/bin/python -m benchmarks.score_manifest --batch n  # batch N (tests/data/captures/fresh_n)
    .venv/bin/python -m benchmarks.score_manifest --batch o  # batch O (tests/data/captures/fresh_o)
    .venv/bin/python -m benchmarks.score_manifest --batch p  # batch P (tests/data/captures/fresh_p)
    .venv/bin/python -m benchmarks.score_manifest --batch q  # batch Q (tests/data/captures/fresh_q)
    .venv/bin/python -m benchmarks.score_manifest --batch r  # batch R, once tests/captures/test_captures_fresh_r.py
    .venv/bin/python -m benchmarks.score_manifest --batch s  # batch S, once tests/captures/test_captures_fresh_s.py
    .venv/bin/python -m benchmarks.score_manifest --batch t  # batch T (tests/data/captures/fresh_t)
    .venv/bin/python -m benchmarks.score_manifest --batch u  # batch U (tests/data/captures/fresh_u)
    .venv/bin/python -m benchmarks.score_manifest --batch v  # batch V (tests/data/captures/fresh_v)
    .venv/bin/python -m benchmarks.score_manifest --batch w  # batch W (tests/data/captures/fresh_w)
    .venv/bin/python -m benchmarks.score_manifest --batch x  # batch X (tests/data/captures/fresh_x)
    .venv/bin/python -m benchmarks.score_manifest --batch y  # batch Y (tests/data/captures/fresh_y)
    .venv/bin/python -m benchmarks.score_manifest --batch z  # batch Z (tests/data/captures/fresh_z)

Prints hits / files and lists the misses (where the batch keeps KNOWN_MISSES, each miss says whether it is one
of them, and a known miss now right is named); exits 0 (a score, not a gate: the tests pin the hits), 2 when
the batch has no tables yet."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import time
from types import ModuleType

BATCHES = (
    "c",
    "d",
    "e",
    "f",
    "g",
    "h",
    "i",
    "j",
    "k",
    "l",
    "m",
    "n",
    "o",
    "p",
    "q",
    "r",
    "s",
    "t",
    "u",
    "v",
    "w",
    "x",
    "y",
    "z",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="say what is wrong on each file that misses")
    parser.add_argument("--batch", choices=BATCHES, default="c", help="which blind batch (default: c)")
    args = parser.parse_args(argv)
    batch = _batch_tables(args.batch)
    if batch is None:
        print(
            f"error: batch {args.batch.upper()} has no tables yet: tests/captures/test_captures_fresh_{args.batch}.py "
            "does not exist (write it from the batch's MANIFEST.md, as test_captures_fresh_f.py is)",
            file=sys.stderr,
        )
        return 2

    start = time.perf_counter()
    misses: dict[str, list[str]] = {}
    for name in sorted(batch.CAUSES):
        wrong = batch.BATCH.wrong(name) if hasattr(batch, "BATCH") else batch.right(name)
        if wrong:
            misses[name] = wrong
    files = len(batch.CAUSES)
    hits = files - len(misses)
    took = time.perf_counter() - start
    print(f"batch {args.batch.upper()}: {hits}/{files} hits ({100 * hits / files:.0f} %), read in {took:.1f} s")
    known: dict[str, str] = getattr(batch, "KNOWN_MISSES", {})
    for name, wrong in misses.items():
        tag = " (known)" if name in known else " (new: not in KNOWN_MISSES)" if hasattr(batch, "KNOWN_MISSES") else ""
        print(f"  miss {name}{tag}" + ("".join(f"\n       {w}" for w in wrong) if args.verbose else ""))
    for name in sorted(set(known) - set(misses)):
        print(f"  right now, still in KNOWN_MISSES: {name}")
    return 0


def _batch_tables(batch: str) -> ModuleType | None:
    """The batch's test module in tests/captures/ (None: not written yet)."""
    module = f"tests.captures.test_captures_fresh_{batch}"
    return importlib.import_module(module) if importlib.util.find_spec(module) is not None else None


if __name__ == "__main__":
    sys.exit(main())
