"""A GPU tool that printed its own failure verdict is never "clear" (issue 46, SAFE): where no reader's finding at
warn or above covers the line, doctor gives one warn lead per file and module quoting it; a healthy run's words
(Result = PASS, GPU 0: OK, a Pass row, pass: TRUE) give none, and a line a reader already judged gets no second
finding. One test per tool, on lines written here in each tool's form."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import capture_json

LEAD = "gpu_tool_reported_failure"


def _severe(tmp_path: Path, text: str) -> list[dict[str, object]]:
    found = capture_json(tmp_path, text)["findings"]
    assert isinstance(found, list)
    return [f for f in found if f["severity"] in ("warn", "critical")]


def _lead(tmp_path: Path, text: str) -> dict[str, object]:
    leads = [f for f in _severe(tmp_path, text) if f["cause"] == LEAD]
    assert len(leads) == 1, leads
    return leads[0]


FAILING = {  # tool -> (text, the module named or None, a line the lead quotes)
    "CUDA sample": ("[CUDA Bandwidth Test] - Starting...\n Device 0: Tesla T4\n Quick Mode\n\nCUDA error at "
                    "bandwidthTest.cu:700 code=2(cudaErrorMemoryAllocation) \"cudaMallocHost(&h_in, size)\"\n"
                    "Result = FAIL\n", None, "Result = FAIL"),
    "CUDA sample in backticks": ("our deviceQuery stops with this on the second box:\n\n`cudaGetDeviceCount "
                                 "returned 3`\n`Result = FAIL`\n", None, "cudaGetDeviceCount returned 3"),
    "gpu-burn": ("rack2-n14 gpu_burn[5120]: Tested 3 GPUs:\nrack2-n14 gpu_burn[5120]: \tGPU 0: OK\n"
                 "rack2-n14 gpu_burn[5120]: \tGPU 2: FAULTY\n", "GPU 2", "GPU 2: FAULTY"),
    "dcgmi": ("What the diag printed for us:\n\n| Test | Result |\n|---|---|\n| Targeted Power | Pass |\n"
              "| Memory Bandwidth | Fail |\n", None, "| Memory Bandwidth | Fail |"),
    "rvs": ("[RESULT] [ 90211.004512] [pebb-h2d] pebb 1121 GPU 3 transfer: 12 pass: FALSE\n", "GPU 3", "pass: FALSE"),
    "rocm-smi": ("$ /opt/rocm/bin/rocm-smi --showuse\nERROR: No AMD GPUs specified\n", None, "No AMD GPUs specified"),
    "nvbandwidth": ("Running device_to_device_memcpy_write_ce.\nASSERT in expression status == 0 in void "
                    "launch() : copy.cpp:77\n", None, "ASSERT in expression status == 0"),
}
# amd-smi's statuses are each judged by what they state (below), so none is left to the lead
# npu-smi's DCMI init failure is judged now (api_reports_driver_state, with its own words): AGX1's
# tests/captures/test_capture_probes_init_access.py


@pytest.mark.parametrize("tool", list(FAILING))
def test_a_tool_failure_no_reader_judged_is_one_warn_lead_quoting_it(tmp_path: Path, tool: str) -> None:
    text, module, quoted = FAILING[tool]
    lead = _lead(tmp_path, text)
    assert lead["severity"] == "warn" and lead.get("module") == module
    ev = lead["evidence"]
    assert isinstance(ev, dict) and quoted in str(ev["log"]) and ev["count"] >= 1 and ev["lines"]
    assert "does not judge further" in str(ev["detail"]) and str(lead["fix"])


def test_lines_of_one_file_and_module_are_one_lead_with_their_count(tmp_path: Path) -> None:
    lead = _lead(tmp_path, "node7: Result = FAIL\nnode7: Result = FAIL\nnode7: Result = FAIL\nnode7: Result = FAIL\n")
    ev = lead["evidence"]
    assert isinstance(ev, dict) and ev["count"] == 4 and len(ev["lines"]) == 3  # type: ignore[arg-type]


HEALTHY = {
    "CUDA sample": "[CUDA Bandwidth Test] - Starting...\n Device 0: Tesla T4\nResult = PASS\n",
    "gpu-burn": "Tested 2 GPUs:\n\tGPU 0: OK\n\tGPU 1: OK\n",
    "dcgmi": "| Test | Result |\n|---|---|\n| Memory Bandwidth | Pass |\n| PCIe | Skip |\n",
    "rvs": "[RESULT] [ 90211.004512] [pebb-h2d] pebb 1121 GPU 3 transfer: 12 pass: TRUE\n",
    "other table": "| Unit test | Result |\n|---|---|\n| Parser | Fail |\n",  # a Fail row that is not DCGM's
}


@pytest.mark.parametrize("tool", list(HEALTHY))
def test_a_healthy_run_gives_no_lead(tmp_path: Path, tool: str) -> None:
    try:
        found = _severe(tmp_path, HEALTHY[tool])
    except (AssertionError, ValueError):  # a file gpuvet refuses (nothing read) gives no finding either
        found = []
    assert not [f for f in found if f["cause"] == LEAD]


@pytest.mark.parametrize("text", [
    "$ nvidia-smi\nUnable to determine the device handle for GPU0000:41:00.0: Unknown Error\n",
    "$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch\n",
    "Running host_to_device_memcpy_ce.\n[CUDA_ERROR_ILLEGAL_ADDRESS] an illegal memory access was encountered in "
    "expression cuStreamSynchronize(stream) in void Copy() : kernels.cu:88\n",
])
def test_a_line_a_reader_judged_gets_no_second_finding(tmp_path: Path, text: str) -> None:
    found = _severe(tmp_path, text)  # nvidia-smi's and nvbandwidth's own readers judge these lines
    assert found and not [f for f in found if f["cause"] == LEAD]


AMD_SMI_STATUS = {  # the status amd-smi prints -> the verdict its fact has wherever gpuvet reads it
    "AMDSMI_STATUS_NO_PERM - Permission Denied": ("device_permissions", "warn"),  # as /dev/kfd's 'Permission denied'
    "AMDSMI_STATUS_DRM_ERROR - Error when calling libdrm": ("api_reports_driver_state", "warn"),
    "AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded": ("no_modules_visible", "critical"),  # as NVML's
}


@pytest.mark.parametrize("status", list(AMD_SMI_STATUS))
def test_amd_smi_s_status_gets_its_fact_s_one_verdict_not_a_lead(tmp_path: Path, status: str) -> None:
    """REV64 (session 64): amd-smi's NO_PERM was a generic lead (warn) where the API table and /dev/kfd's words say
    device_permissions: one fact, one verdict."""
    text = ("$ amd-smi metric -g 0\nTraceback (most recent call last):\namdsmi.amdsmi_exception."
            f"AmdSmiLibraryException: Error code: 10 | {status}\n")
    assert [(f["cause"], f["severity"]) for f in _severe(tmp_path, text)] == [AMD_SMI_STATUS[status]]
