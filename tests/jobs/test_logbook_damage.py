"""Issue 17 for the logbook: a damaged row, an unknown schema, someone else's file or table, an
unusable home, a full disk — each one clear message (exit 2) or a warning, never a traceback,
never a file changed without consent; ids matched literally; private by default."""

import json
import logging
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gpuvet.backends.sim.backend import SimBackend
from gpuvet.logbook.db import LogbookError, LogbookFull
from gpuvet.logbook.store import Logbook
from gpuvet.watch.loop import WatchConfig, Watcher
from tests.support.helpers import call
from tests.support.logbook_fixtures import *  # noqa: F403  (the pg_server and target fixtures, raw)
from tests.support.logbook_fixtures import raw

SRC = str(Path(__file__).resolve().parents[2] / "src")



def _complete_run(book, node="n", value=1.0):
    run_id = book.begin("validate", {"level": "quick", "node": node}, simulated=True, node=node)
    book.finish(run_id, "pass", [{"layer": "compute", "name": "gemm_bf16", "verdict": "pass", "value": value},
                                 {"layer": "compute", "name": "gemm_fp32", "verdict": "pass", "value": value}])
    return run_id


def test_a_damaged_row_is_skipped_with_a_warning_naming_it(target, capsys, caplog):
    book = Logbook(target)
    good, bad = _complete_run(book), _complete_run(book)
    raw(book, f"UPDATE runs SET envelope = '{{\"level\": \"qu' WHERE run_id = '{bad}'")
    raw(book, f"UPDATE checks SET data = 'not json' WHERE run_id = '{good}' AND seq = 1")
    book.event(good, "throttle", "hot", module="gpu0", data={"c": 90})
    raw(book, "UPDATE events SET data = '[1,' WHERE kind = 'throttle'")
    assert [r.run_id for r in book.runs()] == [good]
    assert [c.name for c in book.checks(good)] == ["gemm_bf16"]
    assert book.module_events(kinds=("throttle",)) == []
    assert any(bad in w for w in book.warnings) and any("check #1" in w for w in book.warnings)
    book.close()
    with caplog.at_level(logging.WARNING, logger="gpuvet.logbook"):
        code, out, err = call(capsys, "log", "list", "--json", "--logbook", target)
    assert code == 0 and [r["run_id"] for r in json.loads(out)] == [good]
    assert any(bad in r.getMessage() for r in caplog.records)
    code, out, err = call(capsys, "log", "show", bad, "--logbook", target)
    assert code == 2 and f"run {bad} is damaged" in err and "Traceback" not in err
    code, out, _ = call(capsys, "log", "show", good, "--json", "--logbook", target)
    assert code == 0 and len(json.loads(out)["checks"]) == 1


@pytest.mark.parametrize("version, says", [("one", "is not a number"), ("", "is not a number"),
                                           ("0", "unknown logbook schema"), ("99", "newer gpuvet")])
def test_an_unknown_schema_version_is_refused_with_how_to_migrate(target, capsys, version, says):
    book = Logbook(target)
    _complete_run(book)
    raw(book, f"UPDATE meta SET value = '{version}' WHERE key = 'schema_version'")
    book.close()
    code, _, err = call(capsys, "log", "list", "--logbook", target)
    assert code == 2 and says in err and "Traceback" not in err
    assert ("migrat" in err or "upgrade gpuvet" in err)


def _sqlite_file_with(path, *statements):
    db = sqlite3.connect(path)
    for s in statements:
        db.execute(s)
    db.commit()
    db.close()
    return path.read_bytes()


@pytest.mark.parametrize("statements", [
    ["CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)", "INSERT INTO photos(name) VALUES ('cat')"],
    ["CREATE TABLE runs (id INTEGER, what TEXT)", "CREATE TABLE meta (key TEXT, value TEXT)",
     "INSERT INTO meta VALUES ('schema_version', '1')"],
], ids=["foreign-file", "foreign-runs-table"])
def test_someone_elses_sqlite_file_is_refused_untouched(tmp_path, capsys, statements):
    path = tmp_path / "lb.db"
    before = _sqlite_file_with(path, *statements)
    tables = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    for args in (["log", "list"], ["validate", "--sim", "mesh-4", "--level", "quick"], ["events"]):
        code, _, err = call(capsys, *args, "--logbook", str(path))
        assert code == 2 and ("not a gpuvet logbook" in err or "is not gpuvet's" in err), err
        assert "Traceback" not in err
    assert path.read_bytes() == before
    assert {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")} == tables
    assert not (tmp_path / "lb.db-wal").exists()


def test_a_foreign_table_in_a_shared_database_is_refused_untouched(pg_server, capsys):
    import psycopg

    url = pg_server.new_database()
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE SCHEMA gpuvet")
        db.execute("CREATE TABLE gpuvet.runs (id INTEGER, what TEXT)")
    code, _, err = call(capsys, "log", "list", "--logbook", url)
    assert code == 2 and "not a gpuvet logbook" in err and "Traceback" not in err
    with psycopg.connect(url) as db:
        tables = db.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'gpuvet'").fetchall()
    assert tables == [("runs",)]


def test_an_old_logbook_is_migrated_in_place(tmp_path):
    """Schema 1 as first written: events without module/uuid/sim_time/severity/data."""
    path = tmp_path / "lb.db"
    _sqlite_file_with(
        path, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "INSERT INTO meta VALUES ('schema_version', '1')",
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL, verdict TEXT, "
        "started_utc TEXT NOT NULL, ended_utc TEXT, host TEXT NOT NULL, pid INTEGER NOT NULL, pid_started REAL NOT NULL, "
        "simulated INTEGER NOT NULL, node TEXT, envelope TEXT NOT NULL)",
        "CREATE TABLE events (run_id TEXT NOT NULL, time_utc TEXT NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL)",
        "INSERT INTO runs VALUES ('20250101T000000-abcdef', 'validate', 'complete', 'pass', '2025-01-01T00:00:00+00:00', "
        "'2025-01-01T00:01:00+00:00', 'old-host', 1, 0, 1, 'n', '{\"level\": \"quick\"}')",
        "INSERT INTO events VALUES ('20250101T000000-abcdef', '2025-01-01T00:00:30+00:00', 'layer', 'compute')")
    book = Logbook(path)
    assert [r.run_id for r in book.runs()] == ["20250101T000000-abcdef"]
    assert book.events("20250101T000000-abcdef")[0].message == "compute"
    book.event("20250101T000000-abcdef", "xid", "Xid 79", module="gpu1", severity="critical", data={"code": 79})
    assert book.module_events(kinds=("xid",))[0]["data"] == {"code": 79}
    columns = {r[1] for r in book.db.execute("PRAGMA table_info(events)")}
    assert {"module", "uuid", "sim_time", "severity", "data"} <= columns
    assert book.db.execute("PRAGMA application_id").fetchone()[0] != 0
    book.close()


def test_run_ids_are_matched_literally(target, capsys):
    book = Logbook(target)
    run_id = _complete_run(book)
    book.close()
    for pattern in ("_", "%", "2%", "____", "\\"):
        code, _, err = call(capsys, "log", "show", pattern, "--logbook", target)
        assert code == 2 and "no run" in err, pattern
    code, _, err = call(capsys, "log", "show", "", "--logbook", target)
    assert code == 2 and "empty run id" in err
    code, out, _ = call(capsys, "log", "show", run_id[:9], "--json", "--logbook", target)
    assert code == 0 and json.loads(out)["run_id"] == run_id  # a real prefix still finds it


def test_compare_with_an_aborted_watch_run_compares_only_what_both_have(target, capsys):
    book = Logbook(target)
    full = _complete_run(book)
    watch = book.begin("watch", {"kind": "watch"}, simulated=True, node="n")
    book.abort(watch, "KeyboardInterrupt")
    book.close()
    code, out, _ = call(capsys, "log", "compare", full, watch, "--json", "--logbook", target)
    data = json.loads(out)
    assert code == 0 and data["regressions"] == 0 and data["results"] == []
    assert [k.split("/")[1] for k in data["only_in_a"]] == ["gemm_bf16", "gemm_fp32"] and data["only_in_b"] == []
    assert "aborted watch run" in data["note"] and "not counted as regressions" in data["note"]
    code, out, _ = call(capsys, "log", "compare", full, watch, "--logbook", target)
    assert code == 0 and "only the 0 checks both have are compared" in " ".join(out.split())
    code, out, err = call(capsys, "log", "list", "--logbook", target)  # a run without a verdict, as a table
    assert code == 0 and watch[:12] in out and "aborted" in out and "Traceback" not in err


def test_compare_of_two_complete_runs_still_flags_a_vanished_check(target, capsys):
    book = Logbook(target)
    a = _complete_run(book)
    b = book.begin("validate", {"level": "quick"}, simulated=True, node="n")
    book.finish(b, "pass", [{"layer": "compute", "name": "gemm_bf16", "verdict": "pass", "value": 1.0}])
    book.close()
    code, out, _ = call(capsys, "log", "compare", a, b, "--json", "--logbook", target)
    data = json.loads(out)
    assert code == 1 and data["regressions"] == 1 and [k.split("/")[1] for k in data["only_in_a"]] == ["gemm_fp32"]


def test_gpuvet_home_that_is_a_file_is_one_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GPUVET_LOGBOOK", raising=False)
    home = tmp_path / "home"
    home.write_text("I am a file\n")
    for args in (["log", "list"], ["events"], ["validate", "--sim", "mesh-4", "--level", "quick"]):
        monkeypatch.setenv("GPUVET_HOME", str(home))
        code, out, err = call(capsys, *args)
        assert code == 2 and "is a file, not a folder" in err and "Traceback" not in err, err
    monkeypatch.setenv("GPUVET_HOME", str(home / "deeper"))
    code, _, err = call(capsys, "log", "list")
    assert code == 2 and "is a file, not a folder" in err
    assert home.read_text() == "I am a file\n"


def _mount(folder, options):
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True,
                          text=True).returncode == 0


@pytest.fixture(params=[False, True], ids=["no-logbook-yet", "logbook-there"])
def read_only_home(request):
    """A home gpuvet cannot write: a read-only filesystem when we are root (root ignores modes;
    skipped if it cannot mount one), else a folder of mode 0555."""
    home = Path(tempfile.mkdtemp(prefix="gpuvet-ro-"))
    root = os.geteuid() == 0
    if root and not _mount(home, "size=1m,mode=0700"):
        home.rmdir()
        pytest.skip("running as root and cannot mount a read-only tmpfs to stand for a read-only home")
    if request.param:
        Logbook(home / "logbook.db").close()
    if root:
        subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
    else:
        home.chmod(0o555)
    yield home
    if root:
        subprocess.run(["umount", str(home)], check=False)
    else:
        home.chmod(0o755)
    shutil.rmtree(home, ignore_errors=True)


def test_a_read_only_home_is_one_clear_error(read_only_home, monkeypatch, capsys):
    monkeypatch.delenv("GPUVET_LOGBOOK", raising=False)
    for home in (read_only_home, read_only_home / "sub"):
        monkeypatch.setenv("GPUVET_HOME", str(home))
        code, _, err = call(capsys, "log", "list")
        assert code == 2 and "Traceback" not in err and err.count("error:") == 1, err
        assert "read-only" in err or "Read-only" in err or "Permission denied" in err, err


def test_the_logbook_and_its_home_are_private(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GPUVET_LOGBOOK", raising=False)
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path / "a" / "home"))
    code, _, _ = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick")
    assert code == 0
    for folder in (tmp_path / "a", tmp_path / "a" / "home"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for f in (tmp_path / "a" / "home").iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f


def _fill_to(book, pages):
    book.db.execute(f"PRAGMA max_page_count = {book.db.execute('PRAGMA page_count').fetchone()[0] + pages}")


def test_a_full_logbook_during_watch_keeps_what_was_written_and_says_so(tmp_path):
    book = Logbook(tmp_path / "lb.db")
    _fill_to(book, 40)  # ~160 kB more: SQLite's own "database or disk is full"
    watcher = Watcher(SimBackend.from_ref("hgx-h200-8"),
                      WatchConfig(interval_s=1, duration_s=4 * 3600, speedup=None, admission=False), book)
    with pytest.raises(LogbookFull, match=r"full.*kept \d+ of the \d+ samples of this batch") as caught:
        watcher.run()
    (run,) = book.runs()
    kept = book.sample_count(run.run_id)
    assert 0 < kept < 4 * 3600 * 8 and "and every sample written before it" in str(caught.value)
    raw_mean = book.db.execute("SELECT AVG(temp) FROM samples WHERE mkey = 1").fetchone()[0]
    minutes = book.series(book.run_key(run.run_id), 1, 0, 4 * 3600, 60 * 60 * 4)
    assert minutes[0][1] == pytest.approx(raw_mean)  # the roll-ups cover exactly what was kept
    book.close()
    again = Logbook(tmp_path / "lb.db")  # this process still lives: the run is left running, readable
    assert again.sample_count(run.run_id) == kept and again.integrity() == "ok"


@pytest.fixture
def tiny_disk():
    """A real 384 kB filesystem (tmpfs), when this user may mount one; skipped otherwise (the
    max_page_count test above covers the same code)."""
    folder = Path(tempfile.mkdtemp(prefix="gpuvet-full-"))
    if not (os.geteuid() == 0 and shutil.which("mount") and _mount(folder, "size=384k,mode=0700")):
        folder.rmdir()
        pytest.skip("cannot mount a small tmpfs here (needs root and mount)")
    yield folder
    subprocess.run(["umount", str(folder)], check=False)
    folder.rmdir()


def test_a_full_disk_during_watch_is_one_clear_message_and_keeps_the_samples(tiny_disk):
    db = tiny_disk / "lb.db"
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-m", "gpuvet", "watch", "--sim", "hgx-h200-8", "--duration", "6h",
                           "--interval", "1s", "--speedup", "max", "--no-admission", "--json", "--logbook", str(db)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "full" in done.stderr and "kept" in done.stderr and "Traceback" not in done.stderr
    book = Logbook(db)  # readable on the full disk; the ended run is marked aborted if there is room
    (run,) = book.runs()
    assert book.sample_count(run.run_id) > 0
    book.close()
    listed = subprocess.run([sys.executable, "-m", "gpuvet", "log", "list", "--logbook", str(db)], env=env,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and run.run_id[:12] in listed.stdout and "Traceback" not in listed.stderr


def test_a_logbook_error_is_a_gpuvet_error():
    assert issubclass(LogbookFull, LogbookError)
