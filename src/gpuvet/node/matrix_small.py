"""The link matrix of a small node in plain Python: the same cells as the array path, without
importing numpy (about a fifth of ``gpuvet topo``'s wall on an 8-module node).

Routes are the ones ``routing.Router`` takes: least sum of 1/capacity, ties broken towards
the nearer predecessor, then the higher endpoint index; links out of a module that does not
forward carry only routes that start there. ``tests/node/test_scale_paths.py`` holds both paths to
the pair-by-pair labelling.
"""

from __future__ import annotations

import heapq
import itertools
import sys
from dataclasses import dataclass, field

from gpuvet.node.capacity import widest_edges
from gpuvet.node.matrix import _ABBREV, Cell, HostPath, LinkMatrix, _socket_of
from gpuvet.node.model import EndpointKind, Node
from gpuvet.node.relations import relations_from

# module count x directed links up to which this path is the faster one: with numpy still to
# import (~0.1 s), up to an nvl72 domain (35 ms here, 10 ms as arrays); with numpy loaded, a few nodes
SMALL_WORK = 25_000
SMALL_WORK_NUMPY_LOADED = 4_000


def fits(node: Node) -> bool:
    """Whether ``node`` is small enough for this path."""
    limit = SMALL_WORK_NUMPY_LOADED if "numpy" in sys.modules else SMALL_WORK
    return len(node.modules) * 2 * len(node.links) <= limit


class _Routes:
    """Shortest-route predecessors per source, as ``routing.shortest_predecessors`` picks them."""

    def __init__(self, node: Node) -> None:
        self.index = {e: i for i, e in enumerate(node.endpoint_ids())}
        self.edges = widest_edges(node)
        modules = {self.index[m] for m in node.module_ids}
        self.only_from = {k for k, e in enumerate(self.edges) if not node.modules_forward and e[0] in modules}
        self.out: dict[int, list[int]] = {}
        self.into: dict[int, list[int]] = {}
        for k, (s, d, _, _) in enumerate(self.edges):
            self.out.setdefault(s, []).append(k)
            self.into.setdefault(d, []).append(k)
        self._pred: dict[int, dict[int, int]] = {}

    def _usable(self, k: int, source: int) -> bool:
        return k not in self.only_from or self.edges[k][0] == source

    def _distances(self, source: int) -> dict[int, float]:
        dist = {source: 0.0}
        heap = [(0.0, source)]
        while heap:
            d, u = heapq.heappop(heap)
            if d > dist[u]:
                continue
            for k in self.out.get(u, ()):
                if self._usable(k, source):
                    v, nd = self.edges[k][1], d + 1.0 / self.edges[k][3]
                    if nd < dist.get(v, float("inf")):
                        dist[v] = nd
                        heapq.heappush(heap, (nd, v))
        return dist

    def pred(self, source: int) -> dict[int, int]:
        """Endpoint -> the edge a route from ``source`` enters it by."""
        if source not in self._pred:
            dist, pred = self._distances(source), {}
            for v, dv in dist.items():
                ways = [(dist[self.edges[k][0]], -self.edges[k][0], k) for k in self.into.get(v, ())
                        if self.edges[k][0] in dist and self._usable(k, source)
                        and dist[self.edges[k][0]] + 1.0 / self.edges[k][3] == dv]
                if ways:
                    pred[v] = min(ways)[2]
            self._pred[source] = pred
        return self._pred[source]

    def figures(self, a: str, b: str) -> tuple[float | None, bool]:
        """The bottleneck of the route a -> b (None without one) and whether a link on it has an
        assumed speed."""
        s, cur = self.index[a], self.index[b]
        pred, low, guess = self.pred(s), float("inf"), False
        while cur != s:
            k = pred.get(cur)
            if k is None:
                return None, False
            src, _, link, cap = self.edges[k]
            low, guess, cur = min(low, cap), guess or link.lane_gbps is None, src
        return low, guess


def _fabric_label(a: str, b: str, direct: dict[frozenset[str], str], switches: _Switches) -> str | None:
    """A direct up fabric link's label (the first listed), else the first switch on b's list
    that a also reaches, with the narrower width: as ``matrix_arrays._fabric_labels``."""
    if (label := direct.get(frozenset((a, b)))) is not None:
        return label
    for o, width in switches.on[b]:
        if (mine := switches.members[o].get(a)) is not None:
            return f"{switches.prefix[o]}{min(mine, width)}"
    return None


@dataclass
class _Switches:
    """Per fabric switch: module -> width of its link (the last listed) and its label prefix;
    per module: its up fabric links to switches, in its order."""

    members: dict[str, dict[str, int]] = field(default_factory=dict)
    prefix: dict[str, str] = field(default_factory=dict)
    on: dict[str, list[tuple[str, int]]] = field(default_factory=dict)


def _switches(node: Node) -> _Switches:
    out = _Switches()
    for m in node.module_ids:
        mine = out.on.setdefault(m, [])
        for lk in node.links_of(m):
            o = lk.other(m)
            if lk.kind.is_fabric and lk.up and node.kind_of(o) is EndpointKind.FABRIC_SWITCH:
                out.members.setdefault(o, {})[m] = lk.width
                out.prefix.setdefault(o, _ABBREV[lk.kind])
                mine.append((o, lk.width))
    return out


def link_matrix_small(node: Node) -> LinkMatrix:
    """``matrix._link_matrix`` for a node that ``fits``."""
    ids = node.module_ids
    pos = {m: i for i, m in enumerate(ids)}
    routes = _Routes(node)
    direct: dict[frozenset[str], str] = {}
    for link in node.links:  # the first listed direct link labels the pair
        if link.kind.is_fabric and link.up and node.kind_of(link.a) is EndpointKind.MODULE \
                and node.kind_of(link.b) is EndpointKind.MODULE:
            direct.setdefault(link.ends, f"{_ABBREV[link.kind]}{link.width}")
    switches = _switches(node)
    rel = {a: relations_from(node, a) for a in ids} if node.pcie_known else {}
    made: dict[tuple[str, float | None, bool], Cell] = {}
    cells: dict[tuple[str, str], Cell] = {}
    for a, b in itertools.permutations(ids, 2):
        gbps, guess = routes.figures(a, b)
        label = _fabric_label(a, b, direct, switches)
        if label is None:  # the PCIe relation as seen from the pair's first module, as the array path
            first, second = (a, b) if pos[a] < pos[b] else (b, a)
            r = rel.get(first, {}).get(second)
            label = str(r) if r is not None else "-"
        key = (label if gbps is not None else "-", gbps, guess)
        cells[(a, b)] = made.get(key) or made.setdefault(key, Cell(*key))
    host = {}
    for m in ids:
        socket = _socket_of(node, m)
        gbps, guess = routes.figures(m, socket) if socket else (None, False)
        host[m] = HostPath(socket, gbps, guess)
    return LinkMatrix(tuple(ids), cells, host)
