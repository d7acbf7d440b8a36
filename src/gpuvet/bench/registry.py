"""A benchmark is one unit: its module declares one ``BENCHMARK`` record (name, options, run,
the validate levels it belongs to and its options there, how a marginal figure is measured
again, which of its figures are compared among peers), and this registry finds every record
itself. The runner dispatches through it, validate loops over the benchmarks of a level and
the peer comparison asks it which figures compare, so adding a benchmark edits no list here.

The judgement of its results against the expected figures is in ``validate/expected.py``:
judging needs the shared checks layer, which sits above bench/ (docs/architecture.md)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, TypeVar

from gpuvet.bench.context import BenchContext
from gpuvet.bench.records import BenchResult
from gpuvet.checks.model import Check, Layer
from gpuvet.errors import GpuvetError

LEVELS = ("quick", "standard", "long")  # validate's levels, shortest first
Opts = TypeVar("Opts")


@dataclass(frozen=True)
class Scope:
    """Where a validate run measures: its level, the modules' ids, and the device kind ("gpu",
    or "cpu" where the host's own cores are measured)."""

    level: str
    ids: list[str]
    device: str


@dataclass(frozen=True)
class Benchmark(Generic[Opts]):
    """One benchmark, registered once by its own module."""

    name: str
    options: type[Opts]
    run: Callable[[BenchContext, Opts], list[BenchResult]]
    layers: tuple[Layer, ...]  # the check layers its figures land in; they order the benchmarks
    levels: tuple[str, ...] = ()  # the validate levels that run it
    plan: Callable[[Scope], Opts | Check] | None = None  # options at a level (None: the defaults); a Check: skipped
    again: Callable[[Check, Sequence[BenchResult], Opts], Opts] | None = None  # options to measure a marginal check again
    module_peers: tuple[str, ...] = ()  # check-name prefixes compared among the modules of one model
    pair_peers: tuple[str, ...] = ()  # check names compared among the module pairs of one link class

    @property
    def event(self) -> str:
        """What validate announces when it starts this benchmark."""
        return " and ".join(layer.value for layer in self.layers)


Registered = Benchmark[Any]  # a benchmark of any options, as the registry holds it


@cache
def benchmarks() -> tuple[Registered, ...]:
    """Every registered benchmark, in the order of their layers (compute, links, collectives,
    memory, models): the module attribute ``BENCHMARK`` of each module of this package."""
    package = importlib.import_module(__package__ or "gpuvet.bench")
    found: dict[str, Registered] = {}
    for info in pkgutil.iter_modules(package.__path__):
        record = getattr(importlib.import_module(f"{package.__name__}.{info.name}"), "BENCHMARK", None)
        if isinstance(record, Benchmark):
            if record.name in found:
                raise GpuvetError(f"benchmark {record.name!r} is registered twice",
                                  where=f"gpuvet.bench.{info.name}", fix="give each benchmark its own name.")
            found[record.name] = record
    order = list(Layer)
    return tuple(sorted(found.values(), key=lambda b: min(order.index(x) for x in b.layers)))


def find(name: str) -> Registered:
    """The benchmark called ``name``, or a clear refusal naming the ones there are."""
    for b in benchmarks():
        if b.name == name:
            return b
    raise GpuvetError(f"unknown benchmark {name!r}", fix=f"use one of {', '.join(names())}.")


def names() -> tuple[str, ...]:
    return tuple(b.name for b in benchmarks())


def of_level(level: str) -> tuple[Registered, ...]:
    """The benchmarks a validate run at ``level`` measures, in order."""
    return tuple(b for b in benchmarks() if level in b.levels)


def every_level_layers() -> tuple[Layer, ...]:
    """The layers of the benchmarks every level runs: each says "skipped" where nothing can be measured."""
    return tuple(x for b in benchmarks() if set(LEVELS) <= set(b.levels) for x in b.layers)


def measured_layers() -> frozenset[Layer]:
    return frozenset(x for b in benchmarks() for x in b.layers)


def module_peer_figures() -> tuple[str, ...]:
    """The check-name prefixes whose figures the modules of one model must agree on."""
    return tuple(p for b in benchmarks() for p in b.module_peers)


def pair_peer_figures() -> tuple[str, ...]:
    """The check names whose figures the module pairs of one link class must agree on."""
    return tuple(p for b in benchmarks() for p in b.pair_peers)


def involved(c: Check) -> tuple[str, ...] | None:
    """The modules a check was measured on (its pair, else its module), for measuring it again."""
    if c.between:
        return tuple(c.between)
    return (c.module,) if c.module else None
