"""RDMA tools' listings read into the same NIC records a live node's sysfs gives (issue 47):
ibstat, ibv_devinfo -v and ibdev2netdev, as the tools print them."""

from __future__ import annotations

import pytest

from gpuvet.captures import nic_tools
from gpuvet.captures.text import clean
from gpuvet.checks import nics

IBSTAT = """CA 'mlx5_0'
	CA type: MT4129
	Number of ports: 1
	Firmware version: 28.39.1002
	Hardware version: 0
	Node GUID: 0xb83fd20300a1b2c4
	System image GUID: 0xb83fd20300a1b2c4
	Port 1:
		State: Active
		Physical state: LinkUp
		Rate: 400
		Base lid: 12
		LMC: 0
		SM lid: 1
		Capability mask: 0xa751e848
		Port GUID: 0xb83fd20300a1b2c4
		Link layer: InfiniBand
CA 'mlx5_1'
	CA type: MT4129
	Number of ports: 1
	Firmware version: 28.39.1002
	Hardware version: 0
	Node GUID: 0xb83fd20300a1b2c5
	System image GUID: 0xb83fd20300a1b2c5
	Port 1:
		State: Down
		Physical state: Polling
		Rate: 10
		Base lid: 65535
		LMC: 0
		SM lid: 0
		Capability mask: 0xa751e848
		Port GUID: 0xb83fd20300a1b2c5
		Link layer: InfiniBand
"""

IBV_DEVINFO = """hca_id:	mlx5_2
	transport:			InfiniBand (0)
	fw_ver:				20.31.1014
	node_guid:			0c42:a103:00d3:1a2e
	sys_image_guid:			0c42:a103:00d3:1a2e
	vendor_id:			0x02c9
	vendor_part_id:			4123
	hw_ver:				0x0
	board_id:			MT_0000000223
	phys_port_cnt:			1
		port:	1
			state:			PORT_ACTIVE (4)
			max_mtu:		4096 (5)
			active_mtu:		4096 (5)
			sm_lid:			1
			port_lid:		7
			port_lmc:		0x00
			link_layer:		InfiniBand
			max_msg_sz:		0x40000000
			active_width:		4X (2)
			active_speed:		25.0 Gbps (32)
			phys_state:		LINK_UP (5)
			GID[  0]:		fe80:0000:0000:0000:0c42:a103:00d3:1a2e
"""

IBDEV2NETDEV = """mlx5_0 port 1 ==> ibp24s0 (Up)
mlx5_1 port 1 ==> ibp40s0 (Down)
mlx5_2 port 1 ==> ibp56s0 (Up)
"""


def _parse(text: str) -> nic_tools.NicToolsParse:
    parsed, claimed = nic_tools.parse(clean(text).lines)
    assert claimed, text[:40]
    return parsed


def test_ibstat_gives_each_ca_its_ports():
    parsed = _parse(IBSTAT)
    assert parsed.kinds == ["ibstat"]
    first, second = parsed.nics
    assert (first.device, first.hca_type, first.firmware) == ("mlx5_0", "MT4129", "28.39.1002")
    assert [(p.port, p.state, p.phys_state, p.rate_gbps, p.link_layer) for p in first.ports] == \
        [(1, "ACTIVE", "LinkUp", 400.0, "InfiniBand")]
    assert second.ports[0].state == "DOWN" and second.ports[0].phys_state == "Polling"


def test_ibv_devinfo_rate_is_lane_speed_times_width_and_the_part_names_the_model():
    [nic] = _parse(IBV_DEVINFO).nics
    assert nic.hca_type == "MT4123" and nic.firmware == "20.31.1014"  # ConnectX-6
    assert [(p.state, p.phys_state, p.rate_gbps, p.width) for p in nic.ports] == [("ACTIVE", "LinkUp", 100.0, "4X")]


def test_a_lone_captured_card_is_not_judged_on_the_catalogs_top_speed():
    """A ConnectX-6 at 100 Gb/s may be a 100G card: without a design or peers, no rate verdict."""
    assert nics.ports(nic_tools_readings(IBV_DEVINFO)) == []


def nic_tools_readings(text: str) -> nics.NicReadings:
    from gpuvet.backends.nic_readings import NicReadings

    return NicReadings(tuple(_parse(text).nics), None, "capture", captured=True)


def test_ibdev2netdev_alone_says_nothing_of_the_ports_state():
    """Its (Down) is the netdev's: an IPoIB netdev reads Down on a pure InfiniBand fabric."""
    text = "mlx5_0   port  1  ==>  ibp26s0        (Down)  # CX-7 1/8 infiniband\n" \
           "mlx5_1   port  1  ==>  enp27s0f0np0   (Up)    # CX-6 ethernet\n"
    parsed = _parse(text)
    assert [(n.device, n.netdevs, n.ports[0].state) for n in parsed.nics] == \
        [("mlx5_0", ("ibp26s0",), "unknown"), ("mlx5_1", ("enp27s0f0np0",), "unknown")]
    assert nics.ports(nic_tools_readings(text)) == []


def test_ibstat_with_ibdev2netdev_names_the_netdevs_and_a_down_port_is_found():
    parsed = _parse(IBSTAT + IBDEV2NETDEV)
    assert parsed.kinds == ["ibstat", "ibdev2netdev"]
    assert [n.netdevs for n in parsed.nics] == [("ibp24s0",), ("ibp40s0",), ("ibp56s0",)]
    verdicts = nics.ports(nic_tools_readings(IBSTAT + IBDEV2NETDEV))
    assert [(v.kind, v.nic) for v in verdicts] == [("nic_port_down", "mlx5_1")]  # mlx5_0, its model, is Active


def test_one_device_in_two_tools_is_one_device():
    both = IBSTAT.split("CA 'mlx5_1'")[0] + IBV_DEVINFO.replace("mlx5_2", "mlx5_0").replace("4123", "4129")
    parsed = _parse(both)
    assert [n.device for n in parsed.nics] == ["mlx5_0"] and parsed.nics[0].ports[0].rate_gbps == 400.0


def test_text_that_is_not_an_rdma_listing_is_not_claimed():
    parsed, claimed = nic_tools.parse(clean("GPU 00000000:18:00.0\n    Product Name : NVIDIA H100\n").lines)
    assert parsed.nics == [] and claimed == set()


def _doctor(capsys, tmp_path, text: str, *args: str):
    import json

    from gpuvet.cli.app import main

    path = tmp_path / "ibstat.txt"
    path.write_text(text)
    code = main(["doctor", *args, "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, json.loads(out)


def test_doctor_from_ibstat_names_the_port_that_is_down(capsys, tmp_path):
    code, data = _doctor(capsys, tmp_path, IBSTAT + IBDEV2NETDEV, "interconnect-slow")
    found = [(f["cause"], f["evidence"].get("nic")) for f in data["findings"]]
    assert code == 1 and found == [("nic_port_down", "mlx5_1")], data["findings"]
    # no design given, but mlx5_0 of its model is Active beside it: the node uses the rail (review 55 F4)
    assert data["findings"][0]["severity"] == "critical"


def test_doctor_from_a_healthy_ibstat_is_clear_and_cites_each_port(capsys, tmp_path):
    healthy = IBSTAT.split("CA 'mlx5_1'")[0]
    code, data = _doctor(capsys, tmp_path, healthy, "interconnect-slow", "--all")
    step = next(s for s in data["steps"] if s["check"] == "nic_ports")
    assert step["status"] == "clear" and step["evidence"][0]["value"] == "ACTIVE 400 Gb/s", step
    assert not [f for f in data["findings"] if f["cause"].startswith("nic")]


FABRIC_Q = """GPU 00000000:1B:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Fabric
        State                             : {state}
        Status                            : {status}
        CliqueId                          : 32766
        ClusterUUID                       : 5b7c1a0e-0000-4000-8000-00000000aa01
        Health
            Bandwidth                     : Full
"""


@pytest.mark.parametrize(("state", "status", "words"), [
    ("In Progress", "N/A", "fabric state In Progress: not registered with the NVLink fabric"),
    ("Completed", "Insufficient Resources", "fabric status Insufficient Resources"),
])
def test_a_captured_fabric_section_that_did_not_complete_is_a_finding(capsys, tmp_path, state, status, words):
    code, data = _doctor(capsys, tmp_path, FABRIC_Q.format(state=state, status=status), "interconnect-slow")
    [found] = data["findings"]
    assert code == 1 and found["cause"] == "fabric_unregistered" and found["severity"] == "critical"
    assert found["module"] == "0000:1B:00.0" and found["evidence"]["reading"].startswith(words)


def test_a_completed_fabric_section_is_clear_and_cited(capsys, tmp_path):
    code, data = _doctor(capsys, tmp_path, FABRIC_Q.format(state="Completed", status="Success"),
                         "interconnect-slow", "--all")
    step = next(s for s in data["steps"] if s["check"] == "fabric_registration")
    assert step["status"] == "clear" and step["evidence"][0]["value"] == "Completed / Success"
    assert not [f for f in data["findings"] if f["cause"] == "fabric_unregistered"]


def test_a_device_box_gives_each_columns_board_id_and_firmware_and_no_port_state() -> None:
    # gpud's key | value box, a column per RDMA device; made-up ids
    box = ("+----------------------+---------------+---------------+\n"
           "|        Device        |    mlx5_0     |    mlx5_1     |\n"
           "|       Board ID       | MT_0000000838 | MT_0000000839 |\n"
           "|   Firmware Version   |  28.41.1000   |  28.39.2048   |\n"
           "|     Port 1 Name      |    ibp12s0    |    ibp13s0    |\n"
           "+----------------------+---------------+---------------+\n")
    got = {n.device: (n.board_id, n.firmware, n.ports[0].state) for n in _parse(box).nics}
    assert got == {"mlx5_0": ("MT_0000000838", "28.41.1000", "unknown"),
                   "mlx5_1": ("MT_0000000839", "28.39.2048", "unknown")}
    nameless, _ = nic_tools.parse(clean(box.replace("Device  ", "Name    ")).lines)
    assert not nameless.nics  # a box that names no device is no listing
