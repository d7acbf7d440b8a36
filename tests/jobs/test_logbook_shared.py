"""A logbook a fleet shares: every node's validate runs in one place, and `fleet merge` reading
the newest run of each node straight from it (both backends)."""

import json

import pytest
import yaml

from gpuvet.logbook.store import Logbook
from tests.support.helpers import call
from tests.support.logbook_fixtures import *  # noqa: F403  (the pg_server and target fixtures)

DEGRADED = [{"kind": "link_degraded", "between": ["gpu1", "nvswitch0"], "factor": 0.5}]



def test_fleet_merge_reads_the_newest_run_of_every_node_from_the_logbook(target, tmp_path, capsys):
    for i in range(5):
        spec = tmp_path / f"node{i:02d}.yaml"
        spec.write_text(yaml.safe_dump({"base": "hgx-h200-8", "name": f"node{i:02d}",
                                        "faults": DEGRADED if i == 2 else []}))
        code, _, _ = call(capsys, "validate", "--sim", str(spec), "--level", "quick", "--logbook", target, "--json")
        assert code in (0, 1)
    # node02 was repaired and validated again: only its newest run counts
    (tmp_path / "node02.yaml").write_text(yaml.safe_dump({"base": "hgx-h200-8", "name": "node02"}))
    book = Logbook(target)
    before = len(book.runs())
    book.close()
    code, out, _ = call(capsys, "fleet", "merge", "--logbook", target, "--json")
    data = json.loads(out)
    assert code == 1 and before == 5  # node02 stands out
    assert data["node_types"] and sorted(next(iter(data["node_types"].values()))) == [f"node{i:02d}" for i in range(5)]
    assert {o["node"] for o in data["outliers"]} == {"node02"}
    call(capsys, "validate", "--sim", str(tmp_path / "node02.yaml"), "--level", "quick", "--logbook", target)
    code, out, _ = call(capsys, "fleet", "merge", "--logbook", target, "--since", "1h", "--json")
    assert json.loads(out)["outliers"] == []
    code, _, err = call(capsys, "fleet", "merge", "--since", "1h")
    assert code == 2 and "--since without --logbook" in err
    code, _, err = call(capsys, "fleet", "merge")
    assert code == 2 and "nothing to merge" in err
    _, out, _ = call(capsys, "validate", "--sim", str(tmp_path / "node03.yaml"), "--level", "quick", "--no-log",
                     "--json")
    (tmp_path / "node03.json").write_text(out)  # node03 in a file and in the logbook: counted once, not twice
    code, _, err = call(capsys, "fleet", "merge", str(tmp_path / "node03.json"), "--logbook", target)
    assert code == 2 and "'node03' is given twice" in err and "in the logbook" in err


def test_two_runs_of_a_node_in_the_same_second_the_later_one_counts(target, tmp_path, capsys, monkeypatch):
    """Run times are kept to the second: a node validated again within it (a repair and a quick
    re-run) must still be read at its later run, not at either by chance."""
    import gpuvet.logbook.store as store

    monkeypatch.setattr(store, "utc_now", lambda: "2026-12-03T10:00:00+00:00")
    spec = tmp_path / "node07.yaml"
    for faults in ([], DEGRADED, [], DEGRADED):  # the last run is the degraded one; then the other way round
        spec.write_text(yaml.safe_dump({"base": "hgx-h200-8", "name": "node07", "faults": faults}))
        call(capsys, "validate", "--sim", str(spec), "--level", "quick", "--logbook", target)
        book = Logbook(target)
        (latest,) = book.latest_runs()
        book.close()
        assert latest.node == "node07" and (latest.verdict == "pass") == (not faults), faults


def test_a_postgresql_url_without_psycopg_says_what_to_install(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the extra were not installed
    code, _, err = call(capsys, "log", "list", "--logbook", "postgresql://gpuvet@127.0.0.1:1/gpuvet")
    assert code == 2 and "pip install 'gpuvet[postgres]'" in err and "Traceback" not in err


def test_gpuvet_logbook_may_name_a_file_and_the_flag_wins(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GPUVET_LOGBOOK", str(tmp_path / "env.db"))
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path / "home"))
    call(capsys, "validate", "--sim", "mesh-4", "--level", "quick")
    call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--logbook", str(tmp_path / "flag.db"))
    assert (tmp_path / "env.db").is_file() and (tmp_path / "flag.db").is_file()
    assert not (tmp_path / "home").exists()


def test_a_password_never_appears_in_messages():
    from gpuvet.logbook.postgres import redact

    assert redact("postgresql://ops:s3cret@db:5432/gpuvet") == "postgresql://ops:***@db:5432/gpuvet"
    assert redact("postgresql://ops@db/gpuvet") == "postgresql://ops@db/gpuvet"


@pytest.mark.parametrize("gaps, cut", [(True, 3 * 30 * 4), (False, 250)], ids=["missing-readings", "mid-minute-cuts"])
def test_roll_ups_equal_the_raw_aggregates_whatever_the_batches(target, gaps, cut):
    """Roll-ups computed from each batch in hand, merged across batches (one arriving out of
    order), give what SQL over the raw rows gives; a missing reading is NULL. (Means of several
    minutes, or of a minute split across batches, are weighted by rows, as before: with missing
    readings those are approximate.)"""
    import random

    book = Logbook(target)
    key = book.run_key(book.begin("watch", {}, simulated=True, node="n"))
    m = [book.module_key(f"GPU-{i}", f"gpu{i}", None, None) for i in range(3)]
    rng = random.Random(7)
    rows = [(m[i], float(t), None if gaps and t % 17 == 0 else 60 + rng.random() * 20, 500 + rng.random() * 100,
             1980.0 - (t % 7), 3200.0, rng.random(), (t // 90) % 2) for t in range(0, 600, 2) for i in range(3)]
    for batch in (rows[:cut], rows[2 * cut:], rows[cut:2 * cut]):  # the middle arrives last
        book.add_samples(key, batch)
    for step in (60,) if gaps else (60, 120, 600):  # wider buckets weight minutes by rows: exact without gaps
        rolled, raw = book.series(key, m[1], 0, 600, step), book.series(key, m[1], 0, 600, step, raw=True)
        assert len(rolled) == len(raw) == 600 // step
        for a, b in zip(rolled, raw, strict=True):
            assert a == pytest.approx(b)
    book.close()
