"""`gpuvet doctor`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from gpuvet.cli import exits
from gpuvet.cli.beat import heartbeat
from gpuvet.cli.common import NodeOpt, SimOpt, chosen_node
from gpuvet.cli.jsonout import write_json
from gpuvet.cli.module import LaddersOpt

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gpuvet.backends.base import Backend
    from gpuvet.checks.window import TrendModel
    from gpuvet.doctor.captures import Captures
    from gpuvet.doctor.evidence import Evidence
    from gpuvet.doctor.model import DoctorRun
    from gpuvet.ledger.ladders import Ladders
    from gpuvet.ledger.record import ModuleStep


def doctor(
    symptom: Annotated[str | None, typer.Argument(help="interconnect-slow, module-missing, compute-errors, overheating, "
                                                  "results-fluctuate or compute-below-peak; none: triage across all.")]
    = None,
    node_ref: NodeOpt = None,
    sim: SimOpt = None,
    expect: Annotated[str | None, typer.Option("--expect", help="The declared node (preset or spec) to compare "
                                               "with; on --node the spec's own node by default.")] = None,
    from_: Annotated[list[str] | None, typer.Option("--from", help="Captured evidence from another machine: "
                     "nvidia-smi -q (text or -x XML, whole or excerpts), topo -m, nvlink -s/-e, lspci -vvv, dcgmi diag "
                     "(text or JSON), nccl-tests/rccl-tests, nvbandwidth, kernel logs with Xids, NCCL/RCCL/HCCL "
                     "logs, ibstat, ibv_devinfo, ibdev2netdev, perftest, the fabric manager's journal, amd-smi, "
                     "rocm-smi, npu-smi, nvidia-bug-report.log(.gz); detected by content. Once per file: "
                     "--from a.txt --from b.txt.")] = None,
    window: Annotated[str | None, typer.Option("--window", help="Telemetry window to observe (default: 4 simulated "
                                               "days on --node, 10 s on this machine).")] = None,
    all_steps: Annotated[bool, typer.Option("--all", help="Run every step, not only up to the first cause "
                                            "(and list them all, as --verbose).")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="List every step of every playbook, not only the "
                                          "checks that judged something.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON: findings and steps.")] = False,
    logbook: Annotated[str | None, typer.Option("--logbook", help="Keep each cause found on a module in the module "
                                                "ledger (a file or postgresql:// URL) and say the module's ladder "
                                                "step from its history there (docs/ledger.md).")] = None,
    ladders: LaddersOpt = None,
) -> None:
    """Ordered troubleshooting: each playbook runs its checks in the order an experienced engineer
    would (for a slow interconnect: the physical link, then driver and runtime configuration, then
    the application's pattern, and the host) and names the cause with its evidence, fix and
    confidence. Exit 1 when a cause is found, 2 on bad input.

    Example: gpuvet doctor --from dmesg.txt --from smi.txt (files copied from another machine, --from each)

    Example: gpuvet doctor interconnect-slow (this machine, one playbook)"""
    from gpuvet.doctor.model import playbook
    from gpuvet.errors import GpuvetError

    if symptom:
        playbook(symptom)  # an unknown symptom lists the known ones before anything runs
    sim = chosen_node(node_ref, sim)
    if sim and from_:
        raise GpuvetError("--node and --from both given", fix="diagnose one source at a time.")
    ledger: tuple[str | None, Ladders] | None = None
    if logbook:  # the step needs a module's history
        from gpuvet.ledger.ladders import load_ladders

        ledger = (logbook, load_ladders(ladders))
    result, actions = _diagnose(symptom, sim, expect, list(from_) if from_ else None, window, all_steps, ledger)
    with exits.verdict(1 if any(f.severity != "info" for f in result.findings) else 0):
        if as_json:
            write_json(doctor_json(symptom, result, actions), indent=1)
        else:
            from gpuvet.cli import term  # rich for the text answer only: --json loads none of it
            from gpuvet.cli.render_doctor import render

            render(term.console(), result, verbose=verbose or all_steps)
            _render_actions(actions)


def _backend(sim: str | None, captures: Captures | None) -> Backend | None:
    """The node to examine: simulated, rebuilt from captures (None when they hold no node), or this one."""
    from gpuvet.backends.select import open_backend

    if sim:
        return open_backend(sim=sim)
    if captures is not None:
        return open_backend(from_files=captures.topo_and_xml, parsed=captures.parsed) if captures.topo_and_xml else None
    return open_backend()


def _diagnose(symptom: str | None, sim: str | None, expect: str | None, from_: list[str] | None,
              window: str | None, all_steps: bool,
              ledger: tuple[str | None, Ladders] | None = None) -> tuple[DoctorRun, list[ModuleStep]]:
    from gpuvet.cli.common import flag_seconds
    from gpuvet.doctor.captures import Captures, read_captures
    from gpuvet.doctor.evidence import Evidence
    from gpuvet.doctor.run import diagnose

    captures = None
    if from_:  # a simulated node loads no capture parser
        from gpuvet.captures.text import collector_paused

        with collector_paused():  # the files' lines are many small objects in no cycle (issue 43)
            captures = read_captures(from_)
    backend = _backend(sim, captures)
    declared = None
    if expect:
        from gpuvet.node.build import build_node
        from gpuvet.node.spec import load_spec

        spec, where = load_spec(expect)
        declared = build_node(spec, where)
    elif sim and backend is not None:
        declared = backend.declared
    ev = Evidence(backend, declared, captures or Captures(), window_s=flag_seconds(window, "--window"),
                  watch=captures is None or bool(sim), trend=_thermal_trend)
    try:
        with heartbeat("doctor: gathering evidence and running the playbooks"):
            result = diagnose(ev, symptom, all_steps)
        return result, _steps(result, ev, *ledger) if ledger else []
    finally:
        if backend is not None:
            backend.close()


def _thermal_trend(slowdown_c: dict[str, float], interval_s: float = 60.0) -> TrendModel:
    """watch's forecaster, imported when a window is fed to it (it loads numpy; a file read needs none)."""
    from gpuvet.watch.trend import thermal_trend

    return thermal_trend(slowdown_c, interval_s)


def _steps(result: DoctorRun, ev: Evidence, logbook: str | None, ladders: Ladders) -> list[ModuleStep]:
    """Each module with a cause: its ladder step (health's code path); kept in the logbook with
    --logbook. A logbook that cannot be used is a note: the diagnosis stands all the same."""
    from gpuvet.doctor.ledger_link import keep
    from gpuvet.logbook.location import new_file_note
    from gpuvet.logbook.store import Logbook, LogbookError

    book = None
    try:
        new = new_file_note(logbook)
        book = Logbook(logbook) if logbook else None
        if new:
            result.notes.append(new)
        return keep(result, ev, book, ladders)
    except LogbookError as exc:
        result.notes.append(f"not kept in the module ledger: {exc.message}")
        return keep(result, ev, None, ladders)
    finally:
        if book:
            book.close()


def _render_actions(actions: list[ModuleStep]) -> None:
    """health's words: one line per module with a cause, its step and why."""
    from rich.text import Text

    from gpuvet.cli import term

    for a in actions:
        term.console().print(Text(f"action {a.slot}: {a.step.step.upper()} ({a.step.why})"))


def doctor_json(symptom: str | None, result: DoctorRun, actions: Sequence[ModuleStep] = ()) -> dict[str, object]:
    """doctor --json: the symptom, the findings (place keys only when known), every step, and the checks
    no step could judge with what would let them (cant_tell); with a module ledger step, each finding's
    module ``step`` and ``actions`` (health's keys). ``roots``: the faults first, each with the findings it
    explains (its own first) as ``cause/where`` keys, where is the module, the pair a-b or node (issue 42)."""
    from gpuvet.doctor.answer import cant_tell, unjudged_figures, untold_temperatures
    from gpuvet.report.jsonable import to_jsonable

    unjudged = cant_tell(result)
    return {"symptom": symptom, "simulated": result.simulated, "notes": result.notes,
            "roots": [r.to_json() for r in result.roots],
            "findings": [_finding_json(to_jsonable(f), actions) for f in result.findings],
            "steps": [{k: v for k, v in to_jsonable(s).items() if k != "findings"}
                      | {"findings": len(s.findings)} for s in result.steps],
            "cant_tell": {"checks": list(unjudged.checks), "give": list(unjudged.give),
                          "figures": unjudged_figures(result), "temperatures": untold_temperatures(result)},
            "actions": [a.to_json() for a in actions]}


def _finding_json(d: dict[str, object], actions: Sequence[ModuleStep] = ()) -> dict[str, object]:
    from gpuvet.node.bus import bus_key

    if d.get("between") is None:
        d.pop("between", None)
    if d.get("module") is None:
        d.pop("module", None)
    if d.get("host") is None:  # named only where a capture names several hosts
        d.pop("host", None)
    module = d.get("module")
    step = next((a for a in actions if module == a.slot or (a.bus_id and bus_key(str(module)) == bus_key(a.bus_id))),
                None) if module else None
    if step is not None:
        d["step"] = step.to_json()
    return d
