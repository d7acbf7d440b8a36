"""R7A (issue 46): a host or container whose device files, kernel driver or user-space provider are not there, one
verdict each: rocminfo's 'Unable to open /dev/kfd read-write: <strerror>' (ROCR-Runtime rocminfo.cc CheckInitialState),
amdgpu's '<ASIC> not supported in kfd' on the one AMD GPU lspci lists, /dev/nvidia* missing (GNU/busybox ls) with
and without the module loaded, libibverbs' provider warnings (rdma-core libibverbs/init.c, dynamic_driver.c) and
ibv_devinfo's '0 HCAs found', NVML's DriverNotLoaded as Rust's nvml-wrapper panics with it, and nvidia-smi's failure
as a Python exporter logs it (bytes repr)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_triples

AN = Path(__file__).parents[1] / "data" / "captures" / "fresh_an"


def _loud(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> set[tuple[str, str, str]]:
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code != 2, text
    return {(cause, sev, module) for cause, sev, module in found if sev in ("warn", "critical")}


@pytest.mark.parametrize(
    ("text", "cause", "severity"),
    [
        (
            "$ rocminfo\nROCk module version 6.7.0 is loaded\nUnable to open /dev/kfd read-write: Invalid argument",
            "framework_sees_no_module",
            "warn",
        ),
        ("ROCk module is loaded\nUnable to open /dev/kfd read-write: No such device", "framework_sees_no_module", "warn"),
        ("hsakmt: Failed to open /dev/dri/renderD128: Permission denied", "device_permissions", "warn"),
        (
            "lsmod | grep nvidia\nnvidia              14409728  369 nvidia_uvm,nvidia_modeset\n$ ls -l /dev/nvidia*\n"
            "ls: cannot access '/dev/nvidia*': No such file or directory",
            "gpu_device_files_missing",
            "warn",
        ),
        (
            "$ sudo nvidia-modprobe -u -c0\n$ echo $?\n1\n$ ls /dev/nvidia-uvm\n"
            "ls: /dev/nvidia-uvm: No such file or directory",
            "gpu_device_files_missing",
            "warn",
        ),
        ("$ ls /dev/nvidia*\nls: cannot access '/dev/nvidia*': No such file or directory", "no_modules_visible", "critical"),
        (
            "$ ibv_devinfo\nlibibverbs: Warning: no userspace device-specific driver found for "
            "/sys/class/infiniband_verbs/uverbs0\nNo IB devices found",
            "rdma_no_usable_device",
            "warn",
        ),
        (
            "# ibv_devinfo -l\nlibibverbs: Warning: couldn't load driver 'libmlx5-rdmav2.so': libmlx5-rdmav2.so: cannot "
            "open shared object file: No such file or directory\n0 HCAs found:",
            "rdma_no_usable_device",
            "warn",
        ),
        ("$ ibv_devinfo\nFailed to get IB devices list: Function not implemented", "rdma_no_usable_device", "warn"),
        (
            "thread 'main' panicked at 'Failed to initialize nvml: DriverNotLoaded', src/main.rs:37:31",
            "no_modules_visible",
            "critical",
        ),
        (
            "2019-10-01 10:00:01 - ERROR - nvidia.py:168 - command '['nvidia-smi', '-q', '-x']' return with error (code 9):"
            ' b"NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver."',
            "no_modules_visible",
            "critical",
        ),
    ],
)
def test_class_lines_read(text: str, cause: str, severity: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (cause, severity) in {(c, s) for c, s, _ in _loud(text, tmp_path, capsys)}


@pytest.mark.parametrize(
    "text",
    [
        # rdma-core trying a provider its config names while mlx5 claims the HCA: routine
        "$ ibv_devinfo\nlibibverbs: Warning: couldn't load driver 'librxe-rdmav34.so': librxe-rdmav34.so: cannot open "
        "shared object file: No such file or directory\nhca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n"
        "\tfw_ver:\t\t\t\t28.39.1002",
        "$ ls /dev/nvidia*\n/dev/nvidia0  /dev/nvidiactl  /dev/nvidia-uvm  /dev/nvidia-uvm-tools",
        # a job's view (Slurm's device cgroup) holds one GPU's node by design
        "$ srun --gres=gpu:1 ls -l /dev/nvidia{0..1}\n/usr/bin/ls: cannot access '/dev/nvidia0': No such file or directory",
        "$ rocminfo\nROCk module is loaded\n=====================\nHSA System Attributes\n=====================\n"
        "Runtime Version:         1.1",
    ],
)
def test_healthy_lines_clear(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _loud(text, tmp_path, capsys) == set()


def test_kfd_asic_on_the_one_amd_gpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (
        "Unable to open /dev/kfd read-write: Cannot allocate memory\nhsa api call failure at: "
        "/src/rocminfo/rocminfo.cc:1142\nCall returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to "
        "allocate the necessary resources.\n[    3.548555] kfd kfd: amdgpu: PITCAIRN  not supported in kfd\n"
        "01:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Curacao PRO [Radeon R7 370]"
    )
    assert ("framework_sees_no_module", "warn") in {
        (c, s) for c, s, m in _loud(text, tmp_path, capsys) if m.endswith("01:00.0")
    }


@pytest.mark.parametrize(
    ("name", "cause"),
    [
        ("rocminfo_rocmbuild4043_mi300x_container_kfd_invalid", "framework_sees_no_module"),
        ("cuda_quadrants766_dev_nvidia_missing_container", "gpu_device_files_missing"),
        ("ibv_devinfo_nvcaffe590_container_0_hcas", "rdma_no_usable_device"),
        ("nvml_aleominer14_driver_not_loaded", "no_modules_visible"),
        ("nvidia-smi_openpai3537_job_exporter_smi_failed", "no_modules_visible"),
    ],
)
def test_batch_an_rows(name: str, cause: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (AN / f"{name}.txt").read_text(encoding="utf-8")
    assert cause in {c for c, _, _ in _loud(text, tmp_path, capsys)}
