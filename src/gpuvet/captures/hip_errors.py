"""The error lines a program on AMD's ROCm prints, as app_errors reads CUDA's: the HSA runtime's 'Memory
access fault by GPU node-2 (Agent handle: 0x…) on address 0x…. Reason: Page not present or supervisor
privilege.', HIP's 'HIP error: invalid device function' / hipError* names, PyTorch's 'HIP out of memory'
and 'No HIP GPUs are available', HSA_STATUS_ERROR_* codes. Each becomes the same AppError record
(captures/app_errors.py), one per kind and module, counted, so doctor judges them beside CUDA's."""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures import api_errors, hip_isa, kfd_topology, rocr_status
from gpuvet.captures.app_errors import AppErrorsParse, printed
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line
from gpuvet.knowledge.api_errors import NONE, api_table

# kind -> its words, most specific first; the kinds are doctor's (doctor/capture_errors.py KIND_CAUSES)
KINDS: dict[str, re.Pattern[str]] = {k: re.compile(v) for k, v in {
    "hip_memory_fault": r"Memory access fault by GPU node-\d+",
    # review 56 (16): the HSA runtime's word for a queue the driver found hung and reset ('HW Exception by GPU
    # node-1 (Agent handle: 0x…) reason :GPU Hang'; the program aborts): doctor's module_hung_reset
    "hip_gpu_hang": r"(?i:HW Exception) by GPU node-\d+ \((?i:Agent handle|agent):? ?0x[0-9a-fA-F]+\) reason ?: ?GPU Hang",
    "hip_out_of_memory": r"HIP out of memory|hipErrorOutOfMemory|HSA_STATUS_ERROR_OUT_OF_RESOURCES"
                         # R8C: rocminfo before ROCm 3 printed the status by number (4104 = 0x1008, OUT_OF_RESOURCES)
                         r"|\bhsa api call failure at line \d+, file: \S*rocminfo\.cc\. Call returned 4104\b",
    "hip_no_binary": r"hipErrorNoBinaryForGpu|HIP error: invalid device function|hipErrorInvalidDeviceFunction",
    "hip_no_device": r"No HIP GPUs are available|hipErrorNoDevice\b|HIP error: no ROCm-capable device",
    # the ROCm tools finding no driver or no GPU: rocminfo's 'ROCk module is NOT loaded, possibly no GPU devices',
    # amd-smi's 'Unable to detect any GPU devices, check amdgpu version and module status' and its
    # AMDSMI_STATUS_DRIVER_NOT_LOADED, rocm-smi's 'WARNING: No AMD GPUs specified'
    "rocm_no_driver": r"ROCk module is NOT (?:loaded|live)|AMDSMI_STATUS_DRIVER_NOT_LOADED|"  # R4A: '… NOT live, …'
                      r"Unable to detect any GPU devices, check amdgpu|WARNING: No AMD GPUs specified",
    "hip_error": r"HIP error: \w|\bhipError[A-Z]\w+|\bHSA_STATUS_ERROR(?:_[A-Z_]+)?\b",
}.items()}
KEYS = ("hip", "hsa_status", "/dev/kfd",  # FRW: rocminfo's 'Unable to open /dev/kfd' (rocr_status)
        "memory access fault by gpu", "hw exception by gpu", "rock module", "amdsmi_status_driver",
        "unable to detect any gpu", "no amd gpus", "program isa",
        "hsa api call failure")  # a line holding none is no ROCm error line
# rocminfo's own words after 'hsa api call failure at:', bare or behind a test's logger ('ERROR    test_rocm_sanity:
# test_rocm_sanity.py:34 Call returned …', TheRock's CI: R3B)
_ROCMINFO_CALL = re.compile(r"^\s*(?:(?:ERROR|WARNING|INFO|DEBUG|CRITICAL)\b[^\"'`]{0,120}?\s)?Call returned HSA_STATUS_")
_NODE = re.compile(r"GPU node-(\d+)")


_HIP_NAME = re.compile(r"\bhipError[A-Z]\w+|\bHSA_STATUS_[A-Z_]+")


def by_class(kind: str, text: str) -> str | None:
    """issue 46: a hipError or HSA status name hip_error reads, by its class in knowledge/api_errors.yaml
    (hipErrorECCNotCorrectable: the module's hardware, HSA_STATUS_ERROR_NOT_INITIALIZED: the driver's state), where
    that is not the application's; None for a name whose class is none (HSA_STATUS_ERROR_NOT_SUPPORTED: a feature
    the module lacks, no fault)."""
    if kind != "hip_error" or (name := _HIP_NAME.search(text)) is None:
        return kind
    found = api_table().class_of(name.group(0))
    if found is not None and found[1] == NONE:
        return None
    return f"{found[0].kind}_{found[1]}" if found is not None and found[1] in ("hardware", "lost", "driver",
                                                                            "resources") else kind


def parse(lines: list[Line]) -> AppErrorsParse:
    out = AppErrorsParse()
    seen: dict[tuple[str, str | None], int] = {}
    for ln in lines:
        low = ln.text.lower()
        if not any(k in low for k in KEYS):
            continue
        kind = next((k for k, p in KINDS.items() if (m := p.search(ln.text)) is not None
                     and (printed(ln.text, m.start()) or _ROCMINFO_CALL.match(ln.text))), None)
        if kind is None:
            continue
        kind = by_class(kind, ln.text)
        out.claimed.add(ln.no)
        if kind is None:  # read: a status that is no fault
            continue
        node = _NODE.search(ln.text)
        module = api_errors.module(kind, f"GPU node-{node.group(1)} (HSA node, CPUs counted)" if node else None)
        if (kind, module) in seen:
            k = seen[(kind, module)]
            out.errors[k] = replace(out.errors[k], times=out.errors[k].times + 1)
            continue
        seen[(kind, module)] = len(out.errors)
        out.errors.append(AppError(kind, ln.no, ln.text.strip()[:300], module, "ROCm/HIP"))
    out.errors = hip_isa.judged(lines, out.errors, out.claimed)  # R5A: a build without this GPU's target
    out.errors = rocr_status.judge(lines, out.errors)  # FRW: hsa_init's OUT_OF_RESOURCES is no usable GPU, not memory
    out.errors, listed = kfd_topology.judged(lines, out.errors)  # R4A: KFD's sysfs shows it absent, or with no GPU
    out.claimed |= listed
    out.claimed |= {e.line for e in out.errors}
    if out.errors:
        kinds = ", ".join(dict.fromkeys(e.kind for e in out.errors))
        out.notes.append(f"ROCm/HIP error lines: {len(out.claimed)} read ({kinds})")
    return out
