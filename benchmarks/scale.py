"""Scale: switched domains of 72/144/288/576 modules and fleets of 1,000/10,000 nodes, each time
beside the bare reference that bounds it, measured in the same run.

  commands     wall of `gpuvet topo --sim P` for every preset, and of `validate --level quick` and
               `doctor` on nvl72..nvl576, beside the wall of a bare
               `python -c "import numpy, pydantic, typer, rich, yaml"` (what any command must load)
               and of the stack floor: the same libraries parsing one option into a pydantic
               model and printing it (typer coerces options through pydantic).
  domain rows  all-pairs routes + max-min flows (solve_flows), and the same flows from the first
               8 sources by the array solver and by the plain-Python reference solver (the
               oracle; the subset keeps it short); the link matrix.
  fleet rows   peer analysis of N nodes x 8 modules x 100 metrics in real-shaped envelopes (with
               evidence, bools, strings, a skip: ~275 KB a node), made one at a time and folded
               two ways: as Python objects, beside a plain-Python read of every figure; and as
               the JSON bytes a file holds (what `fleet merge` does), beside a bare orjson parse
               and a bare scan that builds nothing; analysis beside numpy's median over the same
               array; medians of 3-5 repeats; peak memory of the process.
  merge        with --merge-files N [N ...]: `fleet merge` of N envelope files in a folder, as a
               user runs it, with --jobs 1 and the default workers: in this process (the fold
               and the analysis) and as the command (wall, peak memory; same JSON required),
               beside a bare scan and a bare parse of the same files in one process.
  logbook      `Logbook.add_samples` beside bare `sqlite3.executemany` of the same rows
               (benchmarks/logbook_ingest.py, interleaved, best of 3).

Targets (issue 22): topo, validate --level quick and doctor on nvl576 <= 10 s each; `topo --sim`
any preset <= 0.5 s; all-pairs flows at 576 <= 1 s; 1,000 nodes <= 0.5 s and 10,000 nodes <= 5 s
within 2 GiB; logbook ingest >= 0.7 of bare sqlite. A 2-core machine shared with other work:
read the ratios, not only the seconds.

    python benchmarks/scale.py [--nodes 1000 10000] [--modules 72 144 288 576] [--no-commands]
                               [--repeats N] [--merge-files N ...] [--command-timeout 600]
    python benchmarks/scale.py --modules --nodes   # the command walls of topo only (no validate/doctor)
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from gpuvet.fleet.peers import PeerTable
from gpuvet.node.build import build_node
from gpuvet.node.flow import max_min_fair_csr, solve_flows
from gpuvet.node.flow_reference import max_min_fair_reference
from gpuvet.node.matrix import link_matrix
from gpuvet.node.routing import Router
from gpuvet.node.spec import load_spec, preset_names

sys.path.insert(0, str(Path(__file__).parent))
import logbook_ingest  # noqa: E402  (a sibling benchmark: the same rows and the same bare reference)


def _best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _fresh(preset: str) -> Any:
    spec, where = load_spec(preset)
    return build_node(spec, where)  # a new node: nothing memoised yet


def _all_pairs(router: Router, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    at = np.array([router.index[m] for m in ids], dtype=np.int64)
    src, dst = np.repeat(at, len(at)), np.tile(at, len(at))
    keep = src != dst
    return src[keep], dst[keep]


def _wall(args: list[str], timeout: float = 300.0) -> float | None:
    """Seconds from start to exit; None when cut at ``timeout``. Waited for with a blocking wait
    and a timer that kills: ``subprocess.run(timeout=...)`` polls, sleeping up to 50 ms between
    looks, which added 0-50 ms to every wall (more than some differences measured here)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "GPUVET_HOME": os.environ.get("GPUVET_HOME", "/tmp/gpuvet-scale")})
    cut = threading.Event()
    timer = threading.Timer(timeout, lambda: (cut.set(), proc.kill()))
    timer.start()
    proc.wait()
    took = time.perf_counter() - t0
    timer.cancel()
    return None if cut.is_set() else took


def domain_row(modules: int) -> dict[str, Any]:
    preset = f"nvl{modules}"
    def flows() -> Any:
        node = _fresh(preset)
        router = Router(node)
        return solve_flows(router, *_all_pairs(router, node.module_ids))
    flows_s, solved = _best(flows, 3)
    node = _fresh(preset)
    router = Router(node)
    src, dst = _all_pairs(router, node.module_ids)
    subset = src < router.index[node.module_ids[8]] if len(node.module_ids) > 8 else src >= 0
    table = router.route_table_idx(src[subset], dst[subset])
    paths = [table.edges[table.indptr[i]:table.indptr[i + 1]].tolist() for i in range(len(table.indptr) - 1)]
    array_s, fast = _best(lambda: max_min_fair_csr(table.indptr, table.edges, router.capacity), 5)
    ref_s, (slow, _) = _best(lambda: max_min_fair_reference(paths, router.capacity.tolist()), 3)
    matrix_s, _ = _best(lambda: link_matrix(_fresh(preset)), 1)
    return {"modules": modules, "flows": len(solved.gbps), "flows_s": flows_s, "subset": int(subset.sum()),
            "array_s": array_s, "reference_s": ref_s, "agree": bool(np.array_equal(fast.rates, slow)),
            "matrix_s": matrix_s}


_SOFTWARE = (("persistence_mode", True), ("ecc", True), ("power_limit", 700), ("clocks_locked", False),
             ("other_processes", 0))


def _check(m: int, k: int, value: float) -> dict[str, Any]:
    """A measured check with the keys validate --json writes for a benchmark (evidence without
    the per-module telemetry, which real envelopes also carry)."""
    return {"layer": "compute", "name": f"metric_{k:03d}", "verdict": "pass", "value": value, "unit": "x",
            "expected": 100.0, "module": f"gpu{m}", "pct_of_peak": value * 0.8, "pct_of_expected": value,
            "cv": 0.003, "device": "gpu",
            "evidence": {"stats": {"n": 5, "median": value, "iqr": 0.2, "min": value - 0.3, "max": value + 0.3}}}


def envelopes(nodes: int, values: np.ndarray) -> Iterator[tuple[str, dict[str, Any]]]:
    """Validate envelopes made one at a time from a (nodes, 8, 100) array (never all at once),
    shaped like real ones: besides the measured checks, per module the software checks (bools
    and ints), the inventory's and driver's strings, and one skipped check."""
    modules, metrics = values.shape[1], values.shape[2]
    for n in range(nodes):
        checks: list[dict[str, Any]] = [
            {"layer": "inventory", "name": "modules", "verdict": "pass", "value": modules, "unit": None,
             "expected": modules, "device": "gpu"},
            {"layer": "inventory", "name": "topology", "verdict": "pass", "value": "as designed", "unit": None,
             "expected": "as designed", "device": "gpu"},
            {"layer": "software", "name": "driver", "verdict": "pass", "value": "570.86", "unit": None,
             "expected": "570.86", "device": "gpu"}]
        checks += [{"layer": "software", "name": name, "verdict": "pass", "value": v, "unit": None, "expected": v,
                    "module": f"gpu{m}", "device": "gpu"} for m in range(modules) for name, v in _SOFTWARE]
        checks += [_check(m, k, float(values[n, m, k])) for m in range(modules) for k in range(metrics)]
        checks.append({"layer": "collective", "name": "all_to_all", "verdict": "skip", "value": None, "unit": "GB/s",
                       "expected": None, "device": "gpu", "evidence": {"why": "one process: no peers"}})
        yield f"node{n}", {"schema_version": 1, "simulated": True,
                           "environment": {"node": f"node{n:05d}", "node_type": "H200-SXM"}, "checks": checks}


def _read_every_figure(env: dict[str, Any]) -> list[Any]:
    """The plain-Python floor of any fold of dicts: one look at each check's value."""
    return [c["value"] for c in env["checks"]]


def _fleet_values(nodes: int) -> np.ndarray:
    """(nodes, 8 modules, 100 metrics) figures around 100, one module and one node planted low."""
    values = np.random.default_rng(0).normal(100.0, 1.0, (nodes, 8, 100))
    values[7, 3, 5] *= 0.90
    values[nodes // 2, :, 42] *= 0.92
    return values


def _dumps() -> Callable[[Any], bytes]:
    try:
        import orjson

        return orjson.dumps  # type: ignore[no-any-return]
    except ImportError:
        import json

        return lambda doc: json.dumps(doc).encode()


def _scan() -> Callable[[bytes], Any]:
    """The floor of any reader of JSON bytes: a syntax check of the whole document that builds
    nothing (msgspec decoding into a record with no fields); json.loads without msgspec."""
    try:
        import msgspec
    except ImportError:
        import json

        return json.loads

    class Nothing(msgspec.Struct):
        pass
    return msgspec.json.Decoder(Nothing).decode


def _timed(took: dict[str, float], key: str, step: Callable[..., Any], *args: Any) -> None:
    t0 = time.perf_counter()
    step(*args)
    took[key] += time.perf_counter() - t0


def fleet_row(nodes: int, repeats: int) -> dict[str, Any]:
    """Fold in and analyse ``repeats`` times (medians; this VM's speed wanders by up to 2x within
    a minute), two ways: envelopes as Python objects (``PeerTable.add``), and as the JSON bytes a
    file holds, read as `fleet merge` reads each file (``fold.fold_bytes``). Beside each, at the
    same moment, its floors: a plain-Python read of every figure; a bare parse of the bytes
    (``parse_json``: orjson) and a bare scan of them that builds nothing."""
    from gpuvet.fleet.fold import fold_bytes, parse_json

    values, dumps, scan = _fleet_values(nodes), _dumps(), _scan()
    keys = ("fold", "read", "bytes", "parse", "scan", "analyse", "total", "bytes_total")
    runs: dict[str, list[float]] = {k: [] for k in keys}
    size = 0
    for _ in range(repeats):
        table, by_bytes = PeerTable(), PeerTable()
        took = dict.fromkeys(keys[:5], 0.0)
        for where, env in envelopes(nodes, values):
            data = dumps(env)
            size = len(data)
            _timed(took, "fold", table.add, where, env)
            _timed(took, "read", _read_every_figure, env)
            _timed(took, "bytes", fold_bytes, by_bytes, where, data)
            _timed(took, "parse", parse_json, data)
            _timed(took, "scan", scan, data)
        analyse_s, result = _best(table.analyse, 1)
        if by_bytes.analyse() != result:
            sys.exit("the table folded from bytes differs from the one folded from objects")
        took |= {"analyse": analyse_s, "total": took["fold"] + analyse_s, "bytes_total": took["bytes"] + analyse_s}
        for key in keys:
            runs[key].append(took[key])
        del table, by_bytes
    grid = values.reshape(nodes * 8, 100)
    median_s, _ = _best(lambda: np.median(grid, axis=0), 3)
    return {**{k: statistics.median(v) for k, v in runs.items()}, "nodes": nodes, "figures": result.values,
            "repeats": repeats, "median_s": median_s, "outliers": len(result.outliers), "envelope_kb": size / 1e3,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def merge_row(nodes: int, timeout: float) -> None:
    """`fleet merge` of ``nodes`` envelope files, as a user runs it on a results folder: in this
    process (``fold_files`` and the analysis: the merge less the interpreter's start), with one
    process and with the default workers; and as the command, wall and peak memory, with the same
    two. Beside them, reading the same files in one process: a bare scan that builds nothing (the
    floor of any reader) and a bare parse (``read_envelope``: orjson if installed, else json),
    each file let go at once. The two commands must print the same JSON."""
    import json

    from gpuvet.fleet.fold import default_jobs, fold_files, read_envelope

    scan, jobs = _scan(), default_jobs()
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for i, (_, env) in enumerate(envelopes(nodes, _fleet_values(nodes))):
            path = Path(folder) / f"node{i:05d}.json"
            path.write_text(json.dumps(env), encoding="utf-8")  # as validate --json writes it
            paths.append(str(path))
        size = sum(Path(p).stat().st_size for p in paths)
        def each(read: Callable[[Path], Any]) -> None:
            for p in paths:
                read(Path(p))  # and let go: the parent stays small (its workers are forked from it)
        scan_s, _ = _best(lambda: each(lambda p: scan(p.read_bytes())), 1)
        parse_s, _ = _best(lambda: each(read_envelope), 1)
        here = {j: _best(lambda j=j: fold_files(paths, j).analyse(), 1 if j == 1 and nodes > 2000 else 3)[0]
                for j in dict.fromkeys((1, jobs))}
        command = {j: _merge_command(folder, j, timeout) for j in here}
    same = len({out for _, _, out in command.values()}) == 1
    print(f"fleet merge of {nodes:,} files ({size / 1e9:.2f} GB), {jobs} worker{'s' if jobs > 1 else ''} by default")
    print("  in process (fold + analysis): " + ", ".join(f"--jobs {j} {_s(t)}" for j, t in here.items())
          + f"; one process reading the same files: a bare scan {_s(scan_s)}, a bare parse {_s(parse_s)}; "
            f"default = {here[jobs] / scan_s:.2f}x the bare scan")
    print("  command (wall, peak RSS of the largest process): "
          + ", ".join(f"--jobs {j} {_s(t)} {rss:.0f} MiB" for j, (t, rss, _) in command.items())
          + f" (same JSON: {same})")
    print("  targets: 1,000 nodes <= 0.5 s; 10,000 nodes <= 5 s within 2 GiB\n")


# Runs a command and says its wall and peak memory. A child started from this (large) process
# would report this process's peak as its own (Linux keeps the high-water mark across exec, and
# subprocess starts children by vfork); started from this small one, it reports its own, and its
# workers' (waited for) too.
_RUSAGE = """
import os, sys, time
null = os.open(os.devnull, os.O_WRONLY)
t0 = time.perf_counter()
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 2)])
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - t0, usage.ru_maxrss, os.waitstatus_to_exitcode(status), file=sys.stderr)
"""


def _merge_command(folder: str, jobs: int, timeout: float) -> tuple[float, float, bytes]:
    """(wall, peak RSS in MiB of the command or its largest worker, stdout) of `gpuvet fleet
    merge FOLDER --json`; exits on a failure (1 is a finding: the planted outliers)."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _RUSAGE, sys.executable, "-m", "gpuvet", "fleet",
                                 "merge", folder, "--json", "--jobs", str(jobs)],
                                stdout=out, stderr=subprocess.PIPE, start_new_session=True)
        try:
            _, said = proc.communicate(timeout=timeout)  # polls: the wall is taken inside, by a blocking wait
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            sys.exit(f"fleet merge --jobs {jobs} took more than {timeout:.0f} s")
        took, rss_kib, code = said.decode().split()[-3:]
        if int(code) not in (0, 1):
            sys.exit(f"fleet merge --jobs {jobs} failed with exit {code}")
        out.seek(0)
        return float(took), int(rss_kib) / 1024, out.read()


def _s(x: float | None) -> str:
    return "timeout" if x is None else (f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.2f} s")


def _gpuvet(*args: str, timeout: float = 600.0) -> float | None:
    return _wall([sys.executable, "-m", "gpuvet", *args], timeout)


# What the stack costs before gpuvet does anything: typer (0.2x) coerces every option through a
# pydantic TypeAdapter, which loads pydantic's schema machinery (`import pydantic` alone is lazy);
# a spec is a pydantic model; numpy for the arrays; rich to print.
_STACK = """
import numpy, rich.console, typer, yaml
from pydantic import BaseModel
class Spec(BaseModel):
    name: str
app = typer.Typer()
@app.command()
def show(sim: str = "x") -> None:
    rich.console.Console().print(Spec(name=sim).name)
app(["--sim", "hgx"])
"""


def command_rows(modules: list[int], timeout: float) -> None:
    """Wall of each command beside bare python with the libraries every command loads, and
    beside the same libraries doing what any command with an option does (the stack floor)."""
    bare = min(t for t in (_wall([sys.executable, "-c", "import numpy, pydantic, typer, rich, yaml"]) for _ in range(3))
               if t is not None)
    stack = min(t or float("inf") for t in (_wall([sys.executable, "-c", _STACK]) for _ in range(3)))
    cli = min(t or float("inf") for t in (_gpuvet("--help") for _ in range(3)))
    print(f"bare python + numpy/pydantic/typer/rich/yaml imports: {_s(bare)} wall; the same stack parsing one "
          f"option into a pydantic model and printing it: {_s(stack)}; `gpuvet --help` {_s(cli)} "
          f"(builds every command; one command builds only itself)")
    topo = {p: min(t or float("inf") for t in (_gpuvet("topo", "--sim", p) for _ in range(3))) for p in preset_names()}
    print("topo --sim (best of 3): " + ", ".join(f"{p} {_s(t)}" for p, t in topo.items()))
    worst = max(topo, key=lambda p: topo[p])
    print(f"  slowest preset {worst}: {_s(topo[worst])} = {topo[worst] / bare:.1f}x bare imports, "
          f"{topo[worst] / stack:.1f}x the stack floor, {topo[worst] / cli:.1f}x --help "
          f"(target <= 0.5 s; nvl576 <= 10 s)\n")
    print(f"{'preset':>8} {'topo':>9} {'validate quick':>15} {'doctor':>9}   (wall; bare {_s(bare)})")
    for m in modules:
        p = f"nvl{m}"
        valid = _gpuvet("validate", "--sim", p, "--level", "quick", timeout=timeout)
        doctor = _gpuvet("doctor", "--sim", p, timeout=timeout)
        print(f"{p:>8} {_s(topo.get(p)):>9} {_s(valid):>15} {_s(doctor):>9}")
    print("targets: topo, validate --level quick and doctor on nvl576 <= 10 s each\n")


def logbook_row() -> None:
    rows = logbook_ingest.make_rows(8, 12_000)
    parts = logbook_ingest.batches(rows, 50_000)
    with tempfile.TemporaryDirectory() as folder:
        ours, bare = logbook_ingest.best(
            3, lambda i: logbook_ingest.gpuvet_rate(Path(folder) / f"lb{i}.db", parts, 8),
            lambda i: logbook_ingest.bare_sqlite_rate(Path(folder) / f"bare{i}.db", parts))
    print(f"logbook ingest, {len(rows):,} samples: gpuvet {ours:,.0f}/s, bare sqlite3.executemany {bare:,.0f}/s, "
          f"ratio {ours / bare:.2f} (target >= 0.70)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", type=int, nargs="*", default=[72, 144, 288, 576])
    parser.add_argument("--nodes", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--no-commands", action="store_true", help="skip the command walls (doctor is slow)")
    parser.add_argument("--repeats", type=int, default=0,
                        help="fleet rows: folds per size (default 5 up to 2,000 nodes, else 3)")
    parser.add_argument("--merge-files", type=int, nargs="*", default=[], metavar="N",
                        help="also write N envelope files and time `fleet merge` on them, for each N given "
                             "(10,000: 3 GB, ~70 s to write)")
    parser.add_argument("--command-timeout", type=float, default=600.0, help="seconds before a command is cut")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared with other work)\n")
    if not args.no_commands:
        command_rows(args.modules, args.command_timeout)
    print(f"{'modules':>7} {'flows':>8} {'all-pairs flows':>15} {'subset':>7} {'array':>9} {'plain Python':>12} "
          f"{'ratio':>6} {'same':>5} {'matrix':>9}")
    for m in args.modules:
        r = domain_row(m)
        print(f"{m:>7} {r['flows']:>8,} {_s(r['flows_s']):>15} {r['subset']:>7,} {_s(r['array_s']):>9} "
              f"{_s(r['reference_s']):>12} {r['reference_s'] / r['array_s']:>5.1f}x {str(r['agree']):>5} "
              f"{_s(r['matrix_s']):>9}")
    print("target: all-pairs flows at 576 <= 1 s\n")
    print(f"{'nodes':>6} {'figures':>10} {'':>4}{'fold in':>9} {'floor':>9} {'analyse':>9} {'total':>9} "
          f"{'parse':>9} {'np.median':>9} {'outliers':>8} {'peak RSS':>8}")
    for n in args.nodes:
        r = fleet_row(n, args.repeats or (5 if n <= 2000 else 3))
        common = f"{_s(r['median_s']):>9} {r['outliers']:>8} {r['peak_mib']:>4.0f} MiB"
        print(f"{n:>6} {r['figures']:>10,} {'objs':>4}{_s(r['fold']):>9} {_s(r['read']):>9} {_s(r['analyse']):>9} "
              f"{_s(r['total']):>9} {'':>9} {common}")
        print(f"{'':>6} {'':>10} {'JSON':>4}{_s(r['bytes']):>9} {_s(r['scan']):>9} {_s(r['analyse']):>9} "
              f"{_s(r['bytes_total']):>9} {_s(r['parse']):>9}")
        print(f"{'':>6} medians of {r['repeats']}; envelopes of {r['envelope_kb']:.0f} KB as objects: fold in = "
              f"{r['fold'] / r['read']:.1f}x a plain read of every figure; as JSON bytes: fold in = "
              f"{r['bytes'] / r['scan']:.1f}x a bare scan that builds nothing, {r['bytes'] / r['parse']:.2f}x a bare "
              f"parse; analyse = {r['analyse'] / r['median_s']:.1f}x one np.median of the same array")
    print("targets: 1,000 nodes <= 0.5 s; 10,000 nodes <= 5 s within 2 GiB (peak RSS is the whole process)\n")
    for n in args.merge_files:
        merge_row(n, args.command_timeout)
    logbook_row()
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
