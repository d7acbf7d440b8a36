"""Watch performance: logbook ingest rate (target >= 200k samples/s), the sampler's cost per
module (simulated node and NVML through the test fake), and a one-week downsampled query
(target < 1 s), with a plain-sqlite executemany of the same rows as the reference.

    python benchmarks/watch_storage.py [--modules 72] [--days 7]

A week of 1 Hz for 72 modules is 43.5 M rows; the default writes a week for --modules modules
at 1 Hz and times the query on one module.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from gpuvet.backends.sim.backend import SimBackend
from gpuvet.logbook.store import Logbook

BATCH = 50_000


def rows_for(mkeys: list[int], t0: int, t1: int, rng: np.random.Generator) -> list[tuple]:
    t = np.arange(t0, t1, dtype=float)
    out = []
    for m in mkeys:
        temp = 70 + rng.normal(0, 1, len(t))
        power = 600 + rng.normal(0, 20, len(t))
        out += list(zip([m] * len(t), t.tolist(), temp.tolist(), power.tolist(), [1980.0] * len(t), [3201.0] * len(t),
                        [0.97] * len(t), [0] * len(t), strict=True))
    return out


def ingest(book: Logbook, key: int, mkeys: list[int], seconds: int) -> tuple[int, float]:
    rng = np.random.default_rng(0)
    total, spent = 0, 0.0
    step = max(BATCH // len(mkeys), 1)
    for t0 in range(0, seconds, step):
        rows = rows_for(mkeys, t0, min(t0 + step, seconds), rng)
        started = time.perf_counter()
        book.add_samples(key, rows)
        spent += time.perf_counter() - started
        total += len(rows)
    return total, spent


def bare_sqlite(rows: list[tuple], path: Path) -> float:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE s (run_key INT, mkey INT, t REAL, temp REAL, power REAL, sm REAL, mem REAL, util REAL, "
               "throttle INT, PRIMARY KEY (run_key, mkey, t)) WITHOUT ROWID")
    started = time.perf_counter()
    for i in range(0, len(rows), BATCH):
        db.execute("BEGIN")
        db.executemany("INSERT INTO s VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)", rows[i:i + BATCH])
        db.execute("COMMIT")
    return time.perf_counter() - started


def sampler_cost() -> dict[str, float]:
    out = {}
    sim = SimBackend.from_ref("hgx-h200-8").telemetry()
    started = time.perf_counter()
    n = 0
    for k in range(500):
        n += len(sim.sample(float(k), slow=k % 30 == 0))
    out["simulated hgx-h200-8"] = (time.perf_counter() - started) / n
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        from tests.fakes.fake_nvml import hgx_h200

        from gpuvet.backends.nvidia.backend import NvidiaBackend
        from gpuvet.backends.nvidia.gateway import Nvml

        nv = NvidiaBackend(Nvml(lib=hgx_h200())).telemetry()
        started = time.perf_counter()
        n = 0
        for k in range(500):
            n += len(nv.sample(float(k), slow=k % 30 == 0))
        out["NVML path (fake binding: gpuvet's own overhead)"] = (time.perf_counter() - started) / n
    except ImportError:
        pass
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", type=int, default=8)
    parser.add_argument("--days", type=float, default=7)
    args = parser.parse_args()
    seconds = int(args.days * 86400)
    with tempfile.TemporaryDirectory() as folder:
        book = Logbook(Path(folder) / "lb.db")
        run_id = book.begin("watch", {}, simulated=True, node="bench")
        key = book.run_key(run_id)
        mkeys = [book.module_key(f"GPU-bench-{i}", f"gpu{i}", None, "H200-SXM") for i in range(args.modules)]
        total, spent = ingest(book, key, mkeys, seconds)
        rate = total / spent
        sample_rows = rows_for(mkeys[:1], 0, min(seconds, 400_000), np.random.default_rng(1))
        bare = len(sample_rows) / bare_sqlite(sample_rows, Path(folder) / "bare.db")
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            series = book.series(key, mkeys[0], 0, seconds, 3600)
            timings.append(time.perf_counter() - started)
        raw_started = time.perf_counter()
        raw = book.series(key, mkeys[0], 0, seconds, 3600, raw=True)
        raw_time = time.perf_counter() - raw_started
        size = sum(p.stat().st_size for p in Path(folder).glob("lb.db*"))
    print(f"{'measure':<52}{'value':>14}  target / reference")
    print(f"{'ingest, samples/s (with 1-min roll-ups)':<52}{rate:>14,.0f}  >= 200,000; bare sqlite executemany "
          f"{bare:,.0f} (ratio {rate / bare:.2f})")
    print(f"{'rows written':<52}{total:>14,}  {args.modules} modules x {args.days:g} days at 1 Hz")
    print(f"{'logbook size, bytes per sample':<52}{size / total:>14.1f}")
    print(f"{'one-week query, hourly buckets, one module (median)':<52}{np.median(timings):>14.4f}  < 1 s "
          f"({len(series)} points)")
    print(f"{'same from raw samples (no roll-ups)':<52}{raw_time:>14.4f}  ({len(raw)} points)")
    for name, cost in sampler_cost().items():
        print(f"{'sampler cost per module, ' + name:<52}{cost * 1e6:>12.1f}us")


if __name__ == "__main__":
    main()
