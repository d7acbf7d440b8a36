"""Issue 46 (R4B): NVIDIA's and Intel's kernel messages and the reports people write about a node, each read as
its class: the Xids a report names (a summary, a list under its lead line), NVRM's NV_ERR_NO_MEMORY (warn, or info
where the text shows it benign), the GuC not answering (warn), an i915 reset that crashed the kernel (critical), a
monitoring agent's nvidia_smi errors, a PCIe port whose link is not active (DLActive-)."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import xid_reports
from gpuvet.captures.text import Line
from tests.support.helpers import capture_findings, capture_json

_NOMEM = (
    "nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from "
    "_memdescAllocInternal(pMemDesc) @ mem_desc.c:1359"
)


def test_report_summary_xid_is_read_not_refused(tmp_path: Path) -> None:
    text = (
        "## Summary\n\nDriver **999.1.2** takes recurring **Xid 31 MMU faults** on the GRAPHICS engine under "
        "context churn.\n\nThe older driver ran with zero Xid 31 across the fleet.\n"
    )
    assert capture_findings(tmp_path, text) == {("xid", "bus id not in the log"): "warn"}


def test_report_naming_the_driver_beside_its_xids_says_the_driver_is_suspect(tmp_path: Path) -> None:
    text = "Linux driver **999.1.2** (open kernel modules) takes recurring **Xid 31 MMU faults** on GRAPHICS.\n"
    findings = capture_json(tmp_path, text)["findings"]
    assert isinstance(findings, list)
    assert [f["severity"] for f in findings] == ["warn"]
    assert "driver 999.1.2" in findings[0]["evidence"]["driver_named"]


def test_report_list_under_its_lead_line_places_each_xid(tmp_path: Path) -> None:
    text = (
        "Root cause: failing memory on one card.\n\n"
        "- `dmesg` shows repeated Xid events, all on the same GPU (PCI `0000:5e:00`):\n"
        "  - `Xid 48`: uncorrectable double-bit ECC error\n"
        "  - `Xid 94` bursts + `Xid 63`\n"
    )
    findings = capture_json(tmp_path, text)["findings"]
    assert isinstance(findings, list)
    said = sorted((f["evidence"]["xid"], f["module"], f["severity"]) for f in findings)
    # on the lead line's module, each a lead said as the poster's: at most warn (a code named, not its message)
    assert said == [(48, "0000:5E:00.0", "warn"), (63, "0000:5E:00.0", "info"), (94, "0000:5E:00.0", "warn")]


def test_report_question_or_condition_about_an_xid_is_not_read_as_one() -> None:
    text = [
        "What does Xid 79 mean on a node?",
        "",
        "- `dmesg` shows Xid events here:",
        "  - if you see `Xid 79` it fell",
        "No Xid 31 since the rollback.",
    ]
    assert xid_reports.read([Line(i + 1, t) for i, t in enumerate(text)], set()) == ([], set())


def test_nvlink_xid_quoted_with_its_fatal_message_is_critical(tmp_path: Path) -> None:
    text = (
        "On 2026-01-02 08:08:46 `node7` GPU 0 reported `Xid 149, NETIR_LINK_DOWN Fatal XC0 i0 Link 14`, and the "
        "node was drained.\n"
    )
    assert capture_findings(tmp_path, text) == {("xid", "bus id not in the log"): "critical"}


def test_rm_no_memory_is_an_allocation_failure(tmp_path: Path) -> None:
    text = f"[  812.001] NVRM: {_NOMEM}\n"
    assert capture_findings(tmp_path, text) == {
        ("driver_out_of_resource", "a module of nvidia, bus id not in the log"): "warn"
    }


def test_rm_no_memory_beside_an_init_failure_is_its_context(tmp_path: Path) -> None:
    text = (
        f"[    9.1] NVRM: GPU 0000:01:00.0: {_NOMEM}\n"
        "[    9.2] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x62:0x65:1860)\n"
    )
    assert capture_findings(tmp_path, text) == {("module_init_failed", "0000:01:00.0"): "critical"}


def test_rm_no_memory_the_text_shows_benign_is_info_not_refused(tmp_path: Path) -> None:
    text = f"The message alone is not a reliable indicator: all three successful runs logged it.\n\n```\n{_NOMEM}\n```\n"
    assert capture_findings(tmp_path, text) == {
        ("driver_message_known_benign", "a module of nvidia, bus id not in the log"): "info"
    }


def test_guc_not_answering_is_its_own_cause(tmp_path: Path) -> None:
    lines = [
        f"[Sat Apr 26 22:40:{s:02d} 2025] i915 0000:00:02.0: [drm] *ERROR* GT0: GUC: TLB invalidation response "
        f"timed out for seqno {s}"
        for s in (53, 55, 57)
    ]
    lines += ["[  100.1] xe 0000:03:00.0: [drm] *ERROR* Tile0: GT0: Timed out wait for G2H, fence 12, action 7000"]
    found = capture_findings(tmp_path, "\n".join(lines) + "\n")
    assert found == {
        ("module_firmware_unresponsive", "0000:00:02.0"): "warn",
        ("module_firmware_unresponsive", "0000:03:00.0"): "warn",
    }


def test_i915_hang_whose_reset_crashed_the_kernel_is_critical(tmp_path: Path) -> None:
    lines = [
        "<6>[drm] GPU HANG: ecode 9:0:0xfffffffe, reason: Hang on render ring, action: reset",
        "",
        "Fatal trap 12: page fault while in kernel mode",
        "Stopped at reset_common_ring+0xc9",
        "i915_reset() at i915_reset+0xa8",
    ]
    found = capture_findings(tmp_path, "\n".join(lines) + "\n")
    assert list(found.values()) == ["critical"]
    assert [c for c, _ in found] == ["module_needs_reset"]


def test_i915_hang_the_reset_recovered_stays_warn(tmp_path: Path) -> None:
    text = "<6>[drm] GPU HANG: ecode 9:0:0xfffffffe, reason: Hang on render ring, action: reset\n"
    assert list(capture_findings(tmp_path, text).values()) == ["warn"]


def test_agent_query_error_is_no_fault_and_the_lost_handle_it_quotes_is(tmp_path: Path) -> None:
    lines = [
        "Sep 19 16:23:52 host1 categraf[79833]: E! failed to init input: local.nvidia_smi error: unexpected "
        "query field: vgpu_driver_capability.heterogenous_multivGPU",
        "3. 掉卡了，命令报错 nable to determine the device handle for GPU0000:CF:00.0: Unknown Error",
    ]
    found = capture_findings(tmp_path, "\n".join(lines) + "\n")
    assert found == {("module_fell_off_bus", "0000:CF:00.0"): "warn"}  # quoted in a sentence: a lead


def test_agent_query_error_alone_is_no_warn(tmp_path: Path) -> None:
    text = (
        "Sep 19 16:23:52 host1 categraf[79833]: E! failed to init input: local.nvidia_smi error: unexpected "
        "query field: vgpu_driver_capability.heterogenous_multivGPU\n"
    )
    assert not [s for s in capture_findings(tmp_path, text).values() if s in ("warn", "critical")]


def _port(dl: str) -> str:
    return (
        "\t\tLnkCap:\tPort #3, Speed 5GT/s, Width x1, ASPM L0s L1, Exit Latency L0s unlimited, L1 unlimited\n"
        "\t\t\tClockPM- Surprise- LLActRep+ BwNot+ ASPMOptComp+\n"
        "\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x1 (ok)\n"
        f"\t\t\tTrErr- Train- SlotClk+ {dl} BWMgmt- ABWMgmt-\n"
    )


def test_port_below_capability_with_its_link_down_is_warn(tmp_path: Path) -> None:
    assert list(capture_findings(tmp_path, _port("DLActive-")).items()) == [
        (("pcie_link_downgraded", "device line not in the excerpt"), "warn")
    ]


def test_port_below_capability_with_its_link_active_stays_idle_info(tmp_path: Path) -> None:
    assert list(capture_findings(tmp_path, _port("DLActive+")).items()) == [
        (("pcie_link_idle_speed", "device line not in the excerpt"), "info")
    ]
