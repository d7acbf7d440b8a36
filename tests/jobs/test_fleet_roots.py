"""fleet merge names root causes (issue 42): a node's outliers that its own validate's roots
explain are grouped under that root (text first, JSON ``roots`` per node); an envelope without
``roots`` keeps today's list."""

import json

import pytest

from gpuvet.cli.app import main
from gpuvet.fleet.executor import validate_envelope
from tests.jobs.test_fleet import DEGRADED, write_specs


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fleet_roots")
    out = []
    for spec in write_specs(folder, count=5, faults_at={3: DEGRADED}):
        f = folder / f"{spec.stem}.json"
        f.write_text(json.dumps(validate_envelope(str(spec), "quick")))
        out.append(f)
    return out


def test_text_names_the_root_and_the_outliers_it_explains(capsys, files):
    code = main(["fleet", "merge", *map(str, files)])
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("node03: "))
    assert code == 1 and "gpu1" in line and "nvswitch0" in line and "explains" in line, out
    assert all(len(ln) <= 80 for ln in out.splitlines())


def test_json_gives_each_node_its_roots_with_the_outliers_they_explain(capsys, files):
    main(["fleet", "merge", *map(str, files), "--json"])
    data = json.loads(capsys.readouterr().out)
    node = next(n for n in data["nodes"] if n["node"] == "node03")
    ours = sum(1 for o in data["outliers"] if o["node"] == "node03")
    assert ours and ours / 2 < sum(r["outliers"] for r in node["roots"]) <= ours  # one root, most outliers
    assert {"key", "kind", "severity", "subject", "title", "explains"} <= set(node["roots"][0])
    assert all(n["roots"] == [] for n in data["nodes"] if n["node"] != "node03")


def test_an_envelope_without_roots_keeps_the_plain_list(capsys, files, tmp_path):
    old = []
    for f in files:
        env = json.loads(f.read_text())
        env.pop("roots", None)
        (tmp_path / f.name).write_text(json.dumps(env))
        old.append(tmp_path / f.name)
    main(["fleet", "merge", *map(str, old), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert all(n["roots"] is None for n in data["nodes"]) and data["outliers"]
    main(["fleet", "merge", *map(str, old)])
    assert "root causes" not in capsys.readouterr().out
