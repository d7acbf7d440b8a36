"""The checks that judge how data moves between modules: the copy path between pairs, NCCL's
environment, pair bandwidth against the design, collectives against the performance model, and
the host that feeds them. Apart from doctor/checks.py so each file holds one family of checks."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from gpuvet.backends.readings import Unavailable
from gpuvet.captures.records import NcclResult
from gpuvet.checks.model import Check
from gpuvet.doctor.capture_pairs import MIN_PAIRS, captured_pairs
from gpuvet.doctor.collective_expect import LARGE, SLOW, Judged, judge_all, op_said, sentence
from gpuvet.doctor.collective_peers import peer_judged
from gpuvet.doctor.evidence import PAIR_TESTS, Evidence
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import HIGH, MEDIUM, Outcome, clear, confirmed, unknown
from gpuvet.knowledge import threshold
from gpuvet.quantities import binary_size

SLOW_NCCL_VARS = {
    "NCCL_P2P_DISABLE": ("1", "P2P between modules is disabled"),
    "NCCL_SHM_DISABLE": ("1", "shared-memory transport disabled"),
    "NCCL_NVLS_ENABLE": ("0", "NVLink SHARP (in-switch reduction) disabled"),
    "NCCL_P2P_LEVEL": ("LOC", "P2P restricted to the same PCIe switch"),
    "NCCL_PROTO": ("Simple", "protocol forced to Simple (no LL/LL128 for small messages)"),
    "NCCL_MAX_NCHANNELS": ("1", "one channel only"),
}


def p2p_path(ev: Evidence) -> Outcome:
    if ev.local and ev.env.get("NCCL_P2P_DISABLE") == "1":  # the environment only of a node gpuvet runs on
        return confirmed("NCCL_P2P_DISABLE=1 is set", finding("p2p_disabled", HIGH, variable="NCCL_P2P_DISABLE=1"))
    d2d = ev.captures.nvbandwidth.get("device_to_device_memcpy_read_ce") or \
        ev.captures.nvbandwidth.get("device_to_device_memcpy_write_ce")
    if d2d:
        values = [v for row in d2d for v in row if v]
        if values and statistics.median(values) < threshold("pcie_class_copy_gbps"):  # PCIe-class, not a fabric's
            if _has_fabric(ev):
                return confirmed("module-to-module copies run at PCIe speed", finding(
                    "p2p_disabled", MEDIUM, median_gbps=statistics.median(values),
                    source="nvbandwidth device_to_device", carried=_rows_read(d2d)))
            return clear(f"module-to-module copies at {statistics.median(values):.1f} GB/s: PCIe speed, and no "
                         "NVLink is known on these modules (PCIe-only cards reach about this)",
                         Cited(ev.capture_source("nvbandwidth") or "nvbandwidth", "device_to_device median",
                               f"{statistics.median(values):.1f} GB/s"))
    checks = ev.pair_checks
    if checks is None:
        return unknown("no pair measurements (one module, or no benchmark engine)")
    staged = _host_staged(checks)
    if staged is not None:
        return staged
    if not any(c.pct_of_expected is not None for c in checks):
        return unknown("no pair measurement has an expected figure to compare with")
    return clear("pairs use their direct paths", _pairs_cited(ev, checks))


def _rows_read(matrix: list[list[float | None]]) -> dict[str, str]:
    """For a cut matrix (rows left empty by the reader), how much of it the median rests on; nothing
    for a whole one."""
    read = sum(1 for row in matrix if any(v is not None for v in row))
    return {} if read == len(matrix) else {"rows_read": f"{read} of {len(matrix)}: the matrix is cut, judged "
                                                         "from the rows read"}


def _far(c: Check) -> bool:
    """A pair under the knowledge base's bound for a copy far below its design (validate's fail bound)."""
    return c.pct_of_expected is not None and c.pct_of_expected < threshold("pair_far_below_pct")


def _host_staged(checks: list[Check]) -> Outcome | None:
    """P2P off, read from the pairs: every pair a fabric should carry runs far below it, or (a PCIe
    node) pairs that share no module run far below their design when copied both ways at once while
    their one-way copies keep their rate: staged through host memory, the reverse copy shares the
    host's link (no one module or link explains pairs that share none). None: neither."""
    fabric = [c for c in checks if isinstance(c.expected, float) and c.expected > threshold("fabric_pair_gbps")]
    if fabric and all(_far(c) for c in fabric):
        return confirmed("every pair runs at host-staged speed though fabric links are up", _staged(fabric))
    one = [c for c in checks if c.name == "p2p_one_way" and c.between and c.pct_of_expected is not None]
    at_rate = {frozenset(c.between) for c in one if c.between} - {frozenset(c.between) for c in one
                                                                   if c.between and _far(c)}
    both = [c.between for c in checks if c.name == "p2p_two_way" and c.between and _far(c)]
    if len(both) >= 2 and all(frozenset(b) in at_rate for b in both) and not set.intersection(*map(set, both)):
        return confirmed("pairs copied both ways at once run at host-staged speed while one way keeps its rate",
                         _staged([c for c in checks if c.name == "p2p_two_way" and _far(c)]))
    return None


def _staged(pairs: list[Check]) -> Finding:
    return finding("p2p_disabled", MEDIUM, median_gbps=statistics.median(c.value for c in pairs
                                                                         if isinstance(c.value, float)),
                   expected_gbps=statistics.median(c.expected for c in pairs if isinstance(c.expected, float)))


def _pairs_cited(ev: Evidence, checks: list[Check]) -> Cited:
    pcts = [c.pct_of_expected for c in checks if c.pct_of_expected is not None]
    return Cited(f"p2p copy benchmark on {ev.source}", "% of what the links carry (min / median)",
                 f"{min(pcts):.0f} % / {statistics.median(pcts):.0f} %", where=f"{len(pcts)} pair(s)")


def _has_fabric(ev: Evidence) -> bool:
    """NVLink known on these modules: from the topology, or from the model nvbandwidth names."""
    from gpuvet.node.catalog import find_model

    if ev.node is not None and ev.node.fabric_links():
        return True
    models = [find_model(d.name) for d in ev.captures.nvb_devices]
    return bool(models) and all(m is not None and m.fabric == "nvlink" for m in models)


def nccl_environment(ev: Evidence) -> Outcome:
    if not ev.local:
        return unknown("can't tell (captured node): its environment variables were not captured")
    found = []
    for var, (bad, meaning) in SLOW_NCCL_VARS.items():
        if var != "NCCL_P2P_DISABLE" and ev.env.get(var) == bad:
            found.append(finding("nccl_env_slow_transport", HIGH, variable=f"{var}={bad}", meaning=meaning,
                                 fix=f"unset {var} and measure again"))
    topo_file = ev.env.get("NCCL_TOPO_FILE")
    if topo_file:
        path = Path(topo_file)
        if not path.is_file():
            found.append(finding("nccl_topo_file_stale", HIGH, variable=f"NCCL_TOPO_FILE={topo_file}",
                                 problem="the file does not exist"))
        elif ev.inventory is not None:
            text = path.read_text(errors="replace")
            ids = [str(m.bus_id).lower()[-7:] for m in ev.inventory.modules if not isinstance(m.bus_id, Unavailable)]
            missing = [b for b in ids if b and b not in text.lower()]
            if missing:
                found.append(finding("nccl_topo_file_stale", MEDIUM, variable=f"NCCL_TOPO_FILE={topo_file}",
                                     problem=f"it does not mention bus ids {', '.join(missing)}"))
    if found:
        return confirmed("NCCL is told to use a slower path", *found)
    names = [v for v in SLOW_NCCL_VARS if v != "NCCL_P2P_DISABLE"] + ["NCCL_TOPO_FILE"]
    return clear("no NCCL variable forces a slower transport", *[
        Cited("environment of the gpuvet process", v, ev.env.get(v, "unset")) for v in names])


def pair_bandwidth(ev: Evidence) -> Outcome:
    checks = ev.pair_checks
    if checks is None:  # a captured node: nvbandwidth / TransferBench tables against their peers
        return captured_pairs(ev)
    slow = [c for c in checks if _far(c)]
    if slow:
        return confirmed(f"{len(slow)} pair(s) far below what their links carry", *_slow_pairs(checks))
    if not any(c.pct_of_expected is not None for c in checks):
        return unknown("no pair measurement has an expected figure to compare with")
    return clear("every pair carries what its links allow", _pairs_cited(ev, checks))


def _slow_pairs(checks: list[Check]) -> list[Finding]:
    """The pairs far below what the design's links carry, each named; where every priced pair is (of
    the node, or of one test), one finding for them, as for a captured table: the design or the path
    is not what was assumed (a node-wide cause), not each pair's link."""
    priced = [c for c in checks if c.pct_of_expected is not None]
    if all(_far(c) for c in priced) and len(priced) >= MIN_PAIRS:
        return [_whole_node(priced)]
    out: list[Finding] = []
    for name in PAIR_TESTS:
        mine = [c for c in priced if c.name == name]
        slow = [c for c in mine if _far(c)]
        if slow and len(slow) == len(mine) >= MIN_PAIRS:
            out.append(_whole_node(slow))
            continue
        named = {f.between for f in out}  # a pair slow one way and both ways: named once
        out += [finding("topology_misidentified", MEDIUM, between=c.between, test=c.name, measured_gbps=c.value,
                        expected_gbps=c.expected) for c in slow if c.between not in named]
    return out


def _whole_node(pairs: list[Check]) -> Finding:
    mid = statistics.median(c.pct_of_expected for c in pairs if c.pct_of_expected is not None)
    return finding("topology_misidentified", MEDIUM, test=", ".join(sorted({c.name for c in pairs})), pairs=len(pairs),
                   median_gbps=round(statistics.median(c.value for c in pairs if isinstance(c.value, float)), 2),
                   pct_of_design=round(mid, 1), bound_pct=threshold("pair_far_below_pct"))


def collective_results(ev: Evidence) -> Outcome:
    if not any(r.rows for r in ev.captures.nccl):
        return unknown("no collective results (give nccl-tests output with --from)")
    found = []
    for r in ev.captures.nccl:
        wrong = [row for row in r.rows if row.wrong]
        if wrong:
            found.append(finding("data_corruption_in_transfer", HIGH, op=r.op, sizes=[w.size_bytes for w in wrong],
                                 source=r.where))
    if found:
        return confirmed("a collective returned wrong data", *found)
    from gpuvet.node.collectives import fit_alpha_beta

    cut: list[NcclResult] = []
    for r in ev.captures.nccl:
        timed = [(row.size_bytes, row.time_us) for row in r.rows if row.time_us is not None and row.size_bytes > 0]
        if len(timed) < 2:
            continue
        fit = fit_alpha_beta([b for b, _ in timed], [t * 1e-6 for _, t in timed])
        if fit and fit.alpha_s > 0:
            knee = fit.alpha_s * fit.beta_gbps * 1e9  # bytes where latency and bandwidth cost the same
            largest = max(b for b, _ in timed)
            if largest < knee and r.cut_before is not None:  # the sizes that would say were never run
                cut.append(r)
            elif largest < knee:
                found.append(finding("latency_bound_messages", MEDIUM, op=r.op, largest_bytes=largest,
                                     half_bandwidth_bytes=knee))
    if found:
        return confirmed("the messages are latency-bound", *found)
    if cut:
        return _cut_run(cut[0])
    judged = judge_all(ev)  # a log naming no module: priced on --expect or a listing beside it
    judged += peer_judged(ev.captures.nccl, judged)  # the same command run twice in the file: the runs compared
    slow = [j for j in judged if j.fraction is not None and j.fraction < SLOW]
    if slow:
        far = threshold("collective_far_below")
        return confirmed(sentence(slow[0]), *(finding(
            "collective_below_model", HIGH if j.fraction is not None and j.fraction < far else MEDIUM, op=j.op,
            size_bytes=j.size_bytes, busbw_gbps=j.measured, expected_gbps=round(j.expected or 0, 1),
            basis=j.basis) for j in slow))
    return _collectives_clear(ev, judged)


def _cut_run(r: NcclResult) -> Outcome:
    """A run cut before the sizes it announced: its small sizes are latency-bound on any node, so
    they say nothing of whether the job's sizes are; the run to the end would."""
    largest = max(row.size_bytes for row in r.rows)
    return unknown(f"the run is cut before the sizes it announced ({r.op} ends at {binary_size(largest)} "
                   f"of the {binary_size(r.cut_before or 0)} announced, {r.where}); its sizes are all latency-bound, "
                   "which any node's small sizes are: run it to its end (or give the whole output)")


def _collectives_clear(ev: Evidence, judged: Sequence[Judged] = ()) -> Outcome:
    """Clear only on rows that say so: #wrong read as 0 and at least two rows with a readable time."""
    checked = [(r, [row for row in r.rows if row.wrong == 0]) for r in ev.captures.nccl]
    timed = [(r, [row for row in r.rows if row.time_us is not None and row.size_bytes > 0]) for r in ev.captures.nccl]
    if not any(rows for _, rows in checked):
        return unknown("no result row reports #wrong (validation off, -c 0, or unreadable rows): can't tell "
                       "whether the data was correct (run nccl-tests with -c 1)")
    if not any(len(rows) >= 2 or rows and max(x.size_bytes for x in rows) >= LARGE for _, rows in timed):  # -b = -e
        return unknown("no two result rows with a readable time (NaN, negative or malformed figures): can't tell "
                       "whether the sizes reach bandwidth-bound")
    source = ev.capture_source("nccl-tests", "hccl_test") or "nccl-tests output"
    cited = [Cited(source, "#wrong", f"0 in {len(rows)} row(s)", where=r.op) for r, rows in checked if rows]
    cited += [Cited(source, "largest size with a readable time", f"{max(x.size_bytes for x in rows)} B",
                    where=f"{r.op}, {len(rows)} timed row(s)") for r, rows in timed if rows]
    cited += [Cited(source, "busbw at the largest size against the model", sentence(j), where=j.op) for j in judged]
    told = [j for j in judged if j.fraction is not None]
    if judged and not told:  # not priced (below bandwidth-bound sizes, or no design): correct data, speed untold
        said = f"#wrong {cited[0].value} of {op_said(str(cited[0].where))}"
        return Outcome("inconclusive", f"collectives return correct data ({said}), but can't tell whether they "
                       f"reach what the node should: {sentence(judged[0])}", (), tuple(cited))  # what was read
    return clear("collectives return correct data and reach bandwidth-bound sizes"
                 + ("; " + sentence(told[0]) if told else ""), *cited)


def host_bottleneck(ev: Evidence) -> Outcome:
    if not ev.local or ev.backend is None:
        return unknown("can't tell (captured node): its CPU load and NUMA placement were not captured")
    placement = ev.backend.host_placement()
    if isinstance(placement, Unavailable):
        return unknown(placement.reason)
    load = placement.cpu_percent
    found = []
    if load > threshold("cpu_saturated_pct"):
        found.append(finding("cpu_saturated", MEDIUM, cpu_percent=load))
    if ev.inventory is not None:
        mine = set(placement.process_numa)
        for m in ev.inventory.modules:
            if isinstance(m.numa_node, int) and m.numa_node >= 0 and mine and m.numa_node not in mine:
                found.append(finding("numa_misplaced", MEDIUM, module=m.id, module_numa=m.numa_node,
                                     process_numa=sorted(mine)))
    if found:
        return confirmed("the host holds the modules back", *found)
    numa = ", ".join(map(str, sorted(placement.process_numa))) or "not reported"
    return clear(f"host CPU at {load:.0f} %, process on its modules' NUMA nodes",
                 Cited(f"host placement ({ev.source})", "CPU use", f"{load:.0f} %"),
                 Cited(f"host placement ({ev.source})", "process NUMA nodes", numa))
