"""Root cause first (issue 42): on a mix of planted faults validate's roots are the faults (no
fewer, no more), every failed check is attached to one, and the first 24 lines at 80 columns
hold the verdict and every root."""

from __future__ import annotations

import json

import pytest
import yaml

from gpuvet.cli.app import main

MIXES = [
    ("hgx-h200-8", [{"kind": "link_degraded", "between": ["gpu1", "nvswitch0"], "factor": 0.33},
                    {"kind": "power_cap_low", "module": "gpu6", "watts": 300},
                    {"kind": "missing_module", "module": "gpu3"}], ["gpu3", "gpu1↔nvswitch0", "gpu6"]),
    ("mesh-4", [{"kind": "link_down", "between": ["gpu1", "gpu2"]}], ["gpu1↔gpu2"]),
    ("pcie-8", [{"kind": "power_cap_low", "module": "gpu1", "watts": 300}], ["gpu1"]),
]


def _validate(capsys, tmp_path, base, faults, *args):
    spec = tmp_path / "node.yaml"
    spec.write_text(yaml.safe_dump({"base": base, "faults": faults}), encoding="utf-8")
    main(["validate", "--sim", str(spec), "--level", "quick", "--no-log", *args])
    return capsys.readouterr().out


@pytest.mark.parametrize(("base", "faults", "subjects"), MIXES, ids=[m[0] for m in MIXES])
def test_roots_are_the_planted_faults_and_explain_every_failure(capsys, tmp_path, monkeypatch, base, faults, subjects):
    data = json.loads(_validate(capsys, tmp_path, base, faults, "--json"))
    assert sorted(r["subject"] for r in data["roots"]) == sorted(subjects), data["roots"]
    explained = {k for r in data["roots"] for k in r["explains"]}
    bad = [c for c in data["checks"] if c["verdict"] in ("fail", "warn")]
    assert len(bad) == len(explained)  # each failed or warned check under exactly one root
    monkeypatch.setenv("COLUMNS", "80")
    shown = _validate(capsys, tmp_path, base, faults).splitlines()
    assert "SIMULATED" in shown[1]  # the banner first (newcomer 56 LOW 15), then the verdict
    banner = 3
    head = shown[banner:banner + 24]
    assert head[0].startswith(f"verdict: {data['verdict']}")
    for r in data["roots"]:
        assert any(r["title"] in line for line in head), (r["title"], head)
    assert all(len(line) <= 80 for line in head)
