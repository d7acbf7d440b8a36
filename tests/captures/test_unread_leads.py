"""Issue 46 (GEN1): a failure line no rule reads is a lead, never "clear" (captures/unread_leads.py), and a text no
format claims that names GPU or NIC things is read, judged by none, never refused (captures/gpu_text.py). The lines
are written for these tests in the shapes an unknown agent, a tool's fragment and a poster's paste take; the tool
names, bus ids and messages are made up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures.gpu_text import KIND
from gpuvet.captures.read import parse_text
from gpuvet.captures.unread_leads import CAUSE
from gpuvet.errors import CaptureError
from tests.support.helpers import run


def _doctor(tmp_path: Path, text: str) -> tuple[int, dict[str, object], str]:
    """doctor --from's exit code, its --json answer and its text answer on one capture written from ``text``."""
    path = tmp_path / "capture.txt"
    path.write_text(text)
    code, out, err = run(["doctor", "--from", str(path), "--json"])
    assert "Traceback" not in err
    _, said, _ = run(["doctor", "--from", str(path)])
    return code, json.loads(out) if out.strip() else {}, said


def _leads(answer: dict[str, object]) -> list[tuple[object, object]]:
    found = answer.get("findings", [])
    assert isinstance(found, list)
    return [(f.get("module"), f["severity"]) for f in found if f["cause"] == CAUSE]


def test_an_unknown_agents_failure_line_is_a_warn_lead_on_the_module_it_names(tmp_path: Path) -> None:
    text = ("fleetwatch 3.2 starting on node-7\n"
            "[10:00:01] fleetwatch: probe of gpu 0000:3b:00.0 FAILED: link training did not complete\n"
            "[10:00:02] fleetwatch: probe of gpu 0000:5e:00.0 done\n")
    code, answer, said = _doctor(tmp_path, text)
    assert code == 1 and _leads(answer) == [("0000:3B:00.0", "warn")]
    assert "gpuvet has no rule for" in said and "link training did not complete" in said


def test_a_lead_names_the_gpu_index_the_line_gives_else_the_node(tmp_path: Path) -> None:
    _, indexed, _ = _doctor(tmp_path, "trainer: NCCL communicator on GPU 3 timed out after 1800 s\n")
    assert _leads(indexed) == [("GPU 3", "warn")]
    _, node, _ = _doctor(tmp_path, "fabricd: RDMA queue pair setup failed (retries exhausted)\n")
    assert _leads(node) == [(None, "warn")]


@pytest.mark.parametrize("line", [
    "fleetwatch: gpu 0000:3b:00.0 self-test PASSED, 0 errors",
    "fleetwatch: gpu 0000:3b:00.0 no errors since boot",
    "fleetwatch: gpu 0000:3b:00.0 ecc errors: 0",
    "fleetwatch: gpu 0000:3b:00.0 link error recovered",
    "fleetwatch: gpu 0000:3b:00.0 clock boost not supported, skipped",
    "fleetwatch: warning: option --gpu-poll is deprecated and failed to parse",
])
def test_success_worded_and_unsupported_lines_are_no_lead(tmp_path: Path, line: str) -> None:
    code, answer, _ = _doctor(tmp_path, line + "\n")
    assert code in (0, 2) and _leads(answer) == []  # read and judged by none, or (no GPU thing named) refused


def test_an_unknown_gpu_fragment_is_read_as_text_naming_gpus_every_check_cant_tell(tmp_path: Path) -> None:
    text = ("$ fleetctl show 0000:3b:00.0\n"
            "  driver: nvidia  driver version: 550.54.15\n"
            "  lanes 16 ok   mode turbo\n")
    fc = parse_text(text, "fragment.txt")
    assert fc.kinds == [KIND]
    note = next(n for n in fc.notes if n.startswith(KIND))
    assert "line(s) 1–3 (3)" in note and "0000:3b:00.0" in note and "550.54.15" in note
    code, answer, said = _doctor(tmp_path, text)
    assert code == 0 and answer["findings"] == []
    assert "none of them was judged" in said and "can't tell" in said


@pytest.mark.parametrize("text", [
    "Whisk the eggs and sugar.\nBake for 40 minutes; if it failed to rise, the oven was cold.\n",
    "The GPU was slow yesterday and the run failed, I think.\n",
    "",
])
def test_a_text_naming_no_gpu_thing_is_still_refused(text: str) -> None:
    with pytest.raises(CaptureError):
        parse_text(text, "other.txt")


def test_a_line_a_reader_claimed_is_never_a_lead() -> None:
    fc = parse_text("NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n", "kern.txt")
    assert not [f for f in fc.tool_failures.found if f.cause == CAUSE]


# GEN1b: FreeBSD's firmware(9) tries each name linuxkpi gives it ('could not load firmware image, error 2'), then
# loads the image under another ('/' and '.' made '_'): a healthy boot's lookups, quiet (lines written in its form)
FREEBSD_FALLTHROUGH = ("Mar 22 06:36:07 host7 kernel: drmn0: <drmn> on vgapci0\n"
                       "Mar 22 06:36:07 host7 kernel: amdgpu/polaris11_mec.bin: could not load firmware image, error 2\n"
                       "Mar 22 06:36:07 host7 kernel: amdgpu_polaris11_mec.bin: could not load firmware image, error 2\n"
                       "Mar 22 06:36:07 host7 kernel: firmware: 'amdgpu_polaris11_mec_bin' version 0: 268480 bytes "
                       "loaded at 0xffffffff83a5e000\n"
                       "Mar 22 06:36:07 host7 kernel: drmn0: successfully loaded firmware image "
                       "'amdgpu/polaris11_mec.bin'\n"
                       "Mar 22 06:36:07 host7 kernel: drmn0: fence driver on ring 0 use gpu addr 0x0000000100000008\n")


def test_a_firmware_lookup_a_later_line_says_loaded_is_no_lead(tmp_path: Path) -> None:
    """Quiet, and never 'none from a GPU' either: drm-kmod's lines (drmn0, the amdgpu images) are counted, not
    judged (the kernel checks can't tell; the excerpt was read as one with no GPU line before)."""
    code, answer, _ = _doctor(tmp_path, FREEBSD_FALLTHROUGH)
    assert code == 0 and _leads(answer) == []
    steps = answer["steps"]
    assert isinstance(steps, list)
    assert {s["status"] for s in steps if s["check"] in ("kernel_messages", "xid_log")} == {"inconclusive"}


def test_a_firmware_lookup_no_later_line_says_loaded_is_still_a_lead(tmp_path: Path) -> None:
    """The image loaded is mec's; mec2's lookup is never followed by its load: mec2's line alone is the lead."""
    text = FREEBSD_FALLTHROUGH + "Mar 22 06:36:08 host7 kernel: amdgpu/polaris11_mec2.bin: could not load firmware " \
                                 "image, error 2\n"
    code, answer, _ = _doctor(tmp_path, text)
    assert code == 1 and _leads(answer) == [(None, "warn")]
    lines = [f["evidence"]["lines"] for f in answer["findings"] if f["cause"] == CAUSE]  # type: ignore[index]
    assert lines == [["7: amdgpu/polaris11_mec2.bin: could not load firmware image, error 2"]]


def test_linux_direct_firmware_load_then_loaded_is_no_lead() -> None:
    from gpuvet.captures.text import Line
    from gpuvet.captures.unread_leads import leads
    failed = "fwagent: Direct firmware load for amdgpu/navi10_gpu_info.bin failed with error -2"
    loaded = "fwagent: amdgpu: loaded firmware amdgpu/navi10_gpu_info.bin through the fallback loader"
    assert [f.line for f in leads([Line(1, failed), Line(2, loaded)], set())] == []
    assert [f.line for f in leads([Line(1, loaded), Line(2, failed)], set())] == [2]  # loaded before: no answer


def test_a_lead_naming_no_module_goes_on_the_one_gpu_the_text_names(tmp_path: Path) -> None:
    text = ("fleetwatch 3.2 starting on node-7: gpu 0000:3b:00.0 (NVIDIA H100)\n"
            "fleetwatch: nic mlx5_0 0000:ab:00.0 up\n"
            "[10:00:01] fleetwatch: nvml health probe failed (code 7)\n")
    code, answer, _ = _doctor(tmp_path, text)
    assert code == 1 and _leads(answer) == [("0000:3B:00.0", "warn")]
    two = text.replace("starting on node-7:", "starting on node-7: gpu 0000:5e:00.0,")
    code, answer, _ = _doctor(tmp_path, two)
    assert code == 1 and _leads(answer) == [(None, "warn")]


# RF1 (review of GEN1, findings 1, 2, 4, 7): lines written in the forms slurm, a shell, an agent and the habanalabs
# driver print; the hosts, bus ids and counts are made up
def _unit(*texts: str) -> list[tuple[str | None, int]]:
    from gpuvet.captures.text import Line
    from gpuvet.captures.unread_leads import leads
    return [(f.module, f.line) for f in leads([Line(i + 1, t) for i, t in enumerate(texts)], set())]


def test_a_host_named_gpu_is_never_a_gpu_index(tmp_path: Path) -> None:
    """srun names the host (gpu018) of the failed task: a job of 16 ranks has no GPU 18, and the line names no GPU."""
    text = ("gpu017:4321:4321 [0] NCCL INFO Bootstrap : Using ib0:10.1.0.17<0>\n"
            "gpu017:4321:4400 [0] NCCL INFO comm 0x55 rank 0 nranks 16 cudaDev 0 busId 18000 - Init COMPLETE\n"
            "srun: error: gpu018: task 9: Exited with exit code 1\n")
    _, answer, _ = _doctor(tmp_path, text)
    assert _leads(answer) == []
    assert _unit("srun: error: gpu018: task 9: Exited with exit code 1") == []
    assert _unit("watchd: GPU[2] ecc check failed", "watchd: GPU 3: heartbeat timed out") == [("GPU 2", 1), ("GPU 3", 2)]


@pytest.mark.parametrize("line", [
    "$ dmesg | grep -i amdgpu | grep -i error",
    "# dmesg -T | grep -i nvidia | grep -i fail",
    "root@gpu01:~# nvidia-smi -q -d ECC | egrep -i 'fail|error'",
    "user@node7:~$ rocm-smi --showerror gpu failed",
    "[admin@node7 ~]$ ibstat mlx5_0 error",
    "journalctl -k | grep -i nccl.*timeout",
])
def test_a_command_the_poster_typed_is_no_lead(line: str) -> None:
    assert _unit(line) == []


@pytest.mark.parametrize("line", [
    "[Issue]: gfx1201 (RDNA4): Tensile GEMM computes out-of-bounds address (GPU page fault) on a B operand #7992",
    "[Bug]: amdgpu ring gfx timeout on MI300X after driver update",
    "# [BUG] nccl all_reduce fails with GPU error #1234",
])
def test_an_issue_title_from_its_trackers_template_is_no_lead(line: str) -> None:
    """R11C: a title is the poster's words naming the question (ROCm/rocm-libraries#7992's '[Issue]: …')."""
    assert _unit(line) == []
    assert _unit("watchd: GPU[2] page fault at 0x7f00 [Bug]: #12") != []


@pytest.mark.parametrize("line", [
    "fleetwatch: gpu 0000:3b:00.0 ecc errors: 0 correctable, 5 uncorrectable",
    "fleetwatch: gpu 0000:3b:00.0 link lost, not recovered",
    "fleetwatch: gpu 0000:3b:00.0 link lost and never recovered",
    "fleetwatch: gpu 0000:3b:00.0 self-test passed, 3 errors",
])
def test_a_failure_a_zero_or_a_negated_success_leaves_standing_is_a_lead(tmp_path: Path, line: str) -> None:
    code, answer, _ = _doctor(tmp_path, "fleetwatch 3.2 starting on node-7\n" + line + "\n")
    assert code == 1 and _leads(answer) == [("0000:3B:00.0", "warn")]


def test_a_driver_line_its_kernel_reader_read_is_no_second_lead(tmp_path: Path) -> None:
    """The habanalabs reader judges hl1's failed init (critical on the module); its cut last line, naming the bus
    id instead of hl1, is that reader's fact, never a second verdict on the same module."""
    text = ("[   43.051361] habanalabs hl0: Successfully loaded firmware to device\n"
            "[   72.993087] habanalabs hl1: Failed to communicate with Device CPU (CPU-CP timeout)\n"
            "[   72.993088] habanalabs hl1: failed to initialize CPU H/W queues -5\n"
            "[   72.993204] habanalabs hl1: failed to initialize the H/W\n"
            "[   72.993269] habanalabs 0000:1a:00.0: Failed to initialize hl1. Device is NOT usable !\n"
            "[   73.036294] habanalabs hl2: Failed to communicate with Device CPU (CPU-CP timeout)\n"
            "[   73.036482] habanalabs 0000:cd:00.0: Failed t\n")
    code, answer, _ = _doctor(tmp_path, text)
    found = answer["findings"]
    assert isinstance(found, list) and code == 1
    assert _leads(answer) == [] and any(f["severity"] == "critical" for f in found)


HAILO = (
    "[    1.428301] hailo: Init module. driver version 4.17.0\n"
    "[    1.428437] hailo 0000:05:00.0: Probing on: 1e60:2864...\n"
    "[    1.428468] hailo 0000:05:00.0: Probing: Device enabled\n"
    "[    1.428669] hailo 0000:05:00.0: Firmware file not found (/lib/firmware/hailo/hailo8_fw.bin), please upload "
    "the firmware manually\n"
    "[    1.440794] hailo 0000:05:00.0: Probing: Added board 1e60-2864, /dev/hailo0\n"
)


def test_an_accelerators_firmware_file_not_found_is_a_lead_on_it(tmp_path: Path) -> None:
    """R11C: hailo_pci's 'Firmware file not found (…)': the accelerator cannot run until the image is given; R13D:
    read by kernel_edge_accel as its own cause (accel_firmware_missing), no longer a generic lead."""
    code, answer, _ = _doctor(tmp_path, HAILO)
    found = answer.get("findings", [])
    assert isinstance(found, list)
    named = [(f.get("module"), f["severity"]) for f in found if f["cause"] == "accel_firmware_missing"]
    assert code == 1 and named == [("0000:05:00.0", "warn")] and _leads(answer) == []
    code, answer, _ = _doctor(tmp_path, HAILO.replace("Firmware file not found", "Firmware was loaded successfully"))
    assert code == 0 and _leads(answer) == []
