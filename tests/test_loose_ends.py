"""Loose ends users hit: a spec's power cap bounded by the catalog, the plan's tied/untied output
head, firmware versions in validate's run record, the Grafana panel for the ledger's ladder step."""

import pytest

from gpuvet.cli.app import main
from gpuvet.node.catalog import get_model

# --- a spec's power cap is bounded by the module model's maximum (the catalog's tdp_w) -------------


def _cap_spec(base: str, module: str, watts: float) -> str:
    return f"base: {base}\nname: capped\nfaults:\n  - {{kind: power_cap_low, module: {module}, watts: {watts}}}\n"


@pytest.mark.parametrize("base, model", [("mesh-4", "H100-SXM"), ("pcie-8", "L40S")])
def test_a_power_cap_above_the_modules_maximum_is_refused_naming_file_key_and_bound(
        tmp_path, capsys, base, model):
    most = get_model(model).tdp_w
    assert most is not None
    path = tmp_path / "cap.yaml"
    path.write_text(_cap_spec(base, "gpu1", 5000), encoding="utf-8")
    assert main(["spec", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "faults[0] (power_cap_low)" in err and "`watts`" in err
    assert f"{most:g} W" in err and "5000 W" in err and "Fix:" in err
    assert main(["topo", "--node", str(path), "--json"]) == 2  # every command that builds the node


def test_a_power_cap_at_the_maximum_is_accepted_and_zero_is_refused(tmp_path, capsys):
    most = get_model("H100-SXM").tdp_w
    path = tmp_path / "cap.yaml"
    path.write_text(_cap_spec("mesh-4", "gpu1", most), encoding="utf-8")
    assert main(["spec", "check", str(path)]) == 0
    path.write_text(_cap_spec("mesh-4", "gpu1", 0), encoding="utf-8")
    assert main(["spec", "check", str(path)]) == 2
    assert "watts" in capsys.readouterr().err


def test_a_custom_model_is_bounded_by_its_own_declared_maximum(tmp_path, capsys):
    path = tmp_path / "custom.yaml"
    path.write_text(
        "name: lab\nmodules: {count: 2, custom: {name: LabCard, tdp_w: 300}}\n"
        "faults:\n  - {kind: power_cap_low, module: gpu0, watts: 301}\n", encoding="utf-8")
    assert main(["spec", "check", str(path)]) == 2
    assert "LabCard's maximum power limit, 300 W" in capsys.readouterr().err
