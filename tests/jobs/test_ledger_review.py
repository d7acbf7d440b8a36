"""Review findings on the module ledger (issue 44): link faults doctor finds are kept on the
module end of the link; every critical fault kind of the knowledge base has a ladder."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from gpuvet.cli.app import main
from gpuvet.knowledge import Fault, faults, xids
from gpuvet.ledger.build import build_ledger, find_module
from gpuvet.ledger.ladders import load_ladders
from gpuvet.ledger.packet import packet_files
from gpuvet.logbook.records import FindingRow, LedgerEvent, LedgerRows, Sighting
from gpuvet.logbook.store import Logbook
from tests.jobs.test_ledger import _old_logbook
from tests.jobs.test_ledger_steps import AT, CAPTURES, doctor_steps
from tests.support.logbook_fixtures import pg_server, target  # noqa: F401  (fixtures)

LINKS = """name: f3
base: hgx-h200-8
faults:
  - {kind: link_degraded, between: [gpu1, nvswitch0], factor: 0.5}
  - {kind: link_down, between: [gpu5, nvswitch0]}
"""


def test_doctor_keeps_a_link_fault_on_the_module_end_of_the_link(tmp_path: Path) -> None:
    node = tmp_path / "f3.yaml"
    node.write_text(LINKS)
    book = Logbook(str(tmp_path / "lb.db"))
    _, actions = doctor_steps(book, str(node), AT, symptom=None)  # type: ignore[arg-type]
    assert sorted((a.slot, a.step.fault) for a in actions) == [("gpu1", "link_degraded"), ("gpu5", "link_down")]
    ledger = build_ledger(book.ledger_rows(), load_ladders(), AT)
    slow, down = find_module(ledger, "f3/gpu1"), find_module(ledger, "f3/gpu5")
    assert slow is not None and [r.fault for r in slow.reports] == ["link_degraded"]
    assert down is not None and [r.fault for r in down.reports] == ["link_down"]
    assert find_module(ledger, "f3/nvswitch0") is None  # a switch end is no module
    book.close()


def _names(f: Fault) -> set[str]:
    return {f.kind, *f.doctor, *f.health, *f.watch, *f.validate}


def test_every_critical_fault_of_the_knowledge_base_has_a_ladder_that_does_not_start_at_watch() -> None:
    ladders = load_ladders()
    critical = [f for f in faults().values() if f.severity == "critical"]
    shared = {n for f in faults().values() if f.severity != "critical" for n in _names(f)}  # health's `nic`: both
    assert len(critical) > 20
    for f in critical:
        for name in _names(f):
            ladder = ladders.ladder(name)
            assert ladder is not ladders.default, f"{f.kind}: {name} falls to the default ladder"
            assert name in shared or ladder.steps[0] != "watch", f"{f.kind}: {name} starts at watch"
            assert ladders.rank(max(ladder.steps, key=ladders.rank)) >= ladders.rank("drain"), f.kind
    for code, entry in xids().items():
        if entry.drains:
            assert ladders.ladder(f"xid:{code}").steps[0] != "watch", f"Xid {code} drains yet starts at watch"


def test_silent_data_corruption_drains_now_and_replaces_on_a_repeat() -> None:
    ladders = load_ladders()
    for name in ("silent_data_corruption", "silent_corruption"):  # doctor's cause, validate's finding
        assert ladders.ladder(name).steps == ("drain", "rma")
    assert ladders.ladder("xid:13").steps[0] == "restart_job"  # an application's Xid keeps its own ladder
    assert ladders.ladder("xid:999").steps == ladders.faults["xid:*"].steps  # an Xid NVIDIA does not list


def test_an_xid_is_not_filed_on_another_board_that_a_listing_puts_on_its_bus(tmp_path: Path) -> None:
    book = Logbook(str(tmp_path / "lb.db"))
    files = [str(CAPTURES / "smi_q_x_h100_8gpu.xml"), str(CAPTURES / "dmesg_xid.txt")]
    run, _ = doctor_steps(book, files, AT, symptom=None)  # type: ignore[arg-type]
    # dmesg_xid.txt: PCI 3a:00 is GPU-5c1e9a70…, serial 1654922019876; the XML's 3A:00.0 is serial …0002
    [note] = [n for n in run.notes if n.startswith("bus 0000:3A:00.0:")]
    assert "GPU-5c1e9a70" in note and "1654922019876" in note and "gpu2" in note
    ladders = load_ladders()
    ledger = build_ledger(book.ledger_rows(), ladders, AT)
    listed = find_module(ledger, "1654220000002")
    assert listed is not None and "xid:48" not in {r.fault for r in listed.reports}  # its power cap stays
    packet = packet_files(listed, ledger, ladders, AT)
    assert "3a:00" not in packet["kernel_lines.txt"].decode().lower()
    lost = find_module(ledger, "1654220000003")  # 5D:00.0: both captures agree, its Xid 79 is its own
    assert lost is not None and lost.step is not None and lost.step.fault == "xid:79"
    book.close()


OLD_VALIDATE = [  # what 0acc5a5's validate kept: its run (modules in the envelope) and its roots as an event
    "INSERT INTO runs(run_id, kind, status, verdict, started_utc, ended_utc, host, pid, pid_started, simulated, "
    "node, envelope) VALUES ('v1', 'validate', 'complete', 'warn', '2026-12-01T00:00:00+00:00', "
    "'2026-12-01T00:10:00+00:00', 'old-host', 1, 0, 1, 'f2', '{\"kind\": \"validate\", \"modules\": [{\"id\": "
    "\"gpu1\", \"uuid\": \"GPU-f2-1\", \"model\": \"H200\"}, {\"id\": \"gpu3\", \"uuid\": \"GPU-f2-3\", \"model\": "
    "\"H200\"}]}')",
    "INSERT INTO events(run_id, time_utc, kind, message, data) VALUES ('v1', '2026-12-01T00:10:00+00:00', 'roots', "
    "'roots', '[{\"key\": \"inventory/link_degraded/gpu1-nvswitch0\", \"kind\": \"link_degraded\", \"severity\": "
    "\"warn\", \"subject\": \"gpu1\\u2194nvswitch0\", \"title\": \"gpu1\\u2194nvswitch0 at 50 % of design\", "
    "\"explains\": []}, {\"key\": \"power/power_cap_low/gpu3\", \"kind\": \"power_cap_low\", \"severity\": "
    "\"warn\", \"subject\": \"gpu3\", \"title\": \"gpu3 capped\", \"explains\": []}, {\"key\": \"x\", \"kind\": "
    "\"note\", \"severity\": \"info\", \"subject\": \"gpu3\", \"title\": \"info\", \"explains\": []}]')",
]


def _old_validate_logbook(book_target: str, tmp_path: Path) -> None:
    _old_logbook(book_target, tmp_path)
    if book_target.startswith("postgresql"):
        import psycopg

        with psycopg.connect(book_target, autocommit=True) as conn:
            conn.execute("SET search_path TO gpuvet")
            for sql in OLD_VALIDATE:
                conn.execute(sql)
        return
    with sqlite3.connect(book_target) as conn:
        for sql in OLD_VALIDATE:
            conn.execute(sql)


def test_an_older_validates_roots_are_read_as_findings_on_migration(target, tmp_path):  # noqa: F811
    _old_validate_logbook(target, tmp_path)
    book = Logbook(target)
    ladders = load_ladders()
    later = "2026-12-02T00:00:00+00:00"
    ledger = build_ledger(book.ledger_rows(), ladders, later)
    slow, capped = find_module(ledger, "GPU-f2-1"), find_module(ledger, "GPU-f2-3")
    assert slow is not None and [(r.fault, r.source, r.severity) for r in slow.reports] == [
        ("link_degraded", "validate", "warn")]
    assert capped is not None and [r.fault for r in capped.reports] == ["power_limit"]  # validate's name now
    assert "migrated" in slow.reports[0].data
    # a repeat after the upgrade is the 2nd
    run_id = book.begin("validate", {"kind": "validate"}, True, "f2", at_utc=later)
    book.add_findings([FindingRow(run_id, 0, later, "f2", "gpu1", "GPU-f2-1", None, "validate", "link_degraded", "warn",
                                  "gpu1↔nvswitch0 at 50 % of design", None, {})])
    slow = find_module(build_ledger(book.ledger_rows(), ladders, later), "GPU-f2-1")
    assert slow is not None and slow.step is not None and slow.step.nth == 2
    book.close()
    again = Logbook(target)  # the migration runs once
    assert len([f for f in again.ledger_rows().findings if f.run_id == "v1"]) == 2
    again.close()


def test_the_packet_replaces_the_syslog_host_of_kernel_lines_and_its_name_in_capture_files(tmp_path: Path) -> None:
    dmesg = tmp_path / "gpu-node07-dmesg.txt"
    dmesg.write_text("".join(ln.replace("] NVRM", "] gpu-node07.corp.example.com kernel: NVRM", 1) + "\n"
                             for ln in (CAPTURES / "dmesg_xid.txt").read_text().splitlines()))
    xml = tmp_path / "gpu-node07-smi.xml"
    xml.write_text((CAPTURES / "smi_q_x_h100_8gpu.xml").read_text())
    book = Logbook(str(tmp_path / "lb.db"))
    doctor_steps(book, [str(dmesg), str(xml)], AT, symptom=None)  # type: ignore[arg-type]
    doctor_steps(book, [str(dmesg), str(xml)], "2026-12-05T09:20:00+00:00", symptom=None)  # type: ignore[arg-type]
    ladders = load_ladders()
    ledger = build_ledger(book.ledger_rows(), ladders, AT)
    lost = find_module(ledger, "1654220000003")
    assert lost is not None
    packet = packet_files(lost, ledger, ladders, AT)
    everything = b"".join(packet.values()).decode()
    assert "node07" not in everything and "example.com" not in everything
    lines = packet["kernel_lines.txt"].decode().splitlines()
    assert len(lines) == 1 and " kernel: NVRM: Xid (PCI:0000:5d:00): 79" in lines[0]  # once, with its host replaced
    manifest = json.loads(packet["MANIFEST.json"])
    assert manifest["hostnames"] == "replaced" and any("syslog" in w for w in manifest["hostnames_replaced"])
    kept = packet_files(lost, ledger, ladders, AT, keep_hostnames=True)
    assert "gpu-node07.corp.example.com" in kept["kernel_lines.txt"].decode()
    assert json.loads(kept["MANIFEST.json"])["hostnames_replaced"] == []
    book.close()


LOST = """name: n2
base: hgx-h200-8
faults:
  - {kind: xid, module: gpu2, code: 79, at: 10m}
"""


def test_doctor_names_a_lost_module_and_its_off_bus_xid_as_one_root(tmp_path: Path) -> None:
    node = tmp_path / "n2.yaml"
    node.write_text(LOST)
    run, _ = doctor_steps(None, str(node), AT, symptom=None)  # type: ignore[arg-type]
    assert [r.key for r in run.roots if r.subject == "gpu2"] == ["module_fell_off_bus/gpu2"]
    assert len([f for f in run.findings if f.module == "gpu2"]) == 1


def test_the_ledger_counts_a_lost_module_and_its_off_bus_xid_once() -> None:
    seen = [Sighting("w1", "2026-12-05T08:00:00+00:00", "n2", "gpu2", "GPU-n2-2", "SN-2", None, None)]
    events = [LedgerEvent("w1", "2026-12-05T08:10:00+00:00", "n2", "xid", "Xid 79", "gpu2", "GPU-n2-2", "critical",
                          {"code": 79}),
              LedgerEvent("w1", "2026-12-05T08:10:05+00:00", "n2", "module_lost", "gpu2 lost", "gpu2", "GPU-n2-2",
                          "critical", {})]
    ledger = build_ledger(LedgerRows([], seen, [], events, []), load_ladders(), AT)
    lost = find_module(ledger, "SN-2")
    assert lost is not None and [(o.fault, o.reports) for o in lost.occurrences] == [("xid:79", 2)]
    assert lost.step is not None and lost.step.nth == 1


def test_simulated_modules_are_marked_and_left_out_of_fleet_figures_unless_asked(tmp_path: Path, capsys) -> None:
    node = tmp_path / "f3.yaml"
    node.write_text(LINKS)
    db = str(tmp_path / "lb.db")
    book = Logbook(db)
    doctor_steps(book, str(node), AT, symptom=None)  # type: ignore[arg-type]  # a simulated node's run
    book.close()
    assert main(["module", "list", "--logbook", db, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed and all(m["simulated"] is True for m in listed)
    assert main(["module", "list", "--logbook", db]) == 0
    assert "(simulated)" in capsys.readouterr().out
    assert main(["module", "fleet", "--logbook", db, "--json"]) == 0
    fleet = json.loads(capsys.readouterr().out)
    assert fleet["groups"] == [] and len(fleet["simulated_left_out"]) == len(listed)
    assert main(["module", "fleet", "--logbook", db, "--json", "--include-simulated"]) == 0
    assert [g["nodes"] for g in json.loads(capsys.readouterr().out)["groups"]] == [1]
    assert main(["module", "fleet", "--logbook", db]) == 0
    assert "simulated module(s) and their runs left out" in " ".join(capsys.readouterr().out.split())


def test_module_show_prints_figures_rounded_and_no_python_none() -> None:
    from gpuvet.cli.module import _what

    gemm = {"what": "figure", "name": "compute/gemm_bf16", "value": 747.3829662320496, "unit": "TFLOPS",
            "expected": 748.3461818181818, "verdict": "pass"}
    assert _what(gemm) == "compute/gemm_bf16: 747.4 TFLOPS vs design 748.3 TFLOPS (pass)"
    state = {"what": "figure", "name": "settings/persistence_mode", "value": None, "unit": None, "expected": None,
             "verdict": "pass"}
    assert _what(state) == "settings/persistence_mode: no figure (pass)"


LONG = LINKS.replace("name: f3", "name: rack3-node7-long-name")


def test_module_list_keeps_a_place_whole_and_rma_of_a_clean_module_warns(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    node = tmp_path / "n.yaml"
    node.write_text(LONG)
    db = str(tmp_path / "lb.db")
    book = Logbook(db)
    doctor_steps(book, str(node), AT, symptom=None)  # type: ignore[arg-type]
    book.close()
    assert main(["module", "list", "--logbook", db]) == 0
    out = capsys.readouterr().out
    assert all(f"rack3-node7-long-name/gpu{i}" in out for i in range(8))  # never cut mid-word
    out_file = tmp_path / "p.tar.gz"
    assert main(["module", "rma", "rack3-node7-long-name/gpu0", "--logbook", db, "-o", str(out_file)]) == 0
    assert "has no fault in the logbook" in capsys.readouterr().err and out_file.exists()
    assert main(["module", "rma", "rack3-node7-long-name/gpu1", "--logbook", db, "-o", str(out_file)]) == 0
    assert "no fault" not in capsys.readouterr().err


def test_module_help_says_each_command_in_whole_sentences(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["module", "--help"]) == 0
    lines = [ln.strip("│ ").strip() for ln in capsys.readouterr().out.splitlines()]
    assert "rma    The RMA packet of one module, for its vendor (docs/ledger.md)." in lines
    assert not any(ln.endswith(("kernel", "share of time")) for ln in lines)  # the docstring's cut lines
