"""Issue 46 (MGL): a GPU management library's status as a program logs it (its number after the library's context,
a binding's exception class, the tool's own words for an init that failed) is read as the enum's name is, and a
code of class none (Not Supported, success, a call the user's rights refuse) is read and clear. Lines written here
in the programs' shapes (klog, xpumd's, Python tracebacks, JSON logs); codes from the libraries' headers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import app_errors, mgmt_status
from gpuvet.captures.text import clean
from tests.support.helpers import doctor_capture

_KLOG = "E1207 12:00:00.000000       1 metrics.go:45] "


def _findings(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> tuple[int, set[tuple[str, str, str]]]:
    code, data = doctor_capture(capsys, tmp_path, text)
    return code, {(f["cause"], f["severity"], str(f.get("module"))) for f in data["findings"]}


@pytest.mark.parametrize(
    ("text", "cause", "severity", "module"),
    [
        # NVML's UNKNOWN (999) from a device query, as a vGPU monitor logs it: the driver could not answer
        (_KLOG + "nvml get memory error ret=999\n", "api_reports_driver_state", "warn", "None"),
        (
            _KLOG + "nvmlDeviceGetTemperature for GPU 0000:3b:00.0 returned 999\n",
            "api_reports_driver_state",
            "warn",
            "0000:3b:00.0",
        ),
        # GPU_IS_LOST (15) by number, and pynvml's exception class as a traceback's last line
        (_KLOG + "NVML error: 15\n", "module_fell_off_bus", "critical", "bus id not in the log"),
        (
            'Traceback (most recent call last):\n  File "mon.py", line 4, in <module>\n    poll()\n'
            "pynvml.nvml.NVMLError_GpuIsLost: GPU is lost\n",
            "module_fell_off_bus",
            "critical",
            "bus id not in the log",
        ),
        # LIB_RM_VERSION_MISMATCH (18) by number: the driver/library mismatch, critical as its words are
        ("nvmlInit_v2 failed with 18\n", "driver_library_mismatch", "critical", "None"),
        # LIBRARY_NOT_FOUND: pynvml's class is the library not loadable, not the driver's state
        (
            "pynvml.nvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found\n",
            "nvml_library_not_loadable",
            "warn",
            "None",
        ),
        # Level Zero's init refused, as xpumd prints it (the code in hex without 0x) and as its exception
        (
            "[2022-06-08 16:43:10.940] [E] [2925-2925] GPUDeviceStub::init zeInit error: 78000001\n",
            "api_reports_driver_state",
            "warn",
            "None",
        ),
        (
            "[2022-06-08 16:43:10.940] [E] [2925-2925] xpumInit LevelZeroInitializationException\n",
            "api_reports_driver_state",
            "warn",
            "None",
        ),
        ("zeCommandQueueSynchronize returned 0x70000001\n", "module_fell_off_bus", "critical", "bus id not in the log"),
        # AMD SMI's init, HLML's lost module
        ("amdsmi_init failed: AMDSMI_STATUS_DRM_ERROR\n", "api_reports_driver_state", "warn", "None"),
        (
            "hlml_device_get_handle_by_index failed: HLML_ERROR_AIP_IS_LOST\n",
            "module_fell_off_bus",
            "critical",
            "bus id not in the log",
        ),
        # NVML's name after the call, the module named by its bus id; go-nvml's name the same
        (
            "nvmlDeviceGetPowerUsage returned NVML_ERROR_GPU_IS_LOST for GPU 0000:3b:00.0\n",
            "module_fell_off_bus",
            "critical",
            "0000:3b:00.0",
        ),
        (
            "failed to get nvml device handle for GPU 0000:3b:00.0: ERROR_GPU_IS_LOST\n",
            "module_fell_off_bus",
            "critical",
            "0000:3b:00.0",
        ),
        # a JSON log line's message
        (
            json.dumps(
                {"level": "error", "ts": "2026-12-07T12:00:00Z", "caller": "nvml/collector.go:88", "msg": "nvml error: 999"}
            )
            + "\n",
            "api_reports_driver_state",
            "warn",
            "None",
        ),
    ],
)
def test_a_status_by_number_binding_or_words_is_its_names_finding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, cause: str, severity: str, module: str
) -> None:
    assert _findings(capsys, tmp_path, text)[1] == {(cause, severity, module)}


@pytest.mark.parametrize(
    "text",
    [
        _KLOG + "nvml get power error ret=3\n",
        "nvmlDeviceGetEncoderUtilization returned 3 (Not Supported), skipping field\n",
        "pynvml.nvml.NVMLError_NotSupported: Not Supported\n",
        "nvmlDeviceSetPersistenceMode failed: Insufficient Permissions\n",
        "pynvml.nvml.NVMLError_NoPermission: Insufficient Permissions\n",
        "failed to get clock info for GPU 0: ERROR_NOT_SUPPORTED\n",
        "nvmlInit ret=0 (NVML_SUCCESS)\n",
        "zesDeviceGetProperties: ZE_RESULT_ERROR_UNSUPPORTED_FEATURE\n",
        "hlml_device_get_power_usage: HLML_ERROR_NOT_SUPPORTED\n",
        # R7B: rocm-smi's rsmi_init failing (RSMI_STATUS_INIT_ERROR) is the tool's own start, not the driver's state
        "ERROR:root:ROCm SMI returned 8 (the expected value is 0)\n",
        "rsmi_init() failed: RSMI_STATUS_INIT_ERROR\n",
        "ERROR: GPU[0]\t: RSMI_STATUS_INIT_ERROR: An error occurred during initialization, during monitor discovery\n",
    ],
)
def test_a_code_that_is_no_fault_is_read_and_clear(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> None:
    code, found = _findings(capsys, tmp_path, text)
    assert code == 0 and not found


def test_an_init_unknown_error_by_number_is_read_as_its_words_are() -> None:
    """'nvmlInit failed: 999' is 'Failed to initialize NVML: Unknown Error' (nvml_unknown), not a query's 999."""
    text = "nvmlInit_v2 failed: ret=999\nnvmlDeviceGetPowerUsage failed: ret=999\n"
    assert [e.kind for e in app_errors.parse(clean(text).lines).errors] == ["nvml_unknown", "nvml_api_driver"]


def test_every_kind_the_forms_widen_is_one_app_errors_reads() -> None:
    assert set(mgmt_status.FORMS) <= set(app_errors.KINDS)


def test_a_miners_code_other_than_lost_and_a_question_in_a_json_message_are_not_read() -> None:
    """T-Rex's 'error code 999' is miner_lost's to leave to the kernel log; a JSON msg asking a question is a
    poster's (review 56), not the program's words."""
    miner = "20220103 10:12:00 WARN: NVML: can't get power for GPU #4, error code 999\n"
    asked = '{"ts": "2026-12-01T10:00:01Z", "msg": "What does nvml error: 999 mean?"}\n'
    assert app_errors.parse(clean(miner + asked).lines).errors == []
