"""Issue 46 (R10A): AMD, Intel and Tenstorrent kernel and tool lines, and the PCI core's BAR failures on any device
the node needs, each on lines written in the sources' own formats (drivers/gpu/drm/amd, i915, xe, drivers/pci,
tenstorrent/tt-kmd, tt-metal's reset scripts; stamps, hosts and bus ids made up)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import capture_findings, capture_json, doctor_text

AMD = "[ 306.174981] amdgpu 0000:07:00.0: amdgpu: "


def test_a_printed_retry_page_fault_is_a_page_fault_on_its_module(tmp_path: Path) -> None:
    # gmc_v9_0.c prints a retry fault only where amdgpu_vm_handle_fault could not resolve it
    for hub in ("gfxhub0", "mmhub0", "gfxhub"):
        log = (f"{AMD}[{hub}] retry page fault (src_id:0 ring:0 vmid:8 pasid:32771, for process python pid 2315 "
               f"thread python pid 2315)\n{AMD}  in page starting at address 0x0000000000000000 from IH client 0x1b "
               f"(UTCL2)\n{AMD}VM_L2_PROTECTION_FAULT_STATUS:0x00000000\n{AMD}\t MORE_FAULTS: 0x0\n")
        assert capture_findings(tmp_path, log) == {("module_page_fault", "0000:07:00.0"): "warn"}


@pytest.mark.parametrize("line", [
    "[   21.677338] amdgpu: [powerplay] failed to send message 146 ret is 0 ",
    "[   21.677338] amdgpu: [powerplay] failed to send pre message 146 ret is 0 ",
    "[   21.677338] amdgpu: [powerplay] last message was failed ret is 0",
])
def test_powerplay_s_unanswered_smu_message_is_one_verdict_in_every_spelling(tmp_path: Path, line: str) -> None:
    found = capture_findings(tmp_path, line + "\n")
    assert [(cause, severity) for (cause, _), severity in found.items()] == [("module_needs_reset", "critical")]


def test_powerplay_s_tag_alone_with_its_message_under_the_same_stamp_is_one_message(tmp_path: Path) -> None:
    # old powerplay: pr_fmt 'amdgpu: [powerplay] ' before a format opening with '\n' (smu7_smumgr.c), in a journal
    # inside a tmux pane's borders
    pane = "│Feb 17 18:01:24 TestSetup kernel: [   {t}] {text}    │\n"
    log = "".join(pane.format(t=t, text=x) for t in ("22.061631", "22.409449") for x in
                  ("amdgpu: [powerplay]", " failed to send message 16a ret is 0"))
    [(cause, _)] = capture_findings(tmp_path, log)
    assert cause == "module_needs_reset"
    # a message the SMU refused as not supported (0xFE) is no fault
    assert not capture_findings(tmp_path, "[ 2.1] amdgpu 0000:03:00.0: amdgpu: Failed to send message: 0x26, "
                                          "ret value: 0xfe\n").get(("module_needs_reset", "0000:03:00.0"))


@pytest.mark.parametrize("line", [
    "[    7.012519] i915 0000:07:00.0: [drm] *ERROR* GT0 [GT OTHER] gt: timed out waiting for forcewake ack to clear.",
    "[    7.012519] i915 0000:07:00.0: [drm] *ERROR* GT0: gt: timed out waiting for forcewake ack request.",
    "[    7.012519] xe 0000:07:00.0: [drm] *ERROR* GT0: timed out waiting for forcewake ack to clear.",
])
def test_an_intel_gt_that_times_out_is_named_at_warn(tmp_path: Path, line: str) -> None:
    log = "[    6.411603] i915 0000:07:00.0: enabling device (0000 -> 0002)\n" + line + "\n"
    assert capture_findings(tmp_path, log) == {("module_firmware_unresponsive", "0000:07:00.0"): "warn"}


def test_i915_s_pre_emption_timeout_bump_is_a_healthy_boot_line(tmp_path: Path) -> None:
    log = ("[   12.011588] i915 0000:00:02.0: [drm] Bumping pre-emption timeout from 640 to 7500 on rcs'0.0 to allow "
           "slow compute pre-emption\n[   12.025408] i915 0000:00:02.0: [drm] GuC firmware i915/tgl_guc_70.2.0.bin "
           "version 70.2\n[   12.066343] [drm] Initialized i915 1.6.0 20201103 for 0000:00:02.0 on minor 0\n")
    code, data = doctor_text(tmp_path, log)
    assert code == 0 and not data["findings"]


KMD = ("Aug 21 21:09:28 ubuntu kernel: [100111.210705] tenstorrent: Skipping message 00000011 due to FW not running.\n"
       "Aug 21 21:09:29 ubuntu kernel: [100112.234690] tenstorrent: Skipping message 00000011 due to FW not running.\n")


def test_tt_kmd_s_chip_with_its_firmware_down_is_critical_on_its_bus_id(tmp_path: Path) -> None:
    log = KMD + "Aug 21 21:09:30 ubuntu kernel: [100113.258680] tenstorrent 0000:02:00.0: Device is unresponsive, " \
                "cannot reset.\n"
    data = capture_json(tmp_path, log)
    [f] = data["findings"]  # type: ignore[misc]
    assert f["severity"] == "critical" and "0000:02:00.0" in f["module"]
    assert "FW not running" in str(f["evidence"])
    # the firmware's messages skipped alone: the same verdict, the bus id not in the log
    [g] = capture_json(tmp_path, KMD)["findings"]  # type: ignore[misc]
    assert g["severity"] == "critical"


@pytest.mark.parametrize("lines,severity", [
    (["Error: Unsuccessful board reset, trying again in 5 seconds ..."] * 3, "warn"),
    (["Warning: Unsuccessful board reset attempt 1/3, trying again in 5 second(s)...", "Error: Unsuccessful board "
      "reset, rebooting"], "warn"),
    (["Error: Unsuccessful SMI run, probably ARC / no chips detected failure, rebooting"], "warn"),
    (["Warning: Unsuccessful board reset attempt 1/3, trying again in 5 second(s)...", "Board reset successful!"],
     None),
])
def test_a_reset_script_s_failed_board_reset_is_read_not_refused(tmp_path: Path, lines: list[str],
                                                                 severity: str | None) -> None:
    code, data = doctor_text(tmp_path, "- Pre-job hook: reset.sh\n```\n" + "\n".join(lines) + "\n```\n")
    assert code != 2
    assert [f["severity"] for f in data["findings"]] == ([severity] if severity else [])


def _nic(vf_assigned: bool = False, pf_failed: bool = False) -> str:
    out = []
    for fn in ("0000:04:00.0", "0000:04:00.1"):
        out += [f"[    0.681114] pci {fn}: [15b3:1015] type 00 class 0x020000",
                f"[    0.682511] pci {fn}: VF(n) BAR0 space: [mem 0x00000000-0x00ffffff 64bit pref] (contains BAR0 "
                f"for 16 VFs)"]
    for fn in ("0000:04:00.0", "0000:04:00.1"):
        out += [f"[    0.710024] pci {fn}: BAR 7: no space for [mem size 0x01000000 64bit pref]",
                f"[    0.710033] pci {fn}: BAR 7: failed to assign [mem size 0x01000000 64bit pref]"]
        if vf_assigned:
            out.append(f"[    0.720000] pci {fn}: BAR 7: assigned [mem 0x3bffe000000-0x3bffeffffff 64bit pref]")
    if pf_failed:
        out.append("[    0.710040] pci 0000:04:00.0: BAR 0 [mem size 0x02000000 64bit pref]: can't assign; no space")
    return "\n".join(out) + "\n"


def test_a_nic_s_unassigned_vf_bars_are_a_warn_and_its_own_bar_critical(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _nic()) == {("pci_vf_bar_unassigned", "0000:04:00.0"): "warn",
                                                  ("pci_vf_bar_unassigned", "0000:04:00.1"): "warn"}
    assert not capture_findings(tmp_path, _nic(vf_assigned=True))  # pci=realloc gave them a window later
    assert capture_findings(tmp_path, _nic(vf_assigned=True, pf_failed=True)) == {
        ("module_cannot_attach", "0000:04:00.0"): "critical"}
    # a SATA controller's VF BAR is no device the node's GPUs or network need
    sata = "[ 0.6] pci 0000:05:00.0: [1b4b:9230] type 00 class 0x010601\n" \
           "[ 0.7] pci 0000:05:00.0: BAR 7: no space for [mem size 0x00100000]\n"
    code, data = doctor_text(tmp_path, sata)
    assert code != 1 and not data.get("findings")
