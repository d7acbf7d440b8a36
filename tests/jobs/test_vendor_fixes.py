"""A fix names the vendor's own tool for the link it is about (issue 42): an xGMI link is not
told to run nvidia-smi, an NVLink is not given PCIe advice. The words come from
node/vendor_tools.py, never from the job."""

from gpuvet.health.run import HealthOptions, run_health
from gpuvet.validate.run import Level, Validator


def _health_fix(backend, check):
    found = [f for f in run_health(backend, HealthOptions()).report.findings if f.check == check and f.fix]
    assert found, f"no {check} finding with a fix"
    return found[0].fix


def test_an_xgmi_link_down_is_told_the_amd_tools(faulty):
    fix = _health_fix(faulty("mi300x-8", [{"kind": "link_down", "between": ["gpu0", "gpu1"]}]), "fabric")
    assert "amd-smi" in fix and "nvidia-smi" not in fix


def test_an_nvlink_down_is_told_nvidia_smi(faulty):
    fix = _health_fix(faulty("hgx-h200-8", [{"kind": "link_down", "between": ["gpu1", "nvswitch0"]}]), "fabric")
    assert "nvidia-smi nvlink" in fix and "amd-smi" not in fix


def test_an_amd_power_cap_is_raised_with_the_amd_tool(faulty):
    fix = _health_fix(faulty("mi300x-8", [{"kind": "power_cap_low", "module": "gpu3", "watts": 350}]),
                      "power_limit")
    assert "rocm-smi" in fix and "nvidia-smi" not in fix


def test_an_nvlink_at_a_third_gets_no_pcie_advice(faulty):
    backend = faulty("hgx-h200-8", [{"kind": "link_degraded", "between": ["gpu1", "nvswitch0"], "factor": 0.33}])
    run = Validator(backend, Level.QUICK).run()
    named = [c for c in run.checks if c.name.startswith("peers_p2p") and c.module == "gpu1"]
    assert named and all("nvidia-smi nvlink" in (c.fix or "") and "lspci" not in (c.fix or "") for c in named)


def _doctor_fix(capsys, tmp_path, base, between):
    import json

    from gpuvet.cli.app import main

    spec = tmp_path / "s.yaml"
    spec.write_text(f"base: {base}\nfaults:\n  - {{kind: link_degraded, between: {between}, factor: 0.33}}\n")
    code = main(["doctor", "interconnect-slow", "--node", str(spec), "--json"])
    out, _ = capsys.readouterr()
    (f,) = [f for f in json.loads(out)["findings"] if f["cause"] == "link_degraded"]
    assert code == 1 and f["fix"]
    return f["fix"]


def test_doctor_gives_an_nvlink_at_a_third_its_own_tool_not_pcie_advice(capsys, tmp_path):
    fix = _doctor_fix(capsys, tmp_path, "hgx-h200-8", "[gpu1, nvswitch0]")
    assert "nvidia-smi nvlink" in fix and "lspci" not in fix and "LnkSta" not in fix


def test_doctor_gives_an_xgmi_link_at_a_third_the_amd_tools(capsys, tmp_path):
    fix = _doctor_fix(capsys, tmp_path, "mi300x-8", "[gpu1, gpu2]")
    assert "amd-smi" in fix and "nvidia-smi" not in fix and "lspci" not in fix
