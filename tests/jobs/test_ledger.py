"""The module ledger (issue 44): a simulated fleet over weeks (faults that repeat, a module moved
between nodes, one replaced) gives the right ledger, the right ladder step and an RMA packet
checked file by file, on SQLite and PostgreSQL; an older logbook migrates without losing a row."""

from __future__ import annotations

import io
import json
import sqlite3
import tarfile
from pathlib import Path

import pytest

from gpuvet.backends.select import open_backend
from gpuvet.cli.app import main
from gpuvet.errors import GpuvetError
from gpuvet.health.ledger_link import attach
from gpuvet.health.run import HealthOptions, run_health
from gpuvet.ledger.build import build_ledger, find_module
from gpuvet.ledger.fleet import groups, lemons
from gpuvet.ledger.ladders import load_ladders, parse_ladders
from gpuvet.ledger.packet import FILES, packet_files, write_tar
from gpuvet.logbook.store import Logbook
from tests.support.logbook_fixtures import pg_server, raw, target  # noqa: F401  (fixtures)

DATA = Path(__file__).parent.parent / "data" / "ledger"
NOW = "2026-12-06T12:00:00+00:00"


def spec(tmp_path: Path, node: str, modules: dict[int, tuple[str, str]], faults: str = "[]") -> str:
    """A node of 8 H200s whose modules carry the given (uuid, serial); others their own."""
    rows = []
    for i in range(8):
        uuid, serial = modules.get(i, (f"GPU-{node}-{i}", f"SN-{node}-{i}"))
        rows.append(f"  - {{id: gpu{i}, model: H200-SXM, uuid: {uuid}, serial: '{serial}'}}")
    path = tmp_path / f"{node}-{abs(hash((tuple(modules.items()), faults)))}.yaml"
    path.write_text(f"name: {node}\nbase: hgx-h200-8\nmodules:\n" + "\n".join(rows) + f"\nfaults: {faults}\n")
    return str(path)


def check(book: Logbook, spec_path: str, at_utc: str) -> None:
    """One health check of the node, kept at ``at_utc`` (the simulated fleet's calendar)."""
    backend = open_backend(sim=spec_path)
    try:
        result = run_health(backend, HealthOptions())
    finally:
        backend.close()
    attach(result, book, load_ladders(), at_utc=at_utc)


XID79 = "[{kind: xid, module: gpu3, code: 79, at: 0s}]"
MOVED = ("GPU-a1b2c3d4-0003", "SN-LEMON")  # the module that fails, moves to node08/gpu5, and fails again


def weeks(book: Logbook, tmp_path: Path) -> None:
    """node07/gpu3 (SN-LEMON) logs Xid 79 on 11-21 (seen by two checks: one occurrence), is clean
    a week later, is re-seated into node08/gpu5 on 12-01 where it logs Xid 79 again on 12-05;
    node07/gpu3 gets a new module (SN-NEW) that is clean."""
    n7_bad = spec(tmp_path, "node07", {3: MOVED}, XID79)
    n7_ok = spec(tmp_path, "node07", {3: MOVED})
    n7_new = spec(tmp_path, "node07", {3: ("GPU-node07-3-new", "SN-NEW")})
    n8_ok = spec(tmp_path, "node08", {})
    n8_moved_ok = spec(tmp_path, "node08", {5: MOVED})
    n8_moved_bad = spec(tmp_path, "node08", {5: MOVED}, XID79.replace("gpu3", "gpu5"))
    for spec_path, at in [(n7_bad, "2026-11-21T08:00:00+00:00"), (n7_bad, "2026-11-21T09:30:00+00:00"),
                          (n8_ok, "2026-11-21T10:00:00+00:00"), (n7_ok, "2026-11-28T08:00:00+00:00"),
                          (n7_new, "2026-12-01T08:00:00+00:00"), (n8_moved_ok, "2026-12-01T09:00:00+00:00"),
                          (n8_moved_bad, "2026-12-05T08:00:00+00:00")]:
        check(book, spec_path, at)


def test_a_simulated_fleet_over_weeks(target, tmp_path):  # noqa: F811
    book = Logbook(target)
    weeks(book, tmp_path)
    ladders = load_ladders()
    ledger = build_ledger(book.ledger_rows(), ladders, NOW)
    assert len(ledger.modules) == 17  # 8 + 8 + the new one in node07/gpu3
    lemon = find_module(ledger, "SN-LEMON")
    assert lemon is find_module(ledger, "GPU-a1b2c3d4-0003") is find_module(ledger, "node08/gpu5")
    assert [(p.node, p.slot) for p in lemon.places] == [("node07", "gpu3"), ("node08", "gpu5")]
    assert [(o.fault, o.node, o.first_utc[:10], o.reports) for o in lemon.occurrences] == [
        ("xid:79", "node07", "2026-11-21", 2), ("xid:79", "node08", "2026-12-05", 1)]
    assert lemon.step is not None and lemon.step.step == "rma" and lemon.step.nth == 2
    assert lemon.step.why == ("2nd Xid 79 (fallen off the bus) in 30 days; the first on node07/gpu3 on 2026-11-21")
    new = find_module(ledger, "node07/gpu3")
    assert new is not None and new.serial == "SN-NEW" and new.occurrences == [] and new.step is None
    assert [m.id for m in lemons(ledger)] == ["SN-LEMON"]
    # a month later the first occurrence has left the 30-day window: one Xid 79 → reboot first
    later = build_ledger(book.ledger_rows(), ladders, "2026-12-25T00:00:00+00:00")
    assert find_module(later, "SN-LEMON").step.step == "reboot_node"
    book.close()


def test_the_health_check_says_the_step_with_its_history(target, tmp_path):  # noqa: F811
    book = Logbook(target)
    weeks(book, tmp_path)
    backend = open_backend(sim=spec(tmp_path, "node08", {5: MOVED}, XID79.replace("gpu3", "gpu5")))
    result = run_health(backend, HealthOptions())
    backend.close()
    attach(result, book, load_ladders(), at_utc="2026-12-05T09:00:00+00:00")
    [action] = result.report.actions
    assert (action.node, action.slot, action.serial, action.step.step) == ("node08", "gpu5", "SN-LEMON", "rma")
    from gpuvet.health import formats

    lines = formats.nhc_lines(result.report)
    assert lines[0].startswith("ERROR: gpuvet health: xid: gpu5: ") and lines[-1].startswith("reason: ")
    assert "ACTION: gpuvet health: gpu5: rma: 2nd Xid 79" in "\n".join(lines)
    book.close()


def test_the_rma_packet_file_by_file(target, tmp_path):  # noqa: F811
    book = Logbook(target)
    weeks(book, tmp_path)
    ladders = load_ladders()
    ledger = build_ledger(book.ledger_rows(), ladders, NOW)
    lemon = find_module(ledger, "SN-LEMON")
    files = packet_files(lemon, ledger, ladders, NOW)
    assert sorted(files) == sorted(FILES)
    identity = json.loads(files["identity.json"])
    assert identity["serial"] == "SN-LEMON" and identity["uuids"] == ["GPU-a1b2c3d4-0003"]
    assert [p["node"] for p in identity["places"]] == ["node-1", "node-2"]  # names replaced
    findings = json.loads(files["findings.json"])
    assert [f["fault"] for f in findings] == ["xid:79"] * 3 and all(f["data"]["check"] == "xid" for f in findings)
    timeline = json.loads(files["timeline.json"])
    assert [t["what"] for t in timeline] == ["placed", "health", "health", "placed", "health"]
    assert json.loads(files["figures.json"]) == []  # no validate run measured it: said in lacking.txt
    kernel = files["kernel_lines.txt"].decode()
    assert kernel.count("NVRM: Xid (PCI:") == 2 and "simulated" in kernel  # each kept line once (review: twice)
    env = json.loads(files["environment.json"])
    assert len(env) == 5 and {e["kind"] for e in env} == {"health"} and all(e["driver_version"] for e in env)
    lacking = files["lacking.txt"].decode()
    for need in ("nvidia-bug-report.sh", "dcgmi diag -r 3", "VBIOS", "Benchmark figures", "SIMULATED"):
        assert need in lacking, need
    summary = files["summary.txt"].decode()
    assert "Serial number:     SN-LEMON" in summary and "Current action: rma (2nd Xid 79" in summary
    assert len(summary.splitlines()) <= 60
    text = b"".join(files.values()).decode()
    assert "node07" not in text and "node08" not in text  # nothing private unless asked
    manifest = json.loads(files["MANIFEST.json"])
    assert set(manifest["files"]) == set(FILES) - {"MANIFEST.json"} and manifest["hostnames"] == "replaced"
    kept = packet_files(lemon, ledger, ladders, NOW, keep_hostnames=True)
    assert "node07/gpu3" in kept["summary.txt"].decode()
    with tarfile.open(fileobj=io.BytesIO(write_tar(files, "rma-SN-LEMON")), mode="r:gz") as tar:
        assert tar.getnames() == [f"rma-SN-LEMON/{n}" for n in FILES]
        assert tar.extractfile("rma-SN-LEMON/summary.txt").read() == files["summary.txt"]
    book.close()


def test_fleet_figures(tmp_path):
    book = Logbook(str(tmp_path / "lb.db"))
    weeks(book, tmp_path)
    ledger = build_ledger(book.ledger_rows(), load_ladders(), NOW)
    [h200] = groups(ledger, load_ladders())
    assert h200.group == "H200-SXM" and h200.nodes == 2 and h200.occurrences == 2
    # node07 observed 11-21 08:00 → 12-01 08:00 (240 h), node08 11-21 10:00 → 12-05 08:00 (334 h)
    assert h200.node_hours == pytest.approx(574, abs=0.1) and h200.mtbf_hours == pytest.approx(287, abs=0.1)
    assert h200.categories == {"Faulty GPU": 2}
    # drainable: node07 failed from 11-21 08:00 to the clean check of 11-28 08:00 (168 h of 240 h
    # between its checks); node08 was never failed before its last check
    assert h200.drainable_share == pytest.approx(168 / (240 + 334), abs=1e-3)
    book.close()


def test_the_cli_list_show_rma_and_errors(tmp_path, capsys):
    lb = str(tmp_path / "lb.db")
    book = Logbook(lb)
    weeks(book, tmp_path)
    book.close()
    capsys.readouterr()
    assert main(["module", "list", "--logbook", lb, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["id"] == "SN-LEMON" and rows[0]["node"] == "node08" and rows[0]["uuids"] == ["GPU-a1b2c3d4-0003"]
    assert main(["module", "list", "--logbook", lb]) == 0
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 80 and "SN-LEMON" in out
    assert main(["module", "show", "node08/gpu5", "--logbook", lb, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["step"]["step"] in ("rma", "reboot_node") and all(t.get("node") for t in shown["timeline"])
    assert main(["module", "rma", "SN-LEMON", "-o", str(tmp_path / "p.tar.gz"), "--logbook", lb]) == 0
    assert tarfile.open(tmp_path / "p.tar.gz").getnames()[0] == "rma-SN-LEMON/summary.txt"
    capsys.readouterr()
    assert main(["module", "show", "SN-NOPE", "--logbook", lb]) == 2
    assert "no module 'SN-NOPE'" in capsys.readouterr().err


def test_health_json_names_node_and_module_identity(tmp_path, capsys):
    lb = str(tmp_path / "lb.db")
    Logbook(lb).close()
    path = spec(tmp_path, "node07", {3: MOVED}, XID79)
    assert main(["health", "--sim", path, "--json", "--logbook", lb]) == 1
    data = json.loads(capsys.readouterr().out)
    [fail] = [f for f in data["findings"] if f["status"] == "fail"]
    assert (fail["node"], fail["module"], fail["uuid"], fail["serial"]) == ("node07", "gpu3", "GPU-a1b2c3d4-0003",
                                                                            "SN-LEMON")
    assert data["actions"][0]["step"] == "reboot_node" and data["actions"][0]["serial"] == "SN-LEMON"
    book = Logbook(lb)
    assert [r.kind for r in book.runs()] == ["health"] and len(book.ledger_rows().findings) == 1
    book.close()


@pytest.mark.parametrize("text, says", [
    ("faults: {x: {ladder: [explode]}}", "unknown step"),
    ("faults: {x: {ladder: []}}", "non-empty list"),
    ("faults: {x: {window: soon, ladder: [watch]}}", "window"),
    ("- a list", "mapping with `faults:`"),
])
def test_a_bad_ladders_file_is_refused_with_where_and_fix(text, says):
    with pytest.raises(GpuvetError) as caught:
        parse_ladders(text, "site.yaml")
    assert says in caught.value.message and caught.value.fix


def test_a_site_ladder_changes_the_step(tmp_path, capsys):
    site = tmp_path / "ladders.yaml"
    site.write_text('faults:\n  "xid:79": {name: Xid 79, window: 90d, ladder: [drain]}\n')
    assert load_ladders(site).ladder("xid:79").steps == ("drain",)
    path = spec(tmp_path, "node07", {}, XID79)
    assert main(["health", "--sim", path, "--json", "--ladders", str(site)]) == 1
    assert json.loads(capsys.readouterr().out)["actions"][0]["step"] == "drain"
    assert main(["health", "--sim", path, "--ladders", str(tmp_path / "none.yaml")]) == 2


def _old_logbook(book_target: str, tmp_path: Path) -> None:
    """A logbook as the release before the ledger wrote it: its tables and one run's rows."""
    runs = ("INSERT INTO runs(run_id, kind, status, verdict, started_utc, ended_utc, host, pid, pid_started, "
            "simulated, node, envelope) VALUES ('r1', 'watch', 'complete', 'warn', '2025-01-01T00:00:00+00:00', "
            "'2025-01-01T01:00:00+00:00', 'old-host', 1, 0, 1, 'node07', '{\"kind\": \"watch\"}')")
    rest = ["INSERT INTO meta VALUES ('schema_version', '1')", "INSERT INTO meta VALUES ('application', 'gpuvet')",
            "INSERT INTO checks VALUES ('r1', 0, 'compute', 'gemm', 'pass', '{\"layer\": \"compute\", \"name\": "
            "\"gemm\", \"verdict\": \"pass\"}')",
            "INSERT INTO events(run_id, time_utc, kind, message, module, uuid, severity, data) VALUES ('r1', "
            "'2025-01-01T00:10:00+00:00', 'xid', 'Xid 79', 'gpu3', 'GPU-old-3', 'critical', '{\"code\": 79}')",
            "INSERT INTO modules(uuid, module, first_seen_utc) VALUES ('GPU-old-3', 'gpu3', '2025-01-01')",
            "INSERT INTO samples VALUES (1, 1, 0.0, 40, 300, 1980, 2619, 0.5, 0)"]
    if book_target.startswith("postgresql"):
        import psycopg

        with psycopg.connect(book_target, autocommit=True) as conn:
            conn.execute("CREATE SCHEMA gpuvet")
            conn.execute("SET search_path TO gpuvet")
            conn.execute((DATA / "schema1-postgres.sql").read_text())
            for sql in [runs.replace("run_id, kind", "run_id, kind", 1), *rest]:
                conn.execute(sql)
        return
    with sqlite3.connect(book_target) as conn:
        conn.executescript((DATA / "schema1-sqlite.sql").read_text())
        for sql in [runs, *rest]:
            conn.execute(sql)


def _counts(book: Logbook) -> dict[str, int]:
    db = book._db
    return {t: int(db.query(f"SELECT COUNT(*) FROM {t}")[0][0])
            for t in ("meta", "runs", "checks", "events", "modules", "samples", "samples_1m")}


def test_an_existing_logbook_migrates_without_losing_a_row(target, tmp_path):  # noqa: F811
    _old_logbook(target, tmp_path)
    if not target.startswith("postgresql"):
        conn = sqlite3.connect(target)
        before = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                  for t in ("meta", "runs", "checks", "events", "modules", "samples", "samples_1m")}
        conn.close()
    else:
        before = {"meta": 2, "runs": 1, "checks": 1, "events": 1, "modules": 1, "samples": 1, "samples_1m": 0}
    book = Logbook(target)
    after = _counts(book)
    assert after == {**before, "meta": before["meta"] + 1}  # + the ledger's own key
    [event] = book.module_events()
    assert event["node"] == "node07"  # filled from its run
    ledger = build_ledger(book.ledger_rows(), load_ladders(), "2025-01-02T00:00:00+00:00")
    assert ledger.modules == [] and [r.fault for r in ledger.unattributed] == ["xid:79"]
    book.close()
    again = Logbook(target)  # a second open writes nothing more
    assert _counts(again) == after
    again.close()


def test_raw_helper_still_reaches_the_new_tables(target):  # noqa: F811
    book = Logbook(target)
    raw(book, "DELETE FROM sightings")
    assert book.ledger_rows().sightings == []
    book.close()
