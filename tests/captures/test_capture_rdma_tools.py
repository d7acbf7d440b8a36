"""Issue 46 (AX3): the RDMA fabric's own tools beyond ibstat, as they print (iproute2 rdma/link.c, dev.c, res.c,
stat.c; rdma-core infiniband-diags iblinkinfo.c, ibdiag_common.c's get_max_msg, ibnetdiscover.c, ibqueryerrors.c,
perfquery.c, sminfo.c, etc/error_thresholds; ibdiagnet's summary and '-E- Link:' lines as NVIDIA's ibdiagnet manual
shows them), each fault a finding on the right port at the severity an engineer gives it, healthy output quiet. Lines
written here in the tools' formats; benchmarks/rdma_tools_phrasebook.py scores the whole class. Batch AA's
rdma_link_rccl1423 capture (ROCm/rccl#1423: mlx5_7/1 DOWN/POLLING, then ACTIVE) is one check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.backends.nic_readings import Nic, NicPort, NicReadings
from gpuvet.checks import nics
from gpuvet.cli.app import main

AA = Path(__file__).resolve().parents[1] / "data" / "captures" / "fresh_aa" / "rdma_link_rccl1423_mlx5_7_polling_flap.txt"
IB = "subnet_prefix fe80:0000:0000:0000 lid {} sm_lid 1 lmc 0"
UP = f"link mlx5_0/1 {IB.format(12)} state ACTIVE physical_state LINK_UP netdev ib0"
SW = "Switch: 0x7cfe900300a5a2a0 MF0;leaf01:MSB7800/U1:"
UNUSED = '           3    5[  ] ==(                Down/ Polling)==>             [  ] "" ( )'
EDR = "4X      25.78125 Gbps Active/  LinkUp"


def _doctor(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[tuple[str, str, str]], dict]:
    path = tmp_path / "capture.txt"
    path.write_text(text + "\n", encoding="utf-8")
    code = main(["doctor", "--from", str(path), "--json"])
    out = capsys.readouterr().out
    data = json.loads(out) if out.strip() else {}
    found = [(f["cause"], f["severity"], f.get("module") or "") for f in data.get("findings", [])]
    return code, found, data


def _fabric(port3: str = EDR, msg: str = " ") -> str:
    """iblinkinfo of one leaf switch and its four HCAs, n03's link as given (print_port's format)."""
    rows, cas = [SW], []
    for i, host in enumerate(("n01", "n02", "n03", "n04"), start=1):
        link, said = (port3, msg) if host == "n03" else (EDR, " ")
        rows.append(f'           3 {i:4d}[  ] ==( {link})==>  {11 + i:6d}    1[  ] "{host} mlx5_0" ({said})')
        cas.append(
            f"CA: {host} mlx5_0:\n      0x0c42a10300a1b2{i:02x} {11 + i:6d}    1[  ] ==( {link})==>       3 "
            f'{i:4d}[  ] "MF0;leaf01:MSB7800/U1" ({said})'
        )
    return "\n".join([*rows, UNUSED, *cas])


def _topology(n03: str = "4xEDR") -> str:
    """ibnetdiscover's topology of one switch and five HCAs, n03's link as given (out_switch_port's format)."""
    lines = [
        "vendid=0x2c9",
        "devid=0xcf08",
        "switchguid=0x7cfe900300a5a2a0(7cfe900300a5a2a0)",
        'Switch\t36 "S-7cfe900300a5a2a0"\t\t# "MF0;leaf01:MSB7800/U1" enhanced port 0 lid 3 lmc 0',
    ]
    for i, host in enumerate(("n01", "n02", "n03", "n04", "n05"), start=1):
        speed = n03 if host == "n03" else "4xEDR"
        lines.append(f'[{i}]\t"H-0c42a10300a1b2{i}3"[1](0c42a10300a1b2{i}4) \t\t# "{host} mlx5_0" lid {11 + i} {speed}')
    return "\n".join(lines)


def _errors(items: str) -> str:
    """ibqueryerrors: one HCA's port over its threshold, and the summary (print_results, print_summary)."""
    return (
        f'Errors for "n07 mlx5_0"\n   GUID 0x0c42a10300a1b2c4 port 1: {items}\n\n## Summary: 12 nodes checked, 1 bad '
        "nodes found\n##          96 ports checked, 1 ports have errors beyond threshold\n## Thresholds: \n"
        "## Suppressed:"
    )


def _summary(port_counters: int = 0, speed_width: int = 0) -> str:
    """ibdiagnet2's summary table, its stages' errors as given."""
    return (
        "Summary\n-I- Stage                     Warnings   Errors     Comment\n-I- Discovery                 0          0\n"
        "-I- Lids Check                0          0\n-I- Links Check               0          0\n"
        f"-I- Port Counters             3          {port_counters}\n"
        f"-I- Speed / Width checks      0          {speed_width}\n\n"
        "-I- You can find detailed errors/warnings in: /var/tmp/ibdiagnet2/ibdiagnet2.log"
    )


FAULTS = [
    # rdma link: a port down beside an Active one; INIT (the subnet manager has not brought it up); iproute2 4.x's
    # form; -j; a RoCE port with no link partner; a port read up, then down
    (
        f"{UP}\nlink mlx5_1/1 {IB.format(65535)} state DOWN physical_state POLLING netdev ib1",
        ("nic_port_down_undeclared", "warn", "mlx5_1 port 1"),
    ),
    (
        f"{UP}\nlink mlx5_1/1 {IB.format(13)} state INIT physical_state LINK_UP netdev ib1",
        ("nic_port_down_undeclared", "warn", "mlx5_1 port 1"),
    ),
    (
        f"0/1: mlx5_0/1: {IB.format(12)} state ACTIVE physical_state LINK_UP\n1/1: mlx5_1/1: {IB.format(65535)} state DOWN "
        "physical_state DISABLED",
        ("nic_port_down_undeclared", "warn", "mlx5_1 port 1"),
    ),
    (
        '$ rdma -j link\n[{"ifindex":1,"ifname":"mlx5_1","port":1,"subnet_prefix":"fe80:0000:0000:0000","lid":65535,'
        '"sm_lid":0,"lmc":0,"state":"DOWN","physical_state":"POLLING","netdev":"ib1","netdev_index":5}]',
        ("nic_port_down_undeclared", "warn", "mlx5_1 port 1"),
    ),
    (
        "link mlx5_2/1 state ACTIVE physical_state LINK_UP netdev ens1f0np0\n"
        "link mlx5_3/1 state DOWN physical_state POLLING netdev ens2f0np0",
        ("nic_port_down_undeclared", "warn", "mlx5_3 port 1"),
    ),
    (
        f"link mlx5_1/1 {IB.format(13)} state ACTIVE physical_state LINK_UP netdev ib1\n"
        f"link mlx5_1/1 {IB.format(13)} state DOWN physical_state POLLING netdev ib1",
        ("nic_port_down_undeclared", "warn", "mlx5_1 port 1"),
    ),
    # a sentence quoting one link line
    (
        f"After the switch reboot `rdma link` still says 'link mlx5_1/1 {IB.format(65535)} state DOWN physical_state "
        "POLLING netdev ib1' and NCCL falls back to sockets.",
        ("nic_port_down_undeclared", "warn", "mlx5_1 port 1"),
    ),
    # iblinkinfo: get_max_msg's 'Could be' on a link below what both its ends support; a port up, not Active
    (_fabric("1X      25.78125 Gbps Active/  LinkUp", "Could be 4X"), ("nic_rate_low", "warn", "n03 mlx5_0 port 1")),
    (
        _fabric("4X          10.0 Gbps Active/  LinkUp", "Could be FDR10 (Found link at QDR but expected speed is FDR10)"),
        ("nic_rate_low", "warn", "n03 mlx5_0 port 1"),
    ),
    (_fabric("4X      25.78125 Gbps Initialize/  LinkUp"), ("nic_port_down_undeclared", "warn", "n03 mlx5_0 port 1")),
    # iblinkinfo -l: the switch's line alone: the HCA at its far end is the port
    (
        '0x7cfe900300a5a2a0 "         MF0;leaf01:MSB7800/U1"      3    2[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>  '
        '0x0c42a10300a1b2d4     13    1[  ] "n02 mlx5_0" ( Could be 25.78125 Gbps)',
        ("nic_rate_low", "warn", "n02 mlx5_0 port 1"),
    ),
    # ibnetdiscover: a 1x link, an SDR link, among the fabric's 4xEDR ones; -p's list
    (_topology("1xEDR"), ("nic_rate_low", "warn", "n03 mlx5_0 port 1")),
    (_topology("4xSDR"), ("nic_rate_low", "warn", "n03 mlx5_0 port 1")),
    (
        "\n".join(
            f"CA    {11 + i}  1 0x0c42a10300a1b2{i}4 4x {'DDR' if i == 3 else 'EDR'} - SW     3 {i:2d} "
            f"0x7cfe900300a5a2a0 ( 'n0{i} mlx5_0' - 'MF0;leaf01:MSB7800/U1' )"
            for i in range(1, 6)
        ),
        ("nic_rate_low", "warn", "n03 mlx5_0 port 1"),
    ),
    # ibqueryerrors: physical-link counters past error_thresholds' counts; a switch's port (its 'port ALL' not kept)
    (_errors("[SymbolErrorCounter == 5120]"), ("nic_errors", "warn", "n07 mlx5_0 port 1")),
    (_errors("[LinkDownedCounter == 14] [PortXmitWait == 1523]"), ("nic_errors", "warn", "n07 mlx5_0 port 1")),
    (_errors("[PortRcvRemotePhysicalErrors == 250]"), ("nic_errors", "warn", "n07 mlx5_0 port 1")),
    (
        'Errors for 0x7cfe900300a5a2a0 "MF0;leaf01:MSB7800/U1"\n   GUID 0x7cfe900300a5a2a0 port ALL: [LinkDownedCounter '
        "== 30]\n   GUID 0x7cfe900300a5a2a0 port 17: [LinkDownedCounter == 30]",
        ("nic_errors", "warn", "MF0;leaf01:MSB7800/U1 port 17"),
    ),
    # ibqueryerrors -c/-s's port line pasted without its 'Errors for' head: named by its GUID (print_results' format)
    (
        " GUID 0x0c42a10300a1b2c4 port ALL: [LinkDownedCounter == 25 (25.000)] [PortRcvErrors == 26 (26.000)] "
        "[PortXmitWait == 14681376621 (13.673G)]",
        ("nic_errors", "warn", "GUID 0x0c42a10300a1b2c4 (all ports summed)"),
    ),
    (
        "   GUID 0x0c42a10300a1b2c4 port 1: [SymbolErrorCounter == 5120]",
        ("nic_errors", "warn", "GUID 0x0c42a10300a1b2c4 port 1"),
    ),
    # ibcheckerrors' warnings; perfquery's counters judged by the same thresholds
    (
        "#warn: counter SymbolErrors = 13151\t(threshold 10) lid 193 port 4\nError check on lid 193 (ISR9288 Voltaire) port "
        "4:  FAILED",
        ("nic_errors", "warn", "LID 193 port 4"),
    ),
    (
        "# Port counters: Lid 12 port 1 (CapMask: 0x5A00)\nSymbolErrorCounter:..............56\nLinkDownedCounter:..."
        "............1\nPortRcvErrors:...................0",
        ("nic_errors", "warn", "LID 12 port 1"),
    ),
    # ibdiagnet: its summary's stages with errors (the ports its log's); its '-E- Link:' lines
    (_summary(port_counters=2), ("nic_errors", "warn", "not in this paste")),
    (_summary(speed_width=4), ("nic_rate_low", "warn", "not in this paste")),
    (
        "-I- Speed / Width checks finished with errors\n"
        "-E- Link: Sec0d9a0300246e30/Nec0d9a0300246e30/P19<-->switch-004/U1/P20 - Unexpected actual link speed 25",
        ("nic_rate_low", "warn", "Sec0d9a0300246e30 port 19"),
    ),
    (
        "-I- Stages Status Report:\n    STAGE                                    Errors Warnings\n"
        "    Performance Counters Report              3      0\n    Specific Link Width Check                0      0",
        ("nic_errors", "warn", "not in this paste"),
    ),
]


@pytest.mark.parametrize(("text", "want"), FAULTS)
def test_a_fabric_tools_fault_is_its_ports(
    text: str, want: tuple[str, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found, _ = _doctor(text, tmp_path, capsys)
    assert code == 1, found
    cause, severity, subject = want
    assert any(c == cause and s == severity and subject in m for c, s, m in found), found


HEALTHY = [
    (f"{UP}\nlink mlx5_1/1 {IB.format(13)} state ACTIVE physical_state LINK_UP netdev ib1", "rdma link"),
    # a dual-port RoCE card's second port switched off: no known model says it is used
    (
        "link mlx5_2/1 state ACTIVE physical_state LINK_UP netdev ens1f0np0\n"
        "link mlx5_3/1 state DOWN physical_state DISABLED netdev ens1f1np1",
        "rdma link",
    ),
    ("0: mlx5_0: node_type ca fw 28.39.1002 node_guid 0c42:a103:00a1:b2c3 sys_image_guid 0c42:a103:00a1:b2c3", "rdma dev"),
    (
        "0: mlx5_0: pd 3 cq 5 qp 2 cm_id 0 mr 0 ctx 0 srq 2\n"
        "link mlx5_0/1 lqpn 1 type GSI state RTS sq-psn 0 comm [ib_core]",
        "rdma resource",
    ),
    (
        "link mlx5_0/1 rx_write_requests 0 rx_read_requests 0 out_of_buffer 0 out_of_sequence 3 local_ack_timeout_err 12",
        "rdma statistic",
    ),
    (
        "    device          \t   node GUID\n    ------          \t----------------\n    mlx5_0          \t0c42a10300a1b2c3",
        "ibv_devices",
    ),
    ("sminfo: sm lid 1 sm guid 0x7cfe900300a5a2a0, activity count 2318571 priority 15 state 3 SMINFO_MASTER", "sminfo"),
    (_fabric(), "iblinkinfo"),  # its unused switch port down, no peer: not a fault
    (_topology(), "ibnetdiscover"),
    # under error_thresholds' counts, and the congestion counters (read, not judged)
    (_errors("[LinkDownedCounter == 2] [PortRcvErrors == 4] [PortXmitWait == 4294967295]"), "ibqueryerrors"),
    (_summary(), "ibdiagnet"),
    (" GUID 0x0c42a10300a1b2c4 port ALL: [LinkDownedCounter == 2 (2.000)] [PortXmitWait == 1523 (1.487K)]", "ibqueryerrors"),
]


@pytest.mark.parametrize(("text", "kind"), HEALTHY)
def test_healthy_fabric_tools_output_is_read_and_quiet(
    text: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found, data = _doctor(text, tmp_path, capsys)
    assert code != 2
    assert not [f for f in found if f[1] in ("warn", "critical")], found
    assert any(n.endswith(f"read as {kind}") or f"read as {kind}," in n or f", {kind}" in n for n in data["notes"]), data[
        "notes"
    ]


def test_the_aa_capture_is_an_unstable_link_on_mlx5_7(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ROCm/rccl#1423: `rdma link` read three times: DOWN/POLLING, DOWN/LINK_UP, then ACTIVE: the link went down and
    came back (nic_errors, warn), on mlx5_7 port 1."""
    code, found, _ = _doctor(AA.read_text(encoding="utf-8"), tmp_path, capsys)
    assert code == 1
    assert ("nic_errors", "warn", "mlx5_7 port 1") in found, found


def test_an_at_limit_counter_is_one_finding_and_thresholds_judge_captures_only() -> None:
    """A counter at its field's limit is nic_counters_at_limit's alone (one verdict per fact); a live node's counters
    are judged by their rise (watch), not by a single reading against the thresholds."""
    port = NicPort(1, "unknown", "unknown", None, None, "InfiniBand", {"symbol_error": 65535, "link_downed": 12})
    captured = NicReadings((Nic("mlx5_0", None, None, (port,)),), None, "capture", captured=True)
    over = nics.counters_over_threshold(captured)
    assert [v.reason for v in over] == ["mlx5_0 port 1: link_downed 12 (over 10) (infiniband-diags' error_thresholds)"]
    live = NicReadings(captured.nics, None, "sysfs")
    assert nics.counters_over_threshold(live) == []
