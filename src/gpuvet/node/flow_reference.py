"""The max-min fair solver as the textbook states it, in plain Python: the oracle the vectorised
solver in ``node.flow`` is tested and benchmarked against. Slow on purpose (no arrays) and
short enough to check by eye."""

from __future__ import annotations

from collections.abc import Sequence

_REL_EPS = 1e-9


def max_min_fair_reference(paths: Sequence[Sequence[int]], capacity: Sequence[float]
                           ) -> tuple[list[float], list[int]]:
    """Progressive filling: (rate per flow, the full edge that froze it: the lowest-numbered one
    when several fill at once; inf and -1 for an empty path)."""
    rates = [0.0 if p else float("inf") for p in paths]
    limit = [-1] * len(paths)
    active = {f for f, p in enumerate(paths) if p}
    residual = [float(c) for c in capacity]
    while active:
        users: dict[int, int] = {}
        for f in active:
            for e in paths[f]:
                users[e] = users.get(e, 0) + 1
        step = min(residual[e] / n for e, n in users.items())
        for f in active:
            rates[f] += step
        for e, n in users.items():
            residual[e] -= step * n
        full = {e for e in users if residual[e] <= _REL_EPS * max(capacity[e], 1.0)}
        for f in [f for f in active if full.intersection(paths[f])]:
            limit[f] = min(full.intersection(paths[f]))
            active.discard(f)
    return rates, limit
