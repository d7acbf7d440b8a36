"""doctor never merges two places into one finding (issue 46: never merge without a word): two NIC ports
down are two findings, each with its port as its subject; one bus id on two hosts of a pdsh/syslog log
is two modules, each with its host. A log of one host reads as it always did (no host key)."""

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main


def _port(ca: str, guid: int, state: str, phys: str, rate: int, port: int = 1) -> str:
    return (f"\tPort {port}:\n\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: {rate}\n\t\tBase lid: {guid}\n"
            f"\t\tLMC: 0\n\t\tSM lid: 1\n\t\tCapability mask: 0x2651e848\n\t\tPort GUID: 0x0c42a10300aa{guid:04x}\n"
            "\t\tLink layer: InfiniBand\n")


def _ca(name: str, guid: int, ports: list[str]) -> str:
    return (f"CA '{name}'\n\tCA type: MT4123\n\tNumber of ports: {len(ports)}\n\tFirmware version: 20.31.1014\n"
            f"\tHardware version: 0\n\tNode GUID: 0x0c42a10300aa{guid:04x}\n"
            f"\tSystem image GUID: 0x0c42a10300aa{guid:04x}\n" + "".join(ports))


def _doctor(tmp_path: Path, name: str, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    path = tmp_path / name
    path.write_text(text)
    main(["doctor", "--from", str(path), "--json"])
    data = json.loads(capsys.readouterr().out)
    main(["doctor", "--from", str(path)])
    return data, capsys.readouterr().out


def test_two_ports_down_are_two_findings(tmp_path, capsys):
    """ibstat of mlx5_0 and mlx5_3 down beside an Active mlx5_1: both ports named, in text and --json."""
    text = (_ca("mlx5_0", 1, [_port("mlx5_0", 1, "Down", "Disabled", 10)])
            + _ca("mlx5_1", 2, [_port("mlx5_1", 2, "Active", "LinkUp", 200)])
            + _ca("mlx5_3", 4, [_port("mlx5_3", 4, "Down", "Polling", 10)]))
    data, out = _doctor(tmp_path, "ibstat.txt", text, capsys)
    down = [f for f in data["findings"] if f["cause"] == "nic_port_down"]
    assert sorted(f["module"] for f in down) == ["mlx5_0 port 1", "mlx5_3 port 1"]
    assert all("host" not in f for f in data["findings"])
    assert "2 cause(s) found" in out and "mlx5_0 port 1 nic port down" in out and "mlx5_3 port 1 nic port down" in out


def test_two_ports_of_one_card_are_two_findings(tmp_path, capsys):
    """A dual-port HCA with both ports slower than their peers: port 1 and port 2, never one finding."""
    text = (_ca("mlx5_0", 1, [_port("mlx5_0", 1, "Active", "LinkUp", 100), _port("mlx5_0", 5, "Active", "LinkUp", 100,
                                                                                  port=2)])
            + "".join(_ca(f"mlx5_{i}", 10 + i, [_port("x", 10 + i, "Active", "LinkUp", 200)]) for i in (1, 2, 3)))
    data, _ = _doctor(tmp_path, "ibstat.txt", text, capsys)
    slow = sorted(f["module"] for f in data["findings"] if f["cause"] == "nic_rate_low")
    assert slow == ["mlx5_0 port 1", "mlx5_0 port 2"]


_XID = "[ {t}] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n"


def test_one_bus_id_on_two_hosts_is_two_findings(tmp_path, capsys):
    """pdsh's 'node1: ' and 'node2: ' before the same bus id: two hosts' modules, each with its host."""
    text = "".join(f"node{h}: " + _XID.format(t=f"{1234 + h}.5") for h in (1, 2)) * 2
    data, out = _doctor(tmp_path, "xid.log", text, capsys)
    lost = [f for f in data["findings"] if f["cause"] == "module_fell_off_bus"]
    assert sorted((f["host"], f["module"]) for f in lost) == [("node1", "0000:3B:00.0"), ("node2", "0000:3B:00.0")]
    assert {f["host"]: f["evidence"]["log"][:10] for f in lost} == {"node1": "[ 1235.5] ", "node2": "[ 1236.5] "}
    assert sorted(r["subject"] for r in data["roots"]) == ["node1 0000:3B:00.0", "node2 0000:3B:00.0"]
    assert "2 cause(s) found" in out and "node1 0000:3B:00.0 lost" in out and "node2 0000:3B:00.0 lost" in out


def test_syslog_of_two_hosts_is_two_findings(tmp_path, capsys):
    """A central syslog's host field names the host the same way."""
    text = "".join(f"Dec  6 10:00:0{h} gpu-node{h} kernel: " + _XID.format(t=f"{1234 + h}.5") for h in (1, 2, 1, 2))
    data, _ = _doctor(tmp_path, "syslog.txt", text, capsys)
    hosts = sorted(f["host"] for f in data["findings"] if f["cause"] == "module_fell_off_bus")
    assert hosts == ["gpu-node1", "gpu-node2"]


def test_driver_messages_of_two_hosts_are_counted_per_host(tmp_path, capsys):
    """The driver's messages are counted per module: per host's module where the log names two hosts, and a
    bus loss said without an Xid line on node2 is node2's, not folded into node1's Xid 79."""
    init = "".join(f"node{h}: [    5.{h}] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x62:0x55:2477)\n"
                   for h in (1, 2, 1, 2, 1))
    data, _ = _doctor(tmp_path, "init.log", init, capsys)
    failed = sorted((f["host"], f["evidence"]["times"]) for f in data["findings"] if f["cause"] == "module_init_failed")
    assert failed == [("node1", 3), ("node2", 2)]
    off = ("node1: " + _XID.format(t="1.5") + "node2: [ 1.6] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n"
           "node1: [ 1.7] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n") * 2
    data, _ = _doctor(tmp_path, "off.log", off, capsys)
    assert sorted(f["host"] for f in data["findings"] if f["cause"] == "module_fell_off_bus") == ["node1", "node2"]


@pytest.mark.parametrize("prefix", ["", "node1: "])
def test_a_log_of_one_host_is_unchanged(tmp_path, capsys, prefix):
    """No host named, or one host named: the module alone, no 'host' key, as before."""
    data, out = _doctor(tmp_path, "xid.log", "".join(prefix + _XID.format(t=f"{t}.5") for t in (10, 11, 12)), capsys)
    lost = [f for f in data["findings"] if f["cause"] == "module_fell_off_bus"]
    assert [f["module"] for f in lost] == ["0000:3B:00.0"] and "host" not in lost[0]
    assert "1 cause(s) found" in out and "critical 0000:3B:00.0 lost" in out


def test_the_ledger_keeps_each_hosts_module_apart(tmp_path, capsys):
    """doctor --logbook keeps 'node1 0000:3B:00.0' and 'node2 0000:3B:00.0' apart: never one module of this node."""
    from gpuvet.logbook.store import Logbook

    path = tmp_path / "xid.log"
    path.write_text("".join(f"node{h}: " + _XID.format(t=f"{1234 + h}.5") for h in (1, 2)) * 2)
    main(["doctor", "--from", str(path), "--logbook", str(tmp_path / "lb.db"), "--json"])
    capsys.readouterr()
    book = Logbook(tmp_path / "lb.db", existing=True)
    try:
        rows = book.ledger_rows(checks=False).findings
    finally:
        book.close()
    assert sorted(r.slot or "" for r in rows) == ["node1 0000:3B:00.0", "node2 0000:3B:00.0"]


def _cx6(bus: str) -> str:
    return (f"{bus} Ethernet controller: Mellanox Technologies MT2892 Family [ConnectX-6 Dx]\n"
            "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
            "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n"
            "\t\tLnkSta:\tSpeed 16GT/s (ok), Width x8 (downgraded)\n\n")


def test_two_cards_links_below_their_capability_are_two_findings(tmp_path, capsys):
    """lspci of two ConnectX-6 Dx cards each trained x8 of x16: each card (its bus id) is its finding's subject."""
    data, _ = _doctor(tmp_path, "lspci.txt", _cx6("b3:00.0") + _cx6("c3:00.0"), capsys)
    below = sorted(f["module"] for f in data["findings"] if f["cause"] == "nic_pcie_below_cap")
    assert len(below) == 2 and "0000:B3:00.0" in below[0] and "0000:C3:00.0" in below[1]
