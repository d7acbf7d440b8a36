"""R11B (issue 46): an Ethernet port switched off beside an InfiniBand fabric, and ibstat's abort on a device it
lists but cannot stat. Lines written in the tools' own formats: ibstat's CA blocks and IBPANIC line (linux-rdma
rdma-core infiniband-diags/ibstat.c, ibdiag_common.c: 'ibpanic: [PID] FUNC: MSG: %m') and ibv_devinfo's port blocks
(libibverbs/examples/devinfo.c)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_triples


def _loud(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> set[tuple[str, str, str]]:
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code != 2, text
    return {(cause, sev, module) for cause, sev, module in found if sev in ("warn", "critical")}


def _ca(n: int, model: str, state: str, phys: str, layer: str, rate: int) -> str:
    return (
        f"CA 'mlx5_{n}'\n\tCA type: {model}\n\tNumber of ports: 1\n\tFirmware version: 28.39.1002\n"
        f"\tHardware version: 0\n\tNode GUID: 0x946dae0300cde7{n:02x}\n\tSystem image GUID: 0x946dae0300cde7{n:02x}\n"
        f"\tPort 1:\n\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: {rate}\n\t\tBase lid: {n + 1}\n"
        f"\t\tLMC: 0\n\t\tSM lid: 1\n\t\tCapability mask: 0xa751e848\n\t\tPort GUID: 0x946dae0300cde7{n:02x}\n"
        f"\t\tLink layer: {layer}\n"
    )


_IB = "".join(_ca(n, "MT4129", "Active", "LinkUp", "InfiniBand", 400) for n in (0, 3, 4, 5))


def _eth(n: int, state: str, phys: str) -> str:
    return _ca(n, "MT4125", state, phys, "Ethernet", 100 if state == "Active" else 40).replace(
        "0x946dae0300cde7", "0x946dae0300c2b6"
    )


def test_ethernet_ports_off_beside_an_ib_fabric_are_no_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _IB + _eth(1, "Active", "LinkUp") + _eth(7, "Down", "Disabled") + _eth(8, "Down", "Disabled")
    assert _loud(text, tmp_path, capsys) == set()


def test_an_ib_rail_down_beside_its_peers_still_drains(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _IB + _ca(6, "MT4129", "Down", "Polling", "InfiniBand", 10) + _eth(7, "Down", "Disabled")
    loud = _loud(text, tmp_path, capsys)
    assert {(c, s) for c, s, _ in loud} == {("nic_port_down", "critical")}
    assert all("mlx5_6" in m for _, _, m in loud)


def test_ethernet_port_down_beside_a_fabric_all_down_still_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No InfiniBand port up: nothing tells which ports the node uses, each port down is judged (fresh_u's ibstatus)."""
    text = "".join(_ca(n, "MT4129", "Down", "Disabled", "InfiniBand", 10) for n in (3, 4)) + _eth(2, "Down", "Disabled")
    loud = _loud(text, tmp_path, capsys)
    assert {m.split()[0] for _, _, m in loud} == {"mlx5_3", "mlx5_4", "mlx5_2"}


def test_ethernet_ports_down_without_any_ib_port_still_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A RoCE-only listing has no InfiniBand fabric to set the Ethernet ports beside: its rules stand."""
    text = _eth(1, "Active", "LinkUp") + _eth(4, "Active", "LinkUp") + _eth(7, "Down", "Disabled")
    assert {c for c, _, _ in _loud(text, tmp_path, capsys)} == {"nic_port_down"}


@pytest.mark.parametrize("prefix", ["", "Dec  7 10:01:02 node1 gpud[311]: "])
def test_ibstat_abort_on_a_listed_device_is_a_note(prefix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ibstat's IBPANIC on one device (Azure's healthy AN VF mlx5_an0 gives it too): said, not judged; the rest read."""
    text = _IB + prefix + "ibpanic: [1400444] main: stat of IB device 'mlx5_8' failed: No such file or directory\n"
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code == 0 and not [f for f in found if f[1] in ("warn", "critical")]


def test_fresh_aw_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    aw = Path(__file__).parents[1] / "data" / "captures" / "fresh_aw"
    down = (aw / "ibstat_gpud_testdata_h100_eth_ports_down.txt").read_text()
    assert _loud(down, tmp_path, capsys) == set()


def _nd(t: str, iface: str, said: str, host: str = "gpu-node-07") -> str:
    return f"Aug 17 06:18:{t} {host} systemd-networkd[5398]: {iface}: {said}\n"


def _nm(t: str, iface: str, said: str) -> str:
    return (
        f"Aug 17 06:18:{t} gpu-node-07 NetworkManager[1201]: <info>  [1692253081.{t}00] device ({iface}): "
        f"carrier: link {said}\n"
    )


_HEALTHY = "".join(
    [
        "Aug 17 00:00:24 gpu-node-07 systemd[1]: logrotate.service: Deactivated successfully.\n",
        "Aug 17 00:00:24 gpu-node-07 systemd[1]: Finished Rotate log files.\n",
    ]
)


@pytest.mark.parametrize(
    "text",
    [
        "".join(_nd(f"{s:02d}", "ib6", "Lost carrier") + _nd(f"{s:02d}", "ib6", "Gained carrier") for s in range(4)),
        _HEALTHY
        + "".join(_nd("06", "ib6", "lost carrier") for _ in range(6))
        + "".join(_nd("06", "ib6", "Gained carrier") for _ in range(6)),
        "".join(_nm(f"{s:02d}", "ibp12s0", "disconnected") + _nm(f"{s:02d}", "ibp12s0", "connected") for s in range(3)),
    ],
)
def test_ib_carrier_flapping_is_warn_on_its_interface(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loud = _loud(text, tmp_path, capsys)
    assert {(c, s) for c, s, _ in loud} == {("nic_errors", "warn")}
    assert all(m.startswith("ib") for _, _, m in loud)


def test_ib_carrier_lost_and_not_back_is_warn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _nd("01", "ib2", "Gained carrier") + _nd("09", "ib2", "Lost carrier")
    assert {(c, s) for c, s, _ in _loud(text, tmp_path, capsys)} == {("nic_port_down_undeclared", "warn")}


@pytest.mark.parametrize(
    "text",
    [
        _HEALTHY,
        _HEALTHY + _nd("01", "ib0", "Lost carrier") + _nd("03", "ib0", "Gained carrier"),
        _HEALTHY
        + "".join(
            _nd(f"{s:02d}", "veth3f2a1b", "Lost carrier") + _nd(f"{s:02d}", "veth3f2a1b", "Gained carrier") for s in range(5)
        ),
    ],
)
def test_healthy_syslog_is_read_and_clear(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _loud(text, tmp_path, capsys) == set()


def test_fresh_aw_syslog_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    aw = Path(__file__).parents[1] / "data" / "captures" / "fresh_aw"
    flaps = (aw / "syslog_azhpchc_testdata_ib6_carrier_flaps.txt").read_text()
    assert _loud(flaps, tmp_path, capsys) == {("nic_errors", "warn", "ib6")}
    assert _loud((aw / "syslog_azhpchc_testdata_no_ib_flaps.txt").read_text(), tmp_path, capsys) == set()


def test_ethtool_per_queue_counters_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """bnx2x's ethtool -S prints each queue's counters as '[N]: name: value' (bnx2x_ethtool.c): read, none judged."""
    rows = [
        f"     [{q}]: {name}: {v}\n"
        for q in (0, 1)
        for name, v in (("rx_bytes", 209487403324), ("rx_discards", 0), ("rx_csum_offload_errors", 0), ("tx_bytes", 5868368))
    ]
    code, found = doctor_triples("$ ethtool -S eth0\nNIC statistics:\n" + "".join(rows), tmp_path, capsys)
    assert code == 0 and found == []
