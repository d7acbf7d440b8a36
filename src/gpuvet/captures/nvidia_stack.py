"""NVIDIA's user-space stack's words for the driver's state, one verdict each wherever app_errors reads them
(issue 46, R6B). Sources: NVML's nvmlErrorString table (DCGM sdk/nvidia/nvml/nvml_error_strings.h), nvidia-docker
v1's 'Error: nvml: <string>', the CUDA runtime's cudaGetErrorString texts, the driver README's power management
chapter (nvidia-suspend.service, NVreg_PreserveVideoMemoryAllocations=1).

- NVML's init refused with 'Function Not Found' (nvidia-container-cli's 'nvml error: function not found' too):
  the libnvidia-ml the tool loaded is another version than the driver it talks to (stale library links after an
  update, a Linux driver's library under WSL): the mismatch 'Driver/library version mismatch' names, so its
  verdict (driver_library_mismatch).
- NVML's 'Driver Not Loaded' (NVML_ERROR_DRIVER_NOT_LOADED in any NVML call, nvidia-docker's 'nvml:', pynvml's
  NVMLError_DriverNotLoaded): the kernel module is not loaded, the fact nvidia-smi's "couldn't communicate with the
  NVIDIA driver" says (nvidia-smi prints that for this code): read as that line.
- A CUDA launch failure, unspecified/unknown error or init failure (999, 3) after a suspend or hibernate the text
  shows (the kernel's PM lines, a poster's words): the driver's state after the resume, not the application's error.
- NVML's 'Unknown Error' after a driver package update the file shows: the old module under new libraries.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.lazy_re import lazy

if TYPE_CHECKING:
    from gpuvet.captures.app_errors import AppErrorsParse
    from gpuvet.captures.text import Line

FUNCTION_NOT_FOUND = "nvml_init_function_not_found"
AFTER_RESUME = "cuda_after_resume"
AFTER_UPDATE = "nvml_unknown_after_update"
# NVML's init as the tools say it: nvidia-smi's, go-nvml's, nvidia-docker v1's, nvidia-container-cli's 'nvml error:'
_NVML_INIT = r"(?:initiali[sz]e NVML|\bnvml init\w*|^\W*nvml|\bError: nvml|\bnvml(?= error:))\W{1,4}(?:error:\s*)?"
_FNF = lazy(_NVML_INIT + r"(?:Function Not Found|ERROR_FUNCTION_NOT_FOUND)\b", re.I | re.M)
# NVML_ERROR_DRIVER_NOT_LOADED in any call: its words, pynvml's class name, go-nvml's name, nvmlInit's code 9
_NOT_LOADED = lazy(r"Driver ?Not ?Loaded|ERROR_DRIVER_NOT_LOADED|\bnvmlInit\w*(?:\(\))? returned 9\b", re.I)
# the CUDA errors a context lost in a suspend gives (cudaErrorLaunchFailure, cudaErrorUnknown, cuInit's 999 or 3
# once nvidia_uvm lost its state), cut words too
_LOST_CONTEXT = lazy(
    r"\bunspecifi|\bunknown error|cudaErrorUnknown|CUDA_ERROR_UNKNOWN|cudaErrorLaunchFailure"
    r"|CUDA_ERROR_LAUNCH_FAILED|\b999\b|\binitiali[sz]ation error\b",
    re.I,
)
# R12C: NVML_ERROR_LIBRARY_NOT_FOUND in any call's words (nvmlErrorString's, pynvml's class, the C name): the fact
# nvidia-smi's "couldn't find libnvidia-ml.so" says (app_errors' smi_no_nvml_lib), one verdict
_LIB_NOT_FOUND = lazy(r"NVML Shared Library Not Found|\bNVML_ERROR_LIBRARY_NOT_FOUND\b|NVMLError_LibraryNotFound", re.I)
_CUDA_KINDS = ("launch_failure", "cuda_runtime_error", "cuda_api_driver", "cuda_init_unknown", "cuda_init_error")
_NVML_KINDS = ("nvml_api", "container_cli_driver")  # NVML's words, nvidia-container-cli's relay of them
_SLEPT = lazy(r"\bsuspend(?:ed|ing)?\b|\bhibernat\w*|\bs2idle\b|\bsystem sleep\b|\bfrom sleep\b", re.I)
_SLEPT_WORDS = ("uspend", "USPEND", "ibernat", "IBERNAT", "s2idle", "S2IDLE", "leep", "LEEP")  # _SLEPT's, cheap
_WOKE = lazy(
    r"\bresum\w*|\bwak(?:e|es|ing|ed)\b|\bwoke\b|\bpowers? (?:\w+ )?(?:back )?up\b|\bsuspend exit\b"
    r"|\bhibernation exit\b|\bback up\b",
    re.I,
)
_RESUME_MEANING = (
    "the CUDA error came after the machine suspended or hibernated and resumed (the text shows "
    "it): the driver's state after the resume broke the program's CUDA context, not the "
    "application's own error"
)
# a driver package update the same file shows (pacman's ALPM log, dpkg.log and apt, dnf/yum, dkms rebuilding the
# module): NVML's 'Unknown Error' after it is the old kernel module under the new libraries, not the device files
_DRIVER_UPDATE = lazy(
    r"\b(?:upgraded|downgraded|upgrade|unpacking|setting up|updated|upgrading|updating)\s*:?\s+"
    r"\S*nvidia|\bdkms (?:remove|install|build)\b.{0,40}nvidia",
    re.I,
)


def relabel(lines: list[Line], out: AppErrorsParse) -> None:
    """Each error of the class read as its fact (the module's docstring); others kept."""
    if not out.errors:
        return
    resumed = _resumed_at(lines) if any(e.kind in _CUDA_KINDS for e in out.errors) else None
    updated = any(e.kind == "nvml_unknown" for e in out.errors) and any(
        _DRIVER_UPDATE.search(ln.text) for ln in lines if "nvidia" in ln.text.lower()
    )
    kept = []
    for e in out.errors:
        if e.kind.startswith(_NVML_KINDS) and _FNF.search(e.text):
            e = replace(e, kind=FUNCTION_NOT_FOUND)
        elif e.kind.startswith("nvml_api") and _NOT_LOADED.search(e.text):
            e = replace(e, kind="smi_no_driver")
        elif e.kind.startswith("nvml_api") and _LIB_NOT_FOUND.search(e.text):
            e = replace(e, kind="smi_no_nvml_lib")
        elif e.kind in _CUDA_KINDS and resumed is not None and resumed < e.line and _LOST_CONTEXT.search(e.text):
            e = replace(e, kind=AFTER_RESUME, meaning=_RESUME_MEANING)
        elif e.kind == "nvml_unknown" and updated:
            e = replace(e, kind=AFTER_UPDATE)
        kept.append(e)
    out.errors = kept


def _resumed_at(lines: list[Line]) -> int | None:
    """The line where the text shows the machine woke from a suspend or hibernate (a line naming the sleep, and that
    line or one of the next three naming the wake), or None."""
    for i, ln in enumerate(lines):
        if any(w in ln.text for w in _SLEPT_WORDS) and _SLEPT.search(ln.text):
            for after in lines[i : i + 4]:
                if _WOKE.search(after.text):
                    return after.no
    return None
