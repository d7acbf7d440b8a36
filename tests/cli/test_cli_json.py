"""Every command that prints something takes --json and prints one parseable document with the
exit code the README gives; old option spellings keep working with a note on stderr."""

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

DATA = Path(__file__).parent.parent / "data" / "captures"


def run_json(capsys, *args: str, code: int | tuple[int, ...] = 0):
    got = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert got in ((code,) if isinstance(code, int) else code), (args, got, err)
    return json.loads(out)


@pytest.fixture
def home(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("args,keys", [
    (["inventory", "--sim", "mesh-4"], {"simulated", "modules", "host", "software"}),
    (["inventory", "--from", str(DATA / "smi_q_x_h100_8gpu.xml")], {"modules", "notes"}),
    (["topo", "--sim", "mesh-4"], {"modules", "links", "matrix"}),
    (["spec", "show", "mesh-4"], {"name", "modules"}),
    (["spec", "check", "mesh-4"], {"valid", "modules", "links", "faults"}),
    (["spec", "export", "--sim", "mesh-4"], {"name", "modules", "links"}),
    (["plan", "memory", "--params", "7B", "--model", "H200-SXM"], {"breakdown", "fits", "fewest_modules"}),
    (["plan", "collective", "--node", "mesh-4", "--ranks", "2"], {"time_s", "algbw", "busbw", "algorithm"}),
    (["plan", "step", "--node", "mesh-4"], {"plans"}),
    (["plan", "power", "--budget", "1500", "--loads", "1,1,0.2,0"], {"caps_w"}),
    (["health", "--sim", "mesh-4"], {"status", "findings", "exit_code"}),
    (["bench", "gemm", "--sim", "mesh-4", "--quick", "--dtypes", "bf16"], {"benchmark", "results", "ok"}),
    (["bench", "membw", "--sim", "mesh-4", "--quick"], {"benchmark", "results"}),
    (["bench", "copy", "--sim", "mesh-4", "--quick", "--tests", "p2p"], {"benchmark", "results"}),
    (["bench", "collective", "--sim", "mesh-4", "--quick", "--max-bytes", "4096", "--factor", "64"],
     {"benchmark", "results"}),
    (["bench", "model", "--sim", "mesh-4", "--quick"], {"benchmark", "results"}),
    (["bench", "efficiency", "--sim", "mesh-4", "--quick", "--caps", "300:700:400", "--modules", "gpu0"],
     {"points", "knees", "modules"}),
])
def test_json_shape(capsys, home, args, keys):
    data = run_json(capsys, *args)
    assert keys <= set(data if isinstance(data, dict) else {}), set(data)


def test_list_shaped_commands(capsys, home):
    assert {"name", "modules", "model"} <= set(run_json(capsys, "spec", "presets")[0])
    assert {"name", "tflops", "memory_bytes"} <= set(run_json(capsys, "catalog")[0])


def test_topo_expect_differences_exit_1(capsys, home, tmp_path):
    spec = tmp_path / "down.yaml"
    spec.write_text("base: mesh-4\nfaults: [{kind: link_down, between: [gpu0, gpu1]}]\n")
    data = run_json(capsys, "topo", "--sim", str(spec), "--expect", "mesh-4", code=1)
    assert [d["kind"] for d in data["differences"]] == ["link_down"]


def test_doctor_json(capsys, home):
    data = run_json(capsys, "doctor", "compute-below-peak", "--sim", "mesh-4", "--window", "1m")
    assert {"symptom", "findings", "steps"} <= set(data) and data["findings"] == []


def test_logbook_commands_json(capsys, home, tmp_path):
    book = str(tmp_path / "lb.db")
    first = run_json(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--logbook", book)
    second = run_json(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--logbook", book)
    a, b = first["run_id"], second["run_id"]
    assert first["verdict"] in ("pass", "warn") and a != b
    runs = run_json(capsys, "log", "list", "--logbook", book)
    assert {r["run_id"] for r in runs} == {a, b}
    assert run_json(capsys, "log", "show", a, "--logbook", book)["run_id"] == a
    assert {"run_a", "run_b", "results", "regressions"} <= set(
        run_json(capsys, "log", "compare", a, b, "--logbook", book, code=(0, 1)))
    html = tmp_path / "run.html"
    assert run_json(capsys, "report", a, "-o", str(html), "--logbook", book) == {
        "wrote": str(html), "run_id": a, "verdict": first["verdict"]}
    base = tmp_path / "base.json"
    made = run_json(capsys, "baseline", "make", a, b, "-o", str(base), "--logbook", book)
    assert made["wrote"] == str(base) and made["runs"] == [a, b] and made["checks"] > 0
    assert isinstance(run_json(capsys, "events", "--logbook", book), list)


def test_fleet_merge_json_exit_and_note(capsys, home, tmp_path):
    files = []
    for i in range(2):
        path = tmp_path / f"n{i}.json"
        env = run_json(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--no-log")
        env["environment"]["node"] = f"node{i}"  # two nodes (one simulated node twice is refused)
        path.write_text(json.dumps(env))
        files.append(str(path))
    data = run_json(capsys, "fleet", "merge", *files)
    assert data["outliers"] == [] and any("at least 3 nodes" in n for n in data["notes"])


def test_watch_json(capsys, home):
    data = run_json(capsys, "watch", "--sim", "mesh-4", "--duration", "2s", "--interval", "1s", "--speedup", "max",
                    "--no-admission", "--no-log")
    assert data["simulated"] is True and len(data["modules"]) == 4


def test_spec_export_json_to_a_file(capsys, home, tmp_path):
    out = tmp_path / "node.yaml"
    assert run_json(capsys, "spec", "export", "--sim", "mesh-4", "-o", str(out)) == {"wrote": str(out)}
    assert out.read_text().startswith("# gpuvet node spec")


@pytest.mark.parametrize("old,new", [
    (["plan", "collective", "--sim", "mesh-4", "--modules", "2"], ["plan", "collective", "--node", "mesh-4",
                                                                    "--ranks", "2"]),
    (["plan", "memory", "--params", "7B", "--module", "H100-SXM"], ["plan", "memory", "--params", "7B",
                                                                    "--model", "H100-SXM"]),
])
def test_old_spellings_work_with_a_note(capsys, home, old, new):
    assert main([*old, "--json"]) == 0
    out_old, err = capsys.readouterr()
    assert "deprecated" in err and new[-2] in err
    assert json.loads(out_old) == run_json(capsys, *new)


def test_old_and_new_spelling_disagreeing_is_refused(capsys, home):
    assert main(["plan", "collective", "--node", "mesh-4", "--sim", "hgx-h200-8"]) == 2
    assert "--sim and --node both given" in capsys.readouterr()[1]
