"""Max-min fair sharing of links among concurrent transfers (progressive filling).

Every transfer rises at the same rate until a link it crosses is full; transfers crossing a
full link freeze; the rest keep rising. The result is the unique max-min fair allocation for
single-path routes (Bertsekas & Gallager, *Data Networks*, §6.5.2). This is the engine the
simulated benchmarks and the planner share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix

from gpuvet.node.model import Node
from gpuvet.node.routing import Router

_REL_EPS = 1e-9


@dataclass(frozen=True)
class FairShare:
    rates: np.ndarray  # per flow; inf for an empty path
    limiting_edge: np.ndarray  # per flow: the full edge that stopped it (-1 for an empty path)


def max_min_fair(paths: Sequence[Sequence[int]], capacity: np.ndarray) -> FairShare:
    """Max-min fair rates of flows whose ``paths`` are edge indices into ``capacity``."""
    n_flows = len(paths)
    rates = np.zeros(n_flows)
    limit = np.full(n_flows, -1, dtype=np.int64)
    if n_flows == 0:
        return FairShare(rates, limit)
    lengths = np.fromiter((len(p) for p in paths), dtype=np.int64, count=n_flows)
    cols = np.fromiter((e for p in paths for e in p), dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(n_flows), lengths)
    incidence = csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(n_flows, len(capacity)))
    by_edge = incidence.T.tocsr()
    active = lengths > 0
    rates[~active] = np.inf
    residual = np.asarray(capacity, dtype=float).copy()
    while active.any():
        users = by_edge @ active.astype(float)
        used = users > 0
        step = float(np.min(residual[used] / users[used]))
        rates[active] += step
        residual[used] -= step * users[used]
        full = used & (residual <= _REL_EPS * np.maximum(capacity, 1.0))
        frozen = active & ((incidence @ full.astype(float)) > 0)
        idx = np.flatnonzero(frozen)
        on_full = incidence[idx].multiply(full.astype(float)).tocsr()
        on_full.eliminate_zeros()
        limit[idx] = on_full.indices[on_full.indptr[:-1]]
        active &= ~frozen
    return FairShare(rates, limit)


@dataclass(frozen=True)
class TransferRate:
    src: str
    dst: str
    gbps: float  # 0.0 when there is no route
    route: tuple[str, ...]
    bottleneck: tuple[str, str] | None  # the full directed hop that limits this transfer


def solve_transfers(node: Node, pairs: Sequence[tuple[str, str]],
                    router: Router | None = None) -> list[TransferRate]:
    """Bandwidth each transfer gets when all of ``pairs`` run at once."""
    router = router or Router(node)
    routes = router.routes(pairs)
    reachable = [i for i, r in enumerate(routes) if r]
    share = max_min_fair([routes[i] or [] for i in reachable], router.capacity)
    out: list[TransferRate] = []
    rate_of = dict(zip(reachable, share.rates, strict=False))
    limit_of = dict(zip(reachable, share.limiting_edge, strict=False))
    for i, (src, dst) in enumerate(pairs):
        route = routes[i]
        if not route:
            out.append(TransferRate(src, dst, 0.0, (), None))
            continue
        edge = router.edges[int(limit_of[i])]
        out.append(TransferRate(src, dst, float(rate_of[i]), tuple(router.hops(route)),
                                (edge.src, edge.dst)))
    return out
