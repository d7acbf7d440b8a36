"""Issue 46, batches AJ/AK (R5B): NICs, fabric services and PCIe errors, each class on lines written here in the
tool's own form. systemd's failed-unit head line ('× unit.service - …', systemd 248+) for the fabric manager and
nvidia-persistenced; ibv_devinfo's PORT_INIT (no subnet manager brought the port up) kept where the same device is
listed twice; a dual-port ConnectX's second PCI function switched off while only the first functions are up (no
finding); ethtool's settings read past its 'Cannot get …' lines; a non-GPU exporter's Prometheus text read, not
judged; NET/IB's 'client reregistration' once a note, repeated a lead; an AER excerpt whose endpoint's own bits
come before the port's lines names that endpoint."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, capture_json, doctor_text

_FM_FAILED = (
    "# systemctl status nvidia-fabricmanager.service\n"
    "\u00d7 nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
    "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset: enabled)\n"
)


def test_systemds_failed_unit_head_line_is_the_fabric_manager_failed(tmp_path: Path) -> None:
    for text in (_FM_FAILED, _FM_FAILED.splitlines()[1] + "\n"):  # with its status lines, or the head line alone
        assert capture_findings(tmp_path, text) == {("fabric_manager_failed", None): "critical"}


def test_an_active_fabric_managers_head_line_is_no_failure(tmp_path: Path) -> None:
    text = (
        "\u25cf nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
        "     Active: active (running) since Mon 2026-12-07 10:00:01 UTC; 2h ago\n"
    )
    assert capture_findings(tmp_path, text) == {}


def test_a_failed_persistence_daemon_unit_is_read(tmp_path: Path) -> None:
    text = "\u00d7 nvidia-persistenced.service - NVIDIA Persistence Daemon\n"
    found = capture_json(tmp_path, text)["findings"]  # read as systemctl's word, its verdict driver_state's
    assert isinstance(found, list) and [f["evidence"].get("kind") for f in found] == ["persistenced_failed"]


_IBV_INIT = (
    "hca_id: mlx5_7\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t28.39.3004\n"
    "\tnode_guid:\t\t\t0000:0000:0000:0000\n\tvendor_part_id:\t\t\t4126\n\tphys_port_cnt:\t\t\t1\n"
    "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_INIT (2)\n\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t4\n"
    "\t\t\tport_lid:\t\t65535\n\t\t\tlink_layer:\t\tInfiniBand\n\n"
)


def test_an_ib_port_in_init_is_a_port_no_subnet_manager_brought_up(tmp_path: Path) -> None:
    # the same listing pasted again, cut before its port: the first copy's port stays read
    for text in (_IBV_INIT, _IBV_INIT + "hca_id: mlx5_7\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t28.39.3004\n"):
        data = capture_json(tmp_path, text)
        found = data["findings"]
        assert isinstance(found, list) and len(found) == 1
        f = found[0]
        assert (f["cause"], f["severity"], f["module"]) == ("nic_port_down_undeclared", "warn", "mlx5_7 port 1")
        reading = str(f["evidence"]["reading"])
        assert "INIT" in reading and "no subnet manager" in reading and "node GUID reads zero" in reading


def _ibstat_ca(name: str, state: str, phys: str) -> str:
    return (
        f"CA '{name}'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.45.4028\n"
        f"\tPort 1:\n\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: 200\n\t\tLink layer: Ethernet\n"
    )


def test_a_dual_port_cards_second_function_switched_off_is_no_finding(tmp_path: Path) -> None:
    # mlx5 gives each port of a card a PCI function and a device: f0 up on both cards, f1 unused (rdma-core's names)
    text = (
        _ibstat_ca("roceP2p1s0f0", "Active", "LinkUp")
        + _ibstat_ca("roceP2p1s0f1", "Down", "Disabled")
        + _ibstat_ca("rocep1s0f0", "Active", "LinkUp")
    )
    code, data = doctor_text(tmp_path, text)
    assert code == 0 and [f for f in data["findings"] if f["severity"] != "info"] == []


def test_another_cards_same_function_up_still_says_the_rail_is_used(tmp_path: Path) -> None:
    text = _ibstat_ca("rocep1s0f1", "Active", "LinkUp") + _ibstat_ca("roceP2p1s0f1", "Down", "Disabled")
    assert capture_findings(tmp_path, text) == {("nic_port_down", "roceP2p1s0f1 port 1"): "critical"}


def test_ethtool_settings_are_read_past_its_cannot_get_lines(tmp_path: Path) -> None:
    text = "".join(
        f"$ ethtool {dev}\nSettings for {dev}:\nCannot get wake-on-lan settings: Operation not permitted\n"
        "\tLink detected: yes\n"
        for dev in ("enp24s0f0", "enp24s0f1")
    )
    code, data = doctor_text(tmp_path, text)
    assert code == 0 and data["findings"] == []
    assert any(s.get("check") == "nic_ports" and "2 NIC(s)" in str(s.get("summary")) for s in data["steps"])


def test_a_non_gpu_exporters_prometheus_text_is_read_not_judged(tmp_path: Path) -> None:
    text = (
        "# HELP slurm_gpus_alloc Allocated GPUs\n# TYPE slurm_gpus_alloc gauge\nslurm_gpus_alloc 21\n"
        "# HELP slurm_gpus_idle Idle GPUs\n# TYPE slurm_gpus_idle gauge\nslurm_gpus_idle -21\n"
        "# HELP slurm_gpus_total Total GPUs\n# TYPE slurm_gpus_total gauge\nslurm_gpus_total 0\n"
        "# TYPE slurm_gpus_utilization gauge\nslurm_gpus_utilization +Inf\n"
    )
    code, data = doctor_text(tmp_path, text)
    assert code == 0 and data["findings"] == []
    assert "prometheus-slurm-exporter" in str(data)


def _rereg(host: str, pid: int) -> str:
    event = "NET/IB : Got async event : client reregistration"
    return f"{host}:{pid}:{pid + 300} [0] transport/net_ib.cc:93 NCCL WARN {event}\n"


def test_client_reregistration_once_per_process_is_a_note_repeated_a_lead_on_its_host(tmp_path: Path) -> None:
    # one sweep reaches every rank once (one line each: fresh_o's healthy run); a process reached again is the SM
    # sweeping over and over
    once = "cn12:1:1 [0] NCCL INFO comm 0x5 rank 0 nranks 4 - Init COMPLETE\n" + "".join(
        _rereg("cn12", pid) for pid in (1329, 1330, 1331, 1332)
    )
    assert capture_findings(tmp_path, once) == {}
    found = capture_json(tmp_path, once + _rereg("cn12", 1330) + _rereg("cn12", 1330))["findings"]
    assert isinstance(found, list) and len(found) == 1
    assert (found[0]["cause"], found[0]["severity"], found[0]["module"]) == ("collective_runtime_error", "warn", "cn12 HCA")
    assert "subnet manager" in found[0]["title"] and "opensm" in found[0]["fix"]


def test_an_aer_excerpt_names_the_endpoint_whose_own_bits_it_shows(tmp_path: Path) -> None:
    text = (
        "[   36.764462][  T291] ath11k_pci 0000:01:00.0:    [ 0] RxErr                  (First)\n"
        "[   36.772366][  T291] pcieport 0000:00:00.0: AER: Multiple Correctable error message received from "
        "0000:00:00.0\n"
        "[   36.782543][  T291] pcieport 0000:00:00.0: PCIe Bus Error: severity=Correctable, type=Physical Layer, "
        "(Receiver ID)\n"
        "[   36.793249][  T291] pcieport 0000:00:00.0:   device [17cb:0115] error status/mask=00000001/0000e000\n"
        "[   36.802536][  T291] pcieport 0000:00:00.0:    [ 0] RxErr                  (First)\n"
    )
    found = capture_json(tmp_path, text)["findings"]
    assert isinstance(found, list) and [f["module"] for f in found] == ["0000:00:00.0"]
    assert "0000:01:00.0 (ath11k_pci" in str(found[0]["evidence"]["below"])


def _completion(dev: int, pid: int, peer: str, status: int = 12) -> str:
    return (
        f"cn07:{pid}:{pid + 9} [{dev}] transport/net_ib.cc:1698 NCCL WARN NET/IB : Got completion from peer {peer} "
        f"with status={status} opcode=129 len=47104 vendor err 129 (Recv) localGid fe80::1 remoteGidsfe80::2\n"
    )


def test_retry_exceeded_towards_one_peer_on_several_gpus_is_critical_one_alone_warns(tmp_path: Path) -> None:
    one = capture_findings(tmp_path, _completion(4, 1788, "10.7.0.50<46608>"))
    assert one == {("collective_runtime_error", "cn07 GPU 4"): "warn"}
    both = _completion(4, 1788, "10.7.0.50<46608>") + _completion(0, 1784, "10.7.0.50<36502>")
    assert capture_findings(tmp_path, both) == {
        ("nccl_peer_unreachable", "cn07 GPU 4"): "critical",
        ("nccl_peer_unreachable", "cn07 GPU 0"): "critical",
    }
    apart = _completion(4, 1788, "10.7.0.50<46608>") + _completion(0, 1784, "10.7.0.51<36502>")
    assert set(capture_findings(tmp_path, apart).values()) == {"warn"}  # two peers: no one path down


def test_ibstats_initializing_is_the_init_state_no_subnet_manager_moved(tmp_path: Path) -> None:
    text = _ibstat_ca("mlx5_0", "Initializing", "LinkUp").replace("Ethernet", "InfiniBand")
    found = capture_json(tmp_path, text)["findings"]
    assert isinstance(found, list) and [(f["cause"], f["severity"]) for f in found] == [("nic_port_down_undeclared", "warn")]
    assert "no subnet manager" in str(found[0]["evidence"]["reading"])


def test_a_failed_dcgm_unit_is_the_host_engine_down_an_active_one_nothing(tmp_path: Path) -> None:
    for text in (
        "\u00d7 nvidia-dcgm.service - NVIDIA DCGM service\n     Active: failed (Result: exit-code) since Tue\n",
        "\u25cf nvidia-dcgm.service - NVIDIA DCGM service\n     Loaded: loaded\n     Active: failed (Result: signal)\n",
        "Dec 01 09:12:44 node7 systemd[1]: Failed to start NVIDIA DCGM service.\n",
    ):
        assert capture_findings(tmp_path, text) == {("dcgm_hostengine_down", None): "warn"}
    active = "\u25cf nvidia-dcgm.service - NVIDIA DCGM service\n     Active: active (running) since Tue\n"
    assert capture_findings(tmp_path, active) == {}


def test_a_monitoring_daemon_not_running_is_one_severity_whichever_vendors(tmp_path: Path) -> None:
    """DCGM's host engine and Intel XPU Manager's xpumd not reachable are the same fact (the node's GPU monitoring
    is off; no module judged by it): one severity (KL1)."""
    dcgm = "$ dcgmi discovery -l\nError: Unable to connect to host engine. Host engine connection invalid/disconnected.\n"
    xpum = "$ xpumcli -v\nError: XPUM Service Status Error.\n"
    said = [set(capture_findings(tmp_path, text).items()) for text in (dcgm, xpum)]
    assert [{(module, severity) for (_, module), severity in s} for s in said] == [{(None, "warn")}] * 2
