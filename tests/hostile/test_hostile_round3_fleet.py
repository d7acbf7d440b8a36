"""Issue 41, fleet merge pools nothing absurd: a figure no hardware can give (1e308 TFLOPS, a
negative bandwidth, a latency of a year) is a corrupt reading, named in a note and left out of
the peer statistics; a node listing one module id twice, or more modules than any node has, is
refused naming the file (at once); a node whose node_type is not what its own modules are is
pooled by its modules, with a note. Both readers (the figures decoder and the ordinary one)
say the same."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from gpuvet.errors import GpuvetError
from gpuvet.fleet import fold, sanity
from gpuvet.fleet.executor import validate_envelope
from gpuvet.fleet.peers import PeerTable
from tests.support.fleet_envelopes import write_envelopes
from tests.support.helpers import fleet_merge as _merge


@pytest.fixture(scope="module")
def h200() -> dict:
    return validate_envelope("hgx-h200-8", "quick")


@pytest.fixture(scope="module")
def mi300x() -> dict:
    return validate_envelope("mi300x-8", "quick")


def _named(env: dict, node: str) -> dict:
    out = copy.deepcopy(env)
    out["environment"]["node"] = node
    return out


def _check(env: dict, name: str, module: str | None = None, between: list[str] | None = None) -> dict:
    return next(c for c in env["checks"] if c["name"] == name and c.get("module") == module
                and c.get("between") == between)


def _files(tmp_path: Path, envs: list[dict]) -> list[str]:
    return write_envelopes(tmp_path, envs)



def _both(path: str) -> list[tuple[PeerTable, list[str]]]:
    """The file folded by each reader: (table, its NaN notes)."""
    out = []
    for reader in (fold.fold_file, fold.fold_figures):
        table, notes = PeerTable(), []
        reader(table, path, notes)
        out.append((table, notes))
    return out


# --- 5. figures no hardware can give -----------------------------------------------------------------
_CORRUPT = [
    ("gemm_bf16", "gpu3", None, 1e308, "10 × H200-SXM's bf16 peak"),
    ("gemm_bf16", "gpu3", None, -900.0, "negative"),
    ("h2d", "gpu2", None, 1e308, "H200-SXM's memory bandwidth"),
    ("p2p_one_way", None, ["gpu0", "gpu1"], -50.0, "negative"),
    ("all_reduce_latency", None, None, 3.2e13, "above a day"),
    ("all_reduce_busbw", None, None, 1e300, "8 modules"),
]


@pytest.mark.parametrize(("name", "module", "between", "value", "why"), _CORRUPT)
def test_a_corrupt_figure_is_named_and_left_out_by_both_readers(tmp_path, h200, name, module, between, value, why):
    env = _named(h200, "n-bad")
    _check(env, name, module, between)["value"] = value
    (path,) = _files(tmp_path, [env])
    said = []
    for table, _ in _both(path):
        (cols,) = table.types.values()
        assert value not in cols.value.tolist()  # not pooled
        assert len(cols.value) == sum(isinstance(c["value"], (int, float)) and not isinstance(c["value"], bool)
                                      and c["verdict"] != "skip" for c in env["checks"]) - 1
        (note,) = table.notes
        place = module or ("→".join(between) if between else "")
        assert "node n-bad" in note and name in note and place in note and f"{value:g}" in note and why in note
        assert table.verdicts["n-bad"].corrupt == 1
        said.append(note)
    assert said[0] == said[1]


def test_a_corrupt_figure_is_not_a_slow_link_and_the_real_outlier_is_still_named(capsys, tmp_path, h200):
    envs = [_named(h200, f"n{i}") for i in range(6)]
    _check(envs[2], "p2p_one_way", None, ["gpu0", "gpu1"])["value"] = -50.0  # was reported as the slowest link
    _check(envs[4], "gemm_bf16", "gpu5")["value"] *= 0.7  # a real slow module
    _check(envs[4], "gemm_bf16", "gpu6")["value"] = 1e308
    code, out, _ = _merge(capsys, *_files(tmp_path, envs), "--json")
    data = json.loads(out)
    named = {(o["node"], o.get("module"), tuple(o.get("between") or ()), o["metric"]) for o in data["outliers"]}
    assert code == 1 and ("n4", "gpu5", (), "gemm_bf16") in named
    assert not any(node == "n2" for node, *_ in named) and not any(m == "gpu6" for _, m, *_ in named)
    notes = " ".join(data["notes"])
    assert "n2.json: node n2" in notes and "gpu0→gpu1 = -50 GB/s (negative)" in notes
    assert "n4.json: node n4" in notes and "gpu6 = 1e+308 TFLOPS" in notes
    assert {n["node"]: n["corrupt"] for n in data["nodes"]} == {"n0": 0, "n1": 0, "n2": 1, "n3": 0, "n4": 1, "n5": 0}


def test_with_report_the_kept_envelope_no_longer_holds_the_corrupt_figure(tmp_path, h200):
    env = _named(h200, "n1")
    _check(env, "gemm_bf16", "gpu0")["value"] = 1e308
    (path,) = _files(tmp_path, [env])
    kept = fold.fold_file(PeerTable(), path)
    assert _check(kept, "gemm_bf16", "gpu0")["value"] is None


@pytest.mark.parametrize("preset", ["hgx-h200-8", "mi300x-8", "mesh-4", "pcie-8"])
def test_a_healthy_simulated_node_has_no_figure_called_corrupt(tmp_path, preset):
    env = validate_envelope(preset, "quick")
    (path,) = _files(tmp_path, [env])
    for table, notes in _both(path):
        assert table.notes == [] and notes == []
        assert list(table.types) == [env["environment"]["node_type"]]


def test_an_unknown_model_is_bounded_by_the_catalogs_largest_figures(tmp_path, h200):
    env = _named(h200, "n-x")
    for m in env["environment"]["modules"]:
        m["model"] = "Mystery-GPU"
    env["environment"]["node_type"] = "Mystery-GPU"
    plain = _check(env, "gemm_bf16", "gpu1")["value"] * 3  # above H200's peak, below 10 × the catalog's largest
    _check(env, "gemm_bf16", "gpu1")["value"] = plain
    _check(env, "gemm_bf16", "gpu2")["value"] = 1e12
    (path,) = _files(tmp_path, [env])
    for table, _ in _both(path):
        (note,) = table.notes
        assert "gpu2 = 1e+12 TFLOPS" in note and "the catalog's largest peak" in note and "gpu1" not in note


# --- 6. module ids and counts ------------------------------------------------------------------------
def test_eight_modules_sharing_one_id_are_refused_naming_the_file_and_id(capsys, tmp_path, h200):
    envs = [_named(h200, f"n{i}") for i in range(3)]
    for m in envs[1]["environment"]["modules"]:
        m["id"] = "gpu0"
    paths = _files(tmp_path, envs)
    code, _, err = _merge(capsys, *paths)
    assert code == 2 and paths[1] in err and "'gpu0' 8 times" in err
    for reader in (fold.fold_file, fold.fold_figures):
        with pytest.raises(GpuvetError, match="more than once"):
            reader(PeerTable(), paths[1])


@pytest.mark.parametrize("count", [sanity.MAX_MODULES + 1, 5_000])
def test_more_modules_than_any_node_has_are_refused_at_once(capsys, tmp_path, h200, count):
    env = _named(h200, "huge")
    model = env["environment"]["modules"][0]
    env["environment"]["modules"] = [dict(model, id=f"gpu{i}") for i in range(count)]
    paths = _files(tmp_path, [_named(h200, "n0"), env])
    code, _, err = _merge(capsys, *paths)
    assert code == 2 and paths[1] in err and f"{count:,} modules" in err and f"{sanity.MAX_MODULES:,}" in err


def test_the_largest_node_is_accepted(tmp_path, h200):
    """nvl576, the largest preset, lists 576 modules: within the bound."""
    env = _named(h200, "n576")
    model = env["environment"]["modules"][0]
    env["environment"]["modules"] = [dict(model, id=f"gpu{i}") for i in range(576)]
    (path,) = _files(tmp_path, [env])
    for table, _ in _both(path):
        assert table.notes == [] and "n576" in table.sources


def test_the_module_bound_is_the_specs():
    from gpuvet.node.spec import MAX_MODULES

    assert sanity.MAX_MODULES == MAX_MODULES


# --- 7. a node type its modules contradict -------------------------------------------------------------
def test_an_mi300x_labelled_h200_is_pooled_with_its_own_kind(capsys, tmp_path, h200, mi300x):
    envs = [_named(h200, f"h{i}") for i in range(5)]
    liar = _named(mi300x, "mi-liar")
    liar["environment"]["node_type"] = "H200-SXM"
    code, out, _ = _merge(capsys, *_files(tmp_path, [*envs, liar]), "--json")
    data = json.loads(out)
    assert data["outliers"] == [] and code == 0  # was 86 'slow link' outliers, exit 1
    assert data["node_types"] == {"H200-SXM": ["h0", "h1", "h2", "h3", "h4"], "MI300X": ["mi-liar"]}
    (note,) = [n for n in data["notes"] if "mi-liar" in n and "node_type" in n]
    assert "'H200-SXM'" in note and "8 × MI300X" in note and "pooled with the MI300X nodes" in note
    assert {n["node"]: n["node_type"] for n in data["nodes"]}["mi-liar"] == "MI300X"


def test_a_driver_name_of_the_same_model_is_no_mismatch(tmp_path, h200):
    env = _named(h200, "n-real")
    for m in env["environment"]["modules"]:
        m["model"] = "NVIDIA H200"  # as NVML names it; node_type is the catalog's name
    (path,) = _files(tmp_path, [env])
    for table, _ in _both(path):
        assert table.notes == [] and list(table.types) == ["H200-SXM"]


def test_a_node_listing_no_models_keeps_its_type(tmp_path, h200):
    env = _named(h200, "n-bare")
    for m in env["environment"]["modules"]:
        del m["model"]
    env["environment"]["node_type"] = "anything"
    (path,) = _files(tmp_path, [env])
    for table, _ in _both(path):
        assert table.notes == [] and list(table.types) == ["anything"]


def test_a_model_that_is_not_text_is_refused_by_both_readers(tmp_path, h200):
    env = _named(h200, "n-odd")
    env["environment"]["modules"][3]["model"] = 300
    (path,) = _files(tmp_path, [env])
    for reader in (fold.fold_file, fold.fold_figures):
        with pytest.raises(GpuvetError, match=r"environment.modules\[3\] has a model that is not text"):
            reader(PeerTable(), path)
