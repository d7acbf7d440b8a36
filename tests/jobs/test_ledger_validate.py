"""validate's findings climb the module ledger's ladders (issue 44): each root on a module (a
slowed link, a power cap, a module missing; a benchmark figure below design no fact explains) is
a finding of that module, with its step, from its history in the logbook."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gpuvet.backends.readings import Inventory
from gpuvet.backends.select import open_backend
from gpuvet.checks.model import Check, Layer, Verdict
from gpuvet.checks.roots import Root
from gpuvet.ledger.build import build_ledger, find_module
from gpuvet.ledger.ladders import load_ladders
from gpuvet.logbook.store import Logbook
from gpuvet.validate.ledger_link import flagged, keep
from gpuvet.validate.run import Level, ValidationRun, Validator
from tests.support.logbook_fixtures import pg_server, target  # noqa: F401  (fixtures)

FAULTS = """faults:
  - {kind: power_cap_low, module: gpu6, watts: 300}
  - {kind: link_degraded, between: [gpu1, nvswitch0], factor: 0.5}
"""


def node11(tmp_path: Path) -> str:
    rows = "\n".join(f"  - {{id: gpu{i}, model: H200-SXM, uuid: GPU-n11-{i}, serial: 'SN-11-{i}'}}" for i in range(8))
    path = tmp_path / "node11.yaml"
    path.write_text(f"name: node11\nbase: hgx-h200-8\nmodules:\n{rows}\n{FAULTS}")
    return str(path)


def validate(spec: str, book: Logbook | None) -> tuple[ValidationRun, Inventory]:
    backend = open_backend(sim=spec)
    try:
        return Validator(backend, Level.QUICK, logbook=book).run(), backend.inventory()
    finally:
        backend.close()


def ago(days: float) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")


def test_each_root_on_a_module_is_a_finding_of_that_module_under_its_ladder_key(tmp_path):
    run, inv = validate(node11(tmp_path), None)
    ladders = load_ladders()
    steps = keep(run.run_id, "node11", inv, run.roots, run.checks, None, ladders)
    got = {(a.slot, a.serial, a.step.fault, a.step.step) for a in steps}
    # the slowed link's module end (not the switch), the capped module; power_cap_low is health's power_limit
    assert got == {("gpu1", "SN-11-1", "link_degraded", "reboot_node"), ("gpu6", "SN-11-6", "power_limit", "watch")}


def test_a_second_slowed_link_in_its_window_climbs_the_ladder(target, tmp_path):  # noqa: F811
    book = Logbook(target)
    spec, ladders = node11(tmp_path), load_ladders()
    first, inv = validate(spec, None)  # three days ago: kept as validate keeps a run, at that time
    run_id = book.begin("validate", first.envelope, True, "node11", at_utc=ago(3))
    book.finish(run_id, first.verdict.value, [], at_utc=ago(3))
    keep(run_id, "node11", inv, first.roots, first.checks, book, ladders, at_utc=ago(3))
    second, _ = validate(spec, book)  # validate keeps its findings and says the steps itself
    steps = {a.slot: a for a in second.actions}
    assert (steps["gpu1"].step.step, steps["gpu1"].step.nth) == ("drain", 2)
    assert steps["gpu1"].step.why.startswith("2nd a link below its speed or width (PCIe or fabric) in 30 days; "
                                             "the first on node11/gpu1 on ")
    module = find_module(build_ledger(book.ledger_rows(), ladders, ago(0)), "SN-11-1")
    assert [r.source for r in module.reports] == ["validate", "validate"] and module.figures  # figures too
    book.close()


def test_a_benchmark_root_no_fact_explains_is_the_benchmark_fault_and_info_is_none():
    checks = [Check(Layer.COMPUTE, "gemm_bf16", Verdict.FAIL, module="gpu3"),
              Check(Layer.INVENTORY, "link_degraded", Verdict.WARN, between=("gpu1", "gpu2"))]
    roots = [Root(checks[0].key, "gemm_bf16", "critical", "gpu3", "gpu3: gemm bf16", (checks[0].key,)),
             Root(checks[1].key, "link_degraded", "warn", "gpu1↔gpu2", "gpu1↔gpu2 at 50 %", (checks[1].key,)),
             Root("x", "note", "info", "gpu4", "gpu4: note", ("x",))]
    got = [(f.module, f.check, f.status) for f in flagged(roots, checks, {"gpu1", "gpu2", "gpu3", "gpu4"})]
    assert got == [("gpu3", "benchmark", "fail"), ("gpu1", "link_degraded", "warn"), ("gpu2", "link_degraded", "warn")]


def test_validate_json_says_each_flagged_module_step(target, tmp_path, capsys):  # noqa: F811
    from gpuvet.cli.app import main

    spec = node11(tmp_path)
    assert main(["validate", "--node", spec, "--level", "quick", "--json", "--logbook", target]) == 1
    actions = json.loads(capsys.readouterr().out)["actions"]
    assert [(a["node"], a["module"], a["serial"], a["fault"], a["step"], a["occurrences"]) for a in actions] == [
        ("node11", "gpu1", "SN-11-1", "link_degraded", "reboot_node", 1), ("node11", "gpu6", "SN-11-6", "power_limit",
                                                                           "watch", 1)]
    assert actions[0]["why"].startswith("1st a link below its speed or width (PCIe or fabric) in 30 days, "
                                        "on node11/gpu1 on ")
    book = Logbook(target)
    [run] = book.runs()
    assert book.document(run).to_json()["actions"] == actions  # `log show` gives them back as printed
    assert not [e for e in book.module_events() if e["kind"] in ("roots", "actions")]  # no event of a module
    assert [e.kind for e in book.document(run).events].count("actions") == 0
    book.close()


def test_validate_text_says_each_step_after_the_roots_and_takes_the_site_ladders(tmp_path, capsys):
    from gpuvet.cli.app import main

    site = tmp_path / "site.yaml"
    site.write_text("faults:\n  link_degraded: {name: a slow link, window: 7d, ladder: [drain]}\n")
    assert main(["validate", "--node", node11(tmp_path), "--level", "quick", "--no-log", "--ladders", str(site)]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "action gpu1: DRAIN (1st a slow link in 7 days, on node11/gpu1 on " in out
    assert out.index("SIMULATED") < out.index("root cause") < out.index("action gpu1")  # the banner first (newcomer 56)
