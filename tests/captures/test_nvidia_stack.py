"""R6B (issue 46): NVIDIA's user-space stack's words for the driver's state, one verdict each wherever read:
NVML's init words after 'Failed to initialize NVML:' (nvmlErrorString, DCGM's nvml_error_strings.h), nvidia-docker
v1's 'Error: nvml: …', nvidia-smi's 'No devices were found' as a script's trace keeps it, a CUDA error after a
suspend/resume the text shows, the GPU's USB-C controller's I2C lines, and nccl-tests' header with no row under it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_triples

CAPTURES = Path(__file__).parents[1] / "data" / "captures"


def _loud(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> set[tuple[str, str]]:
    _, found = doctor_triples(text, tmp_path, capsys)
    return {(cause, severity) for cause, severity, _ in found if severity in ("warn", "critical")}


@pytest.mark.parametrize(
    ("text", "cause", "severity"),
    [
        ("$ nvidia-smi\nFailed to initialize NVML: Function Not Found", "driver_library_mismatch", "critical"),
        ("$ nvidia-smi\nFailed to initialize NVML: Driver Not Loaded", "no_modules_visible", "critical"),
        (
            "nvidia-docker | 2017/12/21 05:04:46 Error: nvml: Driver/library version mismatch",
            "driver_library_mismatch",
            "critical",
        ),
        ("nvidia-docker-plugin | 2017/12/21 05:04:46 Error: nvml: Driver Not Loaded", "no_modules_visible", "critical"),
        (  # a poster's words: the same cause, at most warn (doctor's as_quoted)
            "Since the update nvidia-smi prints `Failed to initialize NVML: Function Not Found` and nothing else.",
            "driver_library_mismatch",
            "warn",
        ),
        (
            "nvidia-container-cli: initialization error: nvml error: function not found",
            "driver_library_mismatch",
            "critical",
        ),
        (
            "NVIDIA: could not open the device file /dev/nvidiactl (No such file or directory).",
            "no_modules_visible",
            "critical",
        ),
        ("NVIDIA: could not open the device file /dev/nvidia0 (Input/output error).", "api_reports_driver_state", "warn"),
        (
            "[    45.123] (EE) NVIDIA(0): Failed to initialize the NVIDIA kernel module. Please see the",
            "no_modules_visible",
            "critical",
        ),
        ("+ INSTALLED_DRIVER_VERSION='No devices were found'\n+ NVIDIA_SMI_STATUS=6", "no_modules_visible", "critical"),
    ],
)
def test_nvml_words_read_as_their_fact(
    text: str, cause: str, severity: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (cause, severity) in _loud(text, tmp_path, capsys)


def test_cuda_error_after_resume_is_the_drivers_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slept = (
        "Dec 07 10:12:01 node kernel: PM: suspend entry (deep)\nDec 07 10:40:12 node kernel: PM: suspend exit\n"
        "RuntimeError: CUDA error: unspecified launch failure"
    )
    assert _loud(slept, tmp_path, capsys) == {("api_reports_driver_state", "warn")}
    ollama = 'PM: suspend exit\ntime=2024-04-19T10:00:00Z level=INFO source=gpu.go:101 msg="cudart init failure: 999"'
    assert _loud(ollama, tmp_path, capsys) == {("api_reports_driver_state", "warn")}
    awake = "RuntimeError: CUDA error: unspecified launch failure"  # no resume shown: the application's call
    assert _loud(awake, tmp_path, capsys) == {("application_cuda_error", "warn")}


def test_gpu_usb_c_controller_lines_are_benign(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (
        "[    5.396539] nvidia-gpu 0000:0a:00.3: i2c timeout error e0000000\n"
        "[    5.396546] ucsi_ccg 0-0008: i2c_transfer failed -110\n"
        "[    5.396549] ucsi_ccg 0-0008: ucsi_ccg_init failed - -110"
    )
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code != 2 and not [f for f in found if f[1] in ("warn", "critical")]


HEADER = (
    "# Using devices\n#   Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB\n"
    "#   Rank  1 uses device  1 [0x03] Tesla P100-PCIE-16GB\n\n"
    "#                                                 out-of-place                    in-place\n"
    "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res"
)


def test_nccl_header_without_rows_stall_only_where_the_text_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _loud(HEADER, tmp_path, capsys) == set()  # a cut paste: nothing judged
    assert _loud(f"{HEADER}\n^C", tmp_path, capsys) == {("collective_test_stalled", "warn")}
    said = f"all_reduce_test hangs after printing this:\n{HEADER}"
    assert _loud(said, tmp_path, capsys) == {("collective_test_stalled", "warn")}


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("fresh_al/nvidiasmi_nvdocker584_nvml_function_not_found.txt", {("driver_library_mismatch", "critical")}),
        ("fresh_al/ncclperf_nccl85_p100_allreduce_stall.txt", {("collective_test_stalled", "warn")}),
        ("fresh_am/nvsmi_pytorch163658_no_devices_after_downgrade.txt", {("no_modules_visible", "critical")}),
        ("fresh_am/ollama_ollama8426_cuda_error_after_hibernate_4060ti.txt", {("api_reports_driver_state", "warn")}),
        ("fresh_am/dmesg_ollama3751_nvidia_gpu_i2c_timeout_ucsi.txt", set()),
    ],
)
def test_scored_rows(row: str, expected: set[tuple[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (CAPTURES / row).read_text(encoding="utf-8").rstrip("\n")
    assert _loud(text, tmp_path, capsys) == expected
