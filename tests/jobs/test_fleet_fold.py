"""fleet merge in worker processes: tables folded from shares of the files and joined in file
order are the table one process folds (same ids, orders, outliers), and a bad file is reported
as the first bad file in the list."""

import json
import multiprocessing
import os
from pathlib import Path

import numpy as np
import pytest

from gpuvet.cli.app import main
from gpuvet.errors import GpuvetError
from gpuvet.fleet import fold
from gpuvet.fleet.peers import PeerTable
from tests.support.fleet_envelopes import envelope, module_checks, table_state


def _envelopes(nodes, seed=0, oddities=True):
    rng = np.random.default_rng(seed)
    values = rng.normal(100.0, 1.0, (nodes, 4, 3))
    values[5, 2, 1] *= 0.8
    out = []
    for n in range(nodes):
        checks = module_checks(values[n])
        checks.append({"layer": "module_link", "name": "p2p", "value": 50.0 - (n == 7) * 9,
                       "between": ["gpu0", "gpu1"], "unit": "GB/s"})
        if oddities and n == 0:  # the very first node is read check by check: no layout from it
            checks.append({"layer": "compute", "name": "m0", "verdict": "skip", "value": 1.0})
        if oddities and n == 11:
            checks.append({"layer": "x", "name": "late", "value": 3.0, "unit": "s"})  # a series first seen late
        kind = "L40S" if oddities and n in (9, 13, 14, 15) else "H200"  # a type first seen in the second half
        out.append(envelope(n, checks, kind, simulated=n == 12))
    return out


def _folded(envs):
    table = PeerTable()
    for where, env in envs:
        table.add(where, env)
    return table




@pytest.mark.parametrize("oddities", [False, True])
def test_tables_joined_in_order_are_the_table_of_one_fold(oddities):
    envs = _envelopes(20, oddities=oddities)
    whole = _folded(envs)
    assert whole.types["H200"].regular is not oddities
    for cut in (1, 4, 10, 19):
        first, second = _folded(envs[:cut]), _folded(envs[cut:])
        first.join(second)
        assert table_state(first) == table_state(whole), cut
        assert first.analyse() == whole.analyse() and whole.analyse().outliers
    three = [_folded(envs[a:b]) for a, b in ((0, 6), (6, 6), (6, 21))]  # an empty share too
    three[0].join(three[1])
    three[0].join(three[2])
    assert table_state(three[0]) == table_state(whole)


def test_joining_regular_tables_of_other_layouts_is_not_regular():
    envs = _envelopes(12, oddities=False)
    other = [(w, {**e, "checks": list(reversed(e["checks"]))}) for w, e in _envelopes(12, seed=1, oddities=False)]
    other = [(w, {**e, "environment": {**e["environment"], "node": "b" + e["environment"]["node"]}})
             for w, e in other]
    first, second = _folded(envs), _folded(other)
    assert first.types["H200"].regular and second.types["H200"].regular
    first.join(second)
    assert not first.types["H200"].regular
    assert table_state(first) == table_state(_folded(envs + other))


def test_a_node_given_twice_is_refused_naming_both_inputs_alone_and_across_workers(tmp_path, monkeypatch):
    """Pooled twice, a node counted double among its peers, silently (two runs of one node, or a
    folder and one of its files): refused, in the same words and at the same file as one process
    would, whether the second copy is in the same run of a worker or a later one."""
    envs = _envelopes(12, oddities=False)
    with pytest.raises(GpuvetError) as err:
        _folded([*envs[:6], ("again", envs[2][1]), *envs[6:]])
    assert err.value.where == "again" and "'n02' is given twice" in err.value.what and "n02" in err.value.what
    first, second = _folded(envs[:6]), _folded([("again", envs[2][1]), *envs[6:]])
    with pytest.raises(GpuvetError) as joined:
        first.join(second)
    assert (joined.value.where, joined.value.what) == (err.value.where, err.value.what)
    monkeypatch.setattr(fold, "MIN_FILES_PER_JOB", 4)
    paths = _write(tmp_path, envs)
    for runs in (1, 6):  # a worker's run of ~4 files (the copy beside its original), or of one (apart)
        monkeypatch.setattr(fold, "RUNS_PER_JOB", runs)
        for dup_at in (1, 9):
            doubled = [*paths[:dup_at + 1], paths[dup_at], *paths[dup_at + 1:]]
            said = set()
            for jobs in (1, 3):
                with pytest.raises(GpuvetError) as err:
                    fold.fold_files(doubled, jobs=jobs)
                said.add((err.value.where, err.value.what))
            assert len(said) == 1 and f"given twice; the first time by {paths[dup_at]}" in said.pop()[1]


def _write(folder, envs):
    paths = []
    for i, (_, env) in enumerate(envs):
        path = folder / f"node{i:03d}.json"
        path.write_text(json.dumps(env), encoding="utf-8")
        paths.append(str(path))
    return paths


def test_files_read_by_worker_processes_give_the_table_of_one_process(tmp_path, monkeypatch):
    monkeypatch.setattr(fold, "MIN_FILES_PER_JOB", 4)
    paths = _write(tmp_path, _envelopes(21))
    assert fold._workers(len(paths), 3) == 3 and fold._workers(len(paths), 1) == 1
    alone, workers = fold.fold_files(paths, jobs=1), fold.fold_files(paths, jobs=3)
    assert table_state(workers) == table_state(alone)
    assert workers.analyse() == alone.analyse()
    # spawned workers (a merge beside another thread; not Linux), each importing gpuvet afresh: the same table
    monkeypatch.setattr(fold, "_context", lambda: multiprocessing.get_context("spawn"))
    spawned = fold.fold_files(paths, jobs=2)
    assert table_state(spawned) == table_state(alone)


def test_progress_is_told_in_file_order_up_to_every_file_alone_and_with_workers(tmp_path, monkeypatch, capsys):
    """Workers hand their files back in runs (a few each), so a long merge can say how far it is;
    the runs still join in file order, into the table one process builds."""
    monkeypatch.setattr(fold, "MIN_FILES_PER_JOB", 4)
    monkeypatch.setattr(fold, "PROGRESS_EVERY", 5)
    paths = _write(tmp_path, _envelopes(21, oddities=False))
    n = len(paths)
    for jobs, want in ((1, [5, 10, 15, 20, n]), (2, [b for _, b in fold._runs(n, 2)])):
        told: list[tuple[int, int]] = []
        table = fold.fold_files(paths, jobs=jobs, progress=lambda done, total, seen=told: seen.append((done, total)))
        assert told == [(done, n) for done in want]
        assert table_state(table) == table_state(fold.fold_files(paths, jobs=1))
    assert len(fold._runs(n, 2)) == 2 * fold.RUNS_PER_JOB and fold._runs(3, 2) == [(0, 1), (1, 2), (2, 3)]
    assert main(["fleet", "merge", *paths, "--json", "--jobs", "2"]) == 1
    assert f"fleet merge: files read ({n}/{n})" in capsys.readouterr().err  # piped: plain lines on stderr


def test_a_folder_stands_for_the_json_files_in_it_in_name_order(tmp_path, capsys):
    """A fleet's results folder: no shell glob, no argument-list limit at 100,000 nodes."""
    folder = tmp_path / "results"
    folder.mkdir()
    paths = _write(folder, _envelopes(12, oddities=False))
    (folder / "README.txt").write_text("not an envelope", encoding="utf-8")
    (folder / "old.json.bak").write_text("{", encoding="utf-8")
    (folder / "nested.json").mkdir()  # a folder named like a file is not read
    assert main(["fleet", "merge", *sorted(paths), "--json"]) == 1
    by_files = capsys.readouterr().out
    assert main(["fleet", "merge", str(folder), "--json"]) == 1
    out, err = capsys.readouterr()
    assert out == by_files and "left out 1 entry" in err and "that is not a file: nested.json" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["fleet", "merge", str(empty)]) == 2
    assert "no .json file in this folder" in capsys.readouterr().err


def test_merge_whose_reader_goes_away_still_exits_1_on_outliers(tmp_path):
    """`gpuvet fleet merge … | head -1`: the outliers were found before the table was drawn."""
    import subprocess
    import sys

    paths = _write(tmp_path, _envelopes(12, oddities=False))
    proc = subprocess.Popen([sys.executable, "-m", "gpuvet", "fleet", "merge", *paths],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdout.close()
    assert proc.wait(timeout=60) == 1


def test_files_past_the_size_limit_are_refused_before_memory_runs_out(tmp_path, monkeypatch, capsys):
    """`fleet merge /dev/zero` read until memory ran out, then printed a traceback with exit 1
    (the code for an outlier): a regular file is refused by its size, a stream once past it."""
    import threading

    monkeypatch.setattr(fold, "MAX_ENVELOPE_BYTES", 1000)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 1001)
    with pytest.raises(GpuvetError) as err:
        fold.read_bounded(big)
    assert err.value.where == str(big) and "1,001 bytes" in err.value.what
    monkeypatch.setattr(fold, "MAX_STREAM_BYTES", 1000)
    read_end, write_end = os.pipe()  # the pipe behind the shell's <(command): /dev/fd/N
    writer = threading.Thread(target=lambda: _write_and_close(write_end, b"[" * 5000), daemon=True)
    writer.start()
    with pytest.raises(GpuvetError) as err:
        fold.read_bounded(Path(f"/dev/fd/{read_end}"))
    assert "not at its end" in err.value.what
    os.close(read_end)
    writer.join(timeout=10)
    small = tmp_path / "small.json"
    small.write_bytes(b" " * 1000)  # at the limit: read whole
    assert fold.read_bounded(small) == b" " * 1000
    monkeypatch.setattr(fold, "MAX_ENVELOPE_BYTES", 1 << 30)
    assert main(["fleet", "merge", str(tmp_path / "gone.json")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def _write_and_close(fd, data):
    try:
        os.write(fd, data)
    except OSError:  # the reader stopped at its bound and went away
        pass
    finally:
        os.close(fd)


def test_running_out_of_memory_is_a_line_and_exit_2(monkeypatch, capsys):
    def exhausted(*_args, **_kwargs):
        raise MemoryError

    monkeypatch.setattr(fold, "fold_files", exhausted)
    assert main(["fleet", "merge", "x.json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: out of memory") and "Traceback" not in err


def test_the_first_bad_file_in_the_list_is_the_one_named(tmp_path, monkeypatch):
    monkeypatch.setattr(fold, "MIN_FILES_PER_JOB", 4)
    paths = _write(tmp_path, _envelopes(16, oddities=False))
    (tmp_path / "node003.json").write_text('{"schema_version": 1,', encoding="utf-8")  # first share
    (tmp_path / "node013.json").write_text('{"checks": []}', encoding="utf-8")  # last share
    for jobs in (1, 2, 4):
        with pytest.raises(GpuvetError) as err:
            fold.fold_files(paths, jobs=jobs)
        assert err.value.where == paths[3] and "cannot read it as JSON" in err.value.what
    (tmp_path / "node003.json").write_text(json.dumps(_envelopes(16, oddities=False)[3][1]), encoding="utf-8")
    with pytest.raises(GpuvetError) as err:
        fold.fold_files(paths, jobs=4)
    assert err.value.where == paths[13] and "not a validate --json envelope" in err.value.what


def test_merge_with_jobs_prints_what_one_process_prints(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(fold, "MIN_FILES_PER_JOB", 5)
    paths = _write(tmp_path, _envelopes(20))
    printed = []
    for jobs in ("1", "2"):
        code = main(["fleet", "merge", *paths, "--json", "--jobs", jobs])
        out, _ = capsys.readouterr()
        printed.append((code, json.loads(out)))
    assert printed[0] == printed[1] and printed[0][0] == 1
    assert {(o["node"], o.get("module"), o["metric"]) for o in printed[0][1]["outliers"]} >= {("n05", "gpu2", "m1")}
    assert main(["fleet", "merge", *paths, "--jobs", "0"]) == 2


def _die(paths):
    import os

    os._exit(9)  # as a worker the kernel killed for memory


def test_a_worker_that_dies_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(fold, "MIN_FILES_PER_JOB", 4)
    monkeypatch.setattr(fold, "_fold_share", _die)
    monkeypatch.setattr(fold, "_context", lambda: __import__("multiprocessing").get_context("fork"))
    paths = _write(tmp_path, _envelopes(8, oddities=False))
    with pytest.raises(GpuvetError) as err:
        fold.fold_files(paths, jobs=2)
    assert "worker process" in err.value.what and "--jobs 1" in err.value.fix


def test_json_that_is_no_envelope_names_its_file_and_keeps_the_list_order(tmp_path, monkeypatch):
    """Found by review: checks that are not a list of objects raised a bare TypeError, and an
    error of a later share could win over the first bad file of an earlier one."""
    monkeypatch.setattr(fold, "MIN_FILES_PER_JOB", 4)
    paths = _write(tmp_path, _envelopes(12, oddities=False))
    (tmp_path / "node011.json").write_text('{"schema_version": 1, "environment": {"node": "x"}, "checks": 5}',
                                           encoding="utf-8")
    for jobs in (1, 3):
        with pytest.raises(GpuvetError) as err:
            fold.fold_files(paths, jobs=jobs)
        assert err.value.where == paths[11] and "not a validate --json envelope" in err.value.what
    missing = str(tmp_path / "gone.json")
    for jobs in (1, 3):
        with pytest.raises(GpuvetError) as err:
            fold.fold_files([missing, *paths], jobs=jobs)
        assert err.value.where == missing


def test_on_a_terminal_the_merge_bar_runs_no_thread_so_its_workers_are_forked(tmp_path, monkeypatch):
    """rich's bar refreshes from a thread of its own; with a second thread running, workers must
    be spawned (each imports gpuvet again), so the merge's bar draws at each step instead."""
    import sys
    import threading

    from rich import live

    from gpuvet.cli import term

    monkeypatch.setattr(fold, "MIN_FILES_PER_JOB", 4)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    refresh_thread = getattr(live, "_RefreshThread", ())  # rich's own name for it; () matches nothing
    for lingering in [t for t in threading.enumerate() if isinstance(t, refresh_thread)]:
        lingering.join(timeout=5)  # an earlier test's bar: rich lets its thread wind down on its own
    started = threading.active_count()
    if started != 1:  # the workers are spawned whatever the bar does: nothing here could fail
        pytest.skip(f"{started - 1} other thread(s) running in this test process")
    with term.progress("drawn at each step", bar=True, ticking=False) as shown:
        shown(1, 2, "step")
        assert threading.active_count() == started
    contexts: list[str] = []
    real = fold._context
    monkeypatch.setattr(fold, "_context", lambda: contexts.append(real().get_start_method()) or real())
    paths = _write(tmp_path, _envelopes(12, oddities=False))
    assert main(["fleet", "merge", *paths, "--json", "--jobs", "2"]) == 1
    assert contexts == ["fork"]
    # last, as this bar's thread too outlives the bar a moment
    with term.progress("ticking", bar=True) as shown:
        shown(1, 2, "step")
        assert threading.active_count() == started + 1  # the refresh thread this test is about
