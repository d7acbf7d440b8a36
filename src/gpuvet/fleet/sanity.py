"""What a node's envelope says, checked against the hardware it names before it is pooled with
its peers. A figure no hardware can give (1e308 TFLOPS, a negative bandwidth) is a corrupt
reading: pooled, it skewed its series and a negative link read as the slowest of the fleet. An
envelope whose node type is not what its own modules are was pooled with the wrong peers (an
MI300X node labelled H200-SXM made 86 'slow link' outliers). Both are said in a note; a node
with more modules than any node has, or two modules of one id, is refused naming the file."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, cast

import numpy as np

from gpuvet.errors import GpuvetError

if TYPE_CHECKING:
    from gpuvet.fleet.peers import NodeChecks
    from gpuvet.node.catalog import ModuleModel

# as node.spec.MAX_MODULES (not imported: it loads pydantic into every merge worker); a test keeps them equal
MAX_MODULES = 1024
FACTOR = 10.0  # a figure above this many times the design's peak is no reading of that hardware
DAY_S = 86_400.0  # no single measurement of a validate run lasts a day
_TIME = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
_NON_NEGATIVE = frozenset({"TFLOPS", "GB/s", "W", "ratio", "CPUs", *_TIME})
_CACHE_SIZE = 256
_PLAIN = frozenset({float, int})

Module = tuple[str | None, str | None]  # (id, model) as the envelope lists them


@dataclass(frozen=True)
class Bound:
    """What one check's figure may be: ``lo`` ≤ value ≤ ``hi``; ``why`` says where ``hi`` comes from."""

    lo: float
    hi: float
    why: str


@dataclass(frozen=True)
class _Bounds:
    """Bounds of the checks of one layout: positions of the bounded checks and their bounds."""

    key: tuple[list[object], ...]
    positions: list[int]
    lo: np.ndarray
    hi: np.ndarray
    why: list[str]
    floor: float  # the highest lo and the lowest hi: figures all within both need no per-check test
    ceiling: float

    def pick(self, values: list[object]) -> list[object]:
        return [values[i] for i in self.positions]


_layouts: dict[tuple[str | None, ...], _Bounds] = {}


def check_modules(where: str, modules: Sequence[Module]) -> None:
    """GpuvetError naming the file when the modules listed are no node: more than MAX_MODULES,
    or one id listed twice (its figures would pool as one module's, a fault pinned on no one)."""
    if len(modules) > MAX_MODULES:
        raise GpuvetError(f"environment.modules lists {len(modules):,} modules; no node has more than "
                          f"{MAX_MODULES:,} (docs/limits.md)", where=where,
                          fix="give the output of `gpuvet validate --json` of one node.")
    ids = Counter(m for m, _ in modules if m is not None)
    twice = [(m, n) for m, n in ids.items() if n > 1]
    if twice:
        named = ", ".join(f"{m!r} {n} times" for m, n in twice[:3]) + (" …" if len(twice) > 3 else "")
        raise GpuvetError(f"environment.modules lists one module id more than once ({named}): each module of a "
                          "node has its own id", where=where,
                          fix="give the output of `gpuvet validate --json` of one node (a hand-made or merged file "
                              "pools the figures of several modules as one).")


@cache
def _catalog(name: str) -> ModuleModel | None:
    from gpuvet.node.catalog import find_model

    return find_model(name)


def _name(model: str) -> str:
    found = _catalog(model)
    return found.name if found is not None else model


def pooled_type(where: str, node: str, node_type: str, modules: Sequence[Module], notes: list[str]) -> str:
    """The node type to pool a node by: the one it gives, unless its own modules' models say
    otherwise (validate writes the type from them: the models, '+'-joined); then those, said in
    ``notes``. A node that lists no models keeps the type it gives."""
    models = [m for _, m in modules]
    if not models or any(m is None for m in models):
        return node_type
    made = sorted({_name(m) for m in models if m is not None})
    if {_name(part) for part in node_type.split("+")} == set(made):
        return node_type
    counts = Counter(_name(m) for m in models if m is not None)
    listed = ", ".join(f"{n} × {m}" for m, n in sorted(counts.items()))
    pooled = "+".join(made)
    notes.append(f"{where}: node {node} gives node_type {node_type!r}, but its own modules are {listed}: pooled "
                 f"with the {pooled} nodes, not with {node_type!r}")
    return pooled


def _peak(models: list[ModuleModel | None], unit: str, dtype: str) -> tuple[float, str]:
    """The largest design figure of these models in ``unit``, and its source; the catalog's
    largest where a model is unknown or lacks it."""
    from gpuvet.node.catalog import CATALOG

    def figure(m: ModuleModel) -> float | None:
        return m.peak_tflops(dtype) if unit == "TFLOPS" else m.memory_bw_gbps

    known = [(figure(m), m.name) for m in models if m is not None]
    if models and len(known) == len(models) and all(v for v, _ in known):
        value, name = max((v, n) for v, n in known if v)
        return value, f"{name}'s {dtype + ' peak' if unit == 'TFLOPS' else 'memory bandwidth'}"
    if unit == "TFLOPS":
        top = max((v, m.name) for m in CATALOG.values() for v in m.tflops.values())
    else:
        top = max((m.memory_bw_gbps, m.name) for m in CATALOG.values() if m.memory_bw_gbps)
    return top[0], f"the catalog's largest {'peak' if unit == 'TFLOPS' else 'memory bandwidth'} ({top[1]})"


def bound(unit: object, name: object, module: object, between: object, by_id: dict[str, str | None],
          count: int) -> Bound | None:
    """The plausible range of one check's figure, or None where nothing bounds it."""
    if not isinstance(unit, str):
        return None
    lo = 0.0 if unit in _NON_NEGATIVE or unit.endswith("/s") else -math.inf
    if unit in _TIME:
        return Bound(lo, DAY_S / _TIME[unit], "above a day")
    if unit not in ("TFLOPS", "GB/s"):
        return Bound(lo, math.inf, "") if lo == 0.0 else None
    places = [module] if isinstance(module, str) else list(between) if isinstance(between, (list, tuple)) else []
    node_wide = not places
    ids = list(by_id) if node_wide else [p for p in places if isinstance(p, str)]
    models = [_catalog(m) if isinstance(m, str) else None for m in (by_id.get(i) for i in ids)]
    dtype = str(name).rsplit("_", 1)[-1]
    peak, source = _peak(models, unit, dtype)
    times = max(count, 1) if node_wide else 1
    scaled = f"{FACTOR:g} × {times} modules × " if times > 1 else f"{FACTOR:g} × "
    return Bound(lo, FACTOR * peak * times, f"above {scaled}{source} of {peak:,.4g} {unit}")


def _bounds(checks: NodeChecks, by_id: dict[str, str | None]) -> _Bounds:
    """The bounds of ``checks``' layout, from the cache when the last node of these models had it."""
    key = (checks.name, checks.unit, checks.module, checks.between)  # what a bound depends on
    models = tuple(sorted(by_id.items(), key=lambda kv: kv[0]))
    cache_key = tuple(x for kv in models for x in kv)
    hit = _layouts.get(cache_key)
    if hit is not None and hit.key == key:
        return hit
    positions, lo, hi, why = [], [], [], []
    for i, (unit, name, module, between) in enumerate(zip(checks.unit, checks.name, checks.module, checks.between,
                                                          strict=True)):
        b = bound(unit, name, module, between, by_id, len(by_id))
        if b is not None:
            positions.append(i)
            lo.append(b.lo)
            hi.append(b.hi)
            why.append(b.why)
    made = _Bounds(key, positions, np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64), why,
                   max(lo, default=-math.inf), min(hi, default=math.inf))
    if len(_layouts) >= _CACHE_SIZE:
        _layouts.clear()
    _layouts[cache_key] = made
    return made


def plausible(where: str, node: str, modules: Sequence[Module], checks: NodeChecks,
              notes: list[str]) -> NodeChecks:
    """``checks`` with every figure no hardware can give set to null, each named in ``notes``
    (node, check, module or link, value, and the bound it broke)."""
    by_id = {m: model for m, model in modules if m is not None}
    made = _bounds(checks, by_id)
    if not made.positions:
        return checks
    picked = made.pick(checks.value)
    if set(map(type, picked)) <= _PLAIN:
        plain = cast("list[float]", picked)
        if made.floor <= min(plain) and max(plain) <= made.ceiling:  # the usual node: one pass each, in C
            return checks
        x = np.asarray(picked, dtype=np.float64)
    else:
        x = np.asarray([float(v) if v.__class__ in (float, int) else math.nan for v in picked], dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero((x < made.lo) | (x > made.hi))
    if not bad.size:
        return checks
    value = list(checks.value)
    said = []
    for k in bad.tolist():
        i = made.positions[k]
        value[i] = None
        said.append(_named(checks, i, float(x[k]), "negative" if x[k] < 0 <= made.lo[k] else made.why[k]))
    notes.append(f"{where}: node {node}: {len(said)} figure(s) no hardware can give, left out of the peer "
                 f"comparison as corrupt readings: {'; '.join(said[:3])}{' …' if len(said) > 3 else ''}")
    return checks._replace(value=value)


def _named(checks: NodeChecks, i: int, value: float, why: str) -> str:
    module, between = checks.module[i], checks.between[i]
    pair = between if isinstance(between, (list, tuple)) else ()
    place = f" on {module}" if module else f" on {'→'.join(map(str, pair))}" if pair else ""
    return f"{checks.layer[i]}/{checks.name[i]}{place} = {value:g} {checks.unit[i]} ({why})"
