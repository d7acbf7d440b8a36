"""A module's ladder step is worked out from its findings, events and sightings: a run that asks
for its modules' steps never reads the logbook's benchmark figures (on a busy shared logbook that
read cost seconds for every validate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main
from gpuvet.logbook import ledger_rows


def test_validate_says_its_steps_without_reading_the_benchmark_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "node.yaml"
    spec.write_text("base: hgx-h200-8\nfaults:\n  - {kind: link_down, between: [gpu1, nvswitch0]}\n")
    book = tmp_path / "book.db"
    assert main(["validate", "--node", str(spec), "--level", "quick", "--logbook", str(book), "--json"]) == 1
    capsys.readouterr()

    def no_figures(*_: object) -> list[object]:
        raise AssertionError("a step read the benchmark figures")

    monkeypatch.setattr(ledger_rows, "read_module_checks", no_figures)
    assert main(["validate", "--node", str(spec), "--level", "quick", "--logbook", str(book), "--json"]) == 1
    out = capsys.readouterr().out
    assert '"actions"' in out and "gpu1" in out  # the second sighting of the link still climbs its ladder
    with pytest.raises(AssertionError, match="benchmark figures"):
        main(["module", "show", "node-1/gpu1", "--logbook", str(book)])  # the timeline does show them


def test_doctor_says_why_a_module_gone_before_any_sighting_gets_no_step(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A module already off the bus on the logbook's first run has no identity to follow: doctor
    says so for it, and a run that saw it present first gives it its step."""
    spec = tmp_path / "node.yaml"
    spec.write_text("base: hgx-h200-8\nname: n7\nfaults:\n  - {kind: missing_module, module: gpu3}\n")
    fresh = tmp_path / "fresh.db"
    main(["doctor", "--node", str(spec), "--logbook", str(fresh), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert not any(a["module"] == "gpu3" for a in out["actions"])
    assert any(n.startswith("no ladder step for gpu3: this logbook never saw the module") for n in out["notes"])
    seen = tmp_path / "seen.db"
    healthy = tmp_path / "healthy.yaml"
    healthy.write_text("base: hgx-h200-8\nname: n7\n")
    main(["doctor", "--node", str(healthy), "--logbook", str(seen), "--json"])
    capsys.readouterr()
    main(["doctor", "--node", str(spec), "--logbook", str(seen), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert any(a["module"] == "gpu3" for a in out["actions"])
    assert not any(n.startswith("no ladder step") for n in out["notes"])
