"""Issue 46 (R3C): an RDMA port's transport error counters (sysfs hw_counters: drivers/infiniband/hw/mlx5/counters.c's
names), a node's interfaces as ifconfig / ip -s link print them (net-tools 2.10, its older form, iproute2), a PCIe
device's link from sysfs (drivers/pci/pci-sysfs.c's current_/max_link_speed/_width files) and NCCL's network over
loopback (src/misc/socket.cc's 'NET/Socket : Using [0]lo:127.0.0.1<0>'). Lines written here in those formats; healthy
ones stay clear."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_triples

HW = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters"


_doctor = doctor_triples  # tests/support/helpers.py


def _warns(found: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    return [f for f in found if f[1] in ("warn", "critical")]


@pytest.mark.parametrize(
    "name",
    [
        "local_ack_timeout_err",
        "packet_seq_err",
        "out_of_sequence",
        "rnr_nak_retry_err",
        "req_cqe_error",
        "resp_cqe_error",
        "implied_nak_seq_err",
    ],
)
@pytest.mark.parametrize("form", ["grep", "head"])
def test_an_rdma_transport_error_counter_warns_on_its_port(
    name: str, form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [("duplicate_request", 0), ("lifespan", 12), (name, 2705), ("np_cnp_sent", 1333)]
    if form == "grep":
        text = "\n".join(f"{HW}/{k}:{v}" for k, v in rows)
    else:
        text = "\n".join(f"==> {HW}/{k} <==\n{v}\n" for k, v in rows)
    code, found = _doctor(text, tmp_path, capsys)
    assert ("nic_errors", "warn", "mlx5_0 port 1") in found, found
    assert code != 2


def test_clean_hw_counters_and_congestion_counts_stay_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        ("local_ack_timeout_err", 12),  # a few, as a killed peer or a job's teardown leaves: not judged
        ("out_of_sequence", 3),
        ("np_cnp_sent", 1333),
        ("rp_cnp_handled", 900),
        ("np_ecn_marked_roce_packets", 52),
        ("packet_seq_err", 0),
    ]
    code, found = _doctor("\n".join(f"{HW}/{k}:{v}" for k, v in rows), tmp_path, capsys)
    assert code != 2 and not _warns(found), found


def _ifconfig(name: str, flags: str, rx_errors: int) -> str:
    return (
        f"{name}: flags=6211<{flags}>  mtu 4200\n"
        "        ether 94:6d:ae:c5:35:40  txqueuelen 1000  (Ethernet)\n"
        "        RX packets 8256561  bytes 1900535194 (1.7 GiB)\n"
        f"        RX errors {rx_errors}  dropped 0  overruns 0  frame 0\n"
        "        TX packets 13791345  bytes 2058386046 (1.9 GiB)\n"
        "        TX errors 0  dropped 0 overruns 0  carrier 0  collisions 0\n"
    )


def test_ifconfig_of_healthy_bond_slaves_is_read_not_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "\n".join(_ifconfig(f"eth{i}", "UP,BROADCAST,RUNNING,SLAVE,MULTICAST", 0) for i in range(3, 7))
    code, found = _doctor(text, tmp_path, capsys)
    assert code != 2 and not _warns(found), found


def test_rx_errors_on_a_bond_slave_warn_and_on_a_plain_interface_do_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = _doctor(_ifconfig("eth3", "UP,BROADCAST,RUNNING,SLAVE,MULTICAST", 41), tmp_path, capsys)
    assert ("nic_errors", "warn", "eth3") in [(c, s, m.split(" ")[0]) for c, s, m in found], found
    code, found = _doctor(_ifconfig("enp5s0", "UP,BROADCAST,RUNNING,MULTICAST", 41), tmp_path, capsys)
    assert code != 2 and not _warns(found), found


def test_old_ifconfig_and_ip_s_link_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = (
        "bond0     Link encap:Ethernet  HWaddr 00:11:22:33:44:55\n"
        "          UP BROADCAST RUNNING MASTER MULTICAST  MTU:9000  Metric:1\n"
        "          RX packets:1000 errors:7 dropped:0 overruns:0 frame:7\n"
        "          TX packets:1000 errors:0 dropped:0 overruns:0 carrier:0\n"
    )
    code, found = _doctor(old, tmp_path, capsys)
    assert any(c == "nic_errors" and m.startswith("bond0") for c, _, m in found), found
    ip = (
        "4: ib0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044 qdisc mq state UP mode DEFAULT group default qlen 256\n"
        "    link/infiniband 80:00:00:48:fe:80:00:00:00:00:00:00 brd 00:ff:ff:ff:ff:12\n"
        "    RX:  bytes packets errors dropped  missed   mcast\n"
        "     123456    1000      0      3       0       0\n"
        "    TX:  bytes packets errors dropped carrier collsns\n"
        "     654321    1000      0      0       0       0\n"
    )
    code, found = _doctor(ip, tmp_path, capsys)
    assert code != 2 and not _warns(found), found


def _sysfs(bus: str, speed: str, width: int, cap_speed: str, cap_width: int) -> str:
    files = {
        "current_link_speed": f"{speed} GT/s PCIe",
        "current_link_width": width,
        "max_link_speed": f"{cap_speed} GT/s PCIe",
        "max_link_width": cap_width,
    }
    return "\n".join(f"==> /sys/bus/pci/devices/{bus}/{k} <==\n{v}\n" for k, v in files.items())


def test_a_sysfs_link_narrower_than_its_max_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _sysfs("0000:01:00.0", "16.0", 8, "32.0", 16) + "\n" + _sysfs("0000:03:00.0", "32.0", 16, "32.0", 16)
    code, found = _doctor(text, tmp_path, capsys)
    assert ("pcie_link_downgraded", "warn", "0000:01:00.0") in found, found
    assert not [f for f in found if f[2] == "0000:03:00.0"], found


def test_grep_form_and_an_idle_speed_drop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bus = "0000:41:00.0"
    files = {
        "current_link_speed": "2.5 GT/s PCIe",
        "current_link_width": "16",
        "max_link_speed": "16.0 GT/s PCIe",
        "max_link_width": "16",
    }
    code, found = _doctor("\n".join(f"/sys/bus/pci/devices/{bus}/{k}:{v}" for k, v in files.items()), tmp_path, capsys)
    assert code != 2 and not _warns(found), found  # an idle link at full width: power saving (info at most)


NCCL = "host1:3048391:3048566 [0] NCCL INFO "


def test_nccl_network_on_loopback_only_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "\n".join(
        NCCL + m
        for m in (
            "NCCL_IB_DISABLE set by environment to 1.",
            "NCCL_SOCKET_IFNAME set by environment to lo",
            "NET/Socket : Using [0]lo:127.0.0.1<0>",
            "Using network Socket",
        )
    )
    code, found = _doctor(text, tmp_path, capsys)
    assert ("nccl_socket_wrong_interface", "warn", "host1") in found, found


def test_nccl_one_node_on_a_real_interface_stays_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "\n".join(
        NCCL + m for m in ("NET/IB : No device found.", "NET/Socket : Using [0]eth0:10.0.0.5<0>", "Using network Socket")
    )
    code, found = _doctor(text, tmp_path, capsys)
    assert code != 2 and not _warns(found), found


def test_nccl_tests_on_one_host_over_loopback_stay_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    head = [
        "# Using devices",
        "#   Rank  0 Pid  17754 on host1 device  0 [0x06] Tesla V100-SXM2-32GB",
        "#   Rank  1 Pid  17755 on host1 device  1 [0x07] Tesla V100-SXM2-32GB",
    ]
    text = "\n".join([*head, NCCL + "NET/IB : No device found.", NCCL + "NET/Socket : Using [0]lo:127.0.0.1<0>"])
    code, found = _doctor(text, tmp_path, capsys)
    assert code != 2 and not _warns(found), found


def test_rdma_statistic_transport_errors_warn_and_clean_ones_do_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = "link mlx5_0/1 rx_write_requests 0 out_of_sequence {} packet_seq_err 0 local_ack_timeout_err {} np_cnp_sent 9"
    code, found = _doctor(line.format(312, 27), tmp_path, capsys)
    assert ("nic_errors", "warn", "mlx5_0 port 1") in found, found
    code, found = _doctor(line.format(0, 0), tmp_path, capsys)
    assert code != 2 and not _warns(found), found
