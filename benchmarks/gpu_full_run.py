"""The whole benchmark set on an NVIDIA GPU machine, in under 8 minutes: inventory, GEMM per
dtype, device memory, every copy channel, collectives (with two or more GPUs) and training
throughput. Prints a summary table and writes the full JSON (every record, its statistics and
telemetry) for the record.

    python benchmarks/gpu_full_run.py --out docs/results/h200-$(date +%F).json
    python benchmarks/gpu_full_run.py --sim hgx-h200-8 --out /tmp/rehearsal.json   # no GPU: a rehearsal

Read-only on the device: no clock, power, ECC or reset changes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from gpuvet.backends.select import open_backend
from gpuvet.bench.collective import CollectiveOptions
from gpuvet.bench.copy import CopyOptions
from gpuvet.bench.gemm import GemmOptions
from gpuvet.bench.membw import MembwOptions
from gpuvet.bench.model import ModelOptions
from gpuvet.bench.records import BenchReport
from gpuvet.bench.runner import run_benchmark
from gpuvet.bench.timing import TimingPlan
from gpuvet.cli.render_bench import result_json
from gpuvet.report.jsonable import to_jsonable

PLAN = TimingPlan(warmup=3, min_samples=5, max_samples=20, min_sample_s=0.02, budget_s=1.0)
DEADLINE_S = 7.5 * 60


def steps(modules: int) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = [
        ("gemm", GemmOptions()),
        ("membw", MembwOptions()),
        ("copy", CopyOptions()),
    ]
    if modules >= 2:
        out.append(("collective", CollectiveOptions(max_bytes=2**30 if modules <= 8 else 2**28)))
    out.append(("model", ModelOptions()))
    return out


def summarise(report: BenchReport) -> list[str]:
    """One line per metric: median over modules/pairs/sizes of the figure, and its range."""
    lines = []
    by_metric: dict[tuple[str, str | None], list] = {}
    for r in report.results:
        by_metric.setdefault((r.metric, r.dtype), []).append(r)
    for (metric, dtype), rows in by_metric.items():
        ok = [r for r in rows if r.status == "ok" and r.value is not None]
        bad = [r for r in rows if r.status != "ok" or r.correct is False]
        label = f"{report.benchmark}.{metric}" + (f"[{dtype}]" if dtype else "")
        if not ok:
            reason = rows[0].reason or rows[0].status
            lines.append(f"  {label:<34} {'-':>12}  {rows[0].status}: {reason}")
            continue
        values = [r.value for r in ok]
        pct = [r.pct_of_peak for r in ok if r.pct_of_peak is not None]
        peak = f"{statistics.median(pct):6.1f} % of peak" if pct else ""
        lines.append(f"  {label:<34} {statistics.median(values):>12.4g} {ok[0].unit:<9} "
                     f"[{min(values):.4g} … {max(values):.4g}] n={len(ok):<3} {peak}"
                     + (f"  {len(bad)} not ok" if bad else ""))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("gpuvet-gpu-run.json"), help="where to write the JSON")
    parser.add_argument("--sim", help="rehearse on a simulated node (figures labelled simulated)")
    args = parser.parse_args()
    started = time.monotonic()
    backend = open_backend(sim=args.sim)
    inventory = backend.inventory()
    if backend.name not in ("nvidia", "sim"):
        print(f"no NVIDIA module found ({backend.name} backend): this script is for GPU machines", file=sys.stderr)
        return 2
    label = " (SIMULATED)" if inventory.simulated else ""
    print(f"{len(inventory.modules)} × {inventory.modules[0].model}, driver {inventory.software.driver_version}{label}")
    record: dict[str, object] = {"inventory": to_jsonable(inventory), "reports": [], "skipped_for_time": []}
    for name, options in steps(len(inventory.modules)):
        elapsed = time.monotonic() - started
        if elapsed > DEADLINE_S:
            record["skipped_for_time"].append(name)  # type: ignore[attr-defined]
            print(f"{name}: skipped, {elapsed:.0f} s already spent")
            continue
        t0 = time.monotonic()
        report = run_benchmark(name, backend, options, plan=PLAN)
        print(f"{name} ({time.monotonic() - t0:.0f} s)")
        print("\n".join(summarise(report)))
        record["reports"].append({  # type: ignore[attr-defined]
            "benchmark": name, "simulated": report.simulated, "ok": report.ok,
            "environment": to_jsonable(report.environment), "seconds": time.monotonic() - t0,
            "results": [result_json(r) for r in report.results],
        })
    backend.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1), encoding="utf-8")
    print(f"wrote {args.out} in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
