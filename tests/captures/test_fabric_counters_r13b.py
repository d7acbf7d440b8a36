"""Issue 46 (R13B), on lines written in the tools' own formats: ibdiagnet2.pm's port blocks (a link error counter above
zero warns on the port), UFM's unhealthy ports (each link once, warn), HPE Slingshot's cxi driver error lines by
their class (shs-cxi-driver's c_error_class: an uncorrectable memory error or C_EC_CRIT is the NIC's, critical; a
bad-connection or link-block uncorrectable error the link's, warn; software, info, transient, corrected and the old
driver's class-less EE events read and clear), NCCL's NET/IB completion error quoted in a sentence (its ibv_wc_status
named), a segfault in libnccl and a journal's header: read, never refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import capture_findings, doctor_text

_PM_HEAD = "Port=2 Lid=0x0599 GUID=0x0011223344550001 Device=54000 Port Name=S0011223344550001/N0011223344550001/P2\n"
_RULE = "-------------------------------------------------------\n"


def test_ibdiagnet_pm_link_counters_above_zero_warn_on_the_port(tmp_path: Path) -> None:
    text = (
        _RULE + _PM_HEAD + _RULE + "symbol_error_counter_extended=0x00000000000000ff\n"
        "link_error_recovery_counter_extended=0x000000000000000a\nport_rcv_errors_extended=0x0\n" + _RULE
    )
    code, got = doctor_text(tmp_path, text)
    assert [(f["cause"], f["severity"]) for f in got["findings"]] == [("nic_errors", "warn")]
    log = got["findings"][0]["evidence"]["log"]
    assert "symbol_error_counter 255" in log and "link_error_recovery_counter 10" in log
    assert "port 2 (Lid 0x0599)" in log


def test_ibdiagnet_pm_clean_port_is_read_and_clear(tmp_path: Path) -> None:
    text = (
        _RULE + _PM_HEAD + _RULE + "symbol_error_counter=0\nlink_downed_counter=0\nport_xmit_data=123456789\n"
        "port_xmit_discards=4\n" + _RULE
    )
    code, got = doctor_text(tmp_path, text)
    assert code == 0 and not got["findings"]
    assert any("ibdiagnet PM counters: 1 port(s) read" in n for n in got["notes"])


def test_ufm_unhealthy_ports_warn_once_a_link(tmp_path: Path) -> None:
    text = (
        "# NodeGUID, PortNum, NodeDesc, PeerNodeGUID, PeerPortNum,  PeerNodeDesc, {BadCond1, BadCond2, ...}, TimeStamp\n"
        '0x0000000000000a01, 3, "sw-a", 0x0000000000000b01, 7, "sw-b", {HIGH_BER, FLAPPING}, Mon Jan 05 10:00:00 2026\n'
        '0x0000000000000b01, 7, "sw-b", 0x0000000000000a01, 3, "sw-a", {HIGH_BER, FLAPPING}, Mon Jan 05 10:00:00 2026\n'
    )
    code, got = doctor_text(tmp_path, text)
    assert [(f["cause"], f["severity"]) for f in got["findings"]] == [("nic_errors", "warn")]
    assert "HIGH_BER, FLAPPING" in got["findings"][0]["evidence"]["log"]


@pytest.mark.parametrize("prefix", ["", "[Thu Jul 13 01:57:31 2023] ", "Jul 13 01:57:31 x1 kernel: "])
def test_cxi_uncorrectable_memory_error_is_critical_on_the_nic(tmp_path: Path, prefix: str) -> None:
    text = (
        f"{prefix}cxi_core 0000:c3:00.0: cxi3[hsn3]: C_EC_UNCOR_NS: C1_PCT error: tct_cam_ucor (42) "
        "(was first error at 1689213438:290566940)\n"
        f"{prefix}cxi_core 0000:c3:00.0: cxi3[hsn3]: C_EC_UNCOR_NS: C_PCT_ERR_INFO_MEM 3f1d900400000000\n"
        f"{prefix}cxi_core 0000:c3:00.0: cxi3[hsn3]: C_EC_UNCOR_NS: mem_ucor_err_cntr: 1\n"
    )
    assert capture_findings(tmp_path, text) == {("nic_uncorrectable_error", "0000:c3:00.0"): "critical"}


def test_cxi_link_block_uncorrectable_warns_and_transient_is_clear(tmp_path: Path) -> None:
    bad = "cxi_ss1 0000:41:00.0: cxi0[hsn0]: C_EC_UNCOR_NS: C1_HNI error: llr_eopb (32) (was first error at 1:2)\n"
    assert capture_findings(tmp_path, bad) == {("nic_errors", "0000:41:00.0"): "warn"}
    soft = (
        "[  10.1] cxi_core 0000:41:00.0: cxi0[hsn0]: C_EC_TRNSNT_NS: C1_HNI_PML error: llr_ack_nack_error (58) "
        "(was first error at 1675489372:701036980)\n"
        "[  10.2] cxi_ss1 0000:21:00.0: EE error: eq_rsrvn_uflw (38)\n"
        "[  10.2] cxi_ss1 0000:21:00.0:   C_EE_ERR_INFO_RSRVN_UFLW 1000000001430100\n"
        "[  10.2] cxi_ss1 0000:21:00.0:   eq_rsrvn_uflw_err_cntr: 12\n"
    )
    code, got = doctor_text(tmp_path, soft)
    assert code == 0 and not got["findings"]
    assert any("eq_rsrvn_uflw" in n for n in got["notes"])


def test_nccl_ib_completion_quoted_in_a_sentence_warns_with_its_status(tmp_path: Path) -> None:
    text = (
        "I have the same error as 'transport/net_ib.cu:781 WARN NET/IB : Got completion with error 12, opcode 1, "
        "len0, vendor err 129' although I run in a container.\n"
    )
    code, got = doctor_text(tmp_path, text)
    assert [(f["cause"], f["severity"]) for f in got["findings"]] == [("collective_runtime_error", "warn")]
    assert "Transport retry counter exceeded" in got["findings"][0]["evidence"]["log"]


def test_libnccl_segfault_and_journal_head_are_read_and_clear(tmp_path: Path) -> None:
    segv = (
        "kern  :warn  : 2025-01-21T04:41:44,285060+00:00 python[123]: segfault at 7f797fe00000 ip 00007f7c7ac69996 "
        "sp 00007f7c12fd7c30 error 4 in libnccl.so.2[7f7c7ac00000+d3d3000]\n"
    )
    code, got = doctor_text(tmp_path, segv)
    assert code == 0 and not got["findings"] and any("libnccl.so.2" in n for n in got["notes"])
    journal = "-- Logs begin at Sat 2021-05-29 10:50:24 UTC, end at Sat 2021-05-29 17:47:12 UTC. --\n" + (
        'May 29 10:50:24 ubu audit: CWD cwd="/var/lib/waagent"\n'
    )
    code, got = doctor_text(tmp_path, journal)
    assert code == 0 and not got["findings"]
