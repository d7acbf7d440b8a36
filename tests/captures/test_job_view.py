"""The GPUs a job or a container sees (issue 46, R3A): enroot's NVIDIA hook without nvidia-container-cli (pyxis'
relay of it), a cgroup.conf that does not constrain devices beside a GPU job, srun tasks that each list their own
'GPU 0' on one node (not two nodes), one task or a cgroup-filtered view printing 'No devices were found' (the view's,
warn, never the node's modules missing), and CUDA's error 46 on the one GPU CUDA_VISIBLE_DEVICES gives a job.
Written in the tools' own forms (enroot's common::err '[ERROR] ', pyxis' 'slurmstepd: error: pyxis: ', srun --label)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

AF = Path(__file__).resolve().parents[1] / "data" / "captures" / "fresh_af"
UUID_A = "GPU-0a1b2c3d-1111-2222-3333-444455556666"
UUID_B = "GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff"


def _doctor(capsys: pytest.CaptureFixture[str], path: Path) -> list[dict]:
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    assert code != 2, err
    return json.loads(out)["findings"]


def _written(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> list[dict]:
    path = tmp_path / "job.txt"
    path.write_text(text)
    return _doctor(capsys, path)


def _causes(found: list[dict]) -> set[tuple[str, str]]:
    return {(f["cause"], f["severity"]) for f in found}


@pytest.mark.parametrize(
    "prefix",
    ["", "slurmstepd: error: pyxis:     ", "[2026-03-02T10:11:12.345] error: pyxis:     "],
)
def test_enroot_hook_without_the_container_cli_is_the_nodes_setup(capsys, tmp_path, prefix) -> None:
    text = (
        "pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.01-py3\n"
        "slurmstepd: error: pyxis: container start failed with error code: 1\n"
        f"{prefix}[ERROR] Command not found: nvidia-container-cli, see https://github.com/NVIDIA/libnvidia-container\n"
        f"{prefix}[ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1\n"
        "slurmstepd: error: pyxis: couldn't start container\n"
    )
    found = _written(capsys, tmp_path, text)
    assert _causes(found) == {("gpu_config_mismatch", "warn")}
    assert "libnvidia-container" in found[0]["fix"]


def test_a_failed_hook_alone_is_said_and_a_pyxis_error_without_it_is_not_a_gpu_fault(capsys, tmp_path) -> None:
    hook = "slurmstepd: error: pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1\n"
    assert _causes(_written(capsys, tmp_path, hook)) == {("gpu_config_mismatch", "warn")}
    plain = (
        "slurmstepd: error: pyxis: container start failed with error code: 1\n"
        "slurmstepd: error: pyxis: couldn't start container\n"
    )
    assert not [f for f in _written(capsys, tmp_path, plain) if f["severity"] != "info"]


CGROUP = "CgroupAutomount=yes\nConstrainCores=yes\nConstrainRAMSpace=yes\n{devices}\n"
JOB = "$ srun -p gpu --gres=gpu:a100:1 --container-image=nvcr.io#nvidia/cuda:12.4.1-base ls /dev/nvidia0\n"


@pytest.mark.parametrize("devices", ["", "ConstrainDevices=no"])
def test_cgroup_conf_without_device_constraint_beside_a_gpu_job(capsys, tmp_path, devices) -> None:
    found = _written(capsys, tmp_path, CGROUP.format(devices=devices) + JOB)
    assert _causes(found) == {("gpu_config_mismatch", "warn")}
    assert "ConstrainDevices=yes" in found[0]["fix"]


def test_cgroup_conf_that_constrains_devices_or_has_no_gpu_job_is_clear(capsys, tmp_path) -> None:
    assert not _written(capsys, tmp_path, CGROUP.format(devices="ConstrainDevices=yes") + JOB)
    assert not _written(capsys, tmp_path, CGROUP.format(devices="") + "$ srun -n 4 hostname\n")


@pytest.mark.parametrize("label", ["{n}: ", "PROC_ID={n} ", "RANK={n} "])
def test_srun_tasks_each_listing_their_own_gpu_0_are_one_node(capsys, tmp_path, label) -> None:
    rows = "".join(f"{label.format(n=n)}GPU 0: NVIDIA A100-SXM4-80GB (UUID: {u})\n" for n, u in enumerate((UUID_A, UUID_B)))
    found = _written(capsys, tmp_path, "$ srun --label --ntasks=2 --gpus-per-task=1 nvidia-smi -L\n" + rows)
    assert not found  # read, healthy: each task's own GPU 0


@pytest.mark.parametrize("label", ["0: ", "PROC_ID=0 "])
@pytest.mark.parametrize("said", ["No devices found.", "No devices were found"])
def test_one_task_seeing_no_gpu_is_its_view(capsys, tmp_path, label, said) -> None:
    text = (
        "$ srun --ntasks=2 --gpus-per-task=1 --container-image=nvcr.io#nvidia/pytorch:24.01-py3 nvidia-smi -L\n"
        f"{label}{said}\n{label.replace('0', '1')}GPU 0: NVIDIA A100-SXM4-80GB (UUID: {UUID_B})\n"
    )
    found = _written(capsys, tmp_path, text)
    assert _causes(found) == {("container_gpu_access", "warn")}


@pytest.mark.parametrize(
    "context",
    [
        "ID       AttachType      AttachFlags     Name\n20       cgroup_device   multi           sd_devices\n",
        "DevicePolicy=closed\nDeviceAllow=/dev/null rw\n",
        "ConstrainDevices=yes\n",
    ],
)
def test_no_devices_behind_a_cgroup_device_filter_is_warn_not_modules_missing(capsys, tmp_path, context) -> None:
    found = _written(capsys, tmp_path, context + "\n$ nvidia-smi\nNo devices were found\n")
    assert _causes(found) == {("gpu_config_mismatch", "warn")}
    assert "no_modules_visible" not in {c for c, _ in _causes(found)}


def test_no_devices_on_a_bare_host_is_still_the_modules(capsys, tmp_path) -> None:
    found = _written(capsys, tmp_path, "$ nvidia-smi\nNo devices were found\n")
    assert "no_modules_visible" in {c for c, _ in _causes(found)}


@pytest.mark.parametrize(
    "visible",
    ["CUDA_VISIBLE_DEVICES=3", "Cuda Visible devices: \n3", "export CUDA_VISIBLE_DEVICES='3'"],
)
def test_error_46_lands_on_the_jobs_gpu(capsys, tmp_path, visible) -> None:
    table = (
        "|  GPU       PID  Process name                                     Usage      |\n"
        "|    3     41234  python                                              4961MB  |\n"
    )
    text = f"{table}{visible}\nRuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n"
    found = _written(capsys, tmp_path, text)
    assert [(f["cause"], f["severity"], f.get("module", "node")) for f in found] == [("other_processes", "warn", "GPU 3")]


def test_error_46_without_a_job_gpu_stays_on_the_node(capsys, tmp_path) -> None:
    found = _written(capsys, tmp_path, "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n")
    assert [(f["cause"], f.get("module", "node")) for f in found] == [("other_processes", "node")]


@pytest.mark.parametrize(
    ("name", "cause", "module"),
    [
        ("ls_pyxis47_dev_nvidia_container.txt", "gpu_config_mismatch", "node"),
        ("srun_pyxis73_gpus_per_task_no_devices.txt", "container_gpu_access", "node"),
        ("nvidia-smi_pytorch190132_cgroup_no_devices_b200.txt", "container_gpu_access", "node"),
        ("pyxis_pyxis110_nvidia_container_cli_missing.txt", "gpu_config_mismatch", "node"),
        ("nvidia-smi_jade59_cuda_busy_slurm.txt", "other_processes", "GPU 7"),
    ],
)
def test_batch_af_rows(capsys, name, cause, module) -> None:
    found = _doctor(capsys, AF / name)
    assert [(f["cause"], f["severity"], f.get("module", "node")) for f in found] == [(cause, "warn", module)]
