"""Issue 46 (batch BI, FX68E): the NIC and fabric tools' outputs read as their class. Inputs written in the tools'
own layouts: libfabric's fi_info (util/info.c: the default form, -v's fi_tostr dump, -l), the efa driver's
hw_counters names (drivers/infiniband/hw/efa/efa_verbs.c), rdma-core's ibv_devinfo, nvidia-smi -q's Fabric section
(its Health fields, CliqueId, ClusterUUID)."""

from __future__ import annotations

import time
from pathlib import Path

from gpuvet.captures import efa_counters, fi_info
from gpuvet.captures.text import Line
from tests.support.helpers import capture_findings, capture_json


def _lines(text: str) -> list[Line]:
    return [Line(i + 1, t) for i, t in enumerate(text.splitlines())]


def _entry(provider: str, fabric: str, domain: str, ep: str, proto: str) -> str:
    return (f"provider: {provider}\n    fabric: {fabric}\n    domain: {domain}\n    version: 120.0\n"
            f"    type: {ep}\n    protocol: {proto}\n")


_TCP = _entry("tcp", "192.168.0.0/24", "eth0", "FI_EP_MSG", "FI_PROTO_SOCK_TCP")
_VERBS = _entry("verbs", "IB-0xfe80000000000000", "mlx5_0", "FI_EP_MSG", "FI_PROTO_RDMA_CM_IB_RC")
_EFA = (_entry("efa", "efa", "rdmap16s27-rdm", "FI_EP_RDM", "FI_PROTO_EFA")
        + _entry("efa", "efa", "rdmap16s27-dgrm", "FI_EP_DGRAM", "FI_PROTO_EFA"))


def test_fi_info_default_form_names_providers_and_rdma_devices() -> None:
    got = fi_info.parse(_lines(_VERBS + _TCP + _EFA))
    assert got.kinds == [fi_info.KIND]
    assert [n.device for n in got.nics] == ["mlx5_0", "rdmap16s27"]  # tcp's eth0 is no RDMA device
    assert "provider tcp on fabric 192.168.0.0/24: eth0 (FI_EP_MSG, FI_PROTO_SOCK_TCP, v120.0)" in got.notes[0]
    assert got.claimed == set(range(1, 25))


_VERBOSE = """\
---
fi_info:
    caps: [ FI_MSG, FI_RMA ]
    mode: [  ]
    ep_attr:
        type: FI_EP_RDM
        protocol: FI_PROTO_EFA
        protocol_version: 4
    domain_attr:
        domain: 0x0
        name: efa_1-rdm
    fabric_attr:
        name: efa
        prov_name: efa
        prov_version: 122.0
    nic:
        device_attr:
            name: efa_9
"""


def test_fi_info_verbose_form_reads_each_block_by_its_attribute() -> None:
    got = fi_info.parse(_lines(_VERBOSE))
    assert [n.device for n in got.nics] == ["efa_1"]  # domain_attr's name, not nic's nor domain's 0x0
    assert got.notes == ["fi_info: 1 entry: provider efa on fabric efa: efa_1-rdm (FI_EP_RDM, FI_PROTO_EFA, v122.0)"]
    assert got.claimed == set(range(1, 19))


def test_fi_info_list_form_names_providers() -> None:
    got = fi_info.parse(_lines("$ fi_info -l\npsm3:\n    version: 1.0\nshm:\n    version: 200.0\n"))
    assert got.notes == ["fi_info -l: providers psm3 1.0, shm 200.0"]


def test_a_healthy_listing_is_clean_and_in_the_inventory(tmp_path: Path) -> None:
    assert not capture_findings(tmp_path, _EFA)
    inv = capture_json(tmp_path, _EFA, cmd="inventory")
    assert [n["device"] for n in inv["nics"]] == ["rdmap16s27"]  # type: ignore[index]
    assert any("provider efa on fabric efa" in n for n in inv["notes"])  # type: ignore[union-attr]


def test_fi_getinfo_finding_no_provider_is_said_and_judged_once(tmp_path: Path) -> None:
    text = "$ fi_info -p verbs\nfi_getinfo: -61 (No data available)\n"
    got = fi_info.parse(_lines(text))
    assert got.notes == ["fi_info -p verbs: fi_getinfo found no provider verbs (-61, No data available)"]
    assert 2 not in got.claimed  # the failure is the RDMA verbs lines' to judge
    assert capture_findings(tmp_path, text) == {("rdma_setup_failed", None): "warn"}


def _efa_block(title: str, **errors: int) -> str:
    counts = {"submitted_cmds": 40, "completed_cmds": 40, "cmds_err": 0, "keep_alive_rcvd": 9, "alloc_pd_err": 0,
              "create_qp_err": 0, "mmap_err": 0, "tx_pkts": 12, "rx_pkts": 12, "rx_drops": 0,
              "rdma_read_resp_bytes": 4096, "rdma_read_wr_err": 0, "retrans_timeout_events": 0,
              "impaired_remote_conn_events": 0, "lifespan": 12, **errors}
    return f"{title}\n-----------\n" + "".join(f"{k}: {v}\n" for k, v in counts.items())


def test_efa_counters_of_zero_are_read_and_clean(tmp_path: Path) -> None:
    text = _efa_block("node-a") + "\n" + _efa_block("node-b")
    got = efa_counters.parse(_lines(text))
    assert [n.device for n in got.nics] == ["node-a", "node-b"]
    assert got.notes[0].startswith("EFA hw_counters of node-a: 8 error counter(s) read, all zero")
    assert got.claimed == set(range(1, len(text.splitlines()) + 1)) - {18}  # the blank line between
    assert not capture_findings(tmp_path, text)


def test_efa_error_counters_above_zero_warn_and_traffic_does_not(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, _efa_block("efa_0", rdma_read_resp_bytes=10**9, retrans_timeout_events=7))
    assert found == {("nic_errors", "efa_0 port 1"): "warn"}
    assert not capture_findings(tmp_path, _efa_block("efa_0", rdma_read_resp_bytes=10**9, completed_cmds=10**6))


def test_efa_counters_by_sysfs_path_name_their_device(tmp_path: Path) -> None:
    base = "/sys/class/infiniband/efa_2/ports/1/hw_counters/"
    text = "".join(f"{base}{k}:{v}\n" for k, v in (("cmds_err", 0), ("rx_drops", 5), ("tx_pkts", 9)))
    assert capture_findings(tmp_path, text) == {("nic_errors", "efa_2 port 1"): "warn"}


def test_ena_ethtool_names_alone_are_no_efa_block() -> None:
    assert not efa_counters.parse(_lines("rx_drops: 3\ntx_bytes: 100\nrx_pkts: 4\n")).nics


def test_ibv_devinfo_finding_no_device_is_one_finding_not_a_perftest_run(tmp_path: Path) -> None:
    text = ("root@host:~# ibv_devinfo\nlibibverbs: Warning: couldn't open config directory '/etc/libibverbs.d'.\n"
            "No IB devices found\n")
    assert capture_findings(tmp_path, text) == {("rdma_no_usable_device", None): "warn"}
    [f] = capture_json(tmp_path, text)["findings"]  # type: ignore[misc]
    assert "providers' config directory /etc/libibverbs.d" in f["evidence"]["log"]


def test_perftest_finding_no_device_stays_perftest_s(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, "$ ib_write_bw -d mlx5_0 10.0.0.2\nNo IB devices found\n")
    assert "rdma_test_failed" in {c for c, _ in found}


def _fabric(state: str, status: str, summary: str, **health: str) -> str:
    fields = {"Bandwidth": "Full", "Route Recovery in progress": "False", "Route Unhealthy": "False",
              "Access Timeout Recovery": "False", **health}
    return ("GPU 00000000:18:00.0\n    Product Name                          : NVIDIA GB200\n    Fabric\n"
            f"        State                             : {state}\n        Status                            : {status}\n"
            "        CliqueId                          : 7\n"
            "        ClusterUUID                       : 11111111-2222-3333-4444-555555555555\n        Health\n"
            + "".join(f"            {k:<30}: {v}\n" for k, v in fields.items())
            + f"            Summary                       : {summary}\n")


def test_a_registered_module_on_an_unhealthy_fabric_is_degraded_not_unregistered(tmp_path: Path) -> None:
    text = _fabric("Completed", "Success", "Unhealthy", **{"Route Recovery in progress": "True"})
    data = capture_json(tmp_path, text)
    [f] = data["findings"]  # type: ignore[misc]
    assert (f["cause"], f["severity"]) == ("fabric_degraded", "warn")
    assert "Route Recovery in progress True" in f["evidence"]["reading"]
    assert f["evidence"]["clique"] == "CliqueId 7, ClusterUUID 11111111-2222-3333-4444-555555555555"


def test_an_unregistered_module_stays_critical_and_a_healthy_one_clean(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, _fabric("In Progress", "N/A", "Unhealthy"))
    assert set(found.values()) == {"critical"} and {c for c, _ in found} == {"fabric_unregistered"}
    assert not capture_findings(tmp_path, _fabric("Completed", "Success", "Healthy"))


def test_the_clique_reaches_the_inventory(tmp_path: Path) -> None:
    inv = capture_json(tmp_path, _fabric("Completed", "Success", "Healthy"), cmd="inventory")
    assert any("CliqueId 7, ClusterUUID 11111111-2222-3333-4444-555555555555" in n
               for n in inv["notes"])  # type: ignore[union-attr]


def _cpu(f: object, *args: object) -> float:
    start = time.process_time()
    f(*args)  # type: ignore[operator]
    return time.process_time() - start


def test_hostile_lines_read_in_linear_time() -> None:
    long_line = [Line(1, "provider: " + "a" * 100_000), Line(2, "    fabric: " + "x:" * 50_000),
                 Line(3, "cmds_err " + "9" * 100_000)]
    fi_info.parse(long_line), efa_counters.parse(long_line)
    small = _lines((_EFA + _efa_block("x")) * 1_000)
    big = _lines((_EFA + _efa_block("x")) * 10_000)
    ratio = (_cpu(fi_info.parse, big) + _cpu(efa_counters.parse, big)) / \
        max(_cpu(fi_info.parse, small) + _cpu(efa_counters.parse, small), 1e-3)
    assert ratio < 30


_MLXCONFIG = """\
$ sudo mlxconfig -d /dev/mst/mt4119_pciconf0 query

Device #1:
----------

Device type:    ConnectX5
Name:           MCX556A-ECA_Ax
Description:    ConnectX-5 VPI adapter card; EDR IB (100Gb/s) and 100GbE; dual-port QSFP28
Device:         0000:3b:00.0

Configurations:                              Next Boot
         SRIOV_EN                            True(1)
         NUM_OF_VFS                          8
         LINK_TYPE_P1                        IB(1)
"""


def test_mlxconfig_query_names_the_card_and_its_settings(tmp_path: Path) -> None:
    inv = capture_json(tmp_path, _MLXCONFIG, cmd="inventory")
    [nic] = inv["nics"]  # type: ignore[misc]
    assert (nic["model"], nic["bus_id"]) == ("ConnectX-5", "0000:3b:00.0")
    assert any("3 configuration(s) read (SRIOV_EN True(1), NUM_OF_VFS 8, LINK_TYPE_P1 IB(1))" in n
               for n in inv["notes"])  # type: ignore[union-attr]
    assert not capture_findings(tmp_path, _MLXCONFIG)


def test_an_unsupported_device_is_the_tool_s_limit_not_a_fault(tmp_path: Path) -> None:
    text = ("# mstconfig -d 0000:81:00.0 query\n-E- Unsupported device\n\n# mstconfig query | grep Device\nDevice #1:\n"
            "Device type:    ConnectX3Pro\nDevice:         /sys/bus/pci/devices/0000:81:00.0/config\n")
    data = capture_json(tmp_path, text)
    assert not data["findings"]
    notes = " ".join(data["notes"])  # type: ignore[arg-type]
    assert "'-E- Unsupported device' (1 time(s))" in notes and "no fault of the card" in notes
    assert "mstflint 4.26 dropped ConnectX-3" in notes
    assert "text naming GPUs" not in notes


_LSPCI_NICS = ("$ lspci | grep -i -e mellanox -e ethernet\n"
               "17:00.0 Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n"
               "5d:00.0 Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n")
_RDMA_LINKS = ("$ rdma link show\nlink mlx5_0/1 state ACTIVE physical_state LINK_UP\n"
               "link mlx5_1/1 state ACTIVE physical_state LINK_UP\n")


def test_lspci_names_the_model_of_the_rdma_devices_beside_it(tmp_path: Path) -> None:
    inv = capture_json(tmp_path, _LSPCI_NICS + _RDMA_LINKS, cmd="inventory")
    assert [(n["device"], n["model"]) for n in inv["nics"]] == [  # type: ignore[index, union-attr]
        ("mlx5_0", "ConnectX-7"), ("mlx5_1", "ConnectX-7")]


def test_lspci_alone_lists_its_nic_functions(tmp_path: Path) -> None:
    inv = capture_json(tmp_path, _LSPCI_NICS, cmd="inventory")
    assert [(n["device"], n["model"]) for n in inv["nics"]] == [  # type: ignore[index, union-attr]
        ("17:00.0", "ConnectX-7"), ("5d:00.0", "ConnectX-7")]


def test_lspci_of_two_models_names_no_device(tmp_path: Path) -> None:
    text = _LSPCI_NICS + "3b:00.0 Ethernet controller: Broadcom Inc. and subsidiaries BCM57508 NetXtreme-E\n" + _RDMA_LINKS
    inv = capture_json(tmp_path, text, cmd="inventory")
    assert {n["device"]: n["model"] for n in inv["nics"]}["mlx5_0"] == "unknown"  # type: ignore[index, union-attr]


_GPUD = ('{"level":"info","ts":"2025-06-05T18:00:13Z","caller":"fabric-manager/component.go:163",'
         '"msg":"checking nvidia fabric manager"}\n')


def test_gpud_s_fabric_manager_check_is_said_and_clear(tmp_path: Path) -> None:
    for reason in ("NVSwitch not detected, skipping fabric manager check", "NVIDIA L4 does not support fabric manager",
                   "fabric manager found and active"):
        data = capture_json(tmp_path, _GPUD + reason + "\n")
        assert not data["findings"], reason
        [step] = [s for s in data["steps"] if s["check"] == "fabric_manager"]  # type: ignore[union-attr]
        assert step["status"] == "clear", reason


def test_gpud_s_inactive_fabric_manager_fails(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, _GPUD + "nv-fabricmanager found but fabric manager service is not active\n")
    assert found == {("fabric_manager_failed", None): "critical"}
