"""Routes through the link graph: which links a transfer between two endpoints crosses.

A route minimises the sum over its hops of 1/bandwidth (time per byte if each hop were
store-and-forward), so wide fabric links win over PCIe and short routes over long ones —
the path a communication library would take when the topology is read correctly.
Links that are down carry nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import NamedTuple

import numpy as np

from gpuvet.node.capacity import link_capacity_gbps as link_capacity_gbps  # re-exported
from gpuvet.node.capacity import widest_edges
from gpuvet.node.memo import per_node
from gpuvet.node.model import Link, Node


@dataclass(frozen=True)
class Edge:
    """One direction of a link."""

    src: str
    dst: str
    link: Link
    capacity_gbps: float


@dataclass
class _Graph:
    """The directed link graph of one node, shared by every ``Router`` of that node."""

    ids: list[str]
    index: dict[str, int]
    edges: list[Edge]
    capacity: np.ndarray
    src: np.ndarray  # per edge: endpoint index it leaves
    dst: np.ndarray  # per edge: endpoint index it enters
    endpoint_only: np.ndarray  # per edge: it leaves a module that does not forward (only routes it starts use it)
    pred: dict[int, np.ndarray] = field(default_factory=dict)  # source -> per endpoint: edge into it (-1 none)
    walked: dict[tuple[str, str], tuple[int, ...] | None] = field(default_factory=dict)  # routes asked before
    src_list: list[int] = field(default_factory=list)  # ``src`` as Python ints, for walking one route
    asks: int = 0  # times sources were solved on demand (past a few, each ask solves a batch)

    def __post_init__(self) -> None:
        self.src_list = self.src.tolist()


def _graph(node: Node, forwards: bool) -> _Graph:
    ids = node.endpoint_ids()
    found = widest_edges(node)
    edges = [Edge(ids[s], ids[d], link, cap) for s, d, link, cap in found]
    modules = set(node.module_ids)
    endpoint_only = np.array([not forwards and e.src in modules for e in edges], dtype=bool)
    return _Graph(ids, {e: i for i, e in enumerate(ids)}, edges, np.array([e.capacity_gbps for e in edges], dtype=float),
                  np.array([f[0] for f in found], dtype=np.int64), np.array([f[1] for f in found], dtype=np.int64),
                  endpoint_only)


# Sources relaxed together: bounds each (sources x edges) work array to ~0.5 MB, which stays in
# cache and is reused batch after batch (on nvl576 a quarter faster than 2 MB arrays, and fresh
# 8 MB arrays cost as much in page faults as in arithmetic). A graph whose every source fits in
# one batch is solved for all sources at the first ask (one pass is cheaper than hundreds of
# one-source passes when a simulated run asks module by module).
_BATCH_CELLS = 60_000
_MISS: tuple[int, ...] = (-1,)  # not asked yet (a route is never this)
_FEW = 32  # up to this many new routes, walked one by one in Python; more, as arrays
# After this many asks, an ask for a few sources solves a whole batch, the next unsolved sources
# in endpoint order with it: validate and doctor ask module by module (one Bellman-Ford pass per
# module was most of validate's routing on a 576-module node); a one-off ask stays cheap.
_PREFETCH_AFTER = 4


def shortest_predecessors(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray,
                          sources: np.ndarray, endpoint_only: np.ndarray | None = None) -> np.ndarray:
    """Per source (row) and endpoint (column): the edge a shortest route enters it by; -1 for
    the source itself and for endpoints it cannot reach.

    All sources at once, by Bellman-Ford rounds over arrays (as many as the longest route has
    hops), so a 576-module node routes in milliseconds without a graph library. Where routes
    tie exactly, the one whose last hop leaves the endpoint nearer the source wins, then the
    higher endpoint index: the route scipy's Dijkstra picks (checked on every preset in tests).
    ``endpoint_only`` marks edges that leave a module that does not forward: a route may take
    them only from its own source (modules are endpoints, not routers). Each such edge serves
    one source at most, so it is kept as an (edge, source) pair, not as a row of the arrays: on
    a switched domain that takes half the edges out of every round.
    """
    sources = np.asarray(sources, dtype=np.int64)
    k = len(sources)
    order = np.argsort(dst, kind="stable")
    own = endpoint_only[order] if endpoint_only is not None else np.zeros(len(order), dtype=bool)
    column = np.full(n, -1, dtype=np.int64)
    column[sources] = np.arange(k)
    mine = order[own]
    mine = mine[column[src[mine]] >= 0]  # endpoint-only edges out of this batch's sources
    own_edges = _OwnEdges(mine, src[mine], dst[mine], column[src[mine]], weight[mine])
    shared = _grouped(order[~own], src, dst, weight)
    dist = np.full((n, k), np.inf)
    dist[sources, np.arange(k)] = 0.0
    # a source's distance stays 0 (no weight is negative): its own edges relax once, here
    np.minimum.at(dist, own_edges.at, dist[own_edges.src, own_edges.column] + own_edges.weight)
    for _ in range(n if len(shared.edge) else 0):
        best = _segment_min(dist[shared.src] + shared.weight, shared.starts)
        improved = best < dist[shared.targets]
        if not improved.any():
            break
        dist[shared.targets] = np.where(improved, best, dist[shared.targets])
    return _predecessor_edges(dist, shared, own_edges, len(order) + 1).T


class _Grouped(NamedTuple):  # a NamedTuple, not a frozen dataclass: a fifth of the import cost
    """Edges any route may take, sorted by the endpoint they enter: each endpoint's in-edges are
    one contiguous group (``starts``), the rows of every round's arrays."""

    edge: np.ndarray  # original edge index
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray  # a column, broadcast over the sources
    starts: np.ndarray
    targets: np.ndarray  # the endpoint each group enters


def _grouped(edge: np.ndarray, src: np.ndarray, dst: np.ndarray, weight: np.ndarray) -> _Grouped:
    into = dst[edge]
    starts = np.flatnonzero(np.r_[True, into[1:] != into[:-1]]) if len(edge) else edge
    return _Grouped(edge, src[edge], into, weight[edge][:, None], starts, into[starts])


class _OwnEdges(NamedTuple):
    """Edges out of a module that does not forward, each with the one source (a column) whose
    routes may take it."""

    edge: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    column: np.ndarray
    weight: np.ndarray

    @property
    def at(self) -> tuple[np.ndarray, np.ndarray]:
        return self.dst, self.column


_WIDE = 8  # groups of more rows than this (a switch's in-edges) are reduced block by block


def _segment_min(rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``np.minimum.reduceat(rows, starts, axis=0)`` for non-empty groups, faster: narrow groups
    (an endpoint with a link or two) take a few whole-array minimums, wide ones (a switch with
    hundreds) a contiguous block each; reduceat walks them element by element."""
    sizes = np.diff(np.r_[starts, len(rows)])
    wide = sizes > _WIDE
    narrow = np.minimum(sizes, _WIDE)
    out: np.ndarray = rows[starts].copy()
    for k in range(1, int(narrow[~wide].max(initial=1))):  # as many passes as the widest narrow group needs
        np.minimum(out, rows[starts + np.minimum(k, narrow - 1)], out=out)
    for g in np.flatnonzero(wide).tolist():
        out[g] = rows[starts[g]:starts[g] + sizes[g]].min(axis=0)
    return out


def _predecessor_edges(dist: np.ndarray, shared: _Grouped, own: _OwnEdges, m: int) -> np.ndarray:
    """The tie-broken edge into every endpoint (endpoints x sources), from converged distances:
    of the edges on a shortest route, the one leaving the nearest endpoint, then the higher
    endpoint index, then the lower edge index. ``m``: more than any edge index."""
    n = len(dist)
    none = np.iinfo(np.int64).max
    nearest = np.full(dist.shape, np.inf)
    won = np.full(dist.shape, none, dtype=np.int64)
    own_leave = dist[own.src, own.column]
    own_hit = (own_leave + own.weight == dist[own.at]) & np.isfinite(own_leave) & np.isfinite(own.weight)
    if len(shared.edge):
        leave = dist[shared.src]
        hit = (leave + shared.weight == dist[shared.dst]) & np.isfinite(leave) & np.isfinite(shared.weight)
        near = np.where(hit, leave, np.inf)
        nearest[shared.targets] = _segment_min(near, shared.starts)
    np.minimum.at(nearest, (own.dst[own_hit], own.column[own_hit]), own_leave[own_hit])
    if len(shared.edge):
        chosen = hit & (near == nearest[shared.dst])
        code = np.where(chosen, ((n - shared.src) * m + shared.edge)[:, None], none)
        won[shared.targets] = _segment_min(code, shared.starts)
    pick = own_hit & (own_leave == nearest[own.at])
    np.minimum.at(won, (own.dst[pick], own.column[pick]), ((n - own.src) * m + own.edge)[pick])
    return np.where(won == none, -1, won % m)


class Router:
    """Shortest routes on a node's directed link graph. The graph and every route solved are
    kept on the node: all routers of one node share them."""

    def __init__(self, node: Node, forwarding: bool | None = None) -> None:
        """``forwarding=True`` lets routes pass through modules whatever the fabric: what a
        collective's ring does (NCCL forwards through the ranks); copies never do unless the
        node's fabric declares ``forwards``."""
        self.node = node
        forwards = node.modules_forward if forwarding is None else forwarding
        key = "routing.graph.forwarding" if forwards else "routing.graph"
        self._g = per_node(node, key, lambda: _graph(node, forwards))
        self.ids = self._g.ids
        self.index = self._g.index
        self.edges: list[Edge] = self._g.edges
        self.capacity = self._g.capacity

    def _predecessors(self, sources: Sequence[int]) -> None:
        g = self._g
        todo = np.array(sorted({s for s in sources if s not in g.pred}), dtype=np.int64)
        if todo.size == 0:
            return
        rows = len(g.edges) - int(np.count_nonzero(g.endpoint_only))  # endpoint-only edges are no rows
        batch = max(1, _BATCH_CELLS // max(rows, len(g.ids), 1))
        if not g.pred and len(g.ids) <= batch:
            todo = np.arange(len(g.ids), dtype=np.int64)
        elif len(todo) < batch and g.asks >= _PREFETCH_AFTER:
            asked = set(todo.tolist())
            more = (s for s in range(int(todo[0]), len(g.ids)) if s not in g.pred and s not in asked)
            todo = np.array(sorted(asked | set(islice(more, batch - len(todo)))), dtype=np.int64)
        g.asks += 1
        for at in range(0, len(todo), batch):
            part = todo[at:at + batch]
            pred = shortest_predecessors(len(g.ids), g.src, g.dst, 1.0 / g.capacity, part, g.endpoint_only)
            for row, s in enumerate(part.tolist()):
                g.pred[s] = pred[row].astype(np.int32)  # contiguous, and half the pages (a node has < 2**31 edges)

    def route_edges(self, src: str, dst: str) -> list[int] | None:
        """Edge indices from src to dst, [] when src == dst, None when unreachable."""
        return self.routes([(src, dst)])[0]

    def routes(self, pairs: Sequence[tuple[str, str]]) -> list[list[int] | None]:
        """Like ``route_edges`` for each pair; every route solved is kept for the next ask."""
        walked = self._g.walked
        found = [walked.get(p, _MISS) for p in pairs]
        if any(r is _MISS for r in found):
            todo = list(dict.fromkeys(p for p, r in zip(pairs, found, strict=True) if r is _MISS))
            if len(todo) <= _FEW:
                for pair in todo:
                    walked[pair] = self._walk(*pair)
            else:
                table = self.route_table(todo)
                bounds, edges = table.indptr.tolist(), table.edges.tolist()
                for i, (pair, ok) in enumerate(zip(todo, table.reachable.tolist(), strict=True)):
                    walked[pair] = tuple(edges[bounds[i]:bounds[i + 1]]) if ok else None
            found = [walked[p] for p in pairs]
        return [list(r) if r is not None else None for r in found]

    def _walk(self, src: str, dst: str) -> tuple[int, ...] | None:
        """One route, walked back from ``dst`` in plain Python: what ``route_table_idx`` does
        for one pair, without the array set-up that dominates a single short route."""
        g = self._g
        s, cur = g.index[src], g.index[dst]
        self._predecessors([s])
        pred, back = g.pred[s], g.src_list
        hops: list[int] = []
        while cur != s:
            e = int(pred[cur])
            if e < 0:
                return None
            hops.append(e)
            cur = back[e]
        return tuple(reversed(hops))

    def hops_from(self, src: str) -> np.ndarray:
        """Per endpoint: how many edges its route from ``src`` crosses (0 for ``src``, -1 where
        there is none): the length of each route ``routes`` would walk, for every endpoint at
        once (one pass per level of the predecessor tree, no route listed)."""
        g = self._g
        s = g.index[src]
        self._predecessors([s])
        pred = g.pred[s]
        depth = np.full(len(g.ids), -1, dtype=np.int64)
        depth[s] = 0
        has = pred >= 0
        parent = g.src[np.where(has, pred, 0)] if len(g.src) else np.zeros(len(g.ids), dtype=np.int64)
        todo = np.flatnonzero(has)
        while todo.size:
            up = parent[todo]
            ready = depth[up] >= 0
            if not ready.any():  # a chain that never reaches the source (none does): stop, not spin
                break
            depth[todo[ready]] = depth[up[ready]] + 1
            todo = todo[~ready]
        return depth

    def route_table(self, pairs: Sequence[tuple[str, str]]) -> RouteTable:
        """The routes of ``pairs`` as arrays (what the flow solver and the matrix consume)."""
        index = self.index
        src = np.fromiter((index[s] for s, _ in pairs), dtype=np.int64, count=len(pairs))
        dst = np.fromiter((index[d] for _, d in pairs), dtype=np.int64, count=len(pairs))
        return self.route_table_idx(src, dst)

    def route_table_idx(self, src: np.ndarray, dst: np.ndarray) -> RouteTable:
        """``route_table`` for endpoint indices."""
        g = self._g
        uniq, row = np.unique(src, return_inverse=True)
        self._predecessors(uniq.tolist())
        pred = np.stack([g.pred[s] for s in uniq.tolist()]) if len(uniq) else np.zeros((0, len(g.ids)), np.int64)
        steps: list[np.ndarray] = []
        flows: list[np.ndarray] = []
        cur, live = dst.copy(), np.flatnonzero(dst != src)
        reachable = np.ones(len(src), dtype=bool)
        while live.size:
            e = pred[row[live], cur[live]].astype(np.int64)
            dead = e < 0
            reachable[live[dead]] = False
            live, e = live[~dead], e[~dead]
            steps.append(e)
            flows.append(live)
            cur[live] = g.src[e]
            live = live[cur[live] != src[live]]
        return _table(len(src), steps, flows, reachable)

    def bottleneck_rows(self, sources: np.ndarray,
                        guessed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """From each of ``sources`` (distinct endpoint indices) to every endpoint, as sources x
        endpoints arrays: the narrowest capacity on the route (NaN without one), whether a link
        on it is ``guessed``, whether there is a route. What reducing ``route_table_idx``'s
        routes gives, without listing a single route."""
        n = len(self._g.ids)
        low, guess, has = np.empty((len(sources), n)), np.empty((len(sources), n), bool), np.empty((len(sources), n), bool)
        for rows, block in self.bottleneck_blocks(sources, guessed):
            low[rows], guess[rows], has[rows] = block
        return low, guess, has

    def bottleneck_blocks(self, sources: np.ndarray, guessed: np.ndarray
                          ) -> Iterator[tuple[slice, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """``bottleneck_rows`` a batch of sources at a time (the rows of ``sources`` each covers,
        and its arrays): work arrays that stay in cache, and a caller that reduces each block
        never holds all of them (fresh pages cost more than the arithmetic here). Each
        source's predecessor tree is folded by pointer jumping: log2 of the longest route
        rounds, each a few whole-array gathers."""
        self._predecessors(sources.tolist())
        step = max(1, _BATCH_CELLS // max(len(self._g.ids), 1))
        for at in range(0, len(sources), step):
            part = sources[at:at + step].tolist()
            yield slice(at, at + len(part)), self._fold_bottlenecks(part, guessed)

    def _fold_bottlenecks(self, sources: list[int], guessed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``bottleneck_rows`` for one batch of sources."""
        g = self._g
        n = len(g.ids)
        pred = np.stack([g.pred[s] for s in sources]) if sources else np.zeros((0, n), np.int64)
        has = pred >= 0  # the source itself and what it cannot reach have no way in
        edge = np.where(has, pred, 0)
        row_start = (np.arange(len(sources)) * n)[:, None]  # gathers by flat index: a third faster than [rows, jump]
        jump = np.where(has, g.src[edge] if len(g.src) else 0, np.arange(n))  # no way in: its own chain's end
        low = np.where(has, g.capacity[edge] if len(g.capacity) else np.inf, np.inf)
        guess = has & (guessed[edge] if len(guessed) else False)
        while True:  # a reachable endpoint's parent is reachable: every chain ends at the source
            parent = jump + row_start
            nxt = np.take(jump, parent)
            if np.array_equal(nxt, jump):
                break
            np.minimum(low, np.take(low, parent), out=low)  # the gather reads the old values first
            guess |= np.take(guess, parent)
            jump = nxt
        return np.where(has, low, np.nan), guess, has

    def hops(self, edge_ids: Sequence[int]) -> list[str]:
        """Endpoint ids along a route."""
        if not edge_ids:
            return []
        return [self.edges[edge_ids[0]].src] + [self.edges[e].dst for e in edge_ids]

    def bottleneck_gbps(self, edge_ids: Sequence[int]) -> float:
        return float(self.capacity[list(edge_ids)].min()) if edge_ids else float("inf")


@dataclass(frozen=True)
class RouteTable:
    """Routes of many flows in CSR form: flow i crosses ``edges[indptr[i]:indptr[i+1]]`` in
    order; an unreachable flow has no edges and ``reachable[i]`` False."""

    indptr: np.ndarray
    edges: np.ndarray
    reachable: np.ndarray

    @property
    def flow_of_entry(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.reachable)), np.diff(self.indptr))


def _table(n_flows: int, steps: list[np.ndarray], flows: list[np.ndarray], reachable: np.ndarray) -> RouteTable:
    """Steps walk back from each destination: reverse them into source-to-destination order."""
    if not steps:
        return RouteTable(np.zeros(n_flows + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), reachable)
    flow = np.concatenate(flows)
    edge = np.concatenate(steps)
    depth = np.concatenate([np.full(len(f), k) for k, f in enumerate(flows)])
    ok = reachable[flow]  # a walk that dead-ends part way leaves no route
    flow, edge, depth = flow[ok], edge[ok], depth[ok]
    order = np.lexsort((-depth, flow))
    counts = np.bincount(flow, minlength=n_flows)
    indptr = np.zeros(n_flows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return RouteTable(indptr, edge[order], reachable)
