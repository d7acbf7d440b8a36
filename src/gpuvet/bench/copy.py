"""Every boundary channel: host→module and module→host (pinned and pageable), module→module
one way and both ways per pair, and concurrent sets — all modules to the host, the host to all
modules, every module to the module n/2 away — whose aggregate is compared with the sum of the
same transfers measured alone (the contention ratio: well under 1 exposes a shared link or a
switch bottleneck). GB = 1e9 bytes; each transfer's bytes are counted once.

On the host backend (no module) the channel measured is host memory to host memory: one copy
alone, then one per core at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, Unpack

from gpuvet.backends.engine import HOST, BenchModule, Transfer
from gpuvet.backends.host_load import affinity_cpus
from gpuvet.bench.context import BenchContext
from gpuvet.bench.records import BenchResult, Where, rate_stats
from gpuvet.bench.registry import LEVELS, Benchmark, Scope, involved
from gpuvet.checks.model import Check, Layer
from gpuvet.errors import GpuvetError
from gpuvet.node.model import PCIE_LANE_GBPS

NAME = "copy"
TESTS = ("h2d", "d2h", "pageable", "p2p", "concurrent")


# Above this many modules, ``pairs="sampled"`` measures each module's ring neighbour and
# bisection partner instead of every pair (n² grows to 331,200 pairs at 576 modules).
SAMPLE_ABOVE = 16


@dataclass(frozen=True)
class CopyOptions:
    modules: tuple[str, ...] | None = None
    size_bytes: int | None = None  # per transfer
    tests: tuple[str, ...] = TESTS
    pairs: Literal["all", "sampled"] = "all"  # module pairs p2p measures (see p2p_pairs)


def p2p_pairs(ids: Sequence[str], policy: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(one-way pairs, two-way pairs). ``sampled`` on more than SAMPLE_ABOVE modules: every
    module sends to and receives from its ring neighbour and the module n/2 away, and each
    neighbour pair runs both ways — every module's own fabric links carry traffic in both
    directions, in 3n transfers instead of 1.5n². A fault on one direct link between two
    modules that are not sampled is left to the standard level, which measures every pair."""
    if policy == "all" or len(ids) <= SAMPLE_ABOVE:
        return ([(a, b) for a in ids for b in ids if a != b],
                [(a, b) for x, a in enumerate(ids) for b in ids[x + 1:]])
    n = len(ids)
    one_way = list(dict.fromkeys([(a, ids[(i + 1) % n]) for i, a in enumerate(ids)]
                                 + [(a, ids[bisection_partner(i, n)]) for i, a in enumerate(ids)]))
    return one_way, [(a, ids[(i + 1) % n]) for i, a in enumerate(ids)]


def default_size(modules: Sequence[BenchModule]) -> int:
    return 64 * 2**20 if any(m.is_host for m in modules) else 256 * 2**20


@dataclass
class _Run:
    ctx: BenchContext
    size: int
    results: list[BenchResult]

    def one(self, metric: str, transfers: list[Transfer], involved: list[str], peak: float | None = None,
            **where: Unpack[Where]) -> BenchResult:
        sim = self.ctx.simulated
        sized: Where = {**where, "size_bytes": self.size}
        got = self.ctx.attempt(NAME, metric, "GB/s", lambda: self.ctx.engine.copy(transfers), involved, **sized)
        if isinstance(got, BenchResult):
            record = got
        else:
            timing, telemetry = got
            moved = sum(t.nbytes for t in transfers)
            record = BenchResult.measured(NAME, metric, "GB/s", rate_stats(timing, moved / 1e9), simulated=sim,
                                          peak=peak, **sized)
            record = replace(record, telemetry=telemetry)
        self.results.append(record)
        return record

    def concurrent(self, name: str, transfers: list[Transfer], alone: list[BenchResult], involved: list[str]) -> None:
        aggregate = self.one("aggregate", transfers, involved, detail={"set": name, "transfers": len(transfers)})
        values = [r.value for r in alone]
        if aggregate.value is None or any(v is None for v in values):
            self.results.append(BenchResult.skipped(
                NAME, "contention_ratio", "ratio", "the set or one of its transfers alone was not measured",
                simulated=self.ctx.simulated, detail={"set": name}))
            return
        alone_sum = sum(v for v in values if v is not None)
        spreads = [r.cv or 0.0 for r in [aggregate, *alone]]
        self.results.append(BenchResult.ratio_at_most_one(
            NAME, "contention_ratio", aggregate.value / alone_sum, simulated=self.ctx.simulated,
            spread=max(spreads), size_bytes=self.size,
            detail={"set": name, "aggregate_gbps": aggregate.value, "sum_alone_gbps": alone_sum,
                    "transfers": len(transfers)},
        ))


def pcie_gbps(module: BenchModule) -> float | None:
    """The module's own PCIe link, per direction (its datasheet generation and width)."""
    m = module.model
    if m.pcie_gen is None or m.pcie_width is None:
        return None
    return PCIE_LANE_GBPS[m.pcie_gen] * m.pcie_width


def pair_gbps(a: BenchModule, b: BenchModule) -> float | None:
    """What a transfer between two modules can reach: the fabric if both have it, else PCIe."""
    fabric = [a.model.fabric_gbps, b.model.fabric_gbps]
    if all(fabric):
        return min(f for f in fabric if f)
    pcie = [pcie_gbps(a), pcie_gbps(b)]
    return min(p for p in pcie if p) if all(pcie) else None


def bisection_partner(index: int, count: int) -> int:
    """The module n/2 away: every module sends once and receives once, and on a node built of
    two halves every transfer crosses between them."""
    return (index + max(count // 2, 1)) % count


def _check_options(opts: CopyOptions) -> None:
    bad = [t for t in opts.tests if t not in TESTS]
    if bad:
        raise GpuvetError(f"unknown copy test {', '.join(bad)}", where="--tests", fix=f"use some of {', '.join(TESTS)}.")
    if opts.size_bytes is not None and opts.size_bytes < 4096:
        raise GpuvetError("transfers under 4 KiB measure latency, not bandwidth", where="--size-bytes",
                          fix="use at least 4096.")


def run(ctx: BenchContext, opts: CopyOptions = CopyOptions()) -> list[BenchResult]:
    _check_options(opts)
    modules = ctx.select(opts.modules)
    size = opts.size_bytes or default_size(modules)
    run = _Run(ctx, size, [])
    if any(m.is_host for m in modules):
        _host_only(run, size)
        return run.results
    ids = [m.id for m in modules]
    by_id = {m.id: m for m in modules}
    steps = list(opts.tests)
    total = len(steps)
    h2d: dict[str, BenchResult] = {}
    d2h: dict[str, BenchResult] = {}
    for i, test in enumerate(steps):
        ctx.progress(i, total, f"copy {test}")
        if test in ("h2d", "d2h"):
            for m in ids:
                t = Transfer(HOST, m, size) if test == "h2d" else Transfer(m, HOST, size)
                (h2d if test == "h2d" else d2h)[m] = run.one(test, [t], [m], pcie_gbps(by_id[m]), module=m,
                                                             detail={"pinned": True})
        elif test == "pageable":
            for m in ids:
                for metric, t in (("h2d_pageable", Transfer(HOST, m, size, pinned=False)),
                                  ("d2h_pageable", Transfer(m, HOST, size, pinned=False))):
                    run.one(metric, [t], [m], pcie_gbps(by_id[m]), module=m, detail={"pinned": False})
        elif test == "p2p":
            one_way, two_way = p2p_pairs(ids, opts.pairs)
            for a, b in one_way:
                run.one("p2p_one_way", [Transfer(a, b, size)], [a, b], pair_gbps(by_id[a], by_id[b]), between=(a, b))
            for a, b in two_way:
                two_way_peak = pair_gbps(by_id[a], by_id[b])
                run.one("p2p_two_way", [Transfer(a, b, size), Transfer(b, a, size)], [a, b],
                        2 * two_way_peak if two_way_peak else None, between=(a, b),
                        detail={"counts": "both directions together"})
        elif test == "concurrent":
            if not h2d:
                h2d = {m: run.one("h2d", [Transfer(HOST, m, size)], [m], pcie_gbps(by_id[m]), module=m,
                                  detail={"pinned": True}) for m in ids}
            if not d2h:
                d2h = {m: run.one("d2h", [Transfer(m, HOST, size)], [m], pcie_gbps(by_id[m]), module=m,
                                  detail={"pinned": True}) for m in ids}
            run.concurrent("host_to_all", [Transfer(HOST, m, size) for m in ids], [h2d[m] for m in ids], ids)
            run.concurrent("all_to_host", [Transfer(m, HOST, size) for m in ids], [d2h[m] for m in ids], ids)
            if len(ids) >= 2:
                pairs = [(a, ids[bisection_partner(i, len(ids))]) for i, a in enumerate(ids)]
                alone = [_p2p_alone(run, a, b, size, pair_gbps(by_id[a], by_id[b])) for a, b in pairs]
                run.concurrent("all_pairs", [Transfer(a, b, size) for a, b in pairs], alone, ids)
    ctx.progress(total, total, "copy")
    return run.results


def _p2p_alone(run: _Run, a: str, b: str, size: int, peak: float | None) -> BenchResult:
    for r in run.results:
        if r.metric == "p2p_one_way" and r.between == (a, b):
            return r
    return run.one("p2p_one_way", [Transfer(a, b, size)], [a, b], peak, between=(a, b))


def _host_only(run: _Run, size: int) -> None:
    """No module: host memory to host memory, one copy alone and one per core at once."""
    ctx = run.ctx
    ctx.progress(0, 2, "copy host memory")
    alone = run.one("host_copy", [Transfer(HOST, HOST, size)], [], detail={"note": "host memory to host memory"})
    workers = ctx.engine.cpu_threads or affinity_cpus()
    if workers < 2:
        run.results.append(BenchResult.skipped(
            NAME, "contention_ratio", "ratio", "one CPU free for this run: no copies to run at once",
            simulated=ctx.simulated, detail={"set": "host_copies"}))
        ctx.progress(2, 2, "copy")
        return
    ctx.progress(1, 2, f"copy host memory, {workers} at once")
    run.concurrent("host_copies", [Transfer(HOST, HOST, size) for _ in range(workers)], [alone] * workers, [])
    ctx.progress(2, 2, "copy")


def _plan(scope: Scope) -> CopyOptions:
    """A quick run leaves out pageable copies, moves 64 MiB each, and samples the pairs of a big node."""
    if scope.level == "quick":
        return CopyOptions(tests=("h2d", "d2h", "p2p", "concurrent"), size_bytes=64 * 2**20, pairs="sampled")
    return CopyOptions(tests=TESTS)


def _again(c: Check, first: Sequence[BenchResult], opts: CopyOptions) -> CopyOptions:
    """The pair (or module) of the check again, over the channel it measured, at the same size."""
    tests = ("p2p",) if c.name.startswith("p2p") else ("h2d", "d2h")
    return CopyOptions(modules=involved(c), size_bytes=opts.size_bytes, tests=tests)


BENCHMARK = Benchmark(NAME, CopyOptions, run, (Layer.HOST_LINK, Layer.MODULE_LINK), LEVELS, _plan, _again,
                      module_peers=("h2d", "d2h"), pair_peers=("p2p_one_way", "p2p_two_way"))
