"""Envelope bytes folded as `fleet merge` folds them (figures decoded straight from JSON, the
rest skipped) give the table that folding the parsed envelope gives, for every kind of check a
real envelope holds; bytes that decoder does not take are read the ordinary way, with the same
words for what is wrong. And real-shaped fleets (bools, strings, a skipped check, node-wide
checks beside per-module ones) take the fast fold and the grid analysis, agreeing with the
reference."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuvet.errors import GpuvetError
from gpuvet.fleet import figures, fold
from gpuvet.fleet.peers import PeerTable
from gpuvet.fleet.peers_reference import analyse_reference
from tests.support.fleet_envelopes import envelope, module_checks, outcome, table_state

pytest.importorskip("msgspec")


def _state(table):
    return table_state(table, with_layout=False)


def _both(envs):
    """(table folded from parsed envelopes, table folded from their JSON bytes)."""
    objects, from_bytes = PeerTable(), PeerTable()
    for where, env in envs:
        data = json.dumps(env).encode()
        fold.fold_envelope(objects, where, fold.parse_json(data))  # as fold_file reads a file
        fold.fold_bytes(from_bytes, where, data)
    return objects, from_bytes


def _real_shaped(n, values, skip=True):
    """A node's checks as validate --json writes them: node-wide inventory and software checks
    (ints, bools, strings), per-module software and measured checks with evidence, a skip."""
    checks = [{"layer": "inventory", "name": "modules", "verdict": "pass", "value": values.shape[0], "unit": None},
              {"layer": "software", "name": "driver", "verdict": "pass", "value": "570.86", "unit": None},
              {"layer": "collective", "name": "all_reduce_correct", "verdict": "pass", "value": True, "unit": None}]
    for m in range(values.shape[0]):
        checks += [{"layer": "software", "name": "ecc", "verdict": "pass", "value": True, "unit": None,
                    "module": f"gpu{m}"},
                   {"layer": "software", "name": "power_limit", "verdict": "pass", "value": 700, "unit": "W",
                    "module": f"gpu{m}"}]
    for check in module_checks(values):
        check["evidence"] = {"stats": {"n": 5, "median": check["value"]}, "telemetry": {"samples": [1, 2]}}
        checks.append(check)
    checks.append({"layer": "module_link", "name": "p2p", "verdict": "pass", "value": 50.0 - (n == 4) * 9,
                   "unit": "GB/s", "between": ["gpu0", "gpu1"]})
    if skip:
        checks.append({"layer": "collective", "name": "all_to_all", "verdict": "skip", "value": None, "unit": "GB/s"})
    return checks


def _fleet(nodes=30, seed=5):
    values = np.random.default_rng(seed).normal(100.0, 1.0, (nodes, 4, 3))
    values[6, 1, 2] *= 0.8
    return [envelope(n, _real_shaped(n, values[n])) for n in range(nodes)]


def test_a_real_shaped_fleet_takes_the_fast_fold_and_the_grids_and_agrees_with_the_reference():
    envs = _fleet()
    objects, from_bytes = _both(envs)
    (cols,) = objects.types.values()
    assert cols.regular and cols._layout.keep is not None  # bools, strings and the skip left out by the layout
    grids = cols._grids(np.frombuffer(cols.value), np.bincount(cols.series_of))
    assert grids is not None and sorted(values.shape[1] // len(cols.nodes) for _, values, _ in grids) == [1, 4]
    fast, slow = objects.analyse(), analyse_reference(envs)
    assert fast.outliers == slow.outliers and (fast.metrics, fast.values) == (slow.metrics, slow.values)
    assert {(o.node, o.module, o.metric) for o in fast.outliers} >= {("n06", "gpu1", "m2"), ("n04", None, "p2p")}
    assert _state(from_bytes) == _state(objects) and from_bytes.analyse() == fast
    for limit in (1.0, 2.0):  # many hits, on grids of 1 and 4 figures a node
        many = objects.analyse(z_limit=limit, min_deviation=0.0).outliers
        assert len(many) > len(fast.outliers) and many == analyse_reference(envs, z_limit=limit, min_deviation=0.0).outliers


def test_a_node_whose_value_kinds_differ_is_read_check_by_check():
    envs = _fleet(12)
    odd = [dict(c, value=1) if c["name"] == "ecc" else c for c in envs[5][1]["checks"]]  # a bool became an int
    envs[5] = (envs[5][0], {**envs[5][1], "checks": odd})
    objects, from_bytes = _both(envs)
    assert not objects.types["H200"].regular
    assert objects.analyse() == analyse_reference(envs) == from_bytes.analyse()
    assert _state(from_bytes) == _state(objects)


def test_without_msgspec_the_bytes_are_folded_the_same(monkeypatch):
    envs = _fleet(10)
    _, with_decoder = _both(envs)
    monkeypatch.setattr(figures, "_decoder", lambda: None)
    assert figures.decode(json.dumps(envs[0][1]).encode()) is None
    _, without = _both(envs)
    assert _state(without) == _state(with_decoder)


_BAD = {
    "checks not a list": b'{"schema_version": 1, "environment": {"node": "a"}, "checks": 5}',
    "a check not an object": b'{"schema_version": 1, "environment": {"node": "a"}, "checks": [1]}',
    "checks null": b'{"schema_version": 1, "environment": {"node": "a"}, "checks": null}',
    "no node": b'{"schema_version": 1, "environment": {"host": "a"}, "checks": []}',
    "environment null": b'{"schema_version": 1, "environment": null}',
    "no schema": b'{"environment": {"node": "a"}}',
    "schema not a number": b'{"schema_version": "one", "environment": {"node": "a"}}',
    "a list": b'[1, 2]',
    "unhashable layer": b'{"schema_version": 1, "environment": {"node": "a"}, "checks": '
                        b'[{"layer": ["x"], "name": "m", "value": 1.0}]}',
    "number beyond a double": b'{"schema_version": 1, "environment": {"node": "a"}, "checks": '
                              b'[{"layer": "x", "name": "m", "value": 1' + b"0" * 400 + b'}]}',
    "not JSON": b'{"schema_version": 1,',
    "not UTF-8": b'{"schema_version": 1, "environment": {"node": "\xff"}}',
    # found by review: msgspec does not check the text of what it skips, and keeps huge integers
    # exact where orjson reads them as floats
    "not UTF-8 in skipped evidence": b'{"schema_version": 1, "environment": {"node": "a"}, "checks": '
                                     b'[{"layer": "x", "name": "m", "value": 1.0, "evidence": "\xff"}]}',
    "a layer that is a huge integer": b'{"schema_version": 1, "environment": {"node": "a"}, "checks": '
                                      b'[{"layer": 18446744073709551616, "name": "m", "value": 1.0}]}',
    "a layer that is a number": b'{"schema_version": 1, "environment": {"node": "a"}, "checks": '
                                b'[{"layer": 1, "name": "m", "value": 1.0}]}',
    "a pair that is text": b'{"schema_version": 1, "environment": {"node": "a"}, "checks": '
                           b'[{"layer": "x", "name": "m", "value": 1.0, "between": "ab"}]}',
}


@pytest.mark.parametrize("what", sorted(_BAD))
def test_bad_bytes_are_refused_in_the_words_of_the_ordinary_reader(what, tmp_path):
    path = tmp_path / "node.json"
    path.write_bytes(_BAD[what])
    with pytest.raises(GpuvetError) as ordinary:
        fold.fold_file(PeerTable(), str(path))
    with pytest.raises(GpuvetError) as decoded:
        fold.fold_figures(PeerTable(), str(path))
    assert (decoded.value.what, decoded.value.where, decoded.value.fix) == \
        (ordinary.value.what, ordinary.value.where, ordinary.value.fix) and decoded.value.where == str(path)


def test_huge_integers_where_text_belongs_are_refused_alike_naming_the_field(tmp_path):
    """Found by review: orjson reads an integer beyond 64 bits as a float, msgspec exactly; a node
    name or schema written that way was pooled under str() of it. Issue 36: such an envelope is
    not the run document, refused both ways in the same words, naming the field."""
    for doc, field in ((b'{"schema_version": 1, "environment": {"node": 1180591620717411303424}, "checks": []}',
                        "environment.node is a number, not text"),
                       (b'{"schema_version": 1000000000000000000000000000000, "environment": {"node": "a"}}',
                        "schema_version is a number, not a whole number of 64 bits"),
                       (b'{"schema_version": 1, "environment": {"node": "a", "node_type": 18446744073709551616}}',
                        "environment.node_type is a number, not text")):
        path = tmp_path / "node.json"
        path.write_bytes(doc)
        with pytest.raises(GpuvetError) as ordinary:
            fold.fold_file(PeerTable(), str(path))
        with pytest.raises(GpuvetError) as decoded:
            fold.fold_figures(PeerTable(), str(path))
        assert decoded.value.what == ordinary.value.what and field in ordinary.value.what


def test_checks_named_by_numbers_are_refused_alike_by_one_process_and_by_workers(tmp_path, monkeypatch):
    """Found by review: layer 1 and layer 1.0 were one series in one process (equal keys) and two
    once joined from workers (two names): a check is named in text, as validate writes it."""
    monkeypatch.setattr(fold, "MIN_FILES_PER_JOB", 2)
    paths = []
    for n in range(6):
        layer = 1 if n < 3 else 1.0
        path = tmp_path / f"n{n}.json"
        path.write_text(json.dumps({"schema_version": 1, "environment": {"node": f"n{n}"},
                                    "checks": [{"layer": layer, "name": "m", "value": 1.0}]}), encoding="utf-8")
        paths.append(str(path))
    for jobs in (1, 2):
        with pytest.raises(GpuvetError) as err:
            fold.fold_files(paths, jobs=jobs)
        assert err.value.where == paths[0] and "checks[0].layer is a number, not text" in err.value.what


def test_a_huge_integer_in_skipped_evidence_is_skipped_as_documented():
    """The one difference figures.py keeps: Python's json refuses an integer of more than 4,300
    digits anywhere; the figures decoder never reads the evidence that holds it."""
    doc = (b'{"schema_version": 1, "environment": {"node": "a"}, "checks": [{"layer": "x", "name": "m", '
           b'"value": 2.0, "evidence": ' + b"7" * 4301 + b'}]}')
    table = PeerTable()
    fold.fold_bytes(table, "f", doc)
    assert table.types["unknown"].value.tolist() == [2.0]
    with pytest.raises(ValueError):
        fold.parse_json(doc)


def test_nan_and_big_integers_read_as_the_ordinary_reader_reads_them():
    envs = [envelope(n, [{"layer": "x", "name": "m", "value": v, "unit": None}]) for n, v in
            enumerate([1.0, 2 ** 70, -0.0, 2 ** 64 - 1, -(2 ** 63) - 1, 5e-324, 1.7976931348623157e308])]
    nan = envelope(9, [{"layer": "x", "name": "m", "value": float("nan")}])  # json writes NaN; orjson refuses it
    objects, from_bytes = _both([*envs, nan])
    assert _state(from_bytes) == _state(objects)
    assert len(objects.types["H200"].value) == len(envs)  # the NaN figure is left out, not pooled


_json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2 ** 80), 2 ** 80),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=4))
_json_value = st.recursive(_json_scalar, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=6)
_check = st.dictionaries(
    st.sampled_from(["layer", "name", "unit", "module", "between", "value", "verdict", "evidence", "cv"]),
    st.one_of(_json_value, st.sampled_from(["gpu0", "gpu1", "skip", "pass", "x", "m"]), st.floats(0, 200),
              st.lists(st.sampled_from(["gpu0", "gpu1"]), max_size=2)), max_size=9)
_node = st.fixed_dictionaries({"checks": st.one_of(st.lists(_check, max_size=6), _json_value)},
                              optional={"simulated": _json_value})
_kind = st.sampled_from(["H200", "L40S"])


def _fold_objects(table, where, data):
    fold.fold_envelope(table, where, fold.parse_json(data))  # as fold_file reads a file



@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_node, _kind), min_size=1, max_size=6))
def test_any_envelopes_fold_alike_from_objects_and_from_bytes(nodes):
    """Whatever the checks hold: the same table, or the same refusal, both ways."""
    envs = [envelope(n, node["checks"], kind, **({"simulated": node["simulated"]} if "simulated" in node else {}))
            for n, (node, kind) in enumerate(nodes)]
    objects, from_bytes = PeerTable(), PeerTable()
    for where, env in envs:
        data = json.dumps(env).encode()
        outcomes = [outcome(_fold_objects, objects, where, data), outcome(fold.fold_bytes, from_bytes, where, data)]
        assert outcomes[1] == outcomes[0]
        if outcomes[0] is not None:
            return  # both refused, in the same words: a merge stops at the first bad file
    assert _state(from_bytes) == _state(objects)
    assert from_bytes.analyse(min_deviation=0.0) == objects.analyse(min_deviation=0.0)
