"""Outliers among peers: per metric, robust scores (median and MAD) across every node of one
node type, naming the node, module or link that deviates and by how much. A node 8 % slower
than its peers passes a fixed threshold and still drags every synchronous job down.

The modified z-score (Iglewicz & Hoaglin): z = 0.6745 · (x − median) / MAD. Their usual cut-off
is 3.5; a fleet compares hundreds of thousands of figures at once, where 3.5 would flag a few
hundred by chance, so the default is 5 (about one chance flag per three million figures of
Gaussian noise). A floor on the relative deviation (3 %) keeps a near-zero MAD from flagging
noise."""

from __future__ import annotations

import gc
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import eq, itemgetter
from typing import TYPE_CHECKING, NamedTuple, TypeVar, cast

import numpy as np

from gpuvet.errors import GpuvetError
from gpuvet.fleet import sanity
from gpuvet.validate.direction import lower_is_better

if TYPE_CHECKING:
    from gpuvet.fleet.roots import NodeRoot

E = TypeVar("E", bound=Mapping[str, object])  # an envelope as the caller read it (JSON objects)

Z_LIMIT = 5.0
MIN_DEVIATION = 0.03
MIN_PEERS = 3  # nodes giving a figure before one of them can stand out: of two, neither is the odd one
_DENSE_CELLS = 50_000_000  # series × nodes counted in one dense table (8 bytes a cell); more: by unique cells


@dataclass(frozen=True)
class Outlier:
    node: str
    node_type: str
    metric: str  # the check name, e.g. gemm_bf16, p2p_one_way
    value: float
    fleet_median: float
    score: float  # modified z-score; negative: worse for throughputs
    deviation_pct: float
    unit: str | None = None
    module: str | None = None
    between: tuple[str, str] | None = None
    layer: str | None = None


@dataclass(frozen=True)
class NodeVerdict:
    """A node's own validate verdict and counts, as its envelope gives them: a node whose own run
    failed is a finding of the merge whether or not it stands out among its peers."""

    node: str
    node_type: str  # the type it is pooled by
    where: str  # the file (or logbook run) it came from
    verdict: str | None  # the envelope's verdict (null where it gives none)
    fails: int  # checks with verdict fail
    warns: int
    corrupt: int = 0  # figures left out as no hardware can give them

    @property
    def failed(self) -> bool:
        return self.verdict == "fail" or self.fails > 0


@dataclass(frozen=True)
class FleetAnalysis:
    node_types: dict[str, list[str]]  # node type -> nodes
    outliers: list[Outlier]
    metrics: int
    values: int
    simulated: bool = False  # any envelope was simulated
    nodes: list[NodeVerdict] = field(default_factory=list)  # each node's own verdict, in the order given
    notes: list[str] = field(default_factory=list)  # what was left out or re-pooled, and why
    roots: dict[str, tuple[NodeRoot, ...] | None] = field(default_factory=dict)  # node -> its validate's roots


def node_identity(node: object, node_type: object, schema: object) -> tuple[str, str, int]:
    """(node name, node type, schema version) from an envelope's environment.node,
    environment.node_type and schema_version: no type reads as "unknown". TypeError or
    ValueError for a schema version that is no number."""
    if not isinstance(schema, (int, float, str)):
        raise TypeError(f"schema_version is {type(schema).__name__}, not a number")
    return str(node), str(node_type or "unknown"), int(schema)


def envelope_node(env: Mapping[str, object], where: str) -> tuple[str, str, int]:
    """(node name, node type, schema version) of a validate --json envelope."""
    try:
        environment = env["environment"]
        if not isinstance(environment, dict):
            raise TypeError("environment is not an object")
        return node_identity(environment["node"], environment.get("node_type"), env["schema_version"])
    except (KeyError, TypeError, ValueError):
        raise GpuvetError("not a validate --json envelope (no environment.node or schema_version)", where=where,
                          fix="give the output of `gpuvet validate --json` for each node.") from None


def analyse(envelopes: Iterable[tuple[str, Mapping[str, object]]], z_limit: float = Z_LIMIT,
            min_deviation: float = MIN_DEVIATION) -> FleetAnalysis:
    """``envelopes``: (where it came from, envelope). Groups by node type; refuses mixed schemas."""
    table = PeerTable()
    for where, env in envelopes:
        table.add(where, env)
    return table.analyse(z_limit, min_deviation)


_PLAIN_NUMBERS = (float, int)
_ALWAYS_KEYS = ("layer", "name", "unit", "value", "verdict")
_ALWAYS = itemgetter(*_ALWAYS_KEYS)


class NodeChecks(NamedTuple):
    """A node's checks as columns, one entry per check in the envelope's order: what the table
    reads of them, however they were decoded (dicts in memory, or straight from JSON bytes)."""

    layer: list[object]
    name: list[object]
    unit: list[object]
    module: list[object]
    between: list[object]
    value: list[object]
    verdict: list[object]


def checks_as_columns(checks: object) -> NodeChecks:
    """``checks`` (a list of check objects, as validate --json writes them) as columns; a
    missing key reads as None. TypeError when ``checks`` is not a list of objects. C-level maps:
    a fraction of a per-check Python loop's cost."""
    if not isinstance(checks, list):
        raise TypeError(f"checks is {type(checks).__name__}, not a list of check objects")
    if not checks:
        return NodeChecks([], [], [], [], [], [], [])
    try:  # validate --json always writes these five; module and between only when set
        layer, name, unit, value, verdict = map(list, zip(*map(_ALWAYS, checks), strict=True))
    except KeyError:
        layer, name, unit, value, verdict = (list(map(dict.get, checks, repeat(k))) for k in _ALWAYS_KEYS)
    module, between = (list(map(dict.get, checks, repeat(k))) for k in ("module", "between"))
    return NodeChecks(layer, name, unit, module, between, value, verdict)


def _is_figure(value: object, verdict: object) -> bool:
    """A check the peers compare: a plain number (a bool is not), not skipped."""
    if value.__class__ not in _PLAIN_NUMBERS and (not isinstance(value, (int, float)) or isinstance(value, bool)):
        return False
    return bool(verdict != "skip")


def _text_only(shape: tuple[object, ...]) -> None:
    """A check's layer, name, unit, module and pair are text (or absent), as validate --json
    writes them: TypeError naming the first that is not."""
    *fields, between = shape
    for label, v in zip(("layer", "name", "unit", "module"), fields, strict=True):
        if v is not None and not isinstance(v, str):
            raise TypeError(f"a check's {label} is {v!r}, not text")
    if between is not None and not (isinstance(between, tuple) and all(isinstance(b, str) for b in between)):
        raise TypeError(f"a check's between is {list(between) if isinstance(between, tuple) else between!r}, "
                        "not two places named in text")


def _layout_key(checks: NodeChecks) -> tuple[list[object], ...]:
    """What must match for a node to reuse another's ids: every naming column, the type of each
    value and where the skips are (those two say which checks are figures)."""
    kinds: list[object] = list(map(type, checks.value))
    skips: list[object] = list(map(eq, checks.verdict, repeat("skip")))
    return (checks.layer, checks.name, checks.unit, checks.module, checks.between, kinds, skips)


@dataclass(frozen=True)
class _Layout:
    """The checks of a node, in order, and which of them were figures: the next node with the
    same checks in the same order and the same kinds of value (every node of a fleet, usually)
    reuses its ids without a loop."""

    key: tuple[list[object], ...]  # as ``_layout_key`` gives it
    series_of: array  # type: ignore[type-arg]  # per figure kept
    ref_of: array  # type: ignore[type-arg]
    keep: list[bool] | None  # per check: a figure (None: every check is)


class _Columns:
    """One node type's figures as flat columns (about 20 bytes a figure, not a dict each)."""

    def __init__(self) -> None:
        self.nodes: dict[str, int] = {}
        self.series: dict[str, int] = {}  # "layer/name" -> series id, in order of first sight
        self.refs: dict[tuple[object, ...], int] = {}  # (unit, module, between, layer) -> ref id
        self._seen: dict[tuple[object, ...], tuple[int, int]] = {}  # a check's (layer, name, unit, module, between)
        self.series_of, self.node_of, self.ref_of = array("i"), array("i"), array("i")
        self.value = array("d")
        self._layout: _Layout | None = None
        self.regular = True  # every node so far had the first node's layout: the same figures in the same order

    def add(self, node: str, checks: NodeChecks) -> None:
        """One node's checks (a node new to the table: ``PeerTable`` refuses one given twice)."""
        nid = self.nodes[node] = len(self.nodes)
        before = len(self.value)
        key = _layout_key(checks)
        layout = self._layout
        if layout is not None and key == layout.key:
            kept = checks.value if layout.keep is None else list(compress(checks.value, layout.keep))
            self.value.fromlist(cast(list[float], kept))  # the layout's kinds say each kept value is a plain number
            self.series_of.extend(layout.series_of)
            self.ref_of.extend(layout.ref_of)
        else:
            keep = self._loop(checks)
            self.regular = self.regular and layout is None
            if layout is None:
                self._layout = _Layout(key, self.series_of[before:], self.ref_of[before:], None if all(keep) else keep)
        self.node_of.extend(array("i", [nid]) * (len(self.value) - before))

    def _loop(self, checks: NodeChecks) -> list[bool]:
        """Each check in turn: ids found or made for the figures; which checks were figures."""
        seen, keep = self._seen, []
        for layer, name, unit, module, between, value, verdict in zip(*checks, strict=True):
            if not _is_figure(value, verdict):
                keep.append(False)
                continue
            if between is not None and not isinstance(between, (list, tuple)):
                raise TypeError(f"a check's between is {between!r}, not a list of two places")
            shape = (layer, name, unit, module, tuple(between) if between else None)
            ids = seen.get(shape)
            if ids is None:  # only text enters: 1 and 1.0 or true would be one series here, two by name
                _text_only(shape)
                ids = seen[shape] = self._ids(shape)
            self.value.append(value)
            self.series_of.append(ids[0])
            self.ref_of.append(ids[1])
            keep.append(True)
        return keep

    def _ids(self, shape: tuple[object, ...]) -> tuple[int, int]:
        """(series id, ref id) of a check's shape, the first time that shape is seen."""
        layer, name, unit, module, between = shape
        sid = self.series.setdefault(f"{layer}/{name}", len(self.series))
        rid = self.refs.setdefault((unit, module, between, layer), len(self.refs))
        return sid, rid

    def join(self, later: _Columns) -> None:
        """Fold in ``later``'s figures as if its nodes had come after these (what a worker that
        read the next files built): ids found or made in its order of first sight, then its
        columns renumbered in a few array passes. ``later`` is used up: its columns may become
        this table's."""
        if not self.nodes:
            self.__dict__.update(later.__dict__)
            return
        node_ids = list(range(len(self.nodes), len(self.nodes) + len(later.nodes)))  # new nodes: ``PeerTable`` checks
        self.nodes.update(zip(later.nodes, node_ids, strict=True))
        series_ids = [self.series.setdefault(key, len(self.series)) for key in later.series]
        ref_ids = [self.refs.setdefault(key, len(self.refs)) for key in later.refs]
        for shape, (sid, rid) in later._seen.items():
            self._seen.setdefault(shape, (series_ids[sid], ref_ids[rid]))
        mine, theirs = self._layout, later._layout
        self.regular = (self.regular and later.regular and mine is not None and theirs is not None
                        and mine.key == theirs.key)
        if mine is None and theirs is not None:
            self._layout = _Layout(theirs.key, _renumbered(theirs.series_of, series_ids),
                                   _renumbered(theirs.ref_of, ref_ids), theirs.keep)
        self.series_of.extend(_renumbered(later.series_of, series_ids))
        self.ref_of.extend(_renumbered(later.ref_of, ref_ids))
        self.node_of.extend(_renumbered(later.node_of, node_ids))
        self.value.extend(later.value)

    def outliers(self, node_type: str, z_limit: float, min_deviation: float) -> list[Outlier]:
        n_series = len(self.series)
        if not self.value:
            return []
        sid = np.frombuffer(self.series_of, dtype=np.int32)
        x = np.frombuffer(self.value, dtype=np.float64)
        counts = np.bincount(sid, minlength=n_series)
        peers = (np.full(n_series, len(self.nodes)) if self.regular else
                 _distinct_nodes(sid, np.frombuffer(self.node_of, dtype=np.int32), len(self.nodes), n_series))
        median, mad, near = self._spread(sid, x, counts, z_limit)
        scale = _scale(median, mad)
        z = 0.6745 * (x[near] - median[sid[near]]) / scale[sid[near]]
        far = np.abs(z) > z_limit
        hits, hz = near[far], z[far]  # few: the rest of the tests run on these alone
        hs, hm = sid[hits], median[sid[hits]]
        names = [key.split("/", 1)[1] for key in self.series]
        lower = np.array([lower_is_better(n) for n in names], dtype=bool)
        worse = np.where(lower[hs], hz > 0, hz < 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            deviation = np.where(hm != 0, (x[hits] - hm) / np.abs(hm), 0.0)
        keep = worse & (np.abs(deviation) > min_deviation) & (peers[hs] >= MIN_PEERS)
        ranked = np.lexsort((hits[keep], hs[keep]))  # by series, then in the order the figures came
        return self._named(hits[keep][ranked], node_type, names, median, hz[keep][ranked], deviation[keep][ranked])

    def _spread(self, sid: np.ndarray, x: np.ndarray, counts: np.ndarray, z_limit: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per series median and MAD, and the positions of the figures that may lie beyond
        ``z_limit`` (all of them, or a superset of the hits found on the grids of a regular fleet)."""
        grids = self._grids(x, counts)
        if grids is None:
            starts = np.r_[0, np.cumsum(counts)[:-1]]
            order = np.argsort(sid, kind="stable")  # each series together, in the order its figures came
            median, mad = _median_and_mad(sid, x, order, starts, counts)
            return median, mad, np.arange(len(x))
        median, mad = np.full(len(counts), np.nan), np.full(len(counts), np.nan)
        near = []
        for series, values, to_position in grids:
            med = np.median(values, axis=1)
            np.abs(np.subtract(values, med[:, None], out=values), out=values)  # the grid is now |x - median|
            spread = np.median(values, axis=1)
            median[series], mad[series] = med, spread
            near.append(to_position(np.flatnonzero(values >= _loose_bound(z_limit, _scale(med, spread))[:, None])))
        return median, mad, np.concatenate(near)

    def _grids(self, x: np.ndarray, counts: np.ndarray
               ) -> list[tuple[np.ndarray, np.ndarray, Callable[[np.ndarray], np.ndarray]]] | None:
        """When every node had the first node's layout: per number of figures a series has in one
        node (8 for a per-module metric, 1 for a node-wide one), those series' figures as a
        (series, figures) copy of ``x``, each row in arrival order, and the map from a flat index
        of that grid back to a position in ``x``; one gather each, no per-figure order array."""
        layout = self._layout
        nodes, width = len(self.nodes), len(layout.series_of) if layout is not None else 0
        if not self.regular or layout is None or not counts.size or not width or len(x) != nodes * width:
            return None
        columns = np.frombuffer(layout.series_of, dtype=np.int32)
        per_node = np.bincount(columns, minlength=len(counts))
        if not np.array_equal(per_node * nodes, counts):
            return None
        within = np.argsort(columns, kind="stable")  # a node's columns, series by series
        first = np.r_[0, np.cumsum(per_node)[:-1]]
        by_node = x.reshape(nodes, width)
        grids = []
        for q in np.unique(per_node[per_node > 0]).tolist():
            series = np.flatnonzero(per_node == q)
            cols = within[(first[series][:, None] + np.arange(q)).ravel()]  # (series, slot) -> column
            values = np.ascontiguousarray(by_node[:, cols].reshape(nodes, len(series), q).transpose(1, 0, 2))
            grids.append((series, values.reshape(len(series), nodes * q), _position_map(cols, nodes, width, q)))
        return grids

    def _named(self, hits: np.ndarray, node_type: str, names: list[str], median: np.ndarray, z: np.ndarray,
               deviation: np.ndarray) -> list[Outlier]:
        """``z`` and ``deviation``: one per hit, in the hits' order."""
        node_names, ref_list = list(self.nodes), list(self.refs)
        out = []
        for k, i in enumerate(hits.tolist()):
            sid, unit_module_between_layer = self.series_of[i], ref_list[self.ref_of[i]]
            unit, module, between, layer = unit_module_between_layer
            out.append(Outlier(node_names[self.node_of[i]], node_type, names[sid], self.value[i], float(median[sid]),
                               float(z[k]), 100.0 * float(deviation[k]), unit, module, between, layer))
        return out


def _position_map(cols: np.ndarray, nodes: int, width: int, q: int) -> Callable[[np.ndarray], np.ndarray]:
    """From a flat index of a (series, nodes * q) grid built from layout columns ``cols`` (series
    by series, q slots each) back to a position in the table's figures."""
    def to_position(flat: np.ndarray) -> np.ndarray:
        row, rest = np.divmod(flat, nodes * q)
        node, slot = np.divmod(rest, q)
        position: np.ndarray = node * width + cols[row * q + slot]
        return position
    return to_position


def _renumbered(ids: array, new: list[int]) -> array:  # type: ignore[type-arg]
    """``ids`` (an int array) with each id i replaced by ``new[i]``."""
    if not ids:
        return array("i")
    return array("i", np.asarray(new, dtype=np.int32)[np.frombuffer(ids, dtype=np.int32)].tobytes())


def _loose_bound(z_limit: float, scale: np.ndarray) -> np.ndarray:
    """Per series, a |x - median| below which |z| cannot pass ``z_limit``: a hair loose (z then
    decides exactly), and -inf (every figure a candidate) where the product is not a normal
    float (overflow, a subnormal scale) and rounding could cut off a hit."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        bound = z_limit / 0.6745 * scale
    safe = np.isfinite(bound) & (np.abs(bound) >= np.finfo(np.float64).tiny)
    loose: np.ndarray = np.where(safe, bound - np.abs(bound) * 1e-9, -np.inf)
    return loose


def _scale(median: np.ndarray, mad: np.ndarray) -> np.ndarray:
    """The MAD, or where it is zero (most figures equal) a thousandth of the median."""
    scale: np.ndarray = np.where(mad > 0, mad, np.maximum(np.abs(median) * 1e-3, 1e-12))
    return scale


def _median_and_mad(sid: np.ndarray, x: np.ndarray, order: np.ndarray, starts: np.ndarray, counts: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per series: median, and median absolute deviation from it. When every series has as many
    figures (every node reports every metric), one 2-D ``np.median`` (a partition, no sort)."""
    if counts.size and counts.min() == counts.max() > 0:
        grid = x[order].reshape(len(counts), int(counts[0]))
        median = np.median(grid, axis=1)
        return median, np.median(np.abs(grid - median[:, None]), axis=1)
    median = _group_median(sid, x, starts, counts)
    return median, _group_median(sid, np.abs(x - median[sid]), starts, counts)


def _group_median(group: np.ndarray, x: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Median of ``x`` within each group, as ``np.median`` computes it: the middle figure, or the
    mean of the middle two (which may overflow, as numpy's does); NaN where a figure is NaN."""
    by_value = np.argsort(x)
    ordered = x[by_value][np.argsort(group[by_value], kind="stable")]  # by group, then value: two sorts beat lexsort
    ok = counts > 0
    lo = ordered[(starts + (counts - 1) // 2)[ok]]
    hi = ordered[(starts + counts // 2)[ok]]
    out = np.full(len(counts), np.nan)
    with np.errstate(over="ignore", invalid="ignore"):
        out[ok] = np.where(counts[ok] % 2 == 1, lo, (lo + hi) / 2)
    out[np.bincount(group[np.isnan(x)], minlength=len(counts)) > 0] = np.nan
    return out


def _distinct_nodes(sid: np.ndarray, nid: np.ndarray, n_nodes: int, n_series: int) -> np.ndarray:
    """Per series, how many different nodes gave it a figure."""
    cell = sid.astype(np.int64) * max(n_nodes, 1) + nid
    if n_series * n_nodes <= _DENSE_CELLS:
        seen = np.bincount(cell, minlength=n_series * n_nodes).reshape(n_series, max(n_nodes, 1)) > 0
        per_series: np.ndarray = seen.sum(axis=1)
        return per_series
    return np.bincount(np.unique(cell) // max(n_nodes, 1), minlength=n_series)


@contextmanager
def no_gc() -> Iterator[None]:
    """The cyclic collector off while a node is read and folded: an envelope's thousands of
    fresh dicts, lists and tuples make no cycle, yet would set off collections that walk them
    all (two thirds of a real-shaped envelope's fold, measured on 1,000 nodes)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _given_twice(node: str, first: str, again: str) -> GpuvetError:
    return GpuvetError(f"node {node!r} is given twice; the first time by {first}", where=again,
                       fix="merge one envelope per node: leave out one of the two (an older run, or a file also "
                           "in a folder given).")


class PeerTable:
    """Envelopes folded in one at a time, so a merge of 10,000 files never holds them all: only
    their figures, as columns per node type."""

    def __init__(self) -> None:
        self.schemas: dict[int, str] = {}
        self.types: dict[str, _Columns] = {}
        self.sources: dict[str, str] = {}  # node -> where its envelope came from (one per node)
        self.simulated = False
        self.verdicts: dict[str, NodeVerdict] = {}  # node -> its own verdict, in the order given
        self.notes: list[str] = []  # what ``sanity`` left out or re-typed, in the order given
        self.roots: dict[str, tuple[NodeRoot, ...] | None] = {}  # node -> its roots (None: none given)

    def add(self, where: str, env: Mapping[str, object]) -> None:
        """Fold in one envelope (a validate --json document as Python objects)."""
        node, node_type, schema = envelope_node(env, where)
        environment = env["environment"]
        listed = (environment.get("modules") if isinstance(environment, dict) else None) or []
        modules = [(m.get("id"), m.get("model")) for m in listed if isinstance(m, dict)]
        verdict = env.get("verdict")
        from gpuvet.fleet.roots import read_roots

        with no_gc():
            self.add_checks(where, (node, node_type, schema), bool(env.get("simulated")),
                            checks_as_columns(env.get("checks", [])), modules,
                            verdict if isinstance(verdict, str) else None, read_roots(env.get("roots")))

    def add_checks(self, where: str, node: tuple[str, str, int], simulated: bool, checks: NodeChecks,
                   modules: Sequence[sanity.Module] = (), verdict: str | None = None,
                   roots: tuple[NodeRoot, ...] | None = None) -> NodeChecks:
        """Fold in one node's checks, already read as columns; ``node`` as ``envelope_node`` gives
        it, ``modules`` (id, model) as its environment lists them, ``verdict`` its own. The node is
        checked first (``sanity``): refused, re-typed by its modules, or figures no hardware can
        give left out, each said in ``notes``. Returns the checks as pooled."""
        name, node_type, schema = node
        if name in self.sources:  # pooled twice, a node would count double among its peers
            raise _given_twice(name, self.sources[name], where)
        sanity.check_modules(where, modules)
        node_type = sanity.pooled_type(where, name, node_type, modules, self.notes)
        pooled = sanity.plausible(where, name, modules, checks, self.notes)
        self.sources[name] = where
        self.schemas.setdefault(schema, where)
        self.simulated = self.simulated or simulated
        corrupt = pooled.value.count(None) - checks.value.count(None) if pooled is not checks else 0
        self.verdicts[name] = NodeVerdict(name, node_type, where, verdict, checks.verdict.count("fail"),
                                          checks.verdict.count("warn"), corrupt)
        if roots is not None:  # an older envelope without roots keeps none (the reference analysis agrees)
            self.roots[name] = roots
        with no_gc():
            cols = self.types.get(node_type)
            if cols is None:
                cols = self.types[node_type] = _Columns()
            cols.add(name, pooled)
        return pooled

    def join(self, later: PeerTable) -> None:
        """Fold in another table as if its envelopes had been added after this one's (``later``
        is used up: its columns may become this table's). A node in both: GpuvetError naming
        the first such node in ``later``'s order."""
        for name, where in later.sources.items():
            if name in self.sources:
                raise _given_twice(name, self.sources[name], where)
        self.sources.update(later.sources)
        self.verdicts.update(later.verdicts)
        self.roots.update(later.roots)
        self.notes += later.notes
        for schema, where in later.schemas.items():
            self.schemas.setdefault(schema, where)
        self.simulated = self.simulated or later.simulated
        for node_type, cols in later.types.items():
            self.types.setdefault(node_type, _Columns()).join(cols)

    def analyse(self, z_limit: float = Z_LIMIT, min_deviation: float = MIN_DEVIATION) -> FleetAnalysis:
        if len(self.schemas) > 1:
            listed = "; ".join(f"schema {s} ({w})" for s, w in sorted(self.schemas.items()))
            raise GpuvetError(f"envelopes of different schema versions: {listed}", where="fleet merge",
                              fix="re-run validate with one gpuvet version on every node, or merge them separately.")
        outliers: list[Outlier] = []
        with np.errstate(all="ignore"):  # inf and NaN figures have a defined outcome: no warnings for them
            for node_type, cols in self.types.items():
                outliers += cols.outliers(node_type, z_limit, min_deviation)
        outliers.sort(key=lambda o: abs(o.score), reverse=True)
        types = {t: sorted(c.nodes) for t, c in self.types.items()}
        metrics = sum(len(c.series) for c in self.types.values())
        values = sum(len(c.value) for c in self.types.values())
        return FleetAnalysis(types, outliers, metrics, values, self.simulated, list(self.verdicts.values()),
                             list(self.notes), dict(self.roots))


def healthy_envelopes(envelopes: Sequence[tuple[str, E]], analysis: FleetAnalysis,
                      node_type: str) -> list[tuple[str, E]]:
    """The envelopes of one node type whose node has no outlier: the majority a fleet baseline is made of."""
    bad = {o.node for o in analysis.outliers}
    return [(w, e) for w, e in envelopes if envelope_node(e, w)[1] == node_type and envelope_node(e, w)[0] not in bad]
