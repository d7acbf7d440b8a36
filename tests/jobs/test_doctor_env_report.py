"""doctor on a software-stack environment report (issue 46, dev set dev_m_env as a class): a GPU build of the
framework that says it cannot use a GPU is a finding named from the report's own lines; a CPU-only build and a
report whose framework uses its GPUs are never one."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, capture_json

_HEAD = "Collecting environment information...\nPyTorch version: {torch}\nIs debug build: False\n" \
        "CUDA used to build PyTorch: {cuda}\nROCM used to build PyTorch: N/A\n\nOS: Ubuntu 22.04.4 LTS (x86_64)\n"


def _report(torch: str, cuda: str, available: str, gpus: str, driver: str) -> str:
    return _HEAD.format(torch=torch, cuda=cuda) + (
        f"Is CUDA available: {available}\nCUDA runtime version: 12.1.105\nGPU models and configuration: {gpus}\n"
        f"Nvidia driver version: {driver}\ncuDNN version: Could not collect\nHIP runtime version: N/A\n")


def test_a_cuda_build_that_sees_no_gpu_and_no_driver_is_no_device_visible(tmp_path: Path) -> None:
    text = _report("2.2.2+cu121", "12.1", "False", "Could not collect", "Could not collect")
    data = capture_json(tmp_path, text)
    (found,) = data["findings"]  # type: ignore[misc]
    assert (found["cause"], found["severity"]) == ("framework_sees_no_module", "warn")
    assert "no device is visible" in found["evidence"]["log"] and "CUDA 12.1 build" in found["evidence"]["log"]


def test_a_driver_older_than_the_builds_cuda_major_is_the_mismatch(tmp_path: Path) -> None:
    text = _report("2.2.2+cu121", "12.1", "False", "GPU 0: Tesla T4", "470.223.02")
    assert capture_findings(tmp_path, text) == {("driver_runtime_mismatch", None): "critical"}


def test_gpus_listed_by_a_driver_new_enough_are_unusable_to_the_runtime(tmp_path: Path) -> None:
    text = _report("2.2.2+cu121", "12.1", "False", "GPU 0: NVIDIA A100-PCIE-40GB", "550.90.07")
    data = capture_json(tmp_path, text)
    (found,) = data["findings"]  # type: ignore[misc]
    assert found["cause"] == "framework_sees_no_module" and "cannot reach them" in found["evidence"]["log"]


def test_a_cpu_only_build_is_never_a_finding(tmp_path: Path) -> None:
    text = _report("2.4.1+cpu", "None", "False", "No CUDA", "No CUDA")
    data = capture_json(tmp_path, text)
    assert data["findings"] == [] and any("CPU-only build" in n for n in data["notes"])  # type: ignore[union-attr]


def test_a_framework_using_its_gpus_reads_clear_with_what_was_read(tmp_path: Path) -> None:
    text = _report("2.2.2+cu121", "12.1", "True", "\nGPU 0: NVIDIA RTX A5000\nGPU 1: NVIDIA RTX A5000\n", "535.161.08")
    data = capture_json(tmp_path, text)
    assert data["findings"] == []
    assert any("2 GPU(s) named; driver 535.161.08" in n for n in data["notes"])  # type: ignore[union-attr]


def test_a_hugging_face_env_saying_false_for_a_cuda_wheel_is_a_finding(tmp_path: Path) -> None:
    text = "- Platform: Linux-6.8.0-x86_64\n- PyTorch version (GPU?): 2.1.0+cu118 (False)\n- Using GPU in script?: yes\n"
    assert capture_findings(tmp_path, text) == {("framework_sees_no_module", None): "warn"}


def test_a_report_that_names_no_build_no_gpu_and_no_driver_is_not_judged(tmp_path: Path) -> None:
    """check_env's 'CUDA available: False' beside a torch version without a build tag: nothing says a GPU was
    expected, so nothing is invented."""
    text = "sys.platform: linux\nCUDA available: False\nPyTorch: 2.0.1\nTorchVision: 0.15.2\n"
    data = capture_json(tmp_path, text)
    assert data["findings"] == [] and any("whether it expects a GPU is not said" in n for n in data["notes"])  # type: ignore[union-attr]


def test_detectron2_saying_no_gpu_for_a_cuda_wheel_is_a_finding(tmp_path: Path) -> None:
    text = ("PyTorch                 1.13.1+cu117 @/usr/lib/python3/dist-packages/torch\n"
            "GPU available           No: torch.cuda.is_available() == False\n")
    assert capture_findings(tmp_path, text) == {("framework_sees_no_module", None): "warn"}


def test_no_proc_version_file_is_the_module_not_loaded(tmp_path: Path) -> None:
    text = "$ cat /proc/driver/nvidia/version\ncat: /proc/driver/nvidia/version: No such file or directory\n"
    assert capture_findings(tmp_path, text) == {("no_modules_visible", None): "critical"}
