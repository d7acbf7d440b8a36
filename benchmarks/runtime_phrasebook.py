"""Issue 46: the GPU runtimes' and tools' own error messages, read as a class. Each message is the text its
library prints (cudaGetErrorString/cuGetErrorString, nvmlErrorString, hipGetErrorString, HSA's status names,
ncclGetErrorString, Level Zero's ze_result_t, rocm-smi/amd-smi, nccl-tests, PyTorch's and XLA's wrappers), set in
the ways a log shows it: bare as the tool prints it, inside a Python traceback's error line, behind a logger's
prefix, and quoted by a poster. ``gpuvet doctor --from`` (in-process) reads each; a message is counted read as
its class (the expected cause found), generic (another finding only) or not read. A message whose class is
none ('not supported', success, a retry the library recovered from) must give no finding.

    .venv/bin/python benchmarks/runtime_phrasebook.py [--show generic,missed,false]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import read, tally_said

HW, LOST, DRV, RES, APP = (
    "api_reports_module_fault",
    "module_fell_off_bus",
    "api_reports_driver_state",
    "application_out_of_memory",
    "application_cuda_error",
)
OOM = RES
COLL = "collective_runtime_error"
HIP_APP = "application_hip_error"
API_APP = "application_api_error"

# (framing family, message, expected cause or None for no finding). The family decides the framings:
# 'cuda' messages are framed as the runtime prints its text ('CUDA error: <text>'), the others as they stand.
MESSAGES: list[tuple[str, str, str | None]] = [
    # cudaGetErrorString / cuGetErrorString texts (CUDA 12.x; the driver's strings table)
    ("cuda", "uncorrectable ECC error encountered", "ecc_uncorrectable_since_boot"),
    ("cuda", "uncorrectable NVLink error detected during the execution", "nvlink_uncorrectable"),
    ("cuda", "an illegal memory access was encountered", APP),
    ("cuda", "unspecified launch failure", APP),
    ("cuda", "out of memory", OOM),
    ("cuda", "no CUDA-capable device is detected", "no_modules_visible"),
    ("cuda", "CUDA driver version is insufficient for CUDA runtime version", "driver_runtime_mismatch"),
    ("cuda", "CUDA-capable device(s) is/are busy or unavailable", "other_processes"),
    ("cuda", "system not yet initialized", "fabric_manager_failed"),
    ("cuda", "device-side assert triggered", APP),
    ("cuda", "no kernel image is available for execution on the device", APP),
    ("cuda", "the launch timed out and was terminated", APP),
    ("cuda", "invalid device ordinal", APP),
    ("cuda", "peer access is not supported between these two devices", "p2p_unavailable"),
    ("cuda", "unknown error", DRV),
    ("cuda", "initialization error", DRV),
    ("cuda", "OS call failed or operation not supported on this OS", DRV),
    ("cuda", "too many resources requested for launch", RES),
    ("cuda", "the wait operation has timed out", DRV),
    ("cuda", "PTX JIT compiler library not found", DRV),
    ("cuda", "shared object initialization failed", DRV),
    ("cuda", "shared object symbol not found", DRV),
    ("cuda", "MPS client failed to connect to the MPS control daemon or the MPS server", DRV),
    ("cuda", "API call is not supported in the installed CUDA driver", DRV),
    ("cuda", "peer mapping resources exhausted", RES),
    ("cuda", "invalid argument", APP),
    ("cuda", "invalid resource handle", APP),
    ("cuda", "an illegal instruction was encountered", APP),
    ("cuda", "misaligned address", APP),
    ("bare", "Cuda failure 304 'OS call failed or operation not supported on this OS'", DRV),
    ("bare", "CUDA Runtime Error: the wait operation has timed out", DRV),
    # the CUDA runtime's and driver API's names, as cuGetErrorName prints them
    ("bare", "cuInit failed: CUDA_ERROR_OPERATING_SYSTEM", DRV),
    ("bare", "cudaMalloc failed: cudaErrorInitializationError", DRV),
    # NVML (nvmlErrorString's words after NVML's context)
    ("bare", "Failed to initialize NVML: Driver Not Loaded", "no_modules_visible"),  # R6B: nvidia-smi's lost driver
    ("bare", "nvmlDeviceGetHandleByIndex() failed: GPU is lost", LOST),
    ("bare", "Failed to initialize NVML: Unknown Error", "device_permissions"),
    ("bare", "Failed to initialize NVML: Driver/library version mismatch", "driver_library_mismatch"),
    ("bare", "nvmlDeviceGetPowerUsage failed: Not Supported", None),
    # HIP texts (hipGetErrorString, ROCm clr hip_error.cpp) and names
    ("bare", "HIP error: invalid device function", HIP_APP),
    ("bare", "HIP error: out of memory", HIP_APP),
    ("bare", "HIP error: no ROCm-capable device is detected", "framework_sees_no_module"),
    ("bare", "hipMalloc failed: hipErrorOutOfMemory", OOM),
    ("bare", "hipErrorECCNotCorrectable", HW),
    # HSA status names (hsa.h)
    (
        "bare",
        "hsa api call failure at: rocminfo.cc:1199\nCall returned HSA_STATUS_ERROR_OUT_OF_RESOURCES",
        "framework_sees_no_module",
    ),  # hsa_init (rocminfo): no usable GPU, not memory (captures/rocr_status.py)
    (
        "bare",
        "HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the reference "
        "count of the HSA runtime is 0.",
        DRV,
    ),
    (
        "bare",
        "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address.",
        HIP_APP,
    ),
    ("bare", "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.", HIP_APP),
    ("bare", "HSA_STATUS_ERROR_MEMORY_FAULT: Agent attempted to access an inaccessible address.", HIP_APP),
    ("bare", "hipErrorNotInitialized: HSA_STATUS_ERROR: A generic error has occurred.", DRV),
    ("bare", "hsa_amd_agent_set_async_scratch_limit: HSA_STATUS_ERROR_NOT_SUPPORTED", None),
    (
        "bare",
        "Kernel launch: HSA_STATUS_ERROR_OUT_OF_REGISTERS: Kernel has requested more VGPRs than are available on this agent",
        OOM,
    ),
    # ROCm SMI / amd-smi
    ("bare", "ERROR:root:Driver not initialized (amdgpu not found in modules)", "no_modules_visible"),
    ("bare", "AMDSMI_STATUS_DRIVER_NOT_LOADED", "no_modules_visible"),
    ("bare", "ERROR: 2 GPU[0]: ras: RSMI_STATUS_NOT_SUPPORTED: This function is not supported", None),
    # Level Zero
    ("bare", "zeCommandQueueSynchronize failed: ZE_RESULT_ERROR_DEVICE_LOST", LOST),
    ("bare", "zeInit failed: ZE_RESULT_ERROR_UNINITIALIZED", DRV),
    ("bare", "zeDeviceGetProperties: ZE_RESULT_ERROR_UNSUPPORTED_FEATURE", None),
    # NCCL (ncclGetErrorString) and nccl-tests
    (
        "bare",
        "NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for "
        "details), NCCL version 2.18.1",
        COLL,
    ),
    (
        "bare",
        "NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for "
        "details), NCCL version 2.18.1",
        COLL,
    ),
    (
        "bare",
        "NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.18.1",
        COLL,
    ),
    (
        "bare",
        "Test NCCL failure common.cu:1005 'internal error - please report this issue to the NCCL developers'",
        "collective_test_failed",
    ),
    ("bare", "node1:1234:1234 [0] NCCL INFO NET/IB : No device found.", None),
    # PyTorch's wrappers
    (
        "bare",
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=52, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=600000) ran for 600042 milliseconds before timing out.",
        COLL,
    ),
    (
        "bare",
        "CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment",
        "framework_sees_no_module",
    ),
    (
        "bare",
        "CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
        "before calling NumCudaDevices() that might have already set an error? Error 804: forward "
        "compatibility was attempted on non supported HW",
        "driver_runtime_mismatch",
    ),
    (
        "bare",
        "CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
        "before calling NumCudaDevices() that might have already set an error? Error 304: OS call failed or "
        "operation not supported on this OS",
        DRV,
    ),
    (
        "bare",
        "[Rank 0] NCCL watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
        APP,
    ),
    (
        "bare",
        "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.",
        COLL,
    ),
    (
        "bare",
        "[rank2]:[E1102 10:14:03.112 ProcessGroupNCCL.cpp:1316] [PG ID 0 PG GUID 0(default_pg) Rank 2] Heartbeat "
        "monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1",
        COLL,
    ),
    (
        "bare",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
        "might be incorrect.",
        None,
    ),
    ("bare", "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", None),
    ("bare", "NCCL WARN Cuda failure 'out of memory'", "nccl_cuda_out_of_memory"),
    # XLA (JAX, TensorFlow)
    (
        "bare",
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: run time "
        "error: custom call 'xla.gpu.all_reduce' failed: CUDA_ERROR_ILLEGAL_ADDRESS",
        APP,
    ),
    (
        "bare",
        "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices.",
        "framework_sees_no_module",
    ),
    ("bare", "failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error", "framework_sees_no_module"),
    ("bare", "failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", "no_modules_visible"),
    ("bare", "failed call to cuInit: UNKNOWN ERROR (303)", "framework_sees_no_module"),
    # vLLM/SGLang custom all-reduce
    (
        "bare",
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:307 'peer access is not supported between "
        "these two devices'",
        "p2p_unavailable",
    ),
    ("bare", "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:368 'invalid argument'", APP),
]


def framings(family: str, message: str) -> dict[str, str]:
    """The message as each kind of log shows it."""
    shown = f"CUDA error: {message}" if family == "cuda" else message
    head, _, rest = shown.partition("\n")
    return {
        "bare": shown,
        "traceback": (
            'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n'
            "    loss.backward()\n" + (f"{head}\n{rest}" if rest else f"RuntimeError: {shown}")
        ),
        "logger": f"2026-11-02 10:14:03,112 ERROR [worker.py:88] {head}" + (f"\n{rest}" if rest else ""),
        "quoted": f"Since Monday my node keeps printing '{head}' and the job dies.",
    }


def causes(text: str, where: Path) -> set[str]:
    """The causes doctor --from finds in ``text``."""
    _, found = read(text, where)  # None: refused, nothing in the file was read
    return {f["cause"] for f in found or []}


def verdict(expected: str | None, found: set[str]) -> str:
    if expected is None:
        return "clean" if not found else "false"
    return "class" if expected in found else ("generic" if found else "missed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="generic,missed,false", help="the verdicts to list, comma-separated")
    args = parser.parse_args(argv)
    show = set(args.show.split(","))
    tally: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for family, message, expected in MESSAGES:
            for frame, text in framings(family, message).items():
                found = causes(text, where)
                tally[v := verdict(expected, found)] += 1
                if v in show:
                    print(f"{v:8} {frame:9} {message[:70]!r} -> {sorted(found)} (want {expected})")
    print(tally_said("framed messages", tally, ("class", "generic", "missed", "clean", "false")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
