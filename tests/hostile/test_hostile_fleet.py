"""Issue 36, fleet merge: a named FIFO or a device is refused at once (a FIFO waited forever);
envelopes whose node, modules, schema version or values have the wrong type are refused before
they are pooled, naming the file and the field, in the same words by both readers; a NaN or
infinite figure is left out with a note, so it no longer hides a real outlier."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from gpuvet.errors import GpuvetError
from gpuvet.fleet import fold
from gpuvet.fleet.peers import PeerTable
from tests.support.fleet_envelopes import envelope, module_checks
from tests.support.helpers import call
from tests.support.helpers import fleet_merge as _merge


def _fleet(tmp_path: Path, nodes: int = 12) -> list[str]:
    values = np.random.default_rng(3).normal(100.0, 1.0, (nodes, 4, 3))
    paths = []
    for n in range(nodes):
        where, env = envelope(n, module_checks(values[n]))
        path = tmp_path / f"{where}.json"
        path.write_text(json.dumps(env), encoding="utf-8")
        paths.append(str(path))
    return paths


# --- what is given ---------------------------------------------------------------------------
def test_a_named_fifo_given_as_a_file_is_refused_at_once(capsys, tmp_path):
    fifo = tmp_path / "node.json"
    os.mkfifo(fifo)
    code, _, err = _merge(capsys, str(fifo))
    assert code == 2 and "node.json: a named pipe (FIFO), not a file" in err


def test_a_fifo_inside_a_folder_is_left_out_with_a_note_not_waited_on(capsys, tmp_path):
    paths = _fleet(tmp_path, 4)
    os.mkfifo(tmp_path / "zz.json")
    code, _, err = _merge(capsys, str(tmp_path), "--json")
    assert code in (0, 1) and "left out 1 entry" in err and "zz.json" in err
    assert len(paths) == 4


def test_a_device_is_refused_at_once(capsys):
    code, _, err = _merge(capsys, "/dev/zero")
    assert code == 2 and "/dev/zero: a device, not a file" in err


def test_the_shells_pipe_is_still_read(tmp_path):
    """`gpuvet fleet merge <(ssh node gpuvet validate --json)`: /dev/fd/N, a pipe with no path."""
    where, env = envelope(1, module_checks(np.ones((2, 2))))
    read_end, write_end = os.pipe()
    data = json.dumps(env).encode()
    writer = threading.Thread(target=lambda: (os.write(write_end, data), os.close(write_end)), daemon=True)
    writer.start()
    table = PeerTable()
    fold.fold_figures(table, f"/dev/fd/{read_end}")
    os.close(read_end)
    assert list(table.sources) == ["n01"]


# --- wrong types, refused before pooling ---------------------------------------------------------
def _doc(**change) -> dict:
    env = {"schema_version": 1, "simulated": False,
           "environment": {"node": "n1", "node_type": "H200", "modules": [{"id": "gpu0"}]},
           "checks": [{"layer": "compute", "name": "m0", "verdict": "pass", "value": 1.0, "unit": "x",
                       "module": "gpu0"}]}
    for path, value in change.items():
        *parents, leaf = path.split("__")
        target = env
        for p in parents:
            target = target[int(p)] if isinstance(target, list) else target[p]
        target[leaf if not isinstance(target, list) else int(leaf)] = value
    return env


_WRONG = {
    "node a number": (_doc(environment__node=17), "environment.node is a number, not text"),
    "node missing": ({**_doc(), "environment": {"node_type": "H200"}}, "environment.node is missing"),
    "node type a list": (_doc(environment__node_type=["H200"]), "environment.node_type is a list, not text"),
    "schema as text": (_doc(schema_version="1"), "schema_version is text, not a whole number"),
    "schema true": (_doc(schema_version=True), "schema_version is true/false, not a whole number"),
    "schema 1.5": (_doc(schema_version=1.5), "schema_version is a number, not a whole number"),
    "modules a count": (_doc(environment__modules=8), "environment.modules is a number, not a list of modules"),
    "a module a number": (_doc(environment__modules=[5]), "environment.modules[0] is a number, not an object"),
    "a module id a number": (_doc(environment__modules=[{"id": 0}]), "environment.modules[0] has an id that is not text"),
    "simulated as text": (_doc(simulated="no"), "simulated is text, not true or false"),
    "value a list": (_doc(checks__0__value=[1.0]), "checks[0].value is a list, not a number"),
    "value an object": (_doc(checks__0__value={"v": 1}), "checks[0].value is an object, not a number"),
    "verdict not one": (_doc(checks__0__verdict="great"), "checks[0].verdict is not one of pass, warn, fail, skip"),
    "verdict a list": (_doc(checks__0__verdict=[]), "checks[0].verdict is not one of pass, warn, fail, skip"),
    "module a number": (_doc(checks__0__module=0), "checks[0].module is a number, not text"),
    "a pair of one": (_doc(checks__0__between=["gpu0"]), "checks[0].between is not two modules named in text"),
    "a name that is null-free but a bool": (_doc(checks__0__name=True), "checks[0].name is true/false, not text"),
}


@pytest.mark.parametrize("what", sorted(_WRONG))
def test_a_field_of_the_wrong_type_is_refused_by_both_readers_naming_the_file_and_field(tmp_path, what):
    env, words = _WRONG[what]
    path = tmp_path / "node.json"
    path.write_text(json.dumps(env), encoding="utf-8")
    errors = []
    for reader in (fold.fold_file, fold.fold_figures):
        with pytest.raises(GpuvetError) as err:
            reader(PeerTable(), str(path))
        errors.append(err.value)
    assert errors[0].what == errors[1].what and errors[0].where == errors[1].where == str(path)
    assert words in errors[0].what, errors[0].what


def test_a_wrong_type_stops_the_merge_before_pooling(capsys, tmp_path):
    paths = _fleet(tmp_path, 6)
    Path(paths[4]).write_text(json.dumps(_doc(environment__node=4)), encoding="utf-8")
    for extra in ((), ("--report", str(tmp_path / "r.html"))):
        code, _, err = _merge(capsys, *paths, *extra)
        assert code == 2 and paths[4] in err and "environment.node is a number, not text" in err


def test_an_integer_beyond_a_double_is_refused_naming_the_check(tmp_path):
    path = tmp_path / "node.json"
    path.write_text(json.dumps(_doc()).replace('"value": 1.0', '"value": 1' + "0" * 400), encoding="utf-8")
    for reader in (fold.fold_file, fold.fold_figures):
        with pytest.raises(GpuvetError, match=r"checks\[0\]\.value is an integer beyond any figure"):
            reader(PeerTable(), str(path))


# --- NaN and infinity --------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "1e400"])
@pytest.mark.parametrize("extra", [(), ("--jobs", "2")])
def test_a_non_finite_figure_is_left_out_with_a_note_and_the_real_outlier_is_named(capsys, tmp_path, monkeypatch,
                                                                                    bad, extra):
    """One envelope with NaN made the series' median NaN: the node 20 % slower went unnamed."""
    monkeypatch.setattr(fold, "MIN_FILES_PER_JOB", 4)
    paths = _fleet(tmp_path, 12)
    slow = json.loads(Path(paths[7]).read_text())
    slow["checks"][5]["value"] *= 0.8  # n07 gpu1 m2: a real outlier
    Path(paths[7]).write_text(json.dumps(slow), encoding="utf-8")
    odd = json.loads(Path(paths[2]).read_text())
    odd["checks"][5]["value"] = "__BAD__"
    Path(paths[2]).write_text(json.dumps(odd).replace('"__BAD__"', bad), encoding="utf-8")
    # in this thread, as the CLI runs it: its workers are forked (from _merge's thread each was spawned and imported
    # gpuvet again, 0.5 s of CPU a merge); a spawned worker's merge is tested in tests/jobs/test_fleet_fold.py
    code, out, err = call(capsys, "fleet", "merge", *paths, "--json", *extra)
    assert "Traceback" not in out + err
    result = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert code == 1 and ("n07", "gpu1", "m2") in {(o["node"], o.get("module"), o["metric"]) for o in result["outliers"]}
    assert any(paths[2] in n and "NaN or infinite" in n and "compute/m2 on gpu1" in n for n in result["notes"])
    assert all(o["fleet_median"] == o["fleet_median"] for o in result["outliers"])  # no median made NaN


def test_with_report_the_kept_envelope_no_longer_holds_the_nan(tmp_path):
    path = tmp_path / "node.json"
    path.write_text(json.dumps(_doc()).replace('"value": 1.0', '"value": NaN'), encoding="utf-8")
    notes: list[str] = []
    env = fold.fold_file(PeerTable(), str(path), notes)
    assert env["checks"][0]["value"] is None and len(notes) == 1
