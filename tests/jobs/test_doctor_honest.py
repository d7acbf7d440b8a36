"""doctor speaks only of what it knows: no modules is a finding with its reason (never "every
module opens" about zero modules), and a captured node's local evidence is "can't tell"."""

import json
from pathlib import Path

from gpuvet.backends.host import HostBackend
from gpuvet.cli.app import main

DATA = Path(__file__).parent.parent / "data" / "captures"


def test_a_host_without_modules_is_a_finding_with_the_reason(capsys, monkeypatch):
    from gpuvet.backends import select

    monkeypatch.setattr(select, "open_backend", lambda **_: HostBackend("the NVIDIA driver is not loaded"))
    code = main(["doctor", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    (missing,) = [f for f in data["findings"] if f["cause"] == "no_modules_visible"]
    assert "driver is not loaded" in json.dumps(missing["evidence"])
    said = {s["summary"] for s in data["steps"]}
    assert not {"ECC on and quiet", "every link is up at its width and speed",
                "the runtime can see and open every module"} & said
    module_steps = [s for s in data["steps"] if s["check"] in ("ecc_health", "visibility", "power_limit", "clocks")]
    assert module_steps and all(s["status"] != "clear" for s in module_steps)


def test_a_captured_node_shows_no_local_evidence(capsys, monkeypatch):
    monkeypatch.setenv("NCCL_P2P_LEVEL", "LOC")  # this machine's environment must not be blamed on the capture
    code = main(["doctor", "--from", str(DATA / "smi_q_x_h100_8gpu.xml"), "--all", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    local = {s["check"]: s for s in data["steps"] if s["check"] in ("host_bottleneck", "nccl_environment", "visibility")}
    assert local and all(s["status"] != "confirmed" and "captured node" in s["summary"] for s in local.values())
    assert not [f for f in data["findings"] if f["cause"] in ("cpu_saturated", "nccl_env_slow_transport",
                                                                "device_permissions", "modules_hidden")]


def test_a_simulated_node_is_not_judged_by_this_machines_devices_and_environment(capsys, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # gpuvet's own environment: not the simulated node's
    code = main(["doctor", "module-missing", "--sim", "mesh-4", "--all", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and data["simulated"] is True
    (step,) = [s for s in data["steps"] if s["check"] == "visibility"]
    assert step["status"] == "inconclusive" and "simulated node" in step["summary"]
    assert not [e for e in step["evidence"] if e["source"] in ("this machine", "environment of the gpuvet process")]
    assert not [f for f in data["findings"] if f["cause"] in ("device_permissions", "modules_hidden")]


def test_a_captured_module_is_counted_once_though_its_inventory_and_its_q_both_read_it(capsys):
    """nvidia-smi -q -x makes the captured node's inventory and is read as -q: 8 modules were
    '16 module reading(s)' of ECC and gpu5's x8 link '2 link(s) down' for one finding."""
    main(["doctor", "--from", str(DATA / "smi_q_x_h100_8gpu.xml"), "--all", "--json"])
    data = json.loads(capsys.readouterr().out)
    steps = {(s["playbook"], s["check"]): s for s in data["steps"]}
    ecc, links = steps[("compute-errors", "ecc_health")], steps[("interconnect-slow", "link_state")]
    assert ecc["summary"].startswith("ECC on (8 module reading(s))"), ecc["summary"]
    assert links["summary"].startswith("1 link(s)"), links
    narrow = [f for f in data["findings"] if f["cause"] == "pcie_link_downgraded"]
    assert [f["module"] for f in narrow] == ["0000:AB:00.0"], narrow


def test_an_excerpt_without_a_gpu_line_is_one_module_to_the_ecc_and_link_checks(capsys, tmp_path):
    """No GPU line: the captured inventory calls it gpu0, the -q reader 'GPU (bus id not in the
    excerpt)'; the same disabled ECC and x8 link were two findings each."""
    excerpt = tmp_path / "q.txt"
    excerpt.write_text("    Product Name                          : NVIDIA A100-SXM4-80GB\n    ECC Mode\n"
                       "        Current                           : Disabled\n        Pending                 "
                       "          : Disabled\n    PCI\n        GPU Link Info\n            Link Width\n"
                       "                Max                       : 16x\n                Current           "
                       "        : 8x\n")
    main(["doctor", "--from", str(excerpt), "--all", "--json"])
    data = json.loads(capsys.readouterr().out)
    causes = sorted(f["cause"] for f in data["findings"])
    assert causes == ["ecc_disabled", "pcie_link_downgraded"], data["findings"]
    (links,) = [s for s in data["steps"] if s["check"] == "link_state"]
    assert links["summary"].startswith("1 link(s)"), links
