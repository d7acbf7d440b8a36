"""Newcomer 56 (NBF2): MEDIUM 4 (files after one --from), LOW 10 (catalog PCIe of a model with
none), LOW 18 (doctor's help teaches an example; a mistyped symptom gets "did you mean")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main


@pytest.fixture
def two_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    monkeypatch.chdir(tmp_path)
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("[  1.0] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n")
    return "a.txt", "b.txt"


@pytest.mark.parametrize("cmd", [["doctor"], ["inventory"], ["topo"], ["doctor", "--json"]])
def test_a_second_file_after_from_says_give_from_once_per_file(cmd, two_logs, capsys) -> None:
    a, b = two_logs
    assert main([*cmd, "--from", a, b]) == 2
    err = capsys.readouterr().err
    assert "give --from once per file: --from a.txt --from b.txt" in err, err
    assert "unknown symptom" not in err and "unexpected extra" not in err.lower()


def test_a_glob_after_from_names_every_file_and_eq_form_too(two_logs, tmp_path, capsys) -> None:
    (tmp_path / "c.txt").write_text("x\n")
    assert main(["doctor", "--from=a.txt", "b.txt", "c.txt"]) == 2
    assert "--from a.txt --from b.txt --from c.txt" in capsys.readouterr().err


def test_a_symptom_after_from_is_still_a_symptom(two_logs, capsys) -> None:
    assert main(["doctor", "--from", "a.txt", "module-missing", "--json"]) == 1
    assert '"symptom": "module-missing"' in capsys.readouterr().out


def test_from_help_says_once_per_file(capsys) -> None:
    main(["doctor", "--help"])
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())  # the help box's wrapped lines joined
    assert "--from a.txt --from b.txt" in out
    assert "Example: gpuvet doctor --from dmesg.txt" in out
    assert "SYMPTOM SYMPTOM" not in out


@pytest.mark.parametrize(("typed", "meant"), [("interconnect_slow", "interconnect-slow"),
                                             ("overheat", "overheating"), ("Module-Missing", "module-missing")])
def test_a_mistyped_symptom_gets_did_you_mean(typed, meant, capsys) -> None:
    assert main(["doctor", typed]) == 2
    assert f"did you mean {meant}?" in capsys.readouterr().err


def test_an_unrelated_word_gets_no_guess(capsys) -> None:
    assert main(["doctor", "banana"]) == 2
    assert "did you mean" not in capsys.readouterr().err


def test_catalog_pcie_of_a_model_without_one_is_a_dash(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["catalog"]) == 0
    out = capsys.readouterr().out
    assert "genNone" not in out and "xNone" not in out
    row = next(line for line in out.splitlines() if line.startswith("Ascend910B") and "GiB" in line)
    assert " - " in row


def test_health_and_doctor_say_when_their_logbook_is_new(tmp_path: Path, capsys) -> None:
    """LOW 17: a mistyped --logbook made a new, empty database in silence; a writer may make it, and says so."""
    typo = tmp_path / "logbook.sqlite"
    assert main(["health", "--node", "hgx-h200-8", "--logbook", str(typo), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(str(typo) in n and "new, empty" in n for n in notes), notes
    assert main(["health", "--node", "hgx-h200-8", "--logbook", str(typo), "--json"]) == 0
    assert not any("new, empty" in n for n in json.loads(capsys.readouterr().out)["notes"])  # it is there now
    log = tmp_path / "a.txt"
    log.write_text("[  1.0] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n")
    main(["doctor", "--from", str(log), "--logbook", str(tmp_path / "other.db"), "--json"])
    assert any("new, empty" in n for n in json.loads(capsys.readouterr().out)["notes"])


def test_a_reader_of_a_missing_logbook_refuses_with_its_path(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nope.db"
    assert main(["module", "list", "--logbook", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err and not missing.exists()
