"""Issue 46 (batch R, RX1): kernel log classes read as the drivers print them. amdgpu's full reset in the words of
its recovery path (not only 'GPU reset begin!'), whatever prefix a syslog or grep put before it; gnif's vendor-reset
printing an AMD GPU's reset trouble through vfio-pci's device; nvidia-drm's '[drm:… [nvidia_drm]] *ERROR*' lines; a
kernel oops inside a GPU driver while it loads; the open NVIDIA module's GSP-RM that cannot run on a GPU. Lines
written here in the drivers' log shapes; bus ids, times, addresses and versions are made up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.helpers import capture_json

UNNAMED = "driver_error_unnamed"


def _findings(tmp_path: Path, log: str) -> dict[tuple[str, str | None], dict[str, Any]]:
    data: dict[str, Any] = capture_json(tmp_path, log)  # type: ignore[assignment]
    return {(f["cause"], f.get("module")): f for f in data["findings"]}


_RESET = ("amdgpu 0000:07:00.0: amdgpu: MODE1 reset\n"
          "amdgpu 0000:07:00.0: amdgpu: GPU reset succeeded, trying to resume\n"
          "[drm] PCIE GART of 512M enabled (table at 0x0000008000F00000).\n"
          "[drm] VRAM is lost due to GPU reset!\n"
          "[drm] PSP is resuming...\n")


def test_an_amdgpu_reset_in_its_recovery_words_is_a_reset_on_its_module_in_any_log_prefix(tmp_path: Path) -> None:
    dmesg = "".join(f"[ 9120.{40 + i:06d}] {ln}\n" for i, ln in enumerate(_RESET.splitlines()))
    syslog = "".join(f"/var/log/kern.log:Mar  3 04:11:52 box7 kernel: [ 9120.{40 + i:06d}] {ln}\n"
                     for i, ln in enumerate(_RESET.splitlines()))
    for log in (dmesg, syslog):
        found = _findings(tmp_path, log)
        assert set(found) == {("module_hang_recovered", "0000:07:00.0")}, log  # AGX1: a reset that succeeded
        f = found[("module_hang_recovered", "0000:07:00.0")]
        assert f["severity"] == "warn" and f["evidence"]["message"] == "amd_hang_recovered"
    # the reset whose start is in the log too ('GPU reset begin!') is that one reset, said once
    begun = _findings(tmp_path, "[ 9120.000001] amdgpu 0000:07:00.0: amdgpu: GPU reset begin!\n" + dmesg)
    assert begun[("module_hang_recovered", "0000:07:00.0")]["evidence"]["message"] == "amd_hang_recovered"
    assert begun[("module_hang_recovered", "0000:07:00.0")]["evidence"]["times"] == 1
    # an APU's reset on its way into suspend prints the reset's mode alone: no recovery, no finding
    suspend = "[  512.000100] amdgpu 0000:07:00.0: amdgpu: MODE2 reset\n[  512.000200] PM: suspend entry (s2idle)\n"
    assert _findings(tmp_path, suspend) == {}


_VENDOR_RESET = ("[  301.100001] vfio-pci 0000:2d:00.0: AMD_NAVI10: version 1.1\n"
                 "[  301.100002] vfio-pci 0000:2d:00.0: AMD_NAVI10: performing pre-reset\n"
                 "[  301.100003] vfio-pci 0000:2d:00.0: AMD_NAVI10: performing reset\n"
                 "[  301.100004] vendor-reset-drm: atomfirmware: bios_scratch_reg_offset initialized to 4c\n"
                 "[  301.100005] vfio-pci 0000:2d:00.0: AMD_NAVI10: MP1 reset\n")


def test_vendor_reset_lines_through_vfio_pci_are_the_passed_through_gpus(tmp_path: Path) -> None:
    trouble = _VENDOR_RESET + ("[  301.100006] vfio-pci 0000:2d:00.0: SMU error 0xfe\n"
                               "[  301.100007] vfio-pci 0000:2d:00.0: AMD_NAVI10: timed out waiting for PSP to reach "
                               "valid state, but continuing anyway\n"
                               "[  301.300008] vfio-pci 0000:2d:00.0: AMD_NAVI10: mode1 reset succeeded\n")
    found = _findings(tmp_path, trouble)
    assert set(found) == {(UNNAMED, "0000:2D:00.0")}
    f = found[(UNNAMED, "0000:2D:00.0")]
    assert f["severity"] == "warn" and f["evidence"]["driver"] == "vendor-reset" and f["evidence"]["times"] == 2
    inventory: dict[str, Any] = capture_json(tmp_path, trouble, "inventory")  # type: ignore[assignment]
    assert "0000:2D:00.0" in str(inventory)
    clean = _VENDOR_RESET + "[  301.300008] vfio-pci 0000:2d:00.0: AMD_NAVI10: mode1 reset succeeded\n"
    clean_found = _findings(tmp_path, clean)  # a reset that succeeded: the passthrough at work, an info (batch Z)
    assert [(k, f["severity"]) for k, f in clean_found.items()] == [(("module_passed_through", "0000:2D:00.0"), "info")]
    # vfio-pci's own lines about a device (a NIC, a GPU before any reset) are no GPU driver's error
    nic = ("[    4.000001] amdgpu 0000:07:00.0: amdgpu: SMU is initialized successfully!\n"
           "[    4.100001] vfio-pci 0000:81:00.1: failed to enable INTx (err -22)\n")
    assert _findings(tmp_path, nic) == {}


def test_an_nvidia_drm_error_line_in_its_bracketed_form_is_a_lead(tmp_path: Path) -> None:
    log = ("[ 7711.000001] [drm:__nv_drm_gem_alloc [nvidia_drm]] *ERROR* [nvidia-drm] [GPU ID 0x00000400] "
           "Failed to allocate memory for gem object\n")
    found = _findings(tmp_path, log)
    key = (UNNAMED, "a module of nvidia, bus id not in the log")
    assert set(found) == {key} and found[key]["evidence"]["lines"][0].endswith("Failed to allocate memory for gem object")
    # NVIDIA's modules are one driver: an NVRM error and an nvidia-drm error of the same log are one lead
    nvrm = "[ 7710.000001] NVRM: nvCheckFailedNoLog: Check failed: NV_OK == status @ made_up_file.c:120\n"
    found = _findings(tmp_path, nvrm + log)
    assert set(found) == {key} and found[key]["evidence"]["times"] == 2


def _oops(task: str, rip: str) -> str:
    return ("[    3.410001] nvidia: loading out-of-tree module taints kernel.\n"
            "[    3.420002] BUG: kernel NULL pointer dereference, address: 0000000000000088\n"
            "[    3.420003] #PF: supervisor write access in kernel mode\n"
            "[    3.420004] Oops: 0002 [#1] PREEMPT SMP NOPTI\n"
            f"[    3.420005] CPU: 3 PID: 412 Comm: {task} Tainted: G           O      6.1.12 #1\n"
            f"[    3.420006] RIP: 0010:{rip}+0x1a/0x90 [nvidia]\n"
            "[    3.420007] RSP: 0018:ffffc90000a1bb10 EFLAGS: 00010246\n")


def test_a_kernel_oops_in_a_gpu_driver_while_it_loads_is_a_driver_that_did_not_come_up(tmp_path: Path) -> None:
    for task in ("modprobe", "systemd-udevd"):
        found = _findings(tmp_path, _oops(task, "osInitRegistry"))
        key = ("module_init_failed", "a module of nvidia, bus id not in the log")
        assert set(found) == {key}, task
        f = found[key]
        assert f["severity"] == "critical" and f["evidence"]["message"] == "driver_load_oops"
        assert "BUG: kernel NULL pointer dereference" in f["evidence"]["log"]
    # the same oops in a running driver (a program's task) is not a load that failed: the kernel crashed in the
    # driver (FX68C: gpu_driver_oops on the node, its RIP line no lead of its own)
    running = _findings(tmp_path, _oops("python3", "osInitRegistry"))
    assert set(running) == {("gpu_driver_oops", "node")}
    # a WARNING's trace at load (no oops header) is no crash
    warning = ("[    3.420002] WARNING: CPU: 3 PID: 412 at kernel/module.c:120 foo+0x1/0x2\n"
               "[    3.420005] CPU: 3 PID: 412 Comm: modprobe Tainted: G           O      6.1.12 #1\n"
               "[    3.420006] RIP: 0010:osInitRegistry+0x1a/0x90 [nvidia]\n")
    assert all(f["evidence"]["message"] != "driver_load_oops" for f in _findings(tmp_path, warning).values())


def test_the_open_modules_gsp_rm_that_cannot_run_on_the_gpu_is_the_reason_it_did_not_initialise(
        tmp_path: Path) -> None:
    log = ("[   21.100001] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  520.61.05  Release Build\n"
           "[   21.200002] NVRM kgspInitRm_IMPL: missing NVDEC0 engine, cannot initialize GSP-RM\n"
           "[   21.200003] NVRM RmInitAdapter: Cannot initialize GSP firmware RM\n"
           "[   21.200004] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x62:0x56:1701)\n"
           "[   21.200005] NVRM: GPU 0000:3b:00.0: rm_init_adapter failed, device minor number 0\n")
    found = _findings(tmp_path, log)
    assert set(found) == {("module_init_failed", "0000:3B:00.0")}
    f = found[("module_init_failed", "0000:3B:00.0")]
    assert f["evidence"]["message"] == "unsupported_by_driver"
    assert "proprietary" in f["fix"] and "BAR" not in f["fix"]
