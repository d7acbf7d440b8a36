"""Peer analysis at fleet scale: synthetic validate envelopes for 1,000 nodes × 8 modules × 100
metrics (800,000 figures; a few planted outliers), analysed as `gpuvet fleet merge` does.
Target: <= 5 s. Reference in the same run: numpy's median over the same values (the floor).

    python benchmarks/fleet_peers.py [--nodes 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gpuvet.fleet.peers import analyse


def envelopes(nodes: int, modules: int, metrics: int, rng: np.random.Generator) -> list[tuple[str, dict]]:
    values = rng.normal(100.0, 1.0, (nodes, modules, metrics))
    values[7, 3, 5] *= 0.90  # planted: node 7, module 3, metric 5 is 10 % slow
    values[500, :, 42] *= 0.92  # planted: node 500 slow on metric 42 everywhere
    out = []
    for n in range(nodes):
        checks = [{"layer": "compute", "name": f"metric_{k:03d}", "verdict": "pass", "value": float(values[n, m, k]),
                   "unit": "x", "module": f"gpu{m}"} for m in range(modules) for k in range(metrics)]
        out.append((f"node{n}", {"schema_version": 1, "simulated": True,
                                 "environment": {"node": f"node{n:04d}", "node_type": "H200-SXM"}, "checks": checks}))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    envs = envelopes(args.nodes, 8, 100, rng)
    started = time.perf_counter()
    result = analyse(envs)
    took = time.perf_counter() - started
    flat = np.array([c["value"] for _, e in envs for c in e["checks"]]).reshape(-1, 100)
    ref_started = time.perf_counter()
    np.median(flat, axis=0)
    reference = time.perf_counter() - ref_started
    names = sorted({(o.node, o.module or "", o.metric) for o in result.outliers})
    print(f"{'measure':<48}{'value':>12}  target / reference")
    print(f"{'figures analysed':<48}{result.values:>12,}  {args.nodes} nodes x 8 modules x 100 metrics")
    print(f"{'peer analysis, seconds':<48}{took:>12.2f}  <= 5 s; numpy median alone {reference:.3f} s")
    print(f"{'outliers named':<48}{len(names):>12}  planted: node0007/gpu3/metric_005, node0500/*/metric_042")
    for n in names[:12]:
        print("   ", *n)


if __name__ == "__main__":
    main()
