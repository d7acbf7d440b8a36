"""One name for the node on every command (issue 45): --node takes a preset or a spec file; the
old --sim still works, hidden, with one line on stderr naming --node, and changes nothing on
stdout (a script parsing --json sees the same keys and values)."""

import json

import pytest

from gpuvet.backends.select import load_node, open_backend
from tests.support.helpers import call

NOTE = "gpuvet: note: --sim is deprecated here; use --node (it means the same).\n"

# (command words, what else it needs): each takes --node today and --sim as before
COMMANDS = [
    (["inventory", "--json"], []),
    (["topo", "--json"], []),
    (["spec", "export", "--json"], []),
    (["health", "--json"], []),
    (["doctor", "module-missing", "--json"], []),
    (["bench", "gemm", "--quick", "--json"], ["--dtypes", "bf16"]),
    (["plan", "collective", "--json"], []),
]


@pytest.mark.parametrize(("words", "extra"), COMMANDS, ids=lambda w: " ".join(w) if isinstance(w, list) else "")
def test_sim_is_the_old_name_of_node_with_the_same_stdout(capsys, words, extra):
    code_new, out_new, err_new = call(capsys, *words, *extra, "--node", "mesh-4")
    code_old, out_old, err_old = call(capsys, *words, *extra, "--sim", "mesh-4")
    assert code_new == code_old
    assert NOTE not in err_new and err_old.count(NOTE) == 1
    new, old = json.loads(out_new), json.loads(out_old)
    assert new.keys() == old.keys()
    if words[0] in ("inventory", "topo", "spec", "plan"):  # deterministic: the same figures
        assert new == old


def test_validate_takes_node_and_keeps_the_same_keys(capsys, tmp_path):
    book = str(tmp_path / "book.db")
    code_new, out_new, _ = call(capsys, "validate", "--node", "mesh-4", "--level", "quick", "--json", "--logbook", book)
    code_old, out_old, err = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--json", "--logbook", book)
    assert code_new == code_old and err.count(NOTE) == 1
    assert json.loads(out_new).keys() == json.loads(out_old).keys()


def test_watch_takes_node(capsys):
    args = ("--duration", "10m", "--speedup", "max", "--no-log", "--json")
    code_new, out_new, _ = call(capsys, "watch", "--node", "mesh-4", *args)
    code_old, out_old, err = call(capsys, "watch", "--sim", "mesh-4", *args)
    assert code_new == code_old and err.count(NOTE) == 1
    assert json.loads(out_new).keys() == json.loads(out_old).keys()


def test_node_and_sim_with_different_values_is_an_error(capsys):
    code, _, err = call(capsys, "topo", "--node", "mesh-4", "--sim", "hgx-h200-8")
    assert code == 2 and "--sim and --node both given" in err


def test_node_and_from_together_is_refused_naming_node(capsys, tmp_path):
    capture = tmp_path / "topo.txt"
    capture.write_text("x")
    code, _, err = call(capsys, "inventory", "--node", "mesh-4", "--from", str(capture))
    assert code == 2 and "--node and --from both given" in err


def test_help_names_node_and_hides_sim(capsys):
    for words in (["topo"], ["validate"], ["watch"], ["doctor"], ["health"], ["bench", "gemm"], ["spec", "export"],
                  ["plan", "power"], ["plan", "memory"]):
        code, out, _ = call(capsys, *words, "--help")
        assert code == 0 and "--node" in out and "--sim" not in out, words


def test_load_node_is_the_node_open_backend_simulates():
    backend = open_backend(sim="mesh-4")
    try:
        loaded = load_node("mesh-4")
        assert loaded.found == backend.node() and loaded.declared == backend.declared
    finally:
        backend.close()


def test_plan_power_reads_the_tdp_of_the_nodes_modules(capsys):
    code, out, _ = call(capsys, "plan", "power", "--node", "mesh-4", "--budget", "2000", "--loads", "1,1,0.3,0",
                        "--json")
    data = json.loads(out)
    tdp = load_node("mesh-4").found.modules[0].model.tdp_w
    assert code == 0 and data["node"] == "mesh-4" and data["tdp_w"] == tdp
    code, typed, _ = call(capsys, "plan", "power", "--budget", "2000", "--loads", "1,1,0.3,0", "--tdp", str(tdp),
                          "--json")
    assert code == 0 and {k: v for k, v in data.items() if k not in ("node", "tdp_w")} == json.loads(typed)


def test_plan_power_without_node_keeps_its_keys_and_default(capsys):
    code, out, _ = call(capsys, "plan", "power", "--budget", "2000", "--loads", "1,1,0.3,0", "--json")
    _, typed, _ = call(capsys, "plan", "power", "--budget", "2000", "--loads", "1,1,0.3,0", "--tdp", "700", "--json")
    assert code == 0 and out == typed and "node" not in json.loads(out)


def test_plan_power_wants_one_load_per_module_of_the_node(capsys):
    code, _, err = call(capsys, "plan", "power", "--node", "mesh-4", "--budget", "2000", "--loads", "1,1")
    assert code == 2 and "--loads" in err and "2 loads for the 4 modules" in err


def test_plan_memory_fits_on_the_nodes_module(capsys):
    model = load_node("hgx-h200-8").found.modules[0].model.name
    _, by_model, _ = call(capsys, "plan", "memory", "--params", "7B", "--model", model, "--json")
    code, by_node, _ = call(capsys, "plan", "memory", "--params", "7B", "--node", "hgx-h200-8", "--json")
    assert code == 0 and json.loads(by_node) == json.loads(by_model)
    code, _, err = call(capsys, "plan", "memory", "--params", "7B", "--node", "hgx-h200-8", "--model", model)
    assert code == 2 and "both given" in err
