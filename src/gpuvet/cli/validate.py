"""`gpuvet validate`, `gpuvet baseline`, `gpuvet log`, `gpuvet report`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuvet.cli import exits, term
from gpuvet.cli.checks import ints, output_file
from gpuvet.cli.common import LogbookOpt, NodeOpt, SimOpt, chosen_node, open_logbook
from gpuvet.cli.jsonout import write_json
from gpuvet.cli.module import LaddersOpt

if TYPE_CHECKING:
    from gpuvet.backends.base import Backend
    from gpuvet.logbook.document import RunDocument
    from gpuvet.logbook.store import Logbook
    from gpuvet.validate.run import Level, ValidationRun

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of tables.")]
FailsOnlyOpt = Annotated[bool, typer.Option("--fails-only", help="In the table, only what failed, warned or "
                                            "changed (a long table's passes left out; --json keeps all).")]

baseline_app = typer.Typer(help="Baselines: reference figures from good runs of one node type.", no_args_is_help=True)
log_app = typer.Typer(help="The logbook: every validate run, kept.", no_args_is_help=True)


def _print_json(data: object) -> None:
    from gpuvet.report.jsonable import to_jsonable

    write_json(to_jsonable(data), indent=2)


def validate(
    node_ref: NodeOpt = None,
    sim: SimOpt = None,
    expect: Annotated[str | None, typer.Option("--expect", help="The declared node (preset or spec file): module "
                                               "count and links must match.")] = None,
    level: Annotated[str, typer.Option("--level", help="quick (≤ 60 s on 8 GPUs), standard, or long (adds memory, "
                                       "models, cross-module GEMM agreement and every collective).")] = "standard",
    baseline: Annotated[Path | None, typer.Option("--baseline", help="Judge against this baseline too "
                                                  "(gpuvet baseline make).")] = None,
    rules: Annotated[Path | None, typer.Option("--rules", help="A rules file overriding the defaults "
                                               "(see docs/validate.md).")] = None,
    report: Annotated[Path | None, typer.Option("--report", help="Write a self-contained HTML report here.",
                                                callback=output_file)] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML here (for CI systems).",
                                               callback=output_file)] = None,
    logbook: LogbookOpt = None,
    no_log: Annotated[bool, typer.Option("--no-log", help="Do not keep this run in the logbook.")] = False,
    host_only: Annotated[bool, typer.Option("--host-only", help="On a machine where no accelerator is found, "
                                            "judge the host (CPUs, memory, host copies) alone; without it such a "
                                            "run is refused (exit 2).")] = False,
    as_json: JsonOpt = False,
    fails_only: FailsOnlyOpt = False,
    ladders: LaddersOpt = None,
) -> None:
    """The three-layer baseline: inventory and software, compute, module↔host and module↔module
    links, collectives — each check PASS/WARN/FAIL/SKIP with the measured value, the expected value
    derived from what was found, % of peak and the evidence. Kept in the logbook.

    Exit 0 on pass or warn, 1 on fail, 2 when nothing could be measured, no accelerator was found
    (the host alone is judged only with --host-only) or the input is bad.
    """
    from gpuvet.errors import GpuvetError
    from gpuvet.validate.run import Level

    try:
        chosen = Level(level)
    except ValueError:
        raise GpuvetError(f"unknown level {level!r}", where="--level", fix="use quick, standard or long.") from None
    result = _run_validate(chosen_node(node_ref, sim), expect, chosen, baseline, rules, logbook, no_log, host_only,
                           ladders)
    doc = result.to_json()
    _write_files(doc, report, junit)
    with exits.verdict(1 if result.measured and result.verdict.value == "fail" else 0):
        if as_json:
            _print_json(doc)
        else:
            from gpuvet.cli import render_validate
            from gpuvet.logbook.document import as_document

            render_validate.run(term.console(), as_document(doc), report, junit, fails_only=fails_only)
    if not result.measured:
        _refuse_unmeasured(result, doc)


def _write_files(doc: Mapping[str, object], report: Path | None, junit: Path | None) -> None:
    """The HTML report and the JUnit XML, where asked, each written whole or not at all."""
    from gpuvet.files import write_atomic
    from gpuvet.logbook.document import as_document

    if report:
        from gpuvet.report.html import render

        write_atomic(report, render(as_document(doc)), where="--report")
    if junit:
        from gpuvet.report.junit import render as render_junit

        write_atomic(junit, render_junit(as_document(doc)), where="--junit")


def _refuse_unmeasured(result: ValidationRun, doc: Mapping[str, object]) -> None:
    """Exit 2 with why nothing was measured: a node without modules, or no benchmark engine."""
    from gpuvet.errors import GpuvetError

    reasons = sorted({c.reason for c in result.checks if c.name == "benchmarks" and c.reason})
    env = doc.get("environment")
    modules = env.get("modules") if isinstance(env, dict) else None
    reason, _, own_fix = reasons[0].partition(" Fix: ") if reasons else ("", "", "")
    fix = own_fix or (("the node has no module to measure on: see the inventory checks above (gpuvet doctor "
                       "module-missing names why)") if modules == [] else
                      "install the benchmark extra (pip install 'gpuvet[torch]') or try --node hgx-h200-8.")
    # one fix, the one that applies: a reason carrying its own (no PyTorch under --host-only) is that one
    raise GpuvetError("nothing could be measured" + (f": {reason}" if reason else ""), fix=fix)


def _run_validate(sim: str | None, expect: str | None, level: Level, baseline: Path | None, rules: Path | None,
                  logbook: str | None, no_log: bool, host_only: bool = False,
                  ladders_file: Path | None = None) -> ValidationRun:
    """Load what the run is judged against, open the node and the logbook, run the layers."""
    from gpuvet.backends.select import open_backend
    from gpuvet.ledger.ladders import load_ladders
    from gpuvet.validate.baseline import load_baseline
    from gpuvet.validate.rules import load_rules
    from gpuvet.validate.run import Validator

    if host_only and sim:
        from gpuvet.errors import GpuvetError

        raise GpuvetError("it judges this machine's host, where --node gives a simulated node", where="--host-only",
                          fix="give one of them.")
    ruleset = load_rules(rules)
    ladders = load_ladders(ladders_file)
    base = load_baseline(baseline) if baseline else None
    declared = None
    if expect:
        from gpuvet.node.build import build_node
        from gpuvet.node.spec import load_spec

        spec, where = load_spec(expect)
        declared = build_node(spec, where)
    backend = open_backend(sim=sim)
    try:
        _gate(backend, host_only)
        book = None if no_log else open_logbook(logbook)
    except BaseException:
        backend.close()
        raise
    layer = ["starting"]
    try:
        with term.progress("validate") as progress:
            def step(done: int, total: int, label: str) -> None:
                progress(done, total, f"{layer[0]}: {label}")

            def on_layer(name: str) -> None:
                layer[0] = name

            return Validator(backend, level, ruleset, declared, base, book, step, on_layer, ladders).run()
    finally:
        backend.close()
        if book:
            book.close()


def _gate(backend: Backend, host_only: bool) -> None:
    """No accelerator found: refused (exit 2) unless --host-only asks for the host alone; and
    --host-only where accelerators were found is refused, not ignored (they would go unjudged)."""
    from gpuvet.errors import GpuvetError
    from gpuvet.validate.run import no_accelerator

    refusal = no_accelerator(backend)
    if refusal is not None and not host_only:
        raise refusal
    if refusal is None and host_only:
        count = len(backend.inventory().modules)
        raise GpuvetError(f"--host-only, but the {backend.name} backend found {count} module(s) here", where="--host-only",
                          fix="drop --host-only to validate the modules found (--host-only is for a machine with "
                              "no accelerator).")


@baseline_app.command("make")
def baseline_make(runs: Annotated[list[str], typer.Argument(help="Run ids (or unique prefixes) of good runs.")],
                  output: Annotated[Path, typer.Option("-o", "--output", help="Where to write the baseline.",
                                                                    callback=output_file)],
                  tolerance: Annotated[float, typer.Option("--tolerance", metavar="FRACTION",
                                                           help="A run more than this fraction worse than the median "
                                                           "is excluded (default 0.05).")] = 0.05,
                  logbook: LogbookOpt = None, as_json: JsonOpt = False) -> None:
    """Build per-check baselines from good runs: the median, after excluding runs that break the
    rule against it, repeated until stable."""
    from gpuvet.errors import GpuvetError
    from gpuvet.validate.baseline import make_baseline, save_baseline

    book = open_logbook(logbook, existing=True)
    try:
        picked = []
        for ref in runs:
            row = book.run(ref)
            if row.status != "complete":
                raise GpuvetError(f"run {row.run_id} is {row.status}", where="RUN", fix="use complete runs only.")
            picked.append((row.run_id, row.envelope.node_type or "?", book.checks(row.run_id)))
    finally:
        book.close()
    made = make_baseline(picked, datetime.now(UTC).isoformat(timespec="seconds"), tolerance)
    save_baseline(made, output)
    excluded = sum(len(m.excluded) for m in made.metrics.values())
    if as_json:
        _print_json({"wrote": str(output), "node_type": made.node_type, "checks": len(made.metrics),
                     "runs": [run_id for run_id, _, _ in picked], "excluded": excluded})
        return
    from rich.text import Text

    term.console().print(Text(f"wrote {output}: {len(made.metrics)} checks from {len(picked)} runs of "
                              f"{made.node_type} ({excluded} outlying figures excluded)"))  # wrapped at the width


@log_app.command("list")
def log_list(limit: Annotated[int, typer.Option("--limit", help="Most recent N runs.", callback=ints(1, 1_000_000))] = 20,
             logbook: LogbookOpt = None, as_json: JsonOpt = False) -> None:
    """The runs kept, newest first."""
    book = open_logbook(logbook, existing=True)
    try:
        rows = book.runs(limit)
    finally:
        book.close()
    if as_json:
        _print_json([{"run_id": r.run_id, "status": r.status, "verdict": r.verdict, "kind": r.kind,
                      "started_utc": r.started_utc, "ended_utc": r.ended_utc, "host": r.host, "node": r.node,
                      "simulated": r.simulated, "level": r.envelope.level} for r in rows])
        return
    from gpuvet.cli import render_validate

    render_validate.runs(term.console(), rows)


@log_app.command("show")
def log_show(run: Annotated[str, typer.Argument(help="Run id or a unique prefix.")], logbook: LogbookOpt = None,
             as_json: JsonOpt = False) -> None:
    """One run: its environment, checks and events."""
    book = open_logbook(logbook, existing=True)
    try:
        doc = run_document(book, run)
    finally:
        book.close()
    if as_json:
        _print_json(doc)
        return
    from gpuvet.cli import render_validate

    render_validate.run(term.console(), doc, None, None)


@log_app.command("compare")
def log_compare(run_a: Annotated[str, typer.Argument(help="The earlier run.")],
                run_b: Annotated[str, typer.Argument(help="The later run.")],
                logbook: LogbookOpt = None, as_json: JsonOpt = False, fails_only: FailsOnlyOpt = False) -> None:
    """What changed between two runs: environment, and every check's % change (regressions marked:
    a worse verdict, or more than 5 % worse). Exit 1 if anything regressed."""
    from gpuvet.validate.compare import compare, missing_checks, not_recorded

    book = open_logbook(logbook, existing=True)
    try:
        a, b = book.run(run_a), book.run(run_b)
        checks_a, checks_b = book.checks(a.run_id), book.checks(b.run_id)
    finally:
        book.close()
    whole = a.status == b.status == "complete" and a.kind == b.kind
    env, results = compare(a.envelope, checks_a, b.envelope, checks_b, judge_missing=whole)
    only_a, only_b = missing_checks(checks_a, checks_b)
    note = None
    if not whole and (only_a or only_b):
        note = (f"{a.run_id} is a {a.status} {a.kind} run and {b.run_id} a {b.status} {b.kind} run: only the "
                f"{len(results)} checks both have are compared; {len(only_a)} checks are only in {a.run_id} and "
                f"{len(only_b)} only in {b.run_id} (not counted as regressions)")
    unrecorded = not_recorded(a.envelope, b.envelope)
    if unrecorded:
        said = f"{', '.join(unrecorded)}: not recorded in the older run {a.run_id} (not compared)"
        note = f"{note}; {said}" if note else said
    with exits.verdict(1 if any(r.regression for r in results) else 0):
        if as_json:
            _print_json({"run_a": a.run_id, "run_b": b.run_id, "environment": env, "results": results,
                         "regressions": sum(r.regression for r in results), "only_in_a": only_a,
                         "only_in_b": only_b, "not_recorded_in_a": unrecorded, "note": note})
        else:
            from gpuvet.cli import render_validate

            shown = [r for r in results if r.regression] if fails_only else results
            render_validate.comparison(term.console(), a.run_id, b.run_id, env, shown, note)
            if len(shown) < len(results):
                term.console().print(f"{len(results) - len(shown)} unchanged or better checks not shown (--fails-only)")


def report(run: Annotated[str, typer.Argument(help="Run id or a unique prefix.")],
           output: Annotated[Path, typer.Option("-o", "--output", help="The HTML file to write.",
                                                         callback=output_file)],
           logbook: LogbookOpt = None, as_json: Annotated[bool, typer.Option(
               "--json", help="Print {\"wrote\": FILE, \"run_id\": RUN, \"verdict\": ...} instead of the note.")]
           = False) -> None:
    """Write a kept run as a self-contained HTML report (opens offline)."""
    from gpuvet.report.html import render

    book = open_logbook(logbook, existing=True)
    try:
        doc = run_document(book, run)
    finally:
        book.close()
    from gpuvet.files import write_atomic

    write_atomic(output, render(doc), where="-o")
    if as_json:
        _print_json({"wrote": str(output), "run_id": doc.run_id,
                     "verdict": doc.verdict.value if doc.verdict is not None else None})
        return
    from gpuvet.cli.literal import literal

    print(literal(f"wrote {output}"))


def run_document(book: Logbook, ref: str) -> RunDocument:
    """A kept run: the run document `validate --json` prints."""
    return book.document(book.run(ref))
