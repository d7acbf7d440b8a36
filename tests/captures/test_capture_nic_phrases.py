"""Issue 46 (PHRM): the NICs' own failure messages as their drivers and tools print them (mlx5_core's health poll,
command interface, events and carrier lines; the PCI core's link line for a NIC; the net core's transmit watchdog;
mlx5_ib's completion errors; perftest 4.5+'s failure lines; ethtool's settings and -S counters), each a finding on the
right NIC at the severity an engineer gives it, and a normal mlx5 probe and link-up quiet. Lines written here in
the drivers' formats (drivers/net/ethernet/mellanox/mlx5/core health.c, cmd.c, events.c, en_main.c; drivers/pci/
pci.c; linux-rdma/perftest src/perftest_resources.h); benchmarks/nic_phrasebook.py scores the whole class."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_triples

BUS = "0000:3b:00.0"
OK = f"[    4.101000] mlx5_core {BUS}: firmware version: 28.39.1002"


_doctor = doctor_triples  # tests/support/helpers.py


@pytest.mark.parametrize(
    ("lines", "want"),
    [
        # health.c: the poll's fatal sensor, and its health buffer's syndrome
        ([f"[ 8000.100000] mlx5_core {BUS}: poll_health:800:(pid 0): Fatal error 1 detected",
          f"[ 8000.100100] mlx5_core {BUS}: print_health_info:431:(pid 0): synd 0x1: firmware internal error"],
         ("nic_firmware_fatal", "critical", BUS)),
        # cmd.c: a firmware command that never completed
        ([f"[  257.111349] mlx5_core {BUS}: wait_func_handle_exec_timeout:1159:(pid 72061): cmd[0]: ACCESS_REG(0x805) "
          "No done completion",
          f"[  257.137072] mlx5_core {BUS}: wait_func:1189:(pid 72061): ACCESS_REG(0x805) timeout. Will cause a leak of a "
          "command resource"], ("nic_firmware_fatal", "critical", BUS)),
        # the health recovery brought the card back: a warning
        ([f"[ 8000.100000] mlx5_core {BUS}: poll_health:800:(pid 0): Fatal error 3 detected",
          f"[ 8001.000000] mlx5_core {BUS}: mlx5_health_try_recover:340:(pid 812): starting health recovery flow",
          f"[ 8009.000000] mlx5_core {BUS}: health recovery succeeded"], ("nic_firmware_fatal", "warn", BUS)),
        # an asynchronous command answered after its timeout: the firmware stalled
        ([f"[  900.000000] mlx5_core {BUS}: cb_timeout_handler:910:(pid 0): cmd[4]: CREATE_MKEY(0x200) Async, recovered "
          "after timeout"], ("nic_firmware_fatal", "warn", BUS)),
        # events.c: a cable module's error, the card's temperature (no longer 'the driver failed its card')
        ([f"[  120.000000] mlx5_core {BUS}: port_module:1175:(pid 0): Port module event[error]: module 0, Cable error, "
          "Power budget exceeded"], ("nic_hardware_alarm", "warn", BUS)),
        ([f"[   51.227791] mlx5_core {BUS}: temp_warn:170:(pid 0): High temperature on sensors with bit set 0 1"],
         ("nic_hardware_alarm", "warn", BUS)),
        # R14E: unplugged after the port's link was up (one never up since its probe is an unused port, info)
        ([f"[    9.000000] mlx5_core {BUS} enp59s0f0np0: Link up",
          f"[  120.000000] mlx5_core {BUS}: Port module event: module 0, Cable unplugged"],
         ("nic_hardware_alarm", "warn", BUS)),
        # main.c: a load step that failed the card
        ([f"[    4.300000] mlx5_core {BUS}: enable hca failed"], ("nic_driver_failed", "warn", BUS)),
        # the net core's transmit watchdog, on the card whose line names the interface
        ([f"[    9.000000] mlx5_core {BUS} enp59s0f0np0: Link up",
          "[ 7200.000000] NETDEV WATCHDOG: enp59s0f0np0 (mlx5_core): transmit queue 5 timed out 16384 ms"],
         ("nic_firmware_fatal", "warn", BUS)),
        # the netdev's carrier: down after it was up, and never back
        ([f"[    9.000000] mlx5_core {BUS} enp59s0f0np0: Link up",
          f"[ 3600.000000] mlx5_core {BUS} enp59s0f0np0: Link down"],
         ("nic_port_down_undeclared", "warn", f"{BUS} (enp59s0f0np0)")),
        # mlx5_ib: a kernel consumer's work completion with error
        (["[ 5000.000000] infiniband mlx5_0: mlx5_handle_error_cqe:333:(pid 0): WC error: 12, Message: transport retry "
          "counter exceeded"], ("rdma_completion_error", "warn", "mlx5_0")),
        # the PCI core's link line for a NIC at x4: a quarter of what its link is built for
        ([f"[    4.302000] mlx5_core {BUS}: 31.504 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x4 link at "
          "0000:3a:00.0 (capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 link)"],
         ("nic_pcie_may_limit_rate", "warn", BUS)),
    ],
)
def test_a_nic_drivers_line_is_its_cards_finding(
    lines: list[str], want: tuple[str, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, found = _doctor("\n".join([OK, *lines]), tmp_path, capsys)
    assert any(c == want[0] and s == want[1] and want[2] in m for c, s, m in found), found


def test_a_line_without_its_bus_id_or_quoted_by_a_poster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, bare = _doctor("[ 8000.1] mlx5_core: poll_health:800:(pid 0): Fatal error 1 detected", tmp_path, capsys)
    assert bare == [("nic_firmware_fatal", "critical", "")]
    quoted = (f"After a few hours dmesg shows 'mlx5_core {BUS}: Port module event[error]: module 0, Cable error, Bad or "
              "shorted cable/module' and the port is gone.")
    assert ("nic_hardware_alarm", "warn", BUS) in _doctor(quoted, tmp_path, capsys)[1]


def test_a_flapping_link_a_port_never_up_and_one_back_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    head = f"mlx5_core {BUS} enp59s0f0np0:"
    flaps = [f"[{100 + i:6d}.000000] {head} {'Link up' if i % 2 == 0 else 'Link down'}" for i in range(7)]
    assert ("nic_errors", "warn", f"{BUS} (enp59s0f0np0)") in _doctor("\n".join(flaps), tmp_path, capsys)[1]
    unused = f"[    9.000000] mlx5_core 0000:3b:00.1 enp59s0f1np1: Link down\n[    9.100000] {head} Link up"
    back = f"[    9.0] {head} Link up\n[  500.0] {head} Link down\n[  503.0] {head} Link up"
    for text in (unused, back):
        assert _doctor(text, tmp_path, capsys)[1] == []


def test_a_normal_mlx5_probe_and_link_up_stay_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    boot = "\n".join([
        f"[    3.900000] mlx5_core {BUS}: enabling device (0000 -> 0002)", OK,
        f"[    4.302000] mlx5_core {BUS}: 252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)",
        f"[    4.800000] mlx5_core {BUS}: Rate limit: 127 rates are supported, range: 0Mbps to 195312Mbps",
        f"[    5.000000] mlx5_core {BUS}: Port module event: module 0, Cable plugged",
        f"[    5.100000] mlx5_core {BUS}: mlx5_pcie_event:299:(pid 10): PCIe slot advertised sufficient power (75W).",
        f"[    6.000000] mlx5_core {BUS} enp59s0f0np0: renamed from eth0",
        f"[    9.000000] mlx5_core {BUS} enp59s0f0np0: Link up"])
    code, found = _doctor(boot, tmp_path, capsys)
    assert code != 2 and not [f for f in found if f[1] in ("warn", "critical")]


PERFTEST = """---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF\t\tDevice         : mlx5_0
 Link type       : IB
---------------------------------------------------------------------------------------
"""


@pytest.mark.parametrize("tail", [
    " Completion with error at client\n Failed status-transport retry counter exceeded (12): wr_id 0 syndrom 0x81",
    " Port number 1 state is Down",
    " Found Incompatibility issue with GID types.",
])
def test_perftest_4_5_failure_lines(tail: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """perftest names a completion's status since 4.5 ('Failed status-… (12)'); a port not Active stops the test."""
    for text in (tail, PERFTEST + tail):
        assert any(c == "rdma_test_failed" for c, _, _ in _doctor(text, tmp_path, capsys)[1])


STATS = """$ ethtool -i enp59s0f0np0
driver: mlx5_core
version: 6.8.0-49-generic
firmware-version: 28.39.1002 (MT_0000000838)
bus-info: 0000:3b:00.0
$ ethtool -S enp59s0f0np0
NIC statistics:
     rx_packets: 845320277
     tx_packets: 896117891
     rx_crc_errors_phy: {crc}
     rx_symbol_err_phy: 0
     link_down_events_phy: 1
"""


def test_ethtool_counters_and_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ethtool -S's CRC errors at the physical layer are the port's errors; every error counter 0 is read, no
    finding; 'Link detected: no' is the port down."""
    assert ("nic_errors", "warn", f"enp59s0f0np0 ({BUS})") in _doctor(STATS.format(crc=18234), tmp_path, capsys)[1]
    code, found = _doctor(STATS.format(crc=0), tmp_path, capsys)
    assert code != 2 and found == []
    down = "Settings for enp59s0f0np0:\n\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n\tLink detected: no"
    assert ("nic_port_down_undeclared", "warn", "enp59s0f0np0") in _doctor(down, tmp_path, capsys)[1]
