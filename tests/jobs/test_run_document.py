"""The run document: one typed, versioned shape that `validate --json` and `log show --json`
print, that the logbook keeps (old rows included) and that its committed JSON Schema describes."""

import json
import sqlite3
from pathlib import Path

import pytest

from gpuvet.errors import GpuvetError
from gpuvet.logbook.document import CheckRecord, RunDocument, Verdict, as_document, json_schema
from gpuvet.logbook.store import Logbook
from tests.support.helpers import call

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "schema" / "run-document.schema.json"


def _validate(data):
    """Against the committed schema file (jsonschema when installed), and the model itself."""
    try:
        import jsonschema
    except ImportError:
        pass
    else:
        jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))).validate(data)
    return RunDocument.model_validate(data)



def test_the_committed_schema_is_the_one_the_models_give():
    committed = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert committed == json_schema(), "regenerate it: python -m gpuvet.logbook.document docs/schema"
    assert set(committed["properties"]) >= {"schema_version", "run_id", "verdict", "environment", "checks", "events"}


def test_validate_and_log_show_print_run_documents_of_the_schema(tmp_path, capsys):
    book = str(tmp_path / "lb.db")
    code, out, _ = call(capsys, "validate", "--sim", "hgx-h200-8", "--level", "quick", "--json", "--logbook", book)
    assert code == 0
    printed = json.loads(out)
    doc = _validate(printed)
    again = doc.to_json()  # read and written back: the same keys and values, in the same order within each part
    assert again == printed and all(json.dumps(again[k]) == json.dumps(v) for k, v in printed.items())
    assert doc.environment.node == "hgx-h200-8" and doc.checks and doc.verdict is Verdict.PASS
    code, out, _ = call(capsys, "log", "show", printed["run_id"], "--json", "--logbook", book)
    kept = json.loads(out)
    assert code == 0 and _validate(kept).status == "complete"
    assert set(printed) <= set(kept)  # the logbook's copy adds (status, events), never renames
    assert json.dumps([kept["checks"], kept["environment"]]) == json.dumps([printed["checks"], printed["environment"]])


def test_a_document_that_is_not_one_is_refused_naming_the_field():
    with pytest.raises(GpuvetError) as err:
        as_document({"environment": {}, "checks": [{"layer": "compute", "name": "x", "verdict": "great"}]}, "n1.json")
    assert err.value.where == "n1.json" and "checks.0.verdict" in err.value.what


def test_check_key_and_verdict_rank_are_the_documents_own():
    c = CheckRecord.model_validate({"layer": "module_link", "name": "p2p_one_way", "verdict": "warn",
                                    "between": ["gpu0", "gpu1"], "value": 3})
    assert c.key == "module_link/p2p_one_way/gpu0-gpu1" and c.where == "gpu0 → gpu1" and c.number == 3.0
    assert [v.rank for v in (Verdict.PASS, Verdict.SKIP, Verdict.WARN, Verdict.FAIL)] == [0, 0, 1, 2]
    assert c.to_json()["value"] == 3 and "evidence" not in c.to_json()  # kept as written, defaults not added


# the logbook as gpuvet's first release wrote it (git show 2ed1edc:src/gpuvet/logbook/store.py): events
# without module/uuid/sim_time/severity/data, no 'application' row in meta, no application id
_FIRST_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (run_id TEXT PRIMARY KEY, kind TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'aborted')), verdict TEXT,
    started_utc TEXT NOT NULL, ended_utc TEXT, host TEXT NOT NULL, pid INTEGER NOT NULL, pid_started REAL NOT NULL,
    simulated INTEGER NOT NULL, node TEXT, envelope TEXT NOT NULL);
CREATE TABLE checks (run_id TEXT NOT NULL REFERENCES runs(run_id), seq INTEGER NOT NULL, layer TEXT NOT NULL,
    name TEXT NOT NULL, verdict TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (run_id, seq));
CREATE TABLE events (run_id TEXT NOT NULL REFERENCES runs(run_id), time_utc TEXT NOT NULL, kind TEXT NOT NULL,
    message TEXT NOT NULL);
CREATE INDEX runs_started ON runs(started_utc);
INSERT INTO meta(key, value) VALUES ('schema_version', '1');
"""
_OLD_ENVELOPE = {"tool": "gpuvet", "tool_version": "0.0.1", "schema_version": 1, "host": "old-host",
                 "time_utc": "2025-01-01T00:00:00+00:00", "backend": "sim", "simulated": True, "node": "mesh-4",
                 "node_type": "H100-SXM", "level": "quick", "modules": [{"id": "gpu0", "model": "H100-SXM"}]}
_OLD_CHECKS = [
    {"layer": "compute", "name": "gemm_bf16", "verdict": "fail", "value": 500.0, "unit": "TFLOPS", "expected": 700.0,
     "module": "gpu0", "dtype": "bf16", "reason": "below the rule", "device": "gpu",
     "evidence": {"telemetry": {"gpu0": {"samples": 3, "temp_c_max": 88.0, "throttle_reasons": ["hw_slowdown"]}}}},
    {"layer": "collective", "name": "all_reduce_busbw", "verdict": "pass", "value": 200.0, "unit": "GB/s",
     "expected": 210.0, "evidence": {"sweep": [[1048576, 50.0], [67108864, 200.0]], "ranks": 4}},
    {"layer": "compute", "name": "gemm_fp8", "verdict": "great", "value": 1.0},  # a verdict no gpuvet ever wrote
]


def test_a_logbook_of_the_first_schema_opens_migrates_and_reads_as_run_documents(tmp_path):
    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.executescript(_FIRST_SCHEMA)
    con.execute("INSERT INTO runs VALUES ('20250101T000000-abc123', 'validate', 'complete', 'fail', "
                "'2025-01-01T00:00:00+00:00', '2025-01-01T00:01:00+00:00', 'old-host', 1, 0.0, 1, 'mesh-4', ?)",
                (json.dumps(_OLD_ENVELOPE),))
    con.executemany("INSERT INTO checks VALUES ('20250101T000000-abc123', ?, ?, ?, ?, ?)",
                    [(i, c["layer"], c["name"], c["verdict"], json.dumps(c)) for i, c in enumerate(_OLD_CHECKS)])
    con.execute("INSERT INTO events VALUES ('20250101T000000-abc123', '2025-01-01T00:00:30+00:00', 'layer', 'compute')")
    con.commit()
    con.close()

    book = Logbook(path)
    try:
        doc = book.document(book.run("20250101"))
        events = book.module_events()
    finally:
        book.close()
    assert doc.schema_version == 1 and doc.verdict is Verdict.FAIL and doc.environment.node_type == "H100-SXM"
    assert [c.name for c in doc.checks] == ["gemm_bf16", "all_reduce_busbw"]  # the unreadable third one skipped
    assert doc.checks[0].evidence.telemetry["gpu0"].temp_c_max == 88.0
    assert doc.checks[1].evidence.sweep == [(1048576, 50.0), (67108864, 200.0)] and doc.checks[1].evidence.ranks == 4
    assert [e.message for e in doc.events] == ["compute"] and events == []  # 'layer' events are the run's own
    _validate(doc.to_json())
    con = sqlite3.connect(path)
    columns = {r[1] for r in con.execute("SELECT * FROM pragma_table_info('events')")}
    meta = dict(con.execute("SELECT key, value FROM meta"))
    con.close()
    assert {"module", "uuid", "sim_time", "severity", "data", "node"} <= columns  # migrated in place
    assert meta == {"schema_version": "1", "application": "gpuvet", "ledger": "2"}  # the ledger at its version 2


def test_a_check_or_envelope_that_is_not_the_documents_is_refused_before_anything_is_written(tmp_path):
    from pydantic import ValidationError

    book = Logbook(tmp_path / "lb.db")
    try:
        run_id = book.begin("validate", {"level": "quick"}, simulated=True, node="n")
        with pytest.raises(ValidationError):
            book.finish(run_id, "pass", [{"layer": "compute", "name": "x", "verdict": "pass", "value": [1, 2]}])
        with pytest.raises(ValidationError):
            book.finish(run_id, "pass", [], envelope={"modules": ["gpu0"]})
        assert book.run(run_id).status == "running" and book.checks(run_id) == []
        with pytest.raises(ValidationError):
            book.begin("validate", {"node": 3}, simulated=True, node="n")
        assert len(book.runs()) == 1
    finally:
        book.close()


def test_a_run_whose_verdict_is_not_a_verdict_is_reported_damaged_not_a_traceback(tmp_path, capsys):
    book = Logbook(tmp_path / "lb.db")
    run_id = book.begin("validate", {"level": "quick"}, simulated=True, node="n")
    book.finish(run_id, "pass", [])
    book.db.execute(f"UPDATE runs SET verdict = 'great' WHERE run_id = '{run_id}'")
    book.close()
    code, _, err = call(capsys, "log", "show", run_id, "--json", "--logbook", str(tmp_path / "lb.db"))
    assert code == 2 and f"run {run_id} is damaged" in err and "Traceback" not in err
