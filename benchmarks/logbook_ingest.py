"""Logbook ingest against the bare tool: gpuvet's `Logbook.add_samples` (raw rows and their
one-minute roll-ups) beside a bare `sqlite3.executemany` of the same rows into the same table,
measured in the same run, interleaved, best of --repeats. Target: ratio >= 0.7 (issue 22).

    python benchmarks/logbook_ingest.py [--modules 8] [--seconds 43200] [--batch 50000] [--repeats 3]
    python benchmarks/logbook_ingest.py --postgres postgresql://user@127.0.0.1:5432/db

With --postgres, the same comparison runs against that database too (the reference there is a
bare psycopg executemany into an identical table). Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gpuvet.logbook.store import Logbook

TABLE = ("(run_key INTEGER NOT NULL, mkey INTEGER NOT NULL, t REAL NOT NULL, temp REAL, power REAL, sm REAL, "
         "mem REAL, util REAL, throttle INTEGER, PRIMARY KEY (run_key, mkey, t))")


def make_rows(modules: int, seconds: int) -> list[tuple[Any, ...]]:
    """1 Hz samples of ``modules`` modules, time-major as watch buffers them."""
    rng = np.random.default_rng(0)
    t = np.repeat(np.arange(seconds, dtype=float), modules)
    mkey = np.tile(np.arange(1, modules + 1), seconds)
    temp = 70 + rng.normal(0, 1, len(t))
    power = 600 + rng.normal(0, 20, len(t))
    n = len(t)
    return list(zip(mkey.tolist(), t.tolist(), temp.tolist(), power.tolist(), [1980.0] * n, [3201.0] * n,
                    [0.97] * n, [0] * n, strict=True))


def batches(rows: list[tuple[Any, ...]], size: int) -> list[list[tuple[Any, ...]]]:
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def gpuvet_rate(target: str | Path, parts: list[list[tuple[Any, ...]]], modules: int) -> float:
    book = Logbook(target)
    try:
        key = book.run_key(book.begin("watch", {}, simulated=True, node="bench"))
        for i in range(modules):
            book.module_key(f"GPU-bench-{key}-{i}", f"gpu{i}", None, "H200-SXM")
        started = time.perf_counter()
        for part in parts:
            book.add_samples(key, part)  # type: ignore[arg-type]
        return sum(map(len, parts)) / (time.perf_counter() - started)
    finally:
        book.close()


def bare_sqlite_rate(path: Path, parts: list[list[tuple[Any, ...]]]) -> float:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(f"CREATE TABLE s {TABLE} WITHOUT ROWID")
    started = time.perf_counter()
    for part in parts:
        db.execute("BEGIN")
        db.executemany("INSERT INTO s VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)", part)
        db.execute("COMMIT")
    rate = sum(map(len, parts)) / (time.perf_counter() - started)
    db.close()
    return rate


def bare_postgres_rate(url: str, parts: list[list[tuple[Any, ...]]]) -> float:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        db.execute("DROP TABLE IF EXISTS public.gpuvet_bench_bare")
        db.execute(f"CREATE TABLE public.gpuvet_bench_bare {TABLE.replace('REAL', 'DOUBLE PRECISION')}")
        started = time.perf_counter()
        for part in parts:
            with db.transaction(), db.cursor() as cur:
                cur.executemany("INSERT INTO public.gpuvet_bench_bare VALUES (1, %s, %s, %s, %s, %s, %s, %s, %s)", part)
        rate = sum(map(len, parts)) / (time.perf_counter() - started)
        db.execute("DROP TABLE public.gpuvet_bench_bare")
    return rate


def best(repeats: int, *runs: Callable[[int], float]) -> list[float]:
    """Each measurement ``repeats`` times, interleaved (so drift hits both alike); the best of each."""
    results: list[list[float]] = [[] for _ in runs]
    for i in range(repeats):
        for slot, run in zip(results, runs, strict=True):
            slot.append(run(i))
    return [max(r) for r in results]


def report(name: str, ours: float, bare: float, reference: str) -> None:
    print(f"{name:<12}gpuvet {ours:>12,.0f} samples/s   {reference} {bare:>12,.0f} samples/s   "
          f"ratio {ours / bare:.2f} (target >= 0.70)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=43_200, help="samples per module (1 Hz)")
    parser.add_argument("--batch", type=int, default=50_000, help="rows per add_samples call / transaction")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--postgres", help="also measure against this PostgreSQL database")
    args = parser.parse_args()
    rows = make_rows(args.modules, args.seconds)
    parts = batches(rows, args.batch)
    print(f"{len(rows):,} samples ({args.modules} modules x {args.seconds:,} s at 1 Hz) in batches of {args.batch:,}")
    with tempfile.TemporaryDirectory() as folder:
        ours, bare = best(args.repeats, lambda i: gpuvet_rate(Path(folder) / f"lb{i}.db", parts, args.modules),
                          lambda i: bare_sqlite_rate(Path(folder) / f"bare{i}.db", parts))
    report("sqlite", ours, bare, "bare sqlite3.executemany")
    if args.postgres:
        url = args.postgres
        ours, bare = best(args.repeats, lambda i: gpuvet_rate(url, parts, args.modules),
                          lambda i: bare_postgres_rate(url, parts))
        report("postgresql", ours, bare, "bare psycopg executemany")


if __name__ == "__main__":
    main()
