"""Newcomer 56 (NBF2): MEDIUM 4 (files after one --from), LOW 10 (catalog PCIe of a model with
none), LOW 18 (doctor's help teaches an example; a mistyped symptom gets "did you mean")."""

from __future__ import annotations

import json
import tarfile
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


_IBSTAT = """CA 'mlx5_0'
\tCA type: MT4129
\tNumber of ports: 1
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 400
\t\tLink layer: InfiniBand
CA 'mlx5_1'
\tCA type: MT4129
\tNumber of ports: 1
\tPort 1:
\t\tState: Down
\t\tPhysical state: Disabled
\t\tRate: 10
\t\tLink layer: InfiniBand
"""


def test_a_port_down_is_titled_in_a_line_and_verbose_says_when(tmp_path: Path, capsys, monkeypatch) -> None:
    """MEDIUM 9: the title says what; --verbose adds the knowledge base's whole meaning under it."""
    monkeypatch.setenv("COLUMNS", "200")
    cap = tmp_path / "ibstat.txt"
    cap.write_text(_IBSTAT)
    assert main(["doctor", "--from", str(cap)]) == 1
    out = capsys.readouterr().out
    assert "mlx5_1 port 1: A NIC port the node needs is down (confidence" in out, out
    assert "the design declares" not in out
    assert main(["doctor", "--verbose", "--from", str(cap)]) == 1
    assert "    means: A NIC port the design declares" in capsys.readouterr().out


def test_a_triage_labels_a_finding_by_its_check_a_symptom_by_both(tmp_path: Path, capsys, monkeypatch) -> None:
    """LOW 11: an application's Xid 13 found in a triage read 'module-missing/xid_log'."""
    monkeypatch.setenv("COLUMNS", "200")
    log = tmp_path / "dmesg.txt"
    log.write_text("[  5.0] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics Exception\n")
    main(["doctor", "--from", str(log)])
    head = next(line for line in capsys.readouterr().out.splitlines() if "(confidence" in line)
    assert head.endswith(", xid_log)") and "module-missing" not in head, head
    main(["doctor", "compute-errors", "--from", str(log)])
    head = next(line for line in capsys.readouterr().out.splitlines() if "(confidence" in line)
    assert head.endswith(", compute-errors/xid_log)"), head


def test_a_simulated_validate_shows_its_banner_before_its_verdict(tmp_path: Path, capsys) -> None:
    """LOW 15: the verdict and 'action gpu1: REBOOT_NODE' printed above the SIMULATED banner."""
    lb = str(tmp_path / "lb.db")
    main(["validate", "--node", "hgx-h200-8", "--level", "quick", "--logbook", lb])
    out = capsys.readouterr().out
    assert out.index("SIMULATED") < out.index("verdict:"), out[:400]


def test_a_simulated_modules_rma_summary_says_simulated_and_names_its_host(tmp_path: Path, capsys) -> None:
    """LOW 15: the vendor summary of a model's module said nothing of it; 'Where now: node-1/gpu1'
    beside module show's rack3-node7/gpu1 was unexplained."""
    spec = tmp_path / "n.yaml"
    spec.write_text("name: rack3-node7\nbase: hgx-h200-8\nfaults:\n"
                    "  - {kind: xid, module: gpu1, code: 48, at: 0s}\n")
    lb = str(tmp_path / "lb.db")
    main(["health", "--node", str(spec), "--logbook", lb, "--json"])
    capsys.readouterr()
    assert main(["module", "rma", "GPU-sim-rack3-node7-gpu1", "-o", str(tmp_path / "p.tar.gz"), "--logbook", lb]) == 0
    out = capsys.readouterr().out
    with tarfile.open(tmp_path / "p.tar.gz") as tar:
        names = tar.getnames()
        summary = tar.extractfile(next(n for n in names if n.endswith("summary.txt"))).read().decode()
    assert summary.splitlines()[1].startswith("SIMULATED:") and "rack3-node7/" not in summary
    assert "Where now:         node-1/gpu1 (host names replaced: --keep-hostnames keeps them)" in summary
    assert "node-1 is rack3-node7" in out  # the key, on the screen only


def test_a_capture_without_a_topology_invents_no_socket(tmp_path: Path, capsys) -> None:
    """LOW 12: inventory --from any capture printed 'sockets 1' and --json "sockets": 1, read from nowhere."""
    cap = tmp_path / "ibstat.txt"
    cap.write_text(_IBSTAT)
    main(["inventory", "--from", str(cap), "--json"])
    host = json.loads(capsys.readouterr().out)["host"]
    assert host["sockets"] is None and "sockets" in host["unavailable"], host
