"""Issue 46: the GPU APIs' own error names (knowledge/api_errors.yaml) printed in any surrounding are findings of
their meaning class, on the module the line names ('bus id not in the log' for a module's fault where it names
none); healthy output holding 'error' words and 'Not Supported' cells gives none. Lines written here in the tools'
wording, the prefixes made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import api_errors, app_errors
from gpuvet.captures.text import clean
from gpuvet.knowledge.api_errors import CLASSES, api_table
from tests.support.helpers import doctor_capture


def _findings(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> set[tuple[str, str, str | None]]:
    _, data = doctor_capture(capsys, tmp_path, text)
    return {(f["cause"], f["severity"], f.get("module")) for f in data["findings"]}


@pytest.mark.parametrize(("text", "cause", "severity", "module"), [
    # NVML's 'GPU is lost' under a miner's prefix, the card named by its UUID
    ("TeamRedMiner [2023-01-01 10:00:00] WARN: nvmlDeviceGetFanSpeed(GPU-5f5f5f5f-6a6a-7b7b-8c8c-9d9d9d9d9d9d) "
     "failed: GPU is lost\n", "module_fell_off_bus", "critical", "GPU-5f5f5f5f-6a6a-7b7b-8c8c-9d9d9d9d9d9d"),
    # a driver-API name KINDS does not list, behind a glog prefix: a contained error is the process's (REVFIX65:
    # CUDA's must-relaunch, the driver's RESTART_APP, DCGM's health WARN), warn as a quote of it is
    ("W0102 10:00:00.123 4412 xla.cc:88] cuMemcpyDtoH failed: CUDA_ERROR_CONTAINED\n", "module_contained_error",
     "warn", "bus id not in the log"),
    # Level Zero: the device lost, and the driver not initialised
    ("E0301 12:00:00.000 4411 ze_runtime.cpp:77] zeCommandQueueSynchronize failed: ZE_RESULT_ERROR_DEVICE_LOST\n",
     "module_fell_off_bus", "critical", "bus id not in the log"),
    ("ERROR 01-02 10:00:00 engine.py:12] zeInit failed: ZE_RESULT_ERROR_UNINITIALIZED\n", "api_reports_driver_state",
     "warn", None),
    # HIP: a name hip_errors read as the application's, whose class is the module's memory
    ("hipMalloc failed: hipErrorECCNotCorrectable\n", "api_reports_module_fault", "critical", "bus id not in the log"),
    # NCCL's result names
    ("[rank1]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
     "prematurely.\n", "collective_runtime_error", "warn", None),
    ("[rank3]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, invalid usage (run with "
     "NCCL_DEBUG=WARN for details), NCCL version 2.20.5\n[rank3]: ncclInvalidUsage: This usually reflects invalid "
     "usage of NCCL library.\n", "application_api_error", "warn", None),
    # DCGM's return code in a Go agent's logfmt record; NVML's printed words with the driver's index
    ('time="2024-01-01T10:00:00Z" level=error msg="Failed to get field values" error="DCGM_ST_GPU_IS_LOST"\n',
     "module_fell_off_bus", "critical", "bus id not in the log"),
    ("Mar 02 11:22:33 gpu-node-3 nv-hostengine[2211]: ERROR [DcgmCacheManager.cpp:512] nvmlDeviceGetHandleByIndex "
     "for GPU 3 returned: Unknown Error\n", "api_reports_driver_state", "warn", "GPU 3"),
])
def test_an_api_error_name_printed_in_any_surrounding_is_its_class_finding(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, cause: str, severity: str,
        module: str | None) -> None:
    assert _findings(capsys, tmp_path, text) == {(cause, severity, module)}


def test_a_diagnostic_that_could_not_run_is_a_finding_naming_why(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    text = ("$ dcgmi diag -r 3\nError: Unable to complete diagnostic for group 2147483647. Return: (-40) The "
            "third-party Profiling module returned an unrecoverable error.\n")
    _, data = doctor_capture(capsys, tmp_path, text)
    [found] = data["findings"]
    assert (found["cause"], found["severity"]) == ("dcgm_diag_not_run", "warn")
    assert "Profiling module returned an unrecoverable error" in found["evidence"]["log"]


def test_healthy_output_with_error_words_and_not_supported_cells_gives_no_finding() -> None:
    healthy = ("GPU 0 errors: 0\nNVML Version : 535.104.05\n    Fan Speed                         : [Not Supported]\n"
               "    Memory-Usage : Not Supported\nrecords checked: 12 errors: 0 (no error)\n"
               "node1:12:12 [0] NCCL INFO NET/IB : No device found. errors: 0\n"
               "nvmlDeviceGetPowerManagementLimit: Not Supported\nDCGM_ST_OK\nZE_RESULT_SUCCESS\n")
    assert app_errors.parse(clean(healthy).lines).errors == []


def test_source_code_naming_an_error_is_not_a_printed_one() -> None:
    code = ("    if (rc == NVML_ERROR_GPU_IS_LOST) {\n// returns ZE_RESULT_ERROR_DEVICE_LOST when the device is gone\n"
            "src/dcgm.go:42:    case DCGM_ST_GPU_IS_LOST:\n")
    assert app_errors.parse(clean(code).lines).errors == []


def test_every_class_has_its_cause_and_every_name_one_class() -> None:
    table = api_table()
    assert set(table.causes) == set(CLASSES)
    for api in table.apis:
        for cls in CLASSES:
            assert table.cause(f"{api.kind}_{cls}") is not None
    found = table.class_of("NVML_ERROR_GPU_IS_LOST")
    assert found is not None and found[1] == "lost"
    unlisted = table.class_of("DCGM_ST_SOMETHING_NEW")
    assert unlisted is not None and unlisted[1] == "driver"  # an API's name the table lacks: its default class


def test_judged_by_marks_exactly_the_names_a_specific_kind_reads_first() -> None:
    """A name one of app_errors' specific KINDS matches is judged by that kind, never by its class here: the
    yaml's judged_by says so for each such name, and names no other (so the table and KINDS cannot drift)."""
    built = set(api_errors.kinds()) | {"cuda_runtime_error"}
    specific = [(k, p) for k, p in app_errors.KINDS.items() if k not in built]
    for api in api_table().apis:
        first = {n: next(k for k, p in specific if p.search(n)) for n in api.names
                 if any(p.search(n) for _, p in specific)}
        assert api.judged_by == first, api.name
