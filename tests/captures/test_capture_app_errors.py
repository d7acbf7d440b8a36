"""Application and runtime error lines (issue 46), as PyTorch, the CUDA runtime and NVML print them,
and gpu-burn's output (wilicc/gpu-burn's format: progress lines, then `Tested N GPUs:` and one
verdict per GPU). Each maps to the cause it means: the module's memory, the driver, or the
application itself (out of memory, an illegal address: check the application, never the
hardware's fault). Lines written in the tools' wording; the rest made up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import app_errors, gpu_burn
from gpuvet.captures.text import clean
from tests.support.helpers import call, doctor_capture, found_causes

TRACE = ("Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    loss.backward()\n"
         "RuntimeError: CUDA error: {}\nCUDA kernel errors might be asynchronously reported at some other API call, "
         "so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n")


def _severities(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> dict[tuple[str, str | None], str]:
    _, data = doctor_capture(capsys, tmp_path, text)
    return {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}


@pytest.mark.parametrize(("text", "cause", "severity"), [
    (TRACE.format("uncorrectable ECC error encountered"), "ecc_uncorrectable_since_boot", "critical"),
    (TRACE.format("an illegal memory access was encountered"), "application_cuda_error", "warn"),
    (TRACE.format("unspecified launch failure"), "application_cuda_error", "warn"),
    (TRACE.format("out of memory"), "application_out_of_memory", "info"),
    ("RuntimeError: No CUDA GPUs are available\nCUDA_ERROR_NO_DEVICE\n", "no_modules_visible", "critical"),
    ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n", "other_processes", "warn"),
    ("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.54\n",
     "driver_library_mismatch", "critical"),
    ("$ nvidia-smi\nFailed to initialize NVML: Unknown Error\n", "device_permissions", "warn"),
    ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error (run "
     "with NCCL_DEBUG=INFO for details)\n", "collective_runtime_error", "warn"),
    (">>> import torch\n>>> torch.cuda.is_available()\nFalse\n", "framework_sees_no_module", "warn"),
])
def test_each_error_line_names_what_it_means(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str,
                                            cause: str, severity: str) -> None:
    assert _severities(capsys, tmp_path, text) == {(cause, None): severity}


def test_the_module_a_line_names_is_kept_and_repeats_are_counted() -> None:
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity "
           "of 79.15 GiB of which 1.06 GiB is free.\n")
    got = app_errors.parse(clean(("  File \"train.py\", line 12, in step\n" + oom) * 3).lines)
    assert [(e.kind, e.module, e.times, e.tool) for e in got.errors] == [
        ("out_of_memory", "CUDA device 1 (process view)", 3, "PyTorch")]
    assert app_errors.parse(clean("the run was fine, no CUDA errors\n").lines).errors == []


BURN = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0a0a0a0a-1b1b-2c2c-3d3d-4e4e4e4e4e4e)\n"
        "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-5f5f5f5f-6a6a-7b7b-8c8c-9d9d9d9d9d9d)\n"
        "Initialized device 0 with 81050 MB of memory (80614 MB available, using 72553 MB of it), using FLOATS\n"
        "Initialized device 1 with 81050 MB of memory (80614 MB available, using 72553 MB of it), using FLOATS\n"
        "50.0%  proc'd: 3444 (17862 Gflop/s) - 3444 (17901 Gflop/s)   errors: 0 - {}   temps: 61 C - 63 C \n"
        "\tSummary at:   Mon Mar  4 10:12:31 UTC 2024\n\n"
        "100.0%  proc'd: 6888 (17855 Gflop/s) - 6888 (17890 Gflop/s)   errors: 0 - {}   temps: 64 C - 66 C \n"
        "Killing processes.. Freed memory for dev 0\nUninitted cublas\nFreed memory for dev 1\nUninitted cublas\n"
        "done\n\nTested 2 GPUs:\n\tGPU 0: OK\n\tGPU 1: {}\n")


def test_gpu_burn_is_read_per_gpu() -> None:
    got = gpu_burn.parse(clean(BURN.format(0, 12, "FAULTY")).lines)
    assert got.verdicts == {0: "OK", 1: "FAULTY"} and got.work == [6888, 6888] and got.errors == [0, 12]
    assert got.temps == [64, 66] and got.died == set()


def test_gpu_burn_faulty_is_wrong_results_ok_is_clear(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, BURN.format(0, 12, "FAULTY"))
    assert code == 1 and found_causes(data) == {("silent_data_corruption", "GPU 1")}
    code, data = doctor_capture(capsys, tmp_path, BURN.format(0, 0, "OK"))
    assert code == 0 and data["findings"] == []
    step = next(s for s in data["steps"] if s["check"] == "captured_errors")
    assert step["status"] == "clear"


def test_a_gpu_burn_worker_that_died_is_not_a_verdict_on_the_module(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    died = BURN.replace("- 3444 (17901", "- -1 (0").replace("- 6888 (17890", "- -1 (0").format(
        0, "-533715488  (DIED!)", "FAULTY")
    assert _severities(capsys, tmp_path, died) == {("application_cuda_error", "GPU 1"): "warn"}


@pytest.mark.parametrize(("text", "cause"), [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.\n", "no_modules_visible"),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 802: system not yet initialized\n",
     "fabric_manager_failed"),
    ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 804: forward "
     "compatibility was attempted on non supported HW\n", "driver_runtime_mismatch"),
    (TRACE.format("device-side assert triggered"), "application_cuda_error"),
    (TRACE.format("no kernel image is available for execution on the device"), "application_cuda_error"),
    (TRACE.format("invalid device ordinal"), "application_cuda_error"),
    (TRACE.format("operation not supported"), "application_cuda_error"),
])
def test_more_runtime_errors_and_any_other_cuda_error(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str,
                                                      cause: str) -> None:
    assert {c for c, _ in _severities(capsys, tmp_path, text)} == {cause}


KEPT = Path(__file__).parent.parent / "data" / "captures" / "formats_46"


def test_a_burn_that_never_ran_is_one_finding_not_an_ok(capsys: pytest.CaptureFixture[str]) -> None:
    """wilicc/gpu-burn#123: 'Couldn't init a GPU test', 0 iterations on every GPU, verdicts OK."""
    code, out, _ = call(capsys, "doctor", "--from", str(KEPT / "gpuburn_gpuburn123_v100_init_unknown_zero_work.txt"),
                        "--json")
    findings = json.loads(out)["findings"]
    assert code == 1 and [(f["cause"], f.get("module"), f["severity"]) for f in findings] == [
        ("application_cuda_error", None, "warn")]
    assert findings[0]["evidence"]["idle"] == ["GPU 0", "GPU 1", "GPU 2", "GPU 3"]
    code, out, _ = call(capsys, "inventory", "--from", str(KEPT / "gpuburn_gpuburn123_v100_init_unknown_zero_work.txt"),
                        "--json")
    assert [m["model"] for m in json.loads(out)["modules"]] == ["Tesla V100-SXM2-32GB"] * 8


@pytest.mark.parametrize(("text", "cause"), [
    ("[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: "
     "WorkNCCL(SeqNum=8721, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600342 milliseconds "
     "before timing out.\n", "collective_runtime_error"),
    ("docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n",
     "container_gpu_unavailable"),  # FX68F: the container's GPU set-up, not no GPU on the node
    ("nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.\n", "no_modules_visible"),
    ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:1960] Cannot dlopen some GPU libraries. Skipping "
     "registering GPU devices...\n", "framework_sees_no_module"),
])
def test_collective_container_and_framework_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str,
                                                   cause: str) -> None:
    assert {c for c, _ in _severities(capsys, tmp_path, text)} == {cause}


def test_lines_that_only_mention_the_words_are_not_errors() -> None:
    calm = ("Using GPU 0 for training\nCUDA available: True\nNCCL version 2.18.1+cuda12.1\n"
            "NVIDIA driver 550.54.15 is loaded\n")
    assert app_errors.parse(clean(calm).lines).errors == []


# --- issue 46 review: only lines shaped as runtime output count; CUDA's device numbers are the process's ---

@pytest.mark.parametrize("text", [
    # a grep -rn hit on source code: a string literal and a comment that name errors
    "$ grep -rn ECC myapp/\nmyapp/retry.py:14:    if \"uncorrectable ECC error encountered\" in str(e) and device == 2:\n"
    "myapp/retry.py:15:        # cudaErrorECCUncorrectable on cuda:2 means we should drain\n",
    # a comment inside a traceback's source lines
    "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
    "    # retry on CUDA error: an illegal memory access was encountered\n    x = model(batch)\n",
    # the line that raised, as a traceback prints it
    "  File \"x.py\", line 3, in <module>\n    raise RuntimeError(\"CUDA error: uncorrectable ECC error encountered\")\n",
    # prose quoting an error
    "I once saw 'Failed to initialize NVML: Driver/library version mismatch' on this box but a reboot fixed it.\n",
    "I once saw Failed to initialize NVML: Driver/library version mismatch but a reboot fixed it\n",
    "// cudaErrorECCUncorrectable: drain the node\n",
])
def test_quoted_commented_or_coded_errors_are_not_error_lines(text: str) -> None:
    assert app_errors.parse(clean(text).lines).errors == []


@pytest.mark.parametrize(("text", "kind"), [
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered\n", "ecc_uncorrectable"),
    ("[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered\n", "illegal_address"),
    ("2024-03-04 10:12:31.123 ERROR train: CUDA error: unspecified launch failure\n", "launch_failure"),
    ("Failed to initialize NVML: Driver/library version mismatch\n", "nvml_mismatch"),
    ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error\n",
     "nccl_cuda"),
    ("localhost: Test CUDA failure common.cu:986 'invalid device ordinal'\n", "invalid_ordinal"),
    ("node1:1234:1301 [2] include/alloc.h:48 NCCL WARN Cuda failure 'an illegal memory access was encountered'\n",
     "illegal_address"),
    ("logs/run.log:1234:RuntimeError: CUDA error: uncorrectable ECC error encountered\n", "ecc_uncorrectable"),
    ("cudaGetDeviceCount returned 100\n-> no CUDA-capable device is detected\n", "no_device"),
])
def test_runtime_lines_still_count(text: str, kind: str) -> None:
    assert [e.kind for e in app_errors.parse(clean(text).lines).errors] == [kind]


def test_a_cuda_device_number_is_the_process_view_and_a_bus_id_joins_a_module() -> None:
    oom = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3; 79.15 GiB total "
           "capacity; 76.10 GiB already allocated)\n")
    (e,) = app_errors.parse(clean(oom).lines).errors
    assert e.module == "CUDA device 3 (process view)"
    (e,) = app_errors.parse(clean("RuntimeError: CUDA error: uncorrectable ECC error encountered on cuda:1\n").lines).errors
    assert e.module == "CUDA device 1 (process view)"
    bus = "ERROR: GPU 0000:2d:00.0: cudaErrorECCUncorrectable\n"  # made up: a program that prints the bus id
    (e,) = app_errors.parse(clean(bus).lines).errors
    assert e.module == "0000:2d:00.0"


def test_the_doctor_names_no_nvidia_smi_index_for_a_cuda_device(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    listing = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee)\n"
               "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeef)\n")
    _, data = doctor_capture(capsys, tmp_path, listing + "RuntimeError: CUDA error: uncorrectable ECC error "
                             "encountered on cuda:1\n")
    assert ("ecc_uncorrectable_since_boot", "CUDA device 1 (process view)") in found_causes(data)


def test_an_uncaught_cpp_exception_names_its_cuda_error_after_what(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    """libstdc++'s terminate prints 'what():' and the tool's 'Error (file.cpp:N):' before CUDA's message:
    a printed line; CUDA's 'system not yet initialized' (802) is an NVSwitch fabric that was not set up."""
    text = ("$ gpu_burn -d 60\nBurning for 60 seconds.\nGPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n"
            "terminate called after throwing an instance of 'std::runtime_error'\n"
            "  what():  Error (gpu_burn-drv.cpp:298): system not yet initialized\n")
    assert [e.kind for e in app_errors.parse(clean(text).lines).errors] == ["system_not_ready"]
    assert _severities(capsys, tmp_path, text) == {("fabric_manager_failed", None): "critical"}
    coded = "    if (err) throw std::runtime_error(\"system not yet initialized\");\n"  # the source, not its output
    assert app_errors.parse(clean(coded).lines).errors == []


def test_the_cuda_samples_error_code_print_is_the_runtimes_message() -> None:
    """The CUDA samples print cudaGetErrorString after '(error code …' (issue 46 dev set); prose that only
    names the message is still not a printed error."""
    sample = ("[Vector addition of 50000 elements]\n"
              "Failed to allocate device vector A (error code all CUDA-capable devices are busy or unavailable)!\n")
    got = app_errors.parse(clean(sample).lines)
    assert [(e.kind, e.line) for e in got.errors] == [("devices_busy", 2)]
    prose = "it says all CUDA-capable devices are busy or unavailable on some nodes\n"
    assert app_errors.parse(clean(prose).lines).errors == []
