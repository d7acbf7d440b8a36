"""Review 56's fallback findings (RF1), each on lines written here in the tool's own form: a kernel excerpt
holding a GPU or accelerator driver's line no reader knows is never 'none from a GPU'. GEN1b (issue 46): it was
refused, naming the line; it is read now, the driver's lines counted and not judged (kernel_messages and xid_log
can't tell, never clear), its error lines leads on the bus id they name (these tests pinned the refusal before)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import fallback
from gpuvet.captures.read import parse_text
from gpuvet.errors import CaptureError

UNREAD_GPU_DRIVERS = {  # each driver's own words (Linux prints them so); no reader of gpuvet reads them
    "nvidia-modeset": "[  100.000001] nvidia-modeset: ERROR: GPU:0: Idling display engine timed out: 0x0000c67e:0:0:1128",
    # nvidia-drm's 'Flip event timeout on head 0' is read now (session 65, R9D 9f1d8cd, captures/kernel_flips.py: one a
    # display-path note, three or more display_pipeline_hang), as DRM's flip_done timeouts are
    # nouveau's and radeon's lines are read now (issue 46, captures/kernel_unknown.py: their error lines a lead)
    "habanalabs": "[  300.000001] habanalabs hl0: Received H/W interrupt 36 [TPC0_QM], critical error",  # issue 46:
    # its 'Device is NOT usable' is read now (captures/accel_tools.py), this line is not
}
OTHERS = ("[  100.000000] usb 1-4: new high-speed USB device number 3 using xhci_hcd",
          "[  100.000004] EXT4-fs (md127p3): re-mounted. Quota mode: none.")


def _checks(path: Path) -> tuple[int, dict[str, set[str]], list[tuple[str, str | None, str]]]:
    """doctor's exit code, each kernel check's statuses, and the findings (cause, module, severity)."""
    from tests.captures.test_captures_fresh_c import run_json
    code, data = run_json("doctor", "--from", str(path))
    statuses: dict[str, set[str]] = {}
    for step in data["steps"]:
        statuses.setdefault(step["check"], set()).add(step["status"])
    return code, statuses, [(f["cause"], f.get("module"), f["severity"]) for f in data["findings"]]


@pytest.mark.parametrize("driver", sorted(UNREAD_GPU_DRIVERS))
def test_a_kernel_excerpt_with_an_unread_gpu_drivers_line_is_read_as_cant_tell(tmp_path: Path, driver: str) -> None:
    text = "\n".join((*OTHERS, UNREAD_GPU_DRIVERS[driver])) + "\n"
    fc = parse_text(text, "kern.txt")
    assert fc.kinds == ["kernel log"]
    assert isinstance(fc.kernel, fallback.UnreadDriverLines) and fc.kernel.unread == 1
    assert "1 line(s) of" in fc.kernel.notes[0] and "gpuvet has no rule for: not judged" in fc.kernel.notes[0]
    assert "none from a GPU" not in " ".join(fc.kernel.notes)
    path = tmp_path / "kern.txt"
    path.write_text(text)
    code, statuses, found = _checks(path)
    assert statuses["kernel_messages"] == statuses["xid_log"] == {"inconclusive"}
    # the display lines (nvidia-modeset's engine idling, DRM's flip) are BENIGN's; habanalabs' critical error a lead
    assert found == ([("unread_failure_line", None, "warn")] if driver == "habanalabs" else [])
    assert code == (1 if driver == "habanalabs" else 0)


def test_a_journal_lines_gpu_driver_is_read_too() -> None:
    text = ("$ journalctl -k\nDec 06 10:00:01 node-7 kernel: usb 1-4: new device\n"
            "Dec 06 10:00:02 node-7 kernel: nvidia-drm: [GPU ID 0x00000100] Loading driver\n"
            "Dec 06 10:00:03 node-7 kernel: EXT4-fs (md127p3): re-mounted.\n")
    fc = parse_text(text, "kern.txt")
    assert isinstance(fc.kernel, fallback.UnreadDriverLines) and fc.kernel.drivers == {"nvidia-drm": 1}
    assert not fc.tool_failures.found


def test_an_unknown_drivers_error_lines_are_leads_on_the_bus_id_they_name(tmp_path: Path) -> None:
    """GEN1b: a driver no reader knows (an accelerator's, written here in dev_printk's form): its boot lines counted,
    its module listed, its error lines leads on their own bus id; a line naming no bus id goes on the one its
    driver's lines name."""
    text = ("[    5.100000] qaic 0000:41:00.0: enabling device (0000 -> 0002)\n"
            "[    5.200000] qaic 0000:41:00.0: Firmware boot failed: timeout waiting for SBL\n"
            "[    5.300000] qaic: device init error -110\n"
            "[    5.400000] usb 1-4: new high-speed USB device number 3 using xhci_hcd\n")
    fc = parse_text(text, "kern.txt")
    assert isinstance(fc.kernel, fallback.UnreadDriverLines) and fc.kernel.drivers == {"qaic": 3}
    assert [m.module for m in fc.kernel.modules] == ["0000:41:00.0"]
    assert [(f.module, f.line) for f in fc.tool_failures.found] == [("0000:41:00.0", 2), ("0000:41:00.0", 3)]
    path = tmp_path / "kern.txt"
    path.write_text(text)
    code, statuses, found = _checks(path)
    assert code == 1 and found == [("unread_failure_line", "0000:41:00.0", "warn")]
    assert "clear" not in statuses["kernel_messages"] | statuses["xid_log"]


def test_an_unknown_drivers_healthy_boot_is_no_lead() -> None:
    text = ("[    1.234567] intel_vpu 0000:00:0b.0: enabling device (0000 -> 0002)\n"
            "[    1.234890] intel_vpu 0000:00:0b.0: [drm] Firmware: intel/vpu/vpu_37xx_v0.0.bin, version: 20240611\n"
            "[    1.300000] intel_vpu 0000:00:0b.0: [drm] Successfully loaded firmware, no errors\n"
            "[    1.400000] intel_vpu: loading out-of-tree module taints kernel.\n")
    fc = parse_text(text, "kern.txt")
    assert isinstance(fc.kernel, fallback.UnreadDriverLines) and fc.kernel.unread == 4
    assert not fc.tool_failures.found


def test_an_excerpt_of_nics_disks_and_memory_is_still_a_clear_kernel_log() -> None:
    text = "\n".join((*OTHERS, "[ 5000.000100] Out of memory: Killed process 4242 (python) total-vm:900000000kB",
                      "[ 9000.000001] mlx5_core 0000:ab:00.0: Port module event: module 0, Cable plugged")) + "\n"
    assert parse_text(text, "kern.txt").kinds == ["kernel log"]
    # issue 46 (ZX1): mlx5's health poll failing its card is that NIC's fault (captures/nic_driver.py), not a clear log
    sick = text.replace("Port module event: module 0, Cable plugged", "poll_health:801:(pid 0): device's health compromised")
    assert [f.bus_id for f in parse_text(sick, "kern.txt").nic_driver.failures] == ["0000:ab:00.0"]


@pytest.mark.parametrize("text", [
    # review 56 (5): a question in a JSON document's field, and in a log envelope's message
    '[{"id": 101, "title": "What does RuntimeError: CUDA error: device-side assert triggered mean?", "answers": 3}]\n',
    '{"ts": "2026-12-01T10:00:01Z", "msg": "What does RuntimeError: CUDA error: device-side assert triggered mean?"}\n',
    '{"ts": "2026-12-01T10:00:01Z", "msg": "RuntimeError: CUDA error: device-side assert triggered - why?"}\n',
    # review 56 (6): a closed ticket's listing is no log's prefix
    "ticket #4411 | status: closed | summary: EI0006: Getting socket times out. Reason: Remote rank did not send "
    "the data.\nticket #4412 | status: closed | summary: user question, resolved\n",
])
def test_a_question_or_a_tickets_listing_around_a_known_message_is_refused(text: str) -> None:
    with pytest.raises(CaptureError, match="nothing in it is output gpuvet can read"):
        parse_text(text, "paste.txt")


PLOG = ("[ERROR] HCCL({pid},python):2026-12-01-10:00:01.123.456 [hccl_communicator.cc:120][{pid}]EI0006: Getting "
        "socket times out. Reason: Remote rank did not send the data.")


def _pods(tmp_path: Path, pods: tuple[str, ...]) -> tuple[list[dict[str, object]], list[str]]:
    from tests.captures.test_captures_fresh_c import run_json
    lines = [f"2026-12-01T10:00:0{i}Z {pod} stderr F " + PLOG.format(pid=4411 + i) for i, pod in enumerate(pods)]
    path = tmp_path / "pods.log"
    path.write_text("\n".join(lines) + "\n")
    code, data = run_json("doctor", "--from", str(path))
    assert code == 1
    return data["findings"], lines


def test_two_pods_errors_in_an_unknown_prefix_stay_two_findings_citing_the_files_lines(tmp_path: Path) -> None:
    """Review 56 (7): the host the stripped prefix named is kept where two or more are named; the evidence
    quotes the file's line (its container-log stamp peeled, as every launcher prefix is), not the remainder."""
    found, lines = _pods(tmp_path, ("worker-0", "worker-1"))
    assert [(f["cause"], f["module"]) for f in found] == [
        ("collective_runtime_error", "worker-0"), ("collective_runtime_error", "worker-1")]
    assert [f["evidence"]["log"] for f in found] == [ln.split("Z ", 1)[1] for ln in lines]


def test_one_pods_error_is_read_as_the_clean_line_is(tmp_path: Path) -> None:
    found, lines = _pods(tmp_path, ("worker-0",))
    assert [(f["module"], f["evidence"]["log"]) for f in found] == [("host and GPU not in the log", lines[0])]


def test_a_question_about_an_xid_line_is_no_xid_of_the_posters() -> None:
    """Review 56 (16): the line asks what an Xid line means: read_quoted's (a question, no report), not the
    driver's line; the same Xid line as the kernel prints it is still read."""
    asked = ("Question: how would gpuvet report an Xid 79 if one appeared? Our nodes are fine.\n"
             "For example, what does NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus. mean in practice?\n")
    with pytest.raises(CaptureError, match="nothing in it is output gpuvet can read"):
        parse_text(asked, "q.txt")
    fc = parse_text("[  12.3] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n", "k.txt")
    assert [(x.bus_id, x.code) for x in fc.kernel.xids] == [("0000:3B:00.0", 79)]


@pytest.mark.parametrize("line", [
    "HW Exception by GPU node-4 (Agent handle: 0x1ebc04e0) reason :GPU Hang",  # the HSA runtime's, in a job's log
    "[  10.000002] kfd kfd: HW exception by GPU node-1 (agent 0xa1b2) reason :GPU Hang",
])
def test_a_gpu_hang_the_rocm_runtime_reports_is_the_knowledge_bases_hung_module(tmp_path: Path, line: str) -> None:
    """Review 56 (16): judged through faults.yaml's module_hung_reset, never 'clear'."""
    from tests.captures.test_captures_fresh_c import run_json
    path = tmp_path / "job.log"
    path.write_text("step 1 loss 4.75\n" + line + "\n")
    code, data = run_json("doctor", "--from", str(path))
    assert code == 1
    assert [(f["cause"], f["module"], f["evidence"]["kind"]) for f in data["findings"]] == [
        ("module_hung_reset", f"GPU node-{line.split('node-')[1][0]} (HSA node, CPUs counted)", "hip_gpu_hang")]
