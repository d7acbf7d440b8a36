"""`gpuvet fleet validate` (Ray) and `gpuvet fleet merge` (envelopes from anywhere)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeAlias

import typer

from gpuvet.cli import exits, term
from gpuvet.cli.checks import output_file

if TYPE_CHECKING:
    from gpuvet.fleet.peers import FleetAnalysis, Outlier
    from gpuvet.logbook.document import JsonObject
from gpuvet.cli.jsonout import write_json

Envelope: TypeAlias = "JsonObject"  # a validate --json document read back: JSON, typed by its schema (docs/schema)
NodeStatus = dict[str, object]  # one node of a Ray run: node, ray_node, sim, host, status, verdict, error, seconds
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of tables.")]


fleet_app = typer.Typer(
    short_help="Validate many nodes (Ray or merged files); outliers among peers.",
    help="Vet many nodes: fan validate out over a Ray cluster, or merge validate --json files from "
                        "anywhere (Slurm, SSH); peer analysis finds the node, module or link that deviates from its "
                        "peers.", no_args_is_help=True)


MIN_PEERS = 3  # the peer analysis compares a figure only among at least this many nodes of one type


def few_peers_notes(analysis: FleetAnalysis) -> list[str]:
    """Say so when a node type has too few nodes to find anyone standing out."""
    return [f"{node_type}: {len(nodes)} node{'s' if len(nodes) != 1 else ''} — peers are compared only among at "
            f"least {MIN_PEERS} nodes of one type, so nothing could stand out; merge more nodes of this type"
            for node_type, nodes in analysis.node_types.items() if len(nodes) < MIN_PEERS]


def merged_statuses(analysis: FleetAnalysis) -> list[NodeStatus]:
    """Every merged node's own verdict and counts, in the order given: a node whose own validate
    failed was merged without a word (outliers among peers (0), exit 0, "nodes": []). ``roots``:
    its validate's roots, each with the outliers it explains (null: an envelope without roots)."""
    from gpuvet.fleet.roots import group, roots_json

    groups = group(analysis.outliers, analysis.roots)
    return [{"node": n.node, "status": "ok", "verdict": n.verdict, "fails": n.fails, "warns": n.warns,
             "corrupt": n.corrupt, "node_type": n.node_type, "source": n.where,
             "error": f"its own validate: {n.fails} check(s) failed" if n.failed else None,
             "roots": roots_json(n.node, analysis.roots, groups)}
            for n in analysis.nodes]


def with_counts(statuses: list[NodeStatus], analysis: FleetAnalysis) -> list[NodeStatus]:
    """fleet validate's statuses with each node's fail and warn counts added (by node name)."""
    by_name = {n.node: n for n in analysis.nodes}
    out = []
    for s in statuses:
        n = by_name.get(str(s.get("node")))
        out.append({**s, "fails": n.fails, "warns": n.warns, "corrupt": n.corrupt} if n is not None else s)
    return out


def failed_nodes(analysis: FleetAnalysis) -> list[str]:
    """The nodes whose own validate failed (its verdict, or any check)."""
    return [n.node for n in analysis.nodes if n.failed]


def _report(analysis: FleetAnalysis, envelopes: list[tuple[str, Envelope]], statuses: list[NodeStatus],
            as_json: bool, report: Path | None, baseline_out: Path | None, read_notes: list[str] | None = None) -> None:
    if report:
        from gpuvet.files import write_atomic
        from gpuvet.report.html import fleet_page

        with term.heartbeat(f"fleet: writing the report of {len(envelopes):,} nodes"):  # seconds for thousands
            write_atomic(report, fleet_page(analysis, envelopes, statuses), where="--report")
    if baseline_out:
        with term.heartbeat("fleet: writing the baseline"):
            _fleet_baseline(analysis, envelopes, baseline_out)
    notes = (read_notes or []) + analysis.notes + few_peers_notes(analysis)
    if as_json:
        write_json({"simulated": analysis.simulated or any(e.get("simulated") for _, e in envelopes),
                    "node_types": analysis.node_types, "nodes": statuses, "failed_nodes": failed_nodes(analysis),
                    "metrics": analysis.metrics,
                    "values": analysis.values,
                    "outliers": [{k: v for k, v in asdict(o).items() if v is not None} for o in analysis.outliers],
                    "notes": notes}, indent=1)
        return
    _text(analysis, statuses, notes, [p for p in (report, baseline_out) if p])


def _text(analysis: FleetAnalysis, statuses: list[NodeStatus], notes: list[str], wrote: list[Path]) -> None:
    from rich.text import Text

    c = term.console()
    if analysis.simulated:  # one simulated envelope is enough to make every comparison a model's
        c.print(Text("SIMULATED: some of the merged runs are of simulated nodes; their figures come from a model, "
                     "not from hardware", style="bold yellow"))
    for node_type, nodes in analysis.node_types.items():
        c.print(Text(f"{node_type}: {len(nodes)} node{'' if len(nodes) == 1 else 's'}"))
    if statuses:
        failed = len(failed_nodes(analysis))
        t = term.table(f"nodes ({len(statuses)}, {failed} whose own validate failed)")
        for col in ("node", "status", "verdict", "fails", "detail"):
            term.column(t, col, key=col != "detail", right=col == "fails")
        for s in statuses:
            fails = s.get("fails")
            t.add_row(Text(str(s.get("node"))), Text(str(s["status"])), Text(str(s.get("verdict") or "")),
                      Text("" if fails is None else str(fails)), Text(str(s.get("error") or "")))
        c.print(t)
    rest = _root_causes(analysis)
    shown = "" if len(rest) == len(analysis.outliers) else f"; {len(analysis.outliers) - len(rest)} under a root above"
    t = term.table(f"outliers among peers ({len(analysis.outliers)}{shown})")
    for col in ("node", "where", "metric", "value", "peers' median", "off by"):
        term.column(t, col, right=col in ("value", "peers' median", "off by"), key=col in ("node", "where"))
    for o in rest:
        t.add_row(Text(o.node), Text(o.module or ("→".join(o.between) if o.between else "node")), Text(o.metric),
                  term.sig(o.value, o.unit or ""), term.sig(o.fleet_median, o.unit or ""),
                  f"{o.deviation_pct:+.1f} %")
    if rest or not analysis.outliers:  # every outlier under a root: its heading says so, no empty table
        c.print(t)
    else:
        c.print(Text(f"outliers among peers ({len(analysis.outliers)}, each under a root above; --json lists them)"))
    for note in notes:
        c.print(Text(f"note: {note}", style="yellow"))
    for path in wrote:
        c.print(Text(f"wrote {path}"))


def _root_causes(analysis: FleetAnalysis) -> list[Outlier]:
    """Print each node's roots that explain outliers, one line each (root cause first, issue
    42); returns the outliers no root explains, for the table."""
    from rich.text import Text

    from gpuvet.fleet.roots import group

    groups = group(analysis.outliers, analysis.roots)
    if not groups:
        return list(analysis.outliers)
    c = term.console()
    c.print(Text(f"root causes ({len(groups)})", style="bold"))
    for g in groups:
        c.print(Text(g.line(), style="red" if g.root.severity == "critical" else "yellow"))
    under = {id(o) for g in groups for o in g.outliers}
    return [o for o in analysis.outliers if id(o) not in under]


def _fleet_baseline(analysis: FleetAnalysis, envelopes: list[tuple[str, Envelope]], path: Path) -> None:
    from datetime import UTC, datetime

    from gpuvet.errors import GpuvetError
    from gpuvet.fleet.peers import envelope_node, healthy_envelopes
    from gpuvet.logbook.document import as_document
    from gpuvet.validate.baseline import make_baseline, save_baseline

    if len(analysis.node_types) != 1:
        raise GpuvetError(f"{len(analysis.node_types)} node types in one merge", where="--baseline-out",
                          fix="make one baseline per node type (merge each type's envelopes separately).")
    node_type = next(iter(analysis.node_types))
    healthy = healthy_envelopes(envelopes, analysis, node_type)
    runs = [(envelope_node(e, w)[0], node_type, as_document(e, w).checks) for w, e in healthy]
    save_baseline(make_baseline(runs, datetime.now(UTC).isoformat(timespec="seconds")), path)


@fleet_app.command("merge", short_help="Peer analysis over validate --json files, or runs kept in a logbook.")
def merge(files: Annotated[list[str] | None, typer.Argument(
              help="validate --json outputs, one per node; a folder stands for the .json files in it.",
              metavar="FILE|FOLDER")] = None,
          report: Annotated[Path | None, typer.Option("--report", help="Write the fleet report (HTML).",
                                                                     callback=output_file)] = None,
          baseline_out: Annotated[Path | None, typer.Option("--baseline-out", help="Write a fleet baseline from the "
                                                            "healthy majority (for validate --baseline).")] = None,
          logbook: Annotated[str | None, typer.Option("--logbook", help="Also read the newest complete validate run "
                                                      "of every node kept in this logbook (a file or a shared "
                                                      "postgresql:// URL).")] = None,
          since: Annotated[str | None, typer.Option("--since", help="With --logbook: only runs newer than this "
                                                    "(e.g. 2h, 7d).")] = None,
          jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, metavar="N",
                                                   help="Processes that read and fold the files (default: one per "
                                                   "CPU this process may use, up to 8; with 100 files or more each). "
                                                   "1 reads them all here. --report and --baseline-out read "
                                                   "them here too (they need every envelope).")] = None,
          as_json: JsonOpt = False) -> None:
    """Peer analysis over envelopes produced elsewhere, e.g. `srun gpuvet validate --json > node-$HOST.json`,
    or kept by every node in one shared logbook (`GPUVET_LOGBOOK=postgresql://…`).

    Exit 1 when a node's own validate failed, or a node, module or link stands out among its peers (at least 3 nodes of one type are needed to compare; fewer gives a note), 2 on bad input."""  # noqa: E501  (one line: --help keeps a docstring's line breaks)
    from gpuvet.errors import GpuvetError
    from gpuvet.fleet.fold import PROGRESS_EVERY, default_jobs, fold_envelope, fold_file, fold_files
    from gpuvet.fleet.peers import PeerTable

    keep = report is not None or baseline_out is not None  # only these need the envelopes themselves
    paths = _json_files(files or [])  # as text: typer's path check costs 0.4 ms a file
    envelopes = []
    notes: list[str] = []  # what was left out of the pooling (a NaN figure), said with the result
    with term.progress("fleet merge", ticking=False) as shown:  # no thread: the workers can be forked
        def told(done: int, total: int) -> None:
            shown(done, total, "files read")

        if keep:
            table = PeerTable()
            for done, f in enumerate(paths, 1):
                envelopes.append((f, fold_file(table, f, notes)))
                if done % PROGRESS_EVERY == 0 or done == len(paths):
                    told(done, len(paths))
        else:
            table = fold_files(paths, default_jobs() if jobs is None else jobs, told, notes)
    count = len(paths)
    if logbook:
        for name, env in _from_logbook(logbook, since):
            fold_envelope(table, f"run {name} in the logbook", env, notes)
            count += 1
            if keep:
                envelopes.append((name, env))
    elif since:
        raise GpuvetError("--since without --logbook", where="--since", fix="add --logbook FILE_OR_URL.")
    if not count:
        raise GpuvetError("nothing to merge", where="fleet merge",
                          fix="give validate --json files, or --logbook with complete validate runs in it.")
    analysis = table.analyse()
    with exits.verdict(1 if analysis.outliers or failed_nodes(analysis) else 0):
        _report(analysis, envelopes, merged_statuses(analysis), as_json, report, baseline_out, notes)


def _json_files(given: list[str]) -> list[str]:
    """The files to merge: a folder stands for the .json files directly in it, in name order
    (a fleet's results folder, with no shell glob and no limit on an argument list's length)."""
    import os

    from gpuvet.errors import GpuvetError

    paths: list[str] = []
    for item in given:
        if not os.path.isdir(item):
            paths.append(item)
            continue
        with os.scandir(item) as entries:
            named = [e for e in entries if e.name.endswith(".json")]
        found = sorted(e.path for e in named if e.is_file())
        others = sorted(e.name for e in named if not e.is_file())
        if others:  # a dangling link, a folder, a pipe: said, not silently left out
            term.step(f"fleet merge: left out {len(others)} entr{'y' if len(others) == 1 else 'ies'} of {item} named "
                      f".json that {'is not a file' if len(others) == 1 else 'are not files'}: {', '.join(others[:5])}"
                      + (" …" if len(others) > 5 else ""))
        if not found:
            raise GpuvetError("no .json file in this folder", where=item,
                              fix="give the folder the `gpuvet validate --json > NODE.json` outputs were saved in, "
                                  "or the files themselves.")
        paths.extend(found)
    return paths


def _from_logbook(target: str, since: str | None) -> list[tuple[str, Envelope]]:
    from datetime import UTC, datetime, timedelta

    from gpuvet.cli.common import flag_seconds
    from gpuvet.logbook.store import Logbook

    since_utc = None
    if since:
        since_utc = (datetime.now(UTC) - timedelta(seconds=flag_seconds(since, "--since") or 0.0)).isoformat(
            timespec="seconds")
    book = Logbook(target, existing=True)
    try:
        return [(f"{run.host}:{run.run_id}", book.document(run).to_json())
                for run in book.latest_runs("validate", since_utc)]
    finally:
        book.close()


def _timeout_s(text: str) -> float:
    """``--timeout``: a duration (20s, 10m, 2h) or, as when it took only numbers, any plain number
    of seconds (600, 600.0, 1e3), within FLEET_TIMEOUT_S; anything else a GpuvetError (exit 2)."""
    import math

    from gpuvet.errors import GpuvetError
    from gpuvet.node.timeunits import format_duration
    from gpuvet.quantities import parse_seconds

    try:
        return parse_seconds(text, "--timeout", *FLEET_TIMEOUT_S)
    except GpuvetError:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise
    lo, hi = FLEET_TIMEOUT_S
    if lo <= value <= hi:
        return value
    allowed = f"from {format_duration(lo)} to {format_duration(hi)}"
    raise GpuvetError(f"{text!r} is out of range: allowed is {allowed}", where="--timeout",
                      fix=f"give a duration {allowed}, e.g. 10m.")


# fleet validate --timeout, for all nodes: a quick level takes under a minute, a long one hours; under a second
# no node can answer, and past a week a stuck cluster is not waiting but lost
FLEET_TIMEOUT_S = (1.0, 7 * 86400.0)


@fleet_app.command("validate", short_help="Validate every node of a Ray cluster, then compare peers.")
def validate(ray_address: Annotated[str, typer.Option("--ray", help="The Ray cluster (e.g. 10.0.0.1:6379 or auto).")],
             level: Annotated[str, typer.Option("--level", help="quick, standard or long.")] = "quick",
             sim: Annotated[list[str] | None, typer.Option("--sim", help="Specs for the cluster's simulated nodes "
                                                           "(those with the gpuvet_sim resource), one a unit.")] = None,
             timeout: Annotated[str, typer.Option("--timeout", help="How long to wait for all nodes: a duration "
                                                  "(20s, 10m, 2h, 3d; a plain number is seconds), from 1 s to 7 d.")]
             = "600",
             report: Annotated[Path | None, typer.Option("--report", help="Write the fleet report (HTML) to FILE.",
                                                         callback=output_file)] = None,
             baseline_out: Annotated[Path | None, typer.Option("--baseline-out", help="Write a fleet baseline from "
                                                               "the healthy majority (for validate --baseline).",
                                                               callback=output_file)] = None,
             logbook: Annotated[str | None, typer.Option("--logbook", help="Keep the fleet run in this logbook (a "
                                                         "file or a postgresql:// URL; default: $GPUVET_LOGBOOK).")]
             = None,
             as_json: JsonOpt = False) -> None:
    """Run validate on every node of a Ray cluster that has modules (one task per node, pinned to it,
    its GPUs as Ray resources), with a timeout; gather the envelopes into the logbook as one fleet
    run; analyse the peers. Exit 1 if a node's task failed or timed out, its own validate failed, or it
    stands out."""
    timeout_s = _timeout_s(timeout)  # before Ray is imported or reached
    from gpuvet.fleet.peers import analyse
    from gpuvet.fleet.ray_runner import run_fleet
    from gpuvet.logbook.store import Logbook

    results = run_fleet(ray_address, level, sim, timeout_s)
    envelopes = [(r.host, r.envelope) for r in results if r.envelope is not None]
    statuses = [{"node": (r.envelope or {}).get("environment", {}).get("node") or (Path(r.sim).stem if r.sim else r.host),
                 "ray_node": r.ray_node, "sim": r.sim,
                 "host": r.host, "status": r.status, "verdict": (r.envelope or {}).get("verdict"), "error": r.error,
                 "seconds": round(r.seconds, 2)} for r in results]
    analysis = analyse(envelopes)
    statuses = with_counts(statuses, analysis)
    book = Logbook(logbook)
    try:
        run_id = book.begin("fleet", {"ray": ray_address, "level": level, "nodes": statuses},
                            any(e.get("simulated") for _, e in envelopes), f"fleet of {len(results)}")
        for s in statuses:
            book.event(run_id, "node", f"{s['node']}: {s['status']}", module=str(s["node"]), data=s)
        checks = [{"layer": "fleet", "name": o.metric, "verdict": "fail", "value": o.value, "unit": o.unit,
                   "expected": o.fleet_median, "module": o.module, "between": list(o.between) if o.between else None,
                   "node": o.node, "score": o.score} for o in analysis.outliers]
        bad = analysis.outliers or failed_nodes(analysis) or any(s["status"] != "ok" for s in statuses)
        book.finish(run_id, "fail" if bad else "pass", checks)
    finally:
        book.close()
    with exits.verdict(1 if bad else 0):
        _report(analysis, envelopes, statuses, as_json, report, baseline_out)
