"""The NICs beyond the board (issue 47): the sysfs RDMA tree read through a fake tree, and each NIC
check planted and found, on the design's figures (catalog, declared model, peers) — never on the
port's own rate."""

from __future__ import annotations

import pytest

from gpuvet import knowledge
from gpuvet.backends.nic_readings import Nic, NicPort, NicReadings
from gpuvet.backends.nic_sysfs import read_nics
from gpuvet.checks import nics
from gpuvet.node.nic_catalog import find_nic_model
from tests.fakes.fake_sysfs import COUNTERS, fake_hca


def test_the_sysfs_tree_is_read_as_the_kernel_writes_it(tmp_path):
    fake_hca(tmp_path, "mlx5_0", "0000:18:00.0")
    fake_hca(tmp_path, "mlx5_1", "0000:2a:00.0", netdev="ens2f0np0", rate="200 Gb/sec (4X HDR)", layer="Ethernet")
    (tmp_path / "sys" / "module" / "nvidia_peermem").mkdir(parents=True)
    (tmp_path / "sys" / "class" / "net" / "ens2f0np0").mkdir(parents=True)
    got = read_nics(tmp_path)
    assert isinstance(got, NicReadings) and got.peer_memory == "nvidia_peermem"
    first, second = got.nics
    assert (first.device, first.hca_type, first.bus_id, first.firmware, first.numa_node) == \
        ("mlx5_0", "MT4129", "0000:18:00.0", "28.39.1002", 1)
    assert first.ports == (NicPort(1, "ACTIVE", "LinkUp", 400.0, "4X", "InfiniBand",
                                   {k: v for k, v in COUNTERS.items() if k != "port_xmit_data"},
                                   {"port_xmit_data": COUNTERS["port_xmit_data"]}),)  # traffic: 4-byte words
    assert second.netdevs == ("ens2f0np0",) and second.ports[0].link_layer == "Ethernet"
    assert got.interfaces == ("ens2f0np0",)


def test_a_node_without_rdma_devices_has_none_and_no_peer_memory(tmp_path):
    got = read_nics(tmp_path)
    assert isinstance(got, NicReadings) and got.nics == () and got.peer_memory is None


def test_the_catalog_names_a_card_by_its_device_id_or_name():
    assert find_nic_model("MT4129").name == "ConnectX-7"
    assert find_nic_model("0x101d").name == "ConnectX-6 Dx"
    assert find_nic_model("NVIDIA ConnectX-6 Dx EN adapter card").name == "ConnectX-6 Dx"
    assert find_nic_model("MT27800") is None


def _nic(dev: str, *ports: NicPort, hca: str | None = "MT4129", netdevs: tuple[str, ...] = ()) -> Nic:
    return Nic(dev, hca, None, ports, netdevs=netdevs)


def _up(rate: float | None = 400.0, layer: str = "InfiniBand", port: int = 1) -> NicPort:
    return NicPort(port, "ACTIVE", "LinkUp", rate, "4X", layer)


def _readings(*nic: Nic, peer: str | None = "nvidia_peermem", interfaces: tuple[str, ...] | None = None,
              captured: bool = True) -> NicReadings:
    """A captured listing by default (no design known); captured=False: read on the node itself."""
    return NicReadings(nic, peer, "test", interfaces, captured=captured)


def test_healthy_ports_give_no_verdict():
    assert nics.ports(_readings(_nic("mlx5_0", _up()), _nic("mlx5_1", _up()))) == []


@pytest.mark.parametrize(("state", "phys"), [("DOWN", "Polling"), ("INIT", "LinkUp"), ("ARMED", "LinkUp")])
def test_an_infiniband_port_not_active_is_down(state, phys):
    bad = NicPort(1, state, phys, 400.0, "4X", "InfiniBand")
    [verdict] = nics.ports(_readings(_nic("mlx5_0", _up()), _nic("mlx5_3", bad)))
    assert verdict.kind == "nic_port_down" and verdict.nic == "mlx5_3" and state in verdict.reason  # a peer is up
    assert "ibstat mlx5_3" in verdict.fix


def test_a_port_down_is_critical_where_the_design_or_its_peers_say_the_node_uses_it():
    """The design says which ports the node needs: a declared NIC's port down drains it (critical); with no
    design (a captured ibstat) the same port of a model whose other HCAs have it Active is critical too (the
    peers inside the capture, review 55 F4); a lone port, or one no peer of its model has up, warns
    (knowledge/faults.yaml)."""
    bad = NicPort(1, "DOWN", "Polling", None, "4X", "InfiniBand")
    readings = _readings(_nic("mlx5_0", _up()), _nic("mlx5_1", bad))
    declared = [nics.DeclaredNic(f"nic{i}", None) for i in range(2)]
    assert [v.kind for v in nics.ports(readings, declared)] == ["nic_port_down"]
    assert [v.kind for v in nics.ports(readings)] == ["nic_port_down"]
    assert [v.kind for v in nics.ports(_readings(_nic("mlx5_1", bad)))] == ["nic_port_down_undeclared"]
    other = _readings(_nic("mlx5_0", _up(200.0), hca="MT4123"), _nic("mlx5_1", bad))
    assert [v.kind for v in nics.ports(other)] == ["nic_port_down_undeclared"]
    second = NicPort(2, "DOWN", "Polling", None, "4X", "InfiniBand")  # every card's second port unplugged
    cards = _readings(*[_nic(f"mlx5_{i}", _up(), second) for i in range(2)])
    assert [v.kind for v in nics.ports(cards)] == ["nic_port_down_undeclared"] * 2
    assert knowledge.fault("nic_port_down").severity == "critical"
    assert knowledge.fault("nic_port_down_undeclared").severity == "warn"


def test_a_port_below_its_peers_of_the_same_model_is_named_with_the_design():
    [verdict] = nics.ports(_readings(_nic("mlx5_0", _up()), _nic("mlx5_1", _up()), _nic("mlx5_2", _up(200.0))))
    assert verdict.kind == "nic_rate_low" and verdict.reason == \
        "mlx5_2 port 1 at 200 Gb/s 4X, design 400 Gb/s (its ConnectX-7 peers on the node)"


def test_the_catalog_alone_is_no_design_a_connectx7_may_be_a_200g_card():
    """One device id covers cards of several speeds: two 200G ConnectX-7 (or one) are not slow."""
    assert nics.ports(_readings(_nic("mlx5_0", _up(200.0)), _nic("mlx5_1", _up(200.0)))) == []
    assert nics.ports(_readings(_nic("mlx5_0", _up(200.0)))) == []


def test_an_ethernet_port_below_the_slowest_speed_of_its_model_is_slow_alone():
    """The floor is the model's (its driver's release notes list 10 GbE as a ConnectX-6 Dx's slowest), never
    the port's own reading; a port whose ibstat excerpt lacks its link layer is Ethernet on an Ethernet-only model."""
    [verdict] = nics.ports(_readings(_nic("mlx5_2", _up(2.5, layer="unknown"), hca="MT4125")))
    assert verdict.kind == "nic_rate_low" and verdict.reason.startswith("mlx5_2 port 1 at 2.5 Gb/s 4X, design 10 Gb/s")
    assert nics.ports(_readings(_nic("mlx5_2", _up(25.0, layer="Ethernet"), hca="MT4125"))) == []  # a 25 GbE card
    assert nics.ports(_readings(_nic("mlx5_0", _up(2.5, layer="unknown"), hca="MT4129"))) == []  # IB or Ethernet
    assert nics.ports(_readings(_nic("mlx5_0", _up(1.0, layer="Ethernet"), hca="MT4119"))) == []  # 1 GbE is listed


def test_an_unknown_card_is_judged_against_its_peers_not_itself():
    peers = [_nic(f"mlx5_{i}", _up(100.0), hca="MT9999") for i in range(3)]
    slow = _nic("mlx5_3", _up(50.0), hca="MT9999")
    [verdict] = nics.ports(_readings(*peers, slow))
    assert "design 100 Gb/s (its peers on the node)" in verdict.reason
    assert nics.ports(_readings(_nic("mlx5_0", _up(50.0), hca="MT9999"))) == []  # alone: nothing to judge by


def test_a_declared_model_is_the_design_and_a_missing_nic_is_named():
    declared = [nics.DeclaredNic(f"nic{i}", find_nic_model("ConnectX-8")) for i in range(3)]
    found = nics.ports(_readings(_nic("mlx5_0", _up(400.0)), _nic("mlx5_1", _up(800.0))), declared)
    assert [(v.kind, v.nic) for v in found] == [("nic_missing", None), ("nic_rate_low", "mlx5_0")]
    assert "2 of 3 NICs" in found[0].reason and "nic2" in found[0].reason


def test_an_unused_second_ethernet_port_down_on_every_card_is_not_a_fault():
    down = NicPort(2, "DOWN", "Disabled", None, None, "Ethernet")  # switched off
    cards = [_nic(f"mlx5_{i}", _up(100.0, "Ethernet"), down, hca="MT4125") for i in range(2)]
    assert nics.ports(_readings(*cards)) == []
    one_up = _nic("mlx5_2", _up(100.0, "Ethernet"), _up(100.0, "Ethernet", port=2), hca="MT4125")
    found = nics.ports(_readings(*cards, one_up))
    assert [v.kind for v in found] == ["nic_port_down"] * 2  # a peer of their model has port 2 up: these should be


def test_peer_memory_missing_beside_nvidia_modules_and_an_rdma_port_up():
    without = _readings(_nic("mlx5_0", _up()), peer=None)
    [verdict] = nics.peer_memory(without, {"nvidia"})
    assert verdict.kind == "peer_memory_missing" and "modprobe nvidia_peermem" in verdict.fix
    assert nics.peer_memory(without, {"amd"}) == []
    assert nics.peer_memory(_readings(_nic("mlx5_0", _up())), {"nvidia"}) == []
    assert nics.peer_memory(_readings(peer=None), {"nvidia"}) == []  # no RDMA NIC: nothing to peer with


@pytest.mark.parametrize(("env", "absent"), [
    ({"NCCL_IB_HCA": "mlx5_0,mlx5_7"}, "mlx5_7"),
    ({"NCCL_IB_HCA": "=mlx5"}, "mlx5"),  # exact: no device is called just mlx5
    ({"NCCL_IB_HCA": "mlx4"}, "mlx4"),
    ({"NCCL_SOCKET_IFNAME": "eth0"}, "eth0"),
])
def test_nccl_variables_naming_devices_the_node_lacks(env, absent):
    readings = _readings(_nic("mlx5_0", _up()), _nic("mlx5_1", _up()), interfaces=("lo", "ens1f0"))
    [verdict] = nics.nccl_environment(readings, env)
    assert verdict.kind == "nccl_device_absent" and absent in verdict.reason


@pytest.mark.parametrize("env", [{"NCCL_IB_HCA": "mlx5"}, {"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1"},
                                 {"NCCL_IB_HCA": "^mlx5_9"}, {"NCCL_SOCKET_IFNAME": "ens"}, {}])
def test_nccl_variables_that_match_pass(env):
    readings = _readings(_nic("mlx5_0", _up()), _nic("mlx5_1", _up()), interfaces=("lo", "ens1f0"))
    assert nics.nccl_environment(readings, env) == []


# --- the simulated node's NICs ----------------------------------------------------------------
def _health_json(capsys, tmp_path, faults):
    import json

    import yaml

    from gpuvet.cli.app import main

    spec = tmp_path / "node.yaml"
    spec.write_text(yaml.safe_dump({"base": "hgx-h200-8", "faults": faults}))
    code = main(["health", "--sim", str(spec), "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_the_simulated_rail_node_has_eight_connectx7_ports_up(capsys, tmp_path):
    code, data = _health_json(capsys, tmp_path, [])
    nic = [f for f in data["findings"] if f["check"] == "nic"]
    assert code == 0 and [f["status"] for f in nic] == ["ok"] and len(nic[0]["evidence"]) == 8


@pytest.mark.parametrize(("fault", "check", "status", "words"), [
    ({"kind": "nic_port_down", "nic": "nic3"}, "nic", "fail", "mlx5_3 port 1 (InfiniBand) is DOWN"),
    ({"kind": "nic_rate_low", "nic": "nic6", "gbps": 200}, "nic", "warn",
     "mlx5_6 port 1 at 200 Gb/s 4X, design 400 Gb/s (ConnectX-7, declared)"),
    ({"kind": "peer_memory_missing"}, "peer_memory", "warn", "no peer-memory module (nvidia_peermem) loaded"),
])
def test_each_simulated_nic_fault_is_found_by_health(capsys, tmp_path, fault, check, status, words):
    code, data = _health_json(capsys, tmp_path, [fault])
    named = [(f["check"], f["status"], f["reason"]) for f in data["findings"] if f["status"] in ("fail", "warn")]
    assert code == (1 if status == "fail" else 0) and len(named) == 1, named
    assert named[0][:2] == (check, status) and named[0][2].startswith(words), named


def test_one_faster_port_does_not_make_its_peers_slow():
    """The peers' median is the design where nothing is declared: a single 800G card beside seven
    400G ones is not a fault of the seven (their max would have called every one slow)."""
    readings = _readings(*[_nic(f"mlx5_{i}", _up(400.0)) for i in range(7)], _nic("mlx5_7", _up(800.0)))
    assert nics.ports(readings) == []


def test_a_nic_fault_naming_a_nic_the_node_lacks_is_refused(capsys, tmp_path):
    code, _ = _health_json_refused(capsys, tmp_path, [{"kind": "nic_port_down", "nic": "nic9"}])
    assert code == 2


def _health_json_refused(capsys, tmp_path, faults):
    import yaml

    from gpuvet.cli.app import main

    spec = tmp_path / "node.yaml"
    spec.write_text(yaml.safe_dump({"base": "hgx-h200-8", "faults": faults}))
    code = main(["health", "--sim", str(spec), "--json"])
    err = capsys.readouterr().err
    assert "nic9" in err and "nic0" in err
    return code, err


def test_a_nic_model_the_catalog_lacks_is_refused_naming_those_it_knows(tmp_path):
    from gpuvet.errors import SpecError
    from gpuvet.node.spec import load_spec

    spec = tmp_path / "node.yaml"
    spec.write_text("base: hgx-h200-8\npcie: {gen: 5, switches_per_socket: 2, nics_per_switch: 1, "
                    "nic_model: ConnectX-9}\n")
    with pytest.raises(SpecError, match="ConnectX-9.*ConnectX-7"):
        load_spec(str(spec))


# --- the NVLink domain's own state --------------------------------------------------------------
@pytest.mark.parametrize(("fabric", "words"), [((2, 0), "gpu2: not registered with the NVLink fabric (state in "
                                                         "progress)"),
                                               ((1, 0), "gpu2: not registered with the NVLink fabric (state not "
                                                         "started)"),
                                               ((3, 999), "gpu2: NVLink fabric registration failed (NVML error 999)")])
def test_a_live_module_not_in_its_nvlink_domain_fails_health(tmp_path, fabric, words):
    from gpuvet.backends.nvidia.backend import NvidiaBackend
    from gpuvet.backends.nvidia.gateway import Nvml
    from gpuvet.health.run import HealthOptions, run_health
    from tests.fakes.fake_nvml import hgx_h200

    fake = hgx_h200()
    fake.gpus[2].fabric = fabric
    log = tmp_path / "kmsg.txt"
    log.write_text("")
    report = run_health(NvidiaBackend(Nvml(lib=fake), kernel_log=log), HealthOptions()).report
    failed = [(f.check, f.reason) for f in report.failures()]
    assert failed == [("fabric_state", words)], failed
    assert "nvidia-fabricmanager" in report.failures()[0].fix


def test_a_board_without_a_fabric_manager_skips_fabric_state(tmp_path):
    from gpuvet.backends.nvidia.backend import NvidiaBackend
    from gpuvet.backends.nvidia.gateway import Nvml
    from gpuvet.health.model import Status
    from gpuvet.health.run import HealthOptions, run_health
    from tests.fakes.fake_nvml import hgx_h200

    fake = hgx_h200(2)
    for gpu in fake.gpus:
        gpu.fabric = (0, 0)  # NVML_GPU_FABRIC_STATE_NOT_SUPPORTED: PCIe cards
    log = tmp_path / "kmsg.txt"
    log.write_text("")
    report = run_health(NvidiaBackend(Nvml(lib=fake), kernel_log=log), HealthOptions()).report
    assert [f.status for f in report.findings if f.check == "fabric_state"] == [Status.SKIP]


@pytest.mark.parametrize(("state", "words"), [("in_progress", "gpu40: not registered with the NVLink fabric"),
                                              ("unhealthy", "gpu40: the NVLink fabric reports it unhealthy")])
def test_a_simulated_rack_module_outside_its_domain_is_found(capsys, tmp_path, state, words):
    import json

    import yaml

    from gpuvet.cli.app import main

    spec = tmp_path / "rack.yaml"
    spec.write_text(yaml.safe_dump({"base": "nvl72", "faults": [{"kind": "fabric_registration", "module": "gpu40",
                                                                 "state": state}]}))
    code = main(["health", "--sim", str(spec), "--json"])
    data = json.loads(capsys.readouterr().out)
    failed = [f["reason"] for f in data["findings"] if f["status"] == "fail"]
    assert code == 1 and len(failed) == 1 and failed[0].startswith(words), failed
    assert main(["health", "--sim", "nvl72", "--json"]) == 0
    ok = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["check"] == "fabric_state"]
    assert [f["status"] for f in ok] == ["ok"] and "72 module(s)" in ok[0]["reason"]
    assert main(["health", "--sim", "pcie-8", "--json"]) == 0
    skipped = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["check"] == "fabric_state"]
    assert [f["status"] for f in skipped] == ["skip"]


def test_validate_has_a_network_layer_with_each_nic_fault(capsys, tmp_path):
    import json

    import yaml

    from gpuvet.cli.app import main

    spec = tmp_path / "node.yaml"
    spec.write_text(yaml.safe_dump({"base": "hgx-h200-8", "faults": [
        {"kind": "nic_port_down", "nic": "nic3"}, {"kind": "nic_rate_low", "nic": "nic6", "gbps": 200},
        {"kind": "peer_memory_missing"}]}))
    code = main(["validate", "--sim", str(spec), "--level", "quick", "--json", "--no-log"])
    data = json.loads(capsys.readouterr().out)
    network = [(c["name"], c["verdict"], c.get("module")) for c in data["checks"] if c["layer"] == "network"
               and c["verdict"] != "pass"]
    assert code == 1 and network == [("nic_port_down", "fail", "mlx5_3"), ("peer_memory_missing", "warn", None),
                                     ("nic_rate", "warn", "mlx5_6")]
    assert main(["validate", "--sim", "hgx-h200-8", "--level", "quick", "--json", "--no-log"]) == 0
    healthy = [c for c in json.loads(capsys.readouterr().out)["checks"] if c["layer"] == "network"]
    assert [(c["name"], c["verdict"], c["value"]) for c in healthy] == \
        [("nic_rate", "pass", 400.0)] * 8 + [("nic_ports", "pass", 8)]


def test_fleet_merge_names_the_node_whose_nic_runs_slower_than_its_peers(capsys, tmp_path):
    import json

    import yaml

    from gpuvet.cli.app import main

    files = []
    for i in range(5):
        faults = [{"kind": "nic_rate_low", "nic": "nic2", "gbps": 200}] if i == 3 else []
        spec = tmp_path / f"node{i}.yaml"
        spec.write_text(yaml.safe_dump({"base": "hgx-h200-8", "name": f"node{i}", "faults": faults}))
        main(["validate", "--sim", str(spec), "--level", "quick", "--json", "--no-log"])
        out = tmp_path / f"node{i}.json"
        out.write_text(capsys.readouterr().out)
        files.append(str(out))
    code = main(["fleet", "merge", *files, "--json"])
    data = json.loads(capsys.readouterr().out)
    slow = [o for o in data["outliers"] if o.get("metric") == "nic_rate"]
    assert code == 1 and [(o["node"], o["module"], o["value"]) for o in slow] == [("node3", "mlx5_2", 200.0)], slow


def test_a_module_outside_its_nvlink_domain_fails_validate_and_doctor_too(capsys, tmp_path):
    """health found it; validate (an inventory check, a root) and doctor (live/simulated fabric info,
    not only a captured Fabric section) said pass and 'no cause found' (a review found it)."""
    import json

    import yaml

    from gpuvet.cli.app import main

    spec = tmp_path / "rack.yaml"
    spec.write_text(yaml.safe_dump({"base": "nvl72", "faults": [{"kind": "fabric_registration", "module": "gpu40",
                                                                 "state": "in_progress"}]}))
    assert main(["validate", "--node", str(spec), "--level", "quick", "--json", "--no-log"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(c["module"], c["verdict"]) for c in data["checks"] if c["name"] == "fabric_state"
            and c["verdict"] != "pass"] == [("gpu40", "fail")]
    assert any("gpu40" in r["title"] for r in data["roots"])
    assert main(["doctor", "interconnect-slow", "--node", str(spec), "--json"]) == 1
    found = [(f["cause"], f.get("module")) for f in json.loads(capsys.readouterr().out)["findings"]]
    assert found == [("fabric_unregistered", "gpu40")]


def test_topo_expect_names_the_nics_that_differ_from_the_declared_node(capsys, tmp_path):
    import json

    import yaml

    from gpuvet.cli.app import main

    spec = tmp_path / "node.yaml"
    spec.write_text(yaml.safe_dump({"base": "hgx-h200-8", "faults": [
        {"kind": "nic_port_down", "nic": "nic3"}, {"kind": "nic_rate_low", "nic": "nic6", "gbps": 200}]}))
    assert main(["topo", "--node", str(spec), "--expect", "hgx-h200-8", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(d["kind"], d["nic"]) for d in data["nic_differences"]] == [("nic_port_down", "mlx5_3"),
                                                                          ("nic_rate_low", "mlx5_6")]
    assert len(data["nics"]) == 8 and data["differences"] == []
    assert main(["topo", "--node", "hgx-h200-8", "--expect", "hgx-h200-8", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nic_differences"] == []
    assert main(["topo", "--node", str(spec), "--json"]) == 0  # no declaration: the NICs are shown, not judged
    assert "nic_differences" not in json.loads(capsys.readouterr().out)


def test_on_the_node_itself_an_hca_present_is_declared_by_its_presence() -> None:
    """Read on the node (sysfs; `gpuvet health` with no --expect), a port of an HCA the node carries is expected
    up: down, it drains the node (critical), as a declared one does; the unused second port of a dual-port
    Ethernet card stays no fault. The warn-level reading is the captured fragment's, whose design is unknown."""
    bad = NicPort(1, "DOWN", "Polling", None, "4X", "InfiniBand")
    live = _readings(_nic("mlx5_0", _up()), _nic("mlx5_1", bad), captured=False)
    assert [(v.kind, knowledge.fault(v.kind).severity) for v in nics.ports(live)] == [("nic_port_down", "critical")]
    assert NicReadings((), None, "sysfs").captured is False  # a source that does not say is the node's: fail closed
    off = NicPort(2, "DOWN", "Disabled", None, None, "Ethernet")
    cards = [_nic(f"mlx5_{i}", _up(100.0, "Ethernet"), off, hca="MT4125") for i in range(2)]
    assert nics.ports(_readings(*cards, captured=False)) == []


def test_health_without_a_design_fails_a_live_hcas_port_down() -> None:
    from gpuvet.health import nic_checks

    bad = NicPort(1, "DOWN", "Polling", None, "4X", "InfiniBand")
    live = nic_checks.nic(_readings(_nic("mlx5_0", bad), captured=False), [], {})
    captured = nic_checks.nic(_readings(_nic("mlx5_0", bad)), [], {})
    assert [f.status.value for f in live] == ["fail"] and [f.status.value for f in captured] == ["warn"]
