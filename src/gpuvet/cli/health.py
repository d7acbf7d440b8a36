"""`gpuvet health`: the fast pre/post-job check, in the forms schedulers read."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

if TYPE_CHECKING:
    from gpuvet.health.model import HealthReport
    from gpuvet.health.run import HealthResult
    from gpuvet.ledger.ladders import Ladders

import typer

from gpuvet.cli.common import NodeOpt, SimOpt, chosen_node

FORMATS = ("text", "json", "nhc", "npd")
# a driver that answers takes well under a second, one being reset up to a minute; below 1 s a
# prolog typo (0.0000001ms, 0) failed every good node and had it drained
TIMEOUT_RANGE = (1.0, 3600.0)


def _mark_path(state: Path | None) -> Path:
    if state is not None:
        return state
    home = os.environ.get("GPUVET_HOME")
    if home:
        return Path(home) / "health-xid-mark.json"
    import platformdirs

    return Path(platformdirs.user_data_dir("gpuvet", appauthor=False)) / "health-xid-mark.json"


def _check_mark_path(path: Path, *, typed: bool) -> None:
    """Before the check runs: a typed --state must be in an existing folder (a typo must not make
    folders as root) and no link; gpuvet's default location is created private when missing."""
    from gpuvet.files import check_folder, check_target

    where = "--state" if typed else str(path)
    if typed:
        check_folder(path.parent if str(path.parent) else Path("."), where, create=False)
    check_target(path, where)


def _check_args(fmt: str, xid_since: str, ignore: list[str]) -> None:
    from gpuvet.errors import GpuvetError
    from gpuvet.health.model import CHECKS

    if fmt not in FORMATS:
        raise GpuvetError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}", where="--format",
                          fix="use text, json, nhc (Slurm/NHC) or npd (node-problem-detector).")
    if xid_since not in ("boot", "last"):
        raise GpuvetError(f"--xid-since {xid_since!r} is not boot or last", where="--xid-since",
                          fix="use boot (every Xid the kernel log holds) or last (only those after the last check).")
    for name in ignore:
        if name not in CHECKS:
            raise GpuvetError(f"--ignore {name!r} is not a check", where="--ignore",
                              fix=f"name one of: {', '.join(CHECKS)}.")


def health(
    node_ref: NodeOpt = None,
    sim: SimOpt = None,
    expect: Annotated[str | None, typer.Option("--expect", help="The declared node (preset or spec): modules and "
                                               "links are counted against it. Default: the design inferred from "
                                               "the modules found and the catalog.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="text, json, nhc (one line per failure and a drain "
                                     "reason) or npd (node-problem-detector: one line, at most 80 characters).")
                   ] = "text",
    as_json: Annotated[bool, typer.Option("--json", help="The same as --format json.")] = False,
    xid_since: Annotated[str, typer.Option("--xid-since", help="boot: every Xid the kernel log holds; last: only "
                                           "those after the previous `--xid-since last` check (its mark is kept "
                                           "in --state).")] = "boot",
    state: Annotated[Path | None, typer.Option("--state", help="Where --xid-since last keeps its mark (default: "
                                               "$GPUVET_HOME/health-xid-mark.json).")] = None,
    ignore: Annotated[list[str] | None, typer.Option("--ignore", help="Leave this check out (repeat): driver, "
                                                     "kernel_messages, presence, xid, ecc, row_remap, fabric, "
                                                     "fabric_state, pcie, nic, peer_memory, throttle, processes, "
                                                     "power_limit.")] = None,
    timeout: Annotated[str, typer.Option("--timeout", help="A driver that has not answered by then is a "
                                         "failure (1s to 1h).")] = "30s",
    logbook: Annotated[str | None, typer.Option("--logbook", help="Keep this check in the module ledger (a file "
                                                "or postgresql:// URL) and count repeats of each fault on each "
                                                "module from its history there (docs/ledger.md).")] = None,
    ladders: Annotated[Path | None, typer.Option("--ladders", help="The site's escalation ladders (YAML; default: "
                                                 "gpuvet's, docs/ledger.md).")] = None,
) -> None:
    """The fast check to run before and after every job (no benchmark): driver answering, modules
    present, Xids and the driver's messages of modules that did not come up, uncorrectable ECC, row
    remapping, fabric and PCIe links at their width, each module's NVLink-domain registration, the
    InfiniBand/RoCE NIC ports and GPUDirect's peer memory, throttling now, leftover processes, power limits.

    Exit 0 healthy (warnings shown, not drained: a slowed link, a power cap, a slow NIC port), 1 unhealthy, 2 could not tell (or bad input). gpuvet never drains a node itself: --format nhc prints the reason (and each module's ladder step as ACTION lines) for the script that does."""  # noqa: E501  (one line: --help keeps a docstring's line breaks)
    from gpuvet.errors import GpuvetError

    fmt = "json" if as_json else fmt
    try:
        _health(chosen_node(node_ref, sim), expect, fmt, xid_since, state, list(ignore or ()), timeout, logbook, ladders)
    except GpuvetError as exc:
        _could_not_tell(fmt, exc.message)  # the scheduler's line too, not only stderr's paragraph
        raise


def _could_not_tell(fmt: str, why: str) -> None:
    """A refusal in the form the scheduler reads: NHC's reason line, node-problem-detector's one
    line (its message; without it the node condition had none)."""
    from gpuvet.cli.literal import line as one_line
    from gpuvet.health.formats import NPD_MAX, REASON_MAX, safe

    if fmt == "nhc":
        sys.stdout.write(one_line(f"UNKNOWN: gpuvet health: {safe(why, 400)}") + "\n")
        sys.stdout.write(one_line(f"reason: {safe('gpuvet: could not tell: ' + why, REASON_MAX)}") + "\n")
    elif fmt == "npd":
        sys.stdout.write(one_line(safe(f"gpuvet: could not tell: {why}", NPD_MAX)) + "\n")


def _health(sim: str | None, expect: str | None, fmt: str, xid_since: str, state: Path | None, ignore: list[str],
            timeout: str, logbook: str | None = None, ladders_file: Path | None = None) -> None:
    from gpuvet.backends.select import open_backend
    from gpuvet.health.run import HealthOptions, run_health
    from gpuvet.health.state import load_mark, save_mark
    from gpuvet.ledger.ladders import load_ladders
    from gpuvet.quantities import parse_seconds

    _check_args(fmt, xid_since, ignore)
    timeout_s = parse_seconds(timeout, "--timeout", *TIMEOUT_RANGE)
    ladders = load_ladders(ladders_file)
    declared, declared_name = None, None
    if expect:
        from gpuvet.node.build import build_node
        from gpuvet.node.spec import load_spec

        spec, where = load_spec(expect)
        declared, declared_name = build_node(spec, where), expect
    path = _mark_path(state)
    if xid_since == "last":
        _check_mark_path(path, typed=state is not None)
    mark = load_mark(path) if xid_since == "last" else None
    options = HealthOptions(declared, declared_name, mark, frozenset(ignore), timeout_s)
    backend = open_backend(sim=sim)
    try:
        result = run_health(backend, options)
    finally:
        backend.close()
    if xid_since == "last" and result.mark is not None:
        save_mark(path, result.mark, create_folder=state is None)
    _ledger(result, logbook, ladders)
    from gpuvet.cli import exits

    with exits.verdict(result.report.status.exit_code):
        _render(result.report, fmt)


def _ledger(result: HealthResult, logbook: str | None, ladders: Ladders) -> None:
    """Each flagged module's ladder step; the check kept in the logbook when --logbook names one.
    A logbook that cannot be used is a note: the node's health is judged all the same."""
    from gpuvet.health.ledger_link import attach
    from gpuvet.logbook.location import new_file_note
    from gpuvet.logbook.store import Logbook, LogbookError

    book = None
    try:
        new = new_file_note(logbook)
        book = Logbook(logbook) if logbook else None
        if new:
            result.report.notes.append(new)
        attach(result, book, ladders)
    except LogbookError as exc:
        result.report.notes.append(f"not kept in the module ledger: {exc.message}")
        attach(result, None, ladders)
    finally:
        if book:
            book.close()


def _render(report: HealthReport, fmt: str) -> None:
    from gpuvet.cli.literal import line as one_line
    from gpuvet.health import formats

    if fmt == "json":
        sys.stdout.write(json.dumps(report_json(report), indent=1) + "\n")
    elif fmt == "nhc":
        for line in formats.nhc_lines(report):
            sys.stdout.write(one_line(line) + "\n")
    elif fmt == "npd":
        sys.stdout.write(one_line(formats.npd_message(report)) + "\n")
    else:
        _text(report)


def report_json(report: HealthReport) -> dict[str, object]:
    from gpuvet.health import formats
    from gpuvet.report.jsonable import drop_none, to_jsonable

    return {"simulated": report.simulated, "node": report.node, "backend": report.backend,
            "status": report.status.value, "exit_code": report.status.exit_code,
            "elapsed_s": round(report.elapsed_s, 4), "modules": report.modules, "expected": report.expected,
            "reason": formats.drain_reason(report),
            "findings": [drop_none({"check": f.check, "status": f.status.value, "module": f.module,
                                    "reason": f.reason, "fix": f.fix})
                         | ({"evidence": [to_jsonable(e) for e in f.evidence]} if f.evidence else {})
                         | _identity(report, f.module)
                         for f in report.findings],
            "notes": report.notes,
            "actions": [a.to_json() for a in report.actions]}


def _identity(report: HealthReport, module: str | None) -> dict[str, object]:
    """The node and, for a module's finding, the module's identity (issue 44)."""
    who = report.identities.get(module or "")
    return {"node": report.node} | ({"uuid": who.uuid, "serial": who.serial} if who else {})


def _text(report: HealthReport) -> None:
    """One row per finding with, under it, what it read (``read:``, the most telling citation and
    how many more --json lists: render_doctor.cited_lines); a failure's fix after its reason."""
    from rich.text import Text

    from gpuvet.cli import term
    from gpuvet.cli.render_doctor import with_read

    console = term.console()
    style = {"ok": "green", "fail": "bold red", "warn": "yellow", "unknown": "yellow", "skip": "dim"}
    head = Text()
    if report.simulated:
        head.append("SIMULATED ", style="bold yellow")
    head.append(f"{report.node}", style="bold")
    head.append(f"  {report.modules} modules, {report.expected}; {report.elapsed_s:.2f} s")
    console.print(head)
    t = term.table()
    for col in ("check", "status", "finding"):
        term.column(t, col, key=col != "finding")
    for f in report.findings:
        t.add_row(Text(f.check), Text(f.status.value.upper(), style=style[f.status.value]),
                  with_read(f.reason + (f"  fix: {f.fix}" if f.fix and f.status.value in ("fail", "warn") else ""),
                            f.evidence))
    console.print(t)
    for a in report.actions:
        console.print(Text(f"action {a.slot}: {a.step.step.upper()} ({a.step.why})"))
    for note in report.notes:
        console.print(Text(f"note: {note}", style="dim"))
    verdict = {"ok": ("HEALTHY", "bold green"), "fail": ("UNHEALTHY", "bold red"),
               "unknown": ("COULD NOT TELL", "bold yellow")}[report.status.value]
    warned = len(report.warnings()) if report.status.value == "ok" else 0
    console.print(Text(verdict[0] + (f", {warned} warning(s): not drained" if warned else ""), style=verdict[1]))
