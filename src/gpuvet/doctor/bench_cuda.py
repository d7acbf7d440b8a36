"""Issue 46 (R10B): a collective benchmark's own CUDA failure line (nccl-tests' ``Test CUDA failure common.cu:730
'unknown error'``) quotes cudaGetErrorString's words for the CUDA runtime's error. Where those words name the
driver's or the node's state rather than the benchmark's work (cudaErrorUnknown, cudaErrorInitializationError, no
device, a driver too old, the fabric not up) or the module's hardware (an uncorrectable ECC or NVLink error), the
finding is that error's own cause, the one app_errors gives the same error printed by any program (one fact, one
verdict), not 'the collective benchmark failed'. Words not listed keep collective_test_failed (no device found too:
the strict table of batch F reads nccl-tests' 'no CUDA-capable device is detected' as the benchmark's failure).

Source of the words: the CUDA runtime API's cudaError_t documentation (cudaGetErrorString's strings)."""

from __future__ import annotations

# cudaGetErrorString's words -> the cause the same error has wherever a program prints it (doctor/capture_errors.py)
_CAUSES: dict[str, str] = {
    "unknown error": "api_reports_driver_state",  # cudaErrorUnknown (999): api_errors.yaml's driver class
    "initialization error": "api_reports_driver_state",  # cudaErrorInitializationError (3): cuda_init_error
    "OS call failed or operation not supported on this OS": "api_reports_driver_state",  # cudaErrorOperatingSystem
    "system not yet initialized": "fabric_manager_failed",  # cudaErrorSystemNotReady (802): system_not_ready
    "CUDA driver version is insufficient for CUDA runtime version": "driver_runtime_mismatch",  # 35: driver_too_old
    "uncorrectable ECC error encountered": "ecc_uncorrectable_since_boot",  # cudaErrorECCUncorrectable (214)
    "uncorrectable NVLink error detected during the execution": "nvlink_uncorrectable",  # cudaErrorNvlinkUncorrectable
}
_LOWER = {k.lower(): v for k, v in _CAUSES.items()}


def cause(kind: str, message: str) -> str | None:
    """The cause of a benchmark's CUDA failure by the runtime's words, or None (the benchmark's own failure)."""
    if kind != "cuda":
        return None
    return _LOWER.get(message.strip().strip(".").lower())
