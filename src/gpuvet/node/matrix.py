"""The link matrix: for every two modules how they connect and what one transfer between
them can get (like ``nvidia-smi topo -m``, with bandwidths), and each module's path to host
memory."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import permutations

from gpuvet.node.memo import per_node
from gpuvet.node.model import EndpointKind, LinkKind, Node

_ABBREV = {LinkKind.NVLINK: "NV", LinkKind.XGMI: "XG", LinkKind.SERDES: "SD"}


@dataclass(frozen=True)
class Cell:
    label: str  # NV18 (direct or through a fabric switch, as nvidia-smi topo -m), PIX, PXB, PHB, NODE, SYS, "-"
    gbps: float | None  # one transfer's bottleneck bandwidth, per direction
    assumed: bool = False  # a link on the route has no known speed (e.g. from topo -m): gbps is a guess


@dataclass(frozen=True)
class HostPath:
    socket: str | None
    gbps: float | None
    assumed: bool = False


class PairCells(Mapping[tuple[str, str], Cell]):
    """Every ordered pair's cell, kept as one small integer per pair (a 576-module domain has
    331,200 pairs and a handful of distinct cells): a mapping like a dict, without building one."""

    def __init__(self, modules: Sequence[str], made: Sequence[Cell], codes: Sequence[int],
                 per_cell: Sequence[int]) -> None:
        """``codes``: per pair in ``permutations(modules, 2)`` order, an index into ``made``;
        ``per_cell``: how many pairs have each of ``made``."""
        self._modules = tuple(modules)
        self._pos = {m: i for i, m in enumerate(self._modules)}
        self._made = tuple(made)
        self._codes = codes
        self._per_cell = tuple(per_cell)

    def __getitem__(self, pair: tuple[str, str]) -> Cell:
        a, b = pair
        i, j = self._pos[a], self._pos[b]
        if i == j:
            raise KeyError(pair)
        return self._made[self._codes[i * (len(self._modules) - 1) + j - (j > i)]]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return permutations(self._modules, 2)

    def __len__(self) -> int:
        n = len(self._modules)
        return n * (n - 1)

    def counts(self) -> Counter[Cell]:
        """How many pairs have each cell, without visiting them in Python."""
        out: Counter[Cell] = Counter()
        for cell, count in zip(self._made, self._per_cell, strict=True):
            if count:
                out[cell] += count  # equal cells that are distinct objects add up
        return out

    def pairs(self) -> Iterator[tuple[tuple[str, str], Cell]]:
        """``items()`` at C speed."""
        return zip(permutations(self._modules, 2), map(self._made.__getitem__, self._codes), strict=True)


def cell_counts(cells: Mapping[tuple[str, str], Cell]) -> Counter[Cell]:
    """Pairs per distinct cell (equal cells that are distinct objects add up)."""
    if isinstance(cells, PairCells):
        return cells.counts()
    return Counter(cells.values())


def cell_items(cells: Mapping[tuple[str, str], Cell]) -> Iterator[tuple[tuple[str, str], Cell]]:
    return cells.pairs() if isinstance(cells, PairCells) else iter(cells.items())


@dataclass(frozen=True)
class LinkMatrix:
    modules: tuple[str, ...]
    cells: Mapping[tuple[str, str], Cell]
    host: dict[str, HostPath]


def _socket_of(node: Node, module: str) -> str | None:
    """The socket reached first going up the module's PCIe path."""
    seen, frontier = {module}, [module]
    while frontier:
        nxt = []
        for cur in frontier:
            for link in node.links_of(cur):
                if link.kind is not LinkKind.PCIE:
                    continue
                other = link.other(cur)
                if other in seen or node.kind_of(other) is EndpointKind.MODULE:
                    continue
                if node.kind_of(other) is EndpointKind.SOCKET:
                    return other
                seen.add(other)
                nxt.append(other)
        frontier = nxt
    return None


class _Codes:
    """Labels as small integers, so that a whole matrix of them is one array."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._code: dict[str, int] = {}

    def __call__(self, label: str) -> int:
        if label not in self._code:
            self._code[label] = len(self.names)
            self.names.append(label)
        return self._code[label]


def link_matrix(node: Node) -> LinkMatrix:
    """Computed once per node and kept on it (the node never changes). A small node takes the
    plain-Python path (no numpy import: most of a small ``topo``'s own time), a big one arrays;
    both give the same cells."""
    from gpuvet.node import matrix_small

    if matrix_small.fits(node):
        return per_node(node, "matrix.link_matrix", lambda: matrix_small.link_matrix_small(node))
    from gpuvet.node.matrix_arrays import link_matrix_arrays

    return per_node(node, "matrix.link_matrix", lambda: link_matrix_arrays(node))
