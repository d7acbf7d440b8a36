"""`gpuvet doctor`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from gpuvet.cli import exits, term
from gpuvet.cli.common import NodeOpt, SimOpt, chosen_node
from gpuvet.cli.jsonout import write_json

if TYPE_CHECKING:
    from gpuvet.backends.base import Backend
    from gpuvet.doctor.captures import Captures
    from gpuvet.doctor.model import DoctorRun


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
                     "rocm-smi, npu-smi, nvidia-bug-report.log(.gz); detected by content (repeat).")] = None,
    window: Annotated[str | None, typer.Option("--window", help="Telemetry window to observe (default: 4 simulated "
                                               "days on --node, 10 s on this machine).")] = None,
    all_steps: Annotated[bool, typer.Option("--all", help="Run every step, not only up to the first cause "
                                            "(and list them all, as --verbose).")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="List every step of every playbook, not only the "
                                          "checks that judged something.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON: findings and steps.")] = False,
) -> None:
    """Ordered troubleshooting: each playbook runs its checks in the order an experienced engineer
    would (for a slow interconnect: the physical link, then driver and runtime configuration, then
    the application's pattern, and the host) and names the cause with its evidence, fix and
    confidence. Exit 1 when a cause is found, 2 on bad input."""
    from gpuvet.doctor.model import playbook
    from gpuvet.errors import GpuvetError

    if symptom:
        playbook(symptom)  # an unknown symptom lists the known ones before anything runs
    sim = chosen_node(node_ref, sim)
    if sim and from_:
        raise GpuvetError("--node and --from both given", fix="diagnose one source at a time.")
    result = _diagnose(symptom, sim, expect, list(from_) if from_ else None, window, all_steps)
    with exits.verdict(1 if any(f.severity != "info" for f in result.findings) else 0):
        if as_json:
            write_json(doctor_json(symptom, result), indent=1)
        else:
            from gpuvet.cli.render_doctor import render

            render(term.console(), result, verbose=verbose or all_steps)


def _backend(sim: str | None, captures: Captures | None) -> Backend | None:
    """The node to examine: simulated, rebuilt from captures (None when they hold no node), or this one."""
    from gpuvet.backends.select import open_backend

    if sim:
        return open_backend(sim=sim)
    if captures is not None:
        return open_backend(from_files=captures.topo_and_xml) if captures.topo_and_xml else None
    return open_backend()


def _diagnose(symptom: str | None, sim: str | None, expect: str | None, from_: list[str] | None,
              window: str | None, all_steps: bool) -> DoctorRun:
    from gpuvet.cli.common import flag_seconds
    from gpuvet.doctor.captures import Captures, read_captures
    from gpuvet.doctor.evidence import Evidence
    from gpuvet.doctor.run import diagnose

    captures = read_captures(from_) if from_ else None
    backend = _backend(sim, captures)
    declared = None
    if expect:
        from gpuvet.node.build import build_node
        from gpuvet.node.spec import load_spec

        spec, where = load_spec(expect)
        declared = build_node(spec, where)
    elif sim and backend is not None:
        declared = backend.declared
    from gpuvet.watch.trend import thermal_trend

    ev = Evidence(backend, declared, captures or Captures(), window_s=flag_seconds(window, "--window"),
                  watch=captures is None or bool(sim), trend=thermal_trend)
    try:
        with term.heartbeat("doctor: gathering evidence and running the playbooks"):
            return diagnose(ev, symptom, all_steps)
    finally:
        if backend is not None:
            backend.close()


def doctor_json(symptom: str | None, result: DoctorRun) -> dict[str, object]:
    """doctor --json: the symptom, the findings (place keys only when known), every step, and the checks
    no step could judge with what would let them (cant_tell)."""
    from gpuvet.doctor.answer import cant_tell
    from gpuvet.report.jsonable import to_jsonable

    unjudged = cant_tell(result)
    return {"symptom": symptom, "simulated": result.simulated, "notes": result.notes,
            "findings": [_finding_json(to_jsonable(f)) for f in result.findings],
            "steps": [{k: v for k, v in to_jsonable(s).items() if k != "findings"}
                      | {"findings": len(s.findings)} for s in result.steps],
            "cant_tell": {"checks": list(unjudged.checks), "give": list(unjudged.give)}}


def _finding_json(d: dict[str, object]) -> dict[str, object]:
    if d.get("between") is None:
        d.pop("between", None)
    if d.get("module") is None:
        d.pop("module", None)
    return d
