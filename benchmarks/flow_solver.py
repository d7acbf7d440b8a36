"""Flow solver speed: all pairs of modules transferring at once on large switched nodes.

Targets (issue "Step 1"): the 72-module preset in <= 0.1 s, a 576-module switched node in
<= 5 s. Reference measured in the same run: a plain-Python progressive-filling loop on the
72-module case, to show what the sparse formulation buys (and that both agree).

    python benchmarks/flow_solver.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from gpuvet.node.build import build_node
from gpuvet.node.flow import max_min_fair, solve_transfers
from gpuvet.node.flow_reference import max_min_fair_reference
from gpuvet.node.routing import Router
from gpuvet.node.spec import load_spec, parse_spec


def _node(ref_or_count: str | int):
    if isinstance(ref_or_count, str):
        spec, where = load_spec(ref_or_count)
        return build_node(spec, where)
    spec = parse_spec({"name": f"switched-{ref_or_count}", "modules": {"count": ref_or_count, "model": "B200"},
                       "fabric": {"kind": "switched", "link": {"kind": "nvlink", "width": 18, "lane_gbps": 50}},
                       "host": {"sockets": ref_or_count // 2}}, "benchmark")
    return build_node(spec, "benchmark")


def _all_pairs(node):
    ids = node.module_ids
    return [(a, b) for a in ids for b in ids if a != b]


def _time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times), result


def main() -> None:
    rows = []
    for label, ref, target, repeats in (("nvl72 preset", "nvl72", 0.1, 7), ("576 switched", 576, 5.0, 3)):
        node = _node(ref)
        pairs = _all_pairs(node)
        med, lo, hi, rates = _time(lambda: solve_transfers(node, pairs), repeats)  # noqa: B023
        share = np.array([r.gbps for r in rates])
        rows.append((label, len(pairs), med, lo, hi, target, float(share.min()), float(share.max())))
    print(f"{'case':<14} {'flows':>7} {'median s':>9} {'min s':>7} {'max s':>7} {'target s':>8}  "
          f"{'ok':<3} {'GB/s per flow (min..max)':>24}")
    for label, flows, med, lo, hi, target, smin, smax in rows:
        print(f"{label:<14} {flows:>7} {med:>9.3f} {lo:>7.3f} {hi:>7.3f} {target:>8.1f}  "
              f"{'yes' if med <= target else 'NO':<3} {smin:>11.2f}..{smax:.2f}")
    node = _node("nvl72")
    router = Router(node)
    paths = [r or [] for r in router.routes(_all_pairs(node))]
    fast_s, _, _, fast = _time(lambda: max_min_fair(paths, router.capacity), 5)
    naive_s, _, _, slow = _time(lambda: max_min_fair_reference(paths, list(router.capacity))[0], 3)
    agree = np.allclose(fast.rates, slow)
    print(f"\nsolver only, nvl72 all pairs: sparse {fast_s * 1e3:.1f} ms vs plain-Python reference "
          f"{naive_s * 1e3:.1f} ms -> ratio {naive_s / fast_s:.1f}x; results agree: {agree}")


if __name__ == "__main__":
    main()
