"""An AMD Instinct node through the same node model, checks and fleet view as an NVIDIA one:
the simulated mi300x-8 (eight MI300X on a full xGMI mesh) passes healthy and names every planted
fault WITHOUT --expect (judged against the design inferred from the catalog), and a fleet merge
of NVIDIA and AMD nodes compares only like with like."""

from __future__ import annotations

import json

import pytest

from gpuvet.backends.sim.backend import SimBackend
from gpuvet.checks.model import Verdict
from gpuvet.cli.app import main
from gpuvet.node.catalog import get_model
from gpuvet.validate.run import Level, Validator
from tests.harness.fault_matrix import cases, run_case


@pytest.mark.parametrize("case", cases(("mi300x-8",)), ids=lambda c: c.name)
def test_mi300x_8_is_judged_by_its_design_healthy_passes_and_every_fault_is_named(case):
    hit, checks = run_case(case)
    assert hit, [(c.verdict.value, c.name, c.module, c.between) for c in checks
                 if c.verdict in (Verdict.FAIL, Verdict.WARN)]


def test_the_design_is_an_xgmi_mesh_from_the_catalog_not_the_state_found():
    run = Validator(SimBackend.from_ref("mi300x-8"), Level.QUICK).run()
    assert run.verdict is Verdict.PASS
    assert any("8×MI300X xgmi mesh" in n for n in run.notes), run.notes
    model = get_model("MI300X")
    assert (model.vendor, model.fabric, model.fabric_links) == ("amd", "xgmi", 7)


def test_health_on_mi300x_8_passes_healthy_and_names_a_down_xgmi_link(capsys, tmp_path):
    assert main(["health", "--sim", "mi300x-8", "--json"]) == 0
    healthy = json.loads(capsys.readouterr().out)
    assert healthy["status"] == "ok" and healthy["modules"] == 8
    spec = tmp_path / "down.yaml"
    spec.write_text("base: mi300x-8\nfaults: [{kind: link_down, between: [gpu3, gpu5]}]\n")
    assert main(["health", "--sim", str(spec), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert any(f["check"] == "fabric" and "gpu3-gpu5" in f["reason"] for f in report["findings"]), report


def test_fleet_merge_pools_nvidia_and_amd_nodes_and_compares_like_with_like(capsys, tmp_path):
    """Three nodes of each vendor; one MI300X node's GEMM figures planted 30 % low. It is named
    among its MI300X peers; no H100 node is judged against MI300X figures or the reverse."""
    files = []
    for preset in ("mesh-4", "mi300x-8"):
        assert main(["validate", "--sim", preset, "--level", "quick", "--no-log", "--json"]) in (0, 1)
        doc = capsys.readouterr().out
        for i in range(4):
            env = json.loads(doc)
            env["environment"]["node"] = f"{preset}-n{i}"
            if preset == "mi300x-8" and i == 0:
                for check in env["checks"]:
                    if check["name"].startswith("gemm_") and check.get("value"):
                        check["value"] *= 0.7
            path = tmp_path / f"{preset}-{i}.json"
            path.write_text(json.dumps(env))
            files.append(str(path))
    code = main(["fleet", "merge", *files, "--json"])
    merged = json.loads(capsys.readouterr().out)
    assert code == 1
    assert {t: len(nodes) for t, nodes in merged["node_types"].items()} == {"H100-SXM": 4, "MI300X": 4}
    named = {o["node"] for o in merged["outliers"]}
    assert named == {"mi300x-8-n0"}, merged["outliers"]


def test_a_down_xgmi_link_is_fixed_with_amd_tools_and_an_nvlink_one_with_nvidia_tools(tmp_path):
    """The fix names the vendor's own commands: no nvidia-smi for an MI300X node, no amd-smi for H100s."""
    fixes = {}
    for base, pair in (("mi300x-8", "[gpu3, gpu5]"), ("mesh-4", "[gpu0, gpu1]")):
        spec = tmp_path / f"{base}.yaml"
        spec.write_text(f"base: {base}\nfaults: [{{kind: link_down, between: {pair}}}]\n")
        run = Validator(SimBackend.from_ref(str(spec)), Level.QUICK).run()
        fixes[base] = " ".join(c.fix or "" for c in run.checks if c.verdict is Verdict.FAIL)
    assert "amd-smi xgmi" in fixes["mi300x-8"] and "nvidia-smi" not in fixes["mi300x-8"], fixes
    assert "nvidia-smi nvlink -s" in fixes["mesh-4"] and "amd-smi" not in fixes["mesh-4"], fixes


def test_vendor_tools_join_both_vendors_on_a_mixed_node_and_default_to_nvidia():
    from gpuvet.node.catalog import unknown_model
    from gpuvet.node.vendor_tools import TOOLS, tools_for

    mixed = tools_for([get_model("MI300X"), get_model("H100-SXM")])
    assert "amd-smi" in mixed.link_state and "nvidia-smi" in mixed.link_state
    assert tools_for([unknown_model("unknown (topo -m)")]) == TOOLS["nvidia"]
