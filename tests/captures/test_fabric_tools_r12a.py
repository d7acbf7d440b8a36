"""Issue 46 (R12A), on lines written in the tools' own formats (HPE shs-docs' net_diags pages, NVIDIA ibdiagnet's
counter lines, Broadcom's phydiag fdrstat, Junos, GPCNeT, sinfo -o with '|'): a Slingshot NIC with uncorrectable
codewords or a high corrected BER warns on its node, a NIC or node a bandwidth test calls low warns, a port counter
that rose during an ibdiagnet run warns on the port; passing runs, a switch's inventory and a usage error are read
and clear, never refused."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

_BER_HEAD = (
    "Note: Using a duration of 4 means the minimum measurable rate is 1.176e-12\n      Node  Device    CCW_BER    UCW_BER\n"
)


def test_cxiberstat_uncorrectable_or_high_corrected_ber_warns_on_the_node(tmp_path: Path) -> None:
    for prefix in ("", "n01: ", "Dec 07 10:00:00 uan01 cxiberstat: "):
        rows = f"{prefix}n01:    cxi0       <min       <min\n{prefix}n01:    cxi1  3.100e-06  2.000e-11\n"
        assert capture_findings(tmp_path, _BER_HEAD + rows) == {("nic_errors", None): "warn"}, prefix
    high_ccw = _BER_HEAD + "nid000050:    cxi1  4.000e-07       <min\n"
    assert capture_findings(tmp_path, high_ccw) == {("nic_errors", None): "warn"}


def test_cxiberstat_local_run_names_its_node_from_the_command(tmp_path: Path) -> None:
    text = "# cxiberstat.sh x1000c0s0b0n0\n" + _BER_HEAD + "   cxi2  2.519e-06  4.706e-12\n"
    code, got = doctor_text(tmp_path, text)
    assert [(f["cause"], f["severity"]) for f in got["findings"]] == [("nic_errors", "warn")]
    assert "x1000c0s0b0n0 cxi2" in got["findings"][0]["evidence"]["log"]


def test_cxiberstat_normal_run_is_read_and_clear(tmp_path: Path) -> None:
    rows = "".join(f"nid00000{n}:    cxi{n % 2}  {v}       <min\n" for n, v in enumerate(("9.412e-12", "<min", "4.565e-10")))
    summary = (
        "\nCCW BER Summary\n  Bin   # Histogram\n1e-10:  1 ==\n <min:  1\n\n"
        "UCW BER Summary\nNo UCW BERs above min measurable value\n"
    )
    code, got = doctor_text(tmp_path, _BER_HEAD + rows + summary)
    assert code == 0 and not got["findings"]
    assert any("cxiberstat.sh: 3 NIC(s) read" in n for n in got["notes"])


def test_cxibwcheck_passed_is_clear_and_low_or_failed_nic_warns(tmp_path: Path) -> None:
    ok = (
        "cxibwcheck.sh: firmware version: 1.6.0.320\nnid000009: cxi0: 39819\nnid000008: cxi0: 39908\n"
        "Hosts = 2 Count = 2 Skipped = 0 Failed = 0 Missing = 0\nMin = 39819 Mean = 39863 Max = 39908\nTest passed\n"
    )
    code, got = doctor_text(tmp_path, ok)
    assert code == 0 and not got["findings"]
    low = ok.replace("Test passed\n", "cxi-nid1: cxi0: bandwidth is low 21215 MB/s (66%)\nTest failed (logfile is /tmp/x)\n")
    assert capture_findings(tmp_path, low) == {("node_health_check_failed", None): "warn"}
    failed = "nid000002: cxi0: test failed (logfile is nid000002:/tmp/cxibwcheck.sh.errlog.144874)\n"
    assert capture_findings(tmp_path, failed) == {("node_health_check_failed", None): "warn"}


def test_dgnettest_low_nodes_and_switch_sets_warn_with_the_custom_mapping_said(tmp_path: Path) -> None:
    text = (
        '$ dgnettest_run.sh -n nid[000022-000028] -C -N "0:0,2;1:1,3"\nRunning loopback tests on NIC 1 over : nid[1-2]\n'
        "Using NIC 1\nTest      Iter    Bytes      Min     Mean      Max      Dev       CV\n"
        "Per node bandwidth stats\n"
        "nid000022    3   131072     8282     8358     8433      107      1.3%   result is high\n"
        "nid000024    3   131072     4180     4181     4181        0      0.0%    result is low\n"
        "dgnettest has FAILED\nRunning switch tests over : nid[1-2]\n"
        "all2all   test bandwidth low  11055 MB/s for set 0 location 000.03.00 3 nodes: nid[000022,000025-000026]\n"
    )
    code, got = doctor_text(tmp_path, text)
    logs = [f["evidence"]["log"] for f in got["findings"]]
    assert {(f["cause"], f["severity"]) for f in got["findings"]} == {("node_health_check_failed", "warn")}
    assert len(logs) == 2 and "loopback test, NIC 1: nid000024 result is low" in logs[0]
    assert all("custom NIC mapping" in log for log in logs)
    row = "nid000022    3   131072     3645     3646     3646   0   0.0%\n"
    passed = text.split("Per node")[0] + row + "dgnettest has PASSED\n"
    code, got = doctor_text(tmp_path, passed)
    assert code == 0 and not got["findings"]


def test_ibdiagnet_counter_increase_and_cable_alarm_warn_on_the_port(tmp_path: Path) -> None:
    port = "S0002c90300001234/N0002c90300001234/P1/5/1"
    for frame in ("-E- {}", "* {}", "2025-03-01 12:19:52 -W- {}"):
        line = frame.format(
            f'{port} - "symbol_error_counter" increased during the run (difference value=27,difference allowed threshold=1)'
        )
        assert capture_findings(tmp_path, line + "\n") == {("nic_errors", None): "warn"}, frame
    alarm = f"* {port} - Cable High Temperature Alarm reported, current temperature: 64C, threshold: 80C\n"
    assert capture_findings(tmp_path, alarm) == {("nic_hardware_alarm", None): "warn"}
    warning = f"* {port} - Cable High Temperature Warning reported, current temperature: 54C, threshold: 70C\n"
    code, got = doctor_text(tmp_path, warning)
    assert code != 2 and not got["findings"]


def test_switch_fdrstat_and_junos_inventory_are_read_and_clear(tmp_path: Path) -> None:
    fdr = (
        "port 118: Collecting Data ...\nNumber of Uncorrected codewords:           0             0\n"
        "Number of codewords:       172454978       142226314\nSymbol errors:     0     0\ncode words err S0:   1   2\n"
    )
    code, got = doctor_text(tmp_path, fdr)
    assert code == 0 and not got["findings"]
    bad = fdr.replace("codewords:           0             0", "codewords:           0             12")
    assert capture_findings(tmp_path, bad) == {("nic_errors", None): "warn"}
    junos = (
        "root@sw01> show version\nHostname: sw01\nModel: qfx5240-64od\nJunos: 23.4X100-D40.7-EVO\n"
        "root@sw01> show chassis hardware detail\nHardware inventory:\n"
        "Item             Version  Part number  Serial number     Description\n"
        "Chassis                                AO40023030        QFX5240-64OD\n"
        "    Xcvr 0       XXXX     NON-JNPR     BL8J4455150007V   UNKNOWN\n"
    )
    code, got = doctor_text(tmp_path, junos)
    assert code == 0 and not got["findings"]


def test_gpcnet_usage_error_is_read_not_judged(tmp_path: Path) -> None:
    text = (
        "ERROR: this application must be run on at least 10 nodes\n"
        "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
    )
    code, got = doctor_text(tmp_path, text)
    assert code != 2 and not [f for f in got["findings"] if f["severity"] in ("warn", "critical")]


def test_sinfo_pipe_table_gpu_node_drained_and_not_responding_warns(tmp_path: Path) -> None:
    head = "AVAIL|CPUS|NODELIST|STATE|REASON |GRES \n"
    text = head + "up|80|node0201|drain*|replace |gpu:gen:8 \nup|80|node1537|alloc|none |gpu:gen:8(S:0-1) \n"
    code, got = doctor_text(tmp_path, text)
    assert [(f["cause"], f["severity"]) for f in got["findings"]] == [("scheduler_gpus_short", "warn")]
    assert "node0201" in got["findings"][0]["evidence"]["log"] and "replace" in got["findings"][0]["evidence"]["log"]
    admin = head + "up|80|node0201|drained|upgrade |gpu:gen:8 \n"  # responding: an admin's drain, said
    code, got = doctor_text(tmp_path, admin)
    assert code == 0 and not got["findings"]
