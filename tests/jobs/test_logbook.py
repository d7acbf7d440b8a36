"""The logbook survives a killed run and concurrent writers; bad input loses nothing. The tests
that make sense on both run against the SQLite file and a PostgreSQL server (started from
Debian's package by a fixture, skipped with the reason when it is not installed)."""

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pytest

from gpuvet.errors import GpuvetError
from gpuvet.logbook.store import Logbook
from tests.support.helpers import call
from tests.support.logbook_fixtures import *  # noqa: F403  (the pg_server and target fixtures)


def _layers(target):
    book = Logbook(target)
    try:
        return [e.message for r in book.runs() for e in book.events(r.run_id) if e.kind == "layer"]
    finally:
        book.close()


@pytest.mark.slow
def test_a_run_killed_midway_is_marked_aborted_and_the_file_stays_intact(target, capsys):
    Logbook(target).close()  # exists before the child starts, so we can watch it
    child = subprocess.Popen([sys.executable, "-m", "gpuvet", "validate", "--level", "standard", "--host-only",
                              "--logbook", target, "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until it is past inventory and measuring
            if "compute" in _layers(target):
                break
            assert child.poll() is None, "validate ended before it could be killed"
            time.sleep(0.05)
        else:
            pytest.fail("validate never reached the compute layer")
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    book = Logbook(target)
    assert book.integrity() == "ok"
    (run,) = book.runs()
    assert run.status == "aborted" and run.verdict is None
    assert book.checks(run.run_id) == []  # never half-written
    assert any(e.kind == "aborted" for e in book.events(run.run_id))
    book.close()
    code, out, _ = call(capsys, "log", "list", "--json", "--logbook", target)
    assert code == 0 and json.loads(out)[0]["status"] == "aborted"


def test_a_running_run_of_a_live_process_is_left_alone(target):
    book = Logbook(target)
    run_id = book.begin("validate", {"level": "quick"}, simulated=True, node="n")
    again = Logbook(target)  # this process is alive: not an orphan
    assert again.run(run_id).status == "running"
    again.close()
    book.close()


def _write_runs(path: str, n: int, tag: str) -> None:
    book = Logbook(path)
    for i in range(n):
        run_id = book.begin("validate", {"writer": tag}, simulated=True, node=tag)
        book.event(run_id, "layer", f"{tag}-{i}")
        book.finish(run_id, "pass", [{"layer": "compute", "name": "gemm_bf16", "verdict": "pass", "value": float(i)}])
    book.close()


def test_two_concurrent_writers_lose_nothing(target):
    Logbook(target).close()
    ctx = multiprocessing.get_context("spawn")
    writers = [ctx.Process(target=_write_runs, args=(target, 25, tag)) for tag in ("a", "b")]
    for w in writers:
        w.start()
    for w in writers:
        w.join(120)
        assert w.exitcode == 0
    book = Logbook(target)
    runs = book.runs()
    assert len(runs) == 50 and all(r.status == "complete" for r in runs)
    assert {r.node for r in runs} == {"a", "b"}
    assert sum(len(book.checks(r.run_id)) for r in runs) == 50
    assert book.integrity() == "ok"
    book.close()


def test_a_corrupt_logbook_is_a_clear_error_and_is_not_touched(tmp_path, capsys):
    bad = tmp_path / "lb.db"
    bad.write_bytes(b"this is not a database\n" * 100)
    before = bad.read_bytes()
    code, out, err = call(capsys, "log", "list", "--logbook", str(bad))
    assert code == 2 and "not a gpuvet logbook" in err and "Traceback" not in err
    code, _, err = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--logbook", str(bad))
    assert code == 2
    assert bad.read_bytes() == before


def test_a_damaged_sqlite_file_is_a_clear_error(tmp_path):
    db = tmp_path / "lb.db"
    book = Logbook(db)
    book.begin("validate", {}, simulated=True, node="n")
    book.close()
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # keep the header, wreck the schema page
    db.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"lb.db{suffix}").unlink(missing_ok=True)
    with pytest.raises(GpuvetError, match="not a usable gpuvet logbook"):
        Logbook(db)


def test_unknown_run_id_says_what_exists(target, capsys):
    call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--logbook", target)
    code, _, err = call(capsys, "log", "show", "nope", "--logbook", target)
    assert code == 2 and "no run 'nope'" in err and "gpuvet log list" in err


def test_show_and_list_read_back_what_validate_wrote(target, capsys):
    code, out, _ = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--json", "--logbook", target)
    written = json.loads(out)
    code, out, _ = call(capsys, "log", "show", written["run_id"][:15], "--json", "--logbook", target)
    shown = json.loads(out)
    assert shown["run_id"] == written["run_id"] and shown["verdict"] == written["verdict"]
    assert len(shown["checks"]) == len(written["checks"])
    assert shown["checks"] == json.loads(json.dumps(written["checks"]))
    assert shown["environment"]["tool_version"] and shown["environment"]["topology_fingerprint"]
    code, out, _ = call(capsys, "log", "list", "--json", "--logbook", target)
    (row,) = json.loads(out)
    assert {"run_id", "status", "verdict"} <= set(row) and row["status"] == "complete"


def test_gpuvet_home_sets_the_default_place(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GPUVET_LOGBOOK", raising=False)
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path / "home"))
    code, _, _ = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick")
    assert code == 0 and (tmp_path / "home" / "logbook.db").is_file()


def test_gpuvet_logbook_names_a_shared_database(pg_server, monkeypatch, capsys):
    url = pg_server.new_database()
    monkeypatch.setenv("GPUVET_LOGBOOK", url)
    code, out, _ = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--json")
    run_id = json.loads(out)["run_id"]
    book = Logbook(url)
    assert book.backend == "postgresql" and [r.run_id for r in book.runs()] == [run_id]
    book.close()
    code, out, _ = call(capsys, "log", "list", "--json")
    assert code == 0 and json.loads(out)[0]["run_id"] == run_id


def test_an_unreachable_database_is_one_clear_error(pg_server, capsys):
    code, _, err = call(capsys, "log", "list", "--logbook", f"postgresql://gpuvet@127.0.0.1:{pg_server.port}/nope")
    assert code == 2 and "cannot reach the PostgreSQL logbook" in err and "Traceback" not in err


@pytest.mark.parametrize("command", [["log", "list"], ["log", "show", "abc"], ["log", "compare", "abc", "def"],
                                     ["report", "abc", "-o", "r.html"], ["baseline", "make", "abc", "-o", "b.json"],
                                     ["events"], ["fleet", "merge"],
                                     ["plan", "collective", "--node", "mesh-4", "--calibrate", "abc"]])
def test_a_reading_command_given_a_logbook_path_where_none_is_kept_says_so_and_creates_nothing(
        capsys, tmp_path, command):
    mistyped = tmp_path / "logbok.db"
    command = [str(tmp_path / a) if a in ("r.html", "b.json") else a for a in command]
    code, _, err = call(capsys, *command, "--logbook", str(mistyped))
    assert code == 2 and "no logbook here" in err and str(mistyped) in err
    assert not mistyped.exists()


def test_the_same_through_gpuvet_logbook_and_a_writing_command_still_creates_it(capsys, tmp_path, monkeypatch):
    named = tmp_path / "new.db"
    monkeypatch.setenv("GPUVET_LOGBOOK", str(named))
    code, _, err = call(capsys, "log", "list")
    assert code == 2 and f"GPUVET_LOGBOOK={named}" in err and not named.exists()
    code, _, _ = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick")
    assert code in (0, 1) and named.exists()  # validate keeps its run: the logbook is made
    code, out, _ = call(capsys, "log", "list", "--json")
    assert code == 0 and len(json.loads(out)) == 1


def test_the_default_logbook_not_made_yet_is_not_an_error(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("GPUVET_LOGBOOK", raising=False)
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path))
    code, out, err = call(capsys, "log", "list", "--json")
    assert code == 0 and json.loads(out) == [], err


@pytest.mark.parametrize("how", ["--logbook", "GPUVET_LOGBOOK"])
def test_a_typed_logbook_path_in_a_missing_folder_is_refused_and_no_folder_made(capsys, tmp_path, monkeypatch, how):
    """Issue 36: a typo in a typed path must not silently make folders (gpuvet runs as root)."""
    deep = tmp_path / "x" / "deep" / "log.db"
    flag = ["--logbook", str(deep)] if how == "--logbook" else []
    if how == "GPUVET_LOGBOOK":
        monkeypatch.setenv("GPUVET_LOGBOOK", str(deep))
    code, _, err = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", *flag)
    assert code == 2 and how in err and "does not exist" in err and "Traceback" not in err, err
    assert not (tmp_path / "x").exists()


def test_the_default_location_gets_its_missing_folders_made_private(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("GPUVET_LOGBOOK", raising=False)
    home = tmp_path / "a" / "gpuvet-home"
    monkeypatch.setenv("GPUVET_HOME", str(home))
    code, _, err = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick")
    assert code in (0, 1), err
    assert (home / "logbook.db").is_file()
    assert (home.stat().st_mode & 0o777, (tmp_path / "a").stat().st_mode & 0o777) == (0o700, 0o700)
