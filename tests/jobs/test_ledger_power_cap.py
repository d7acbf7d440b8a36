"""The ledger calls a watch throttle by its reason: the software power cap alone is no hardware
or thermal slowdown (newcomer run, finding 4: `module list` said gpu5 'hardware or thermal
slowdown' for 'throttled under load: software power cap')."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main
from gpuvet.ledger.build import event_fault
from gpuvet.ledger.ladders import load_ladders
from gpuvet.logbook.records import LedgerEvent

CAPPED = """name: capnode
base: hgx-h200-8
faults:
  - {kind: power_cap_low, module: gpu5, watts: 350}
"""


def _throttle(reasons: list[str]) -> LedgerEvent:
    data: dict = {"reasons": reasons, "power_w": 350.0}
    return LedgerEvent("r", "2026-12-06T07:00:00+00:00", "n", "throttle", "throttled under load", "gpu5", "U", "warn",
                       data)


@pytest.mark.parametrize(("reasons", "fault"), [
    (["sw_power_cap"], "sw_power_cap"), (["sw_thermal_slowdown"], "throttle"), (["hw_slowdown"], "throttle"),
    (["sw_power_cap", "hw_thermal_slowdown"], "throttle"), (["sw_power_cap", "hw_power_brake_slowdown"], "throttle"),
    ([], "throttle")])
def test_a_throttle_event_is_the_fault_its_reasons_name(reasons: list[str], fault: str) -> None:
    assert event_fault(_throttle(reasons)) == fault
    ladder = load_ladders().ladder(fault)
    assert ("hardware or thermal" in ladder.name) is (fault == "throttle")
    assert fault == "throttle" or "drain" not in ladder.steps  # a power cap is never drained for


def test_watch_of_a_capped_module_keeps_a_power_cap_not_a_hardware_slowdown(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    spec, db = tmp_path / "cap.yaml", str(tmp_path / "lb.db")
    spec.write_text(CAPPED)
    main(["watch", "--node", str(spec), "--duration", "10s", "--interval", "1s", "--speedup", "max",
          "--no-admission", "--logbook", db, "--json"])
    events = json.loads(capsys.readouterr().out)["events"]
    assert any(e["kind"] == "throttle" and "software power cap" in e["message"] for e in events), events
    assert main(["module", "show", "capnode/gpu5", "--logbook", db, "--json"]) == 0
    step = json.loads(capsys.readouterr().out)["step"]
    assert step["fault"] == "sw_power_cap" and step["step"] == "watch"
    assert step["why"].startswith("1st held at its software power cap under load")
    assert main(["module", "list", "--logbook", db]) == 0
    assert "hardware or thermal" not in capsys.readouterr().out
