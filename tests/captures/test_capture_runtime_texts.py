"""Issue 46: the runtimes print their error's TEXT, not its enumerator's name (cudaGetErrorString's 'OS call failed or
operation not supported on this OS', not cudaErrorOperatingSystem), and HSA's status names stand for their own
classes: each is read as its class in knowledge/api_errors.yaml, in the wrappers that print them (PyTorch's
'CUDA error: …', CUDACHECK's 'Cuda failure N '…'', PyTorch's init warning '… Error 304: …', a sample's 'CUDA Runtime
Error: …', vLLM's 'Cuda error file:line '…''). A status that is no fault (HSA_STATUS_ERROR_NOT_SUPPORTED) and the
same words without a runtime's context give none. Lines written here in the tools' wording, the prefixes made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import app_errors, hip_errors
from gpuvet.captures.text import clean
from tests.support.helpers import doctor_capture


def _causes(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> set[tuple[str, str]]:
    _, data = doctor_capture(capsys, tmp_path, text)
    return {(f["cause"], f["severity"]) for f in data["findings"]}


DRIVER = {("api_reports_driver_state", "warn")}


@pytest.mark.parametrize(("text", "found"), [
    # the CUDA runtime's texts whose class is the driver's
    ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    torch.cuda.init()\n"
     "RuntimeError: CUDA error: initialization error\n", DRIVER),
    ("[2026-03-01 10:00:00] worker3: Cuda failure 304 'OS call failed or operation not supported on this OS'\n",
     DRIVER),
    ("/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:184: UserWarning: CUDA initialization: Unexpected "
     "error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might "
     "have already set an error? Error 304: OS call failed or operation not supported on this OS (Triggered "
     "internally at /pytorch/c10/cuda/CUDAFunctions.cpp:119.)\n", DRIVER),
    ("CUDA Runtime Error: the wait operation has timed out\n", DRIVER),
    ("E0301 10:00:00.000 77 engine.cc:41] CUDA error: PTX JIT compiler library not found\n", DRIVER),
    # the resources' texts
    ("RuntimeError: CUDA error: too many resources requested for launch\n", {("application_out_of_memory", "info")}),
    # an application text in vLLM's CUDACHECK: the generic reading, no longer none
    ("(VllmWorker rank=1 pid=812) Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:368 'invalid argument'\n",
     {("application_cuda_error", "warn")}),
    # HSA's status names by class: the runtime not initialised is the driver's state
    ("hipInit: HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the reference "
     "count of the HSA runtime is 0.\n", DRIVER),
    ("2026-03-01 10:00:00 ERROR [runner.py:88] HSA_STATUS_ERROR_RESOURCE_BUSY: the device is busy\n", DRIVER),
])
def test_a_runtime_error_text_is_read_as_its_class(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str,
                                                   found: set[tuple[str, str]]) -> None:
    assert _causes(capsys, tmp_path, text) == found


def test_a_status_that_is_no_fault_and_words_without_a_runtime_give_none() -> None:
    """HSA_STATUS_ERROR_NOT_SUPPORTED is a feature the module lacks; the runtimes' texts without a runtime's context
    on their line say nothing of whose error it was."""
    lines = clean("hsa_amd_agent_set_async_scratch_limit: HSA_STATUS_ERROR_NOT_SUPPORTED\n"
                  "2026-03-01 10:00:00 ERROR [config.py:12] unknown error while reading settings.yaml\n"
                  "ERROR: initialization error in plugin loader\n").lines
    assert app_errors.parse(lines).errors == []
    assert hip_errors.parse(lines).errors == []


@pytest.mark.parametrize(("text", "cause"), [
    # ROCm's messages quoted by a poster, read as CUDA's are: HSA's status by its class, HIP's by its kind
    ("Since this morning my node keeps printing 'HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has "
     "been invoked' and the job dies.\n", "api_reports_driver_state"),
    ("Our MI250 node logs `HIP error: invalid device function` every time I start the server.\n",
     "application_hip_error"),
    # a message whose own words hold 'may' or 'might', quoted whole: those words are the runtime's, not the poster's
    ("Since Monday my node keeps printing 'CUDA initialization: CUDA unknown error - this may be due to an "
     "incorrectly set up environment' and the job dies.\n", "framework_sees_no_module"),
])
def test_a_quoted_runtime_message_is_the_posters_report_of_its_class(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path, text: str, cause: str) -> None:
    _, data = doctor_capture(capsys, tmp_path, text)
    assert {f["cause"] for f in data["findings"]} == {cause}


@pytest.mark.parametrize("text", [
    # PyTorch's ProcessGroupNCCL: its watchdog blocked by a hung NCCL/CUDA call, and the heartbeat monitor that
    # kills the process for it
    "[rank0]:[E1102 10:14:03.112 ProcessGroupNCCL.cpp:1401] [PG 0 Rank 0] ProcessGroupNCCL's watchdog got stuck for "
    "480 seconds without making progress in monitoring enqueued collectives.\n",
    "[rank2]:[E1102 10:14:03.112 ProcessGroupNCCL.cpp:1316] [PG ID 0 PG GUID 0(default_pg) Rank 2] Heartbeat monitor "
    "timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1\n",
])
def test_the_nccl_watchdog_stuck_or_its_heartbeat_timed_out_is_a_collective_error(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> None:
    assert _causes(capsys, tmp_path, text) == {("collective_runtime_error", "warn")}
