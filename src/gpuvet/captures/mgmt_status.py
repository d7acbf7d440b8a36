"""The GPU management libraries' status codes as programs quote them (issue 46, MGL): a device plugin, an exporter, a
monitor, xpumd, hl-smi or a Python binding logs the status NVML, Level Zero, ROCm SMI or HLML returned by its number
('nvml get memory error ret=999', 'nvmlInit_v2 failed with 18', 'zeInit error: 78000001', 'ROCm SMI returned 8'), by
a binding's exception class (pynvml's ``NVMLError_GpuIsLost``, pyhlml's ``HLMLError_AipIsLost``) or by the tool's own
words for an init that failed ('LevelZeroInitializationException', 'Failed to initialize HLML'). Each form is read as
the enum's name is: the alternatives here widen app_errors' kinds (knowledge/api_errors.yaml's class of the name, or
the specific kind that reads that name first), so a number means what its name means. A code whose class is none
(success, Not Supported, a call the user's rights refuse) is claimed as read and makes no finding (NONE). R14C: the
tool's init words after a line that printed the init's result are that result's echo (``echoes``)."""

from __future__ import annotations

import re
from dataclasses import replace
from string import capwords

from gpuvet.captures.records import AppError
from gpuvet.knowledge.api_errors import CLASSES, NONE, api_table

# nvmlReturn_t (NVIDIA/go-nvml pkg/nvml/nvml.h, NVML 12.x): number -> name
NVML_CODES = {
    0: "NVML_SUCCESS",
    1: "NVML_ERROR_UNINITIALIZED",
    2: "NVML_ERROR_INVALID_ARGUMENT",
    3: "NVML_ERROR_NOT_SUPPORTED",
    4: "NVML_ERROR_NO_PERMISSION",
    5: "NVML_ERROR_ALREADY_INITIALIZED",
    6: "NVML_ERROR_NOT_FOUND",
    7: "NVML_ERROR_INSUFFICIENT_SIZE",
    8: "NVML_ERROR_INSUFFICIENT_POWER",
    9: "NVML_ERROR_DRIVER_NOT_LOADED",
    10: "NVML_ERROR_TIMEOUT",
    11: "NVML_ERROR_IRQ_ISSUE",
    12: "NVML_ERROR_LIBRARY_NOT_FOUND",
    13: "NVML_ERROR_FUNCTION_NOT_FOUND",
    14: "NVML_ERROR_CORRUPTED_INFOROM",
    15: "NVML_ERROR_GPU_IS_LOST",
    16: "NVML_ERROR_RESET_REQUIRED",
    17: "NVML_ERROR_OPERATING_SYSTEM",
    18: "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
    19: "NVML_ERROR_IN_USE",
    20: "NVML_ERROR_MEMORY",
    21: "NVML_ERROR_NO_DATA",
    22: "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
    23: "NVML_ERROR_INSUFFICIENT_RESOURCES",
    24: "NVML_ERROR_FREQ_NOT_SUPPORTED",
    25: "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
    26: "NVML_ERROR_DEPRECATED",
    27: "NVML_ERROR_NOT_READY",
    28: "NVML_ERROR_GPU_NOT_FOUND",
    29: "NVML_ERROR_INVALID_STATE",
    999: "NVML_ERROR_UNKNOWN",
}
# ze_result_t (oneapi-src/level-zero include/ze_api.h): the codes a failed init or a lost device returns
ZE_CODES = {
    0x70000001: "ZE_RESULT_ERROR_DEVICE_LOST",
    0x70000002: "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
    0x70000003: "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
    0x70000006: "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET",
    0x70000007: "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE",
    0x70010000: "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS",
    0x70010001: "ZE_RESULT_ERROR_NOT_AVAILABLE",
    0x70020000: "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE",
    0x78000001: "ZE_RESULT_ERROR_UNINITIALIZED",
    0x78000002: "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
    0x78000003: "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
    0x7FFFFFFE: "ZE_RESULT_ERROR_UNKNOWN",
}
# rsmi_status_t (ROCm/rocm_smi_lib include/rocm_smi/rocm_smi.h): rocm-smi's 'ROCm SMI returned N (the expected value
# is 0)' when rsmi_init fails
RSMI_CODES = {
    1: "RSMI_STATUS_INVALID_ARGS",
    2: "RSMI_STATUS_NOT_SUPPORTED",
    3: "RSMI_STATUS_FILE_ERROR",
    4: "RSMI_STATUS_PERMISSION",
    5: "RSMI_STATUS_OUT_OF_RESOURCES",
    6: "RSMI_STATUS_INTERNAL_EXCEPTION",
    8: "RSMI_STATUS_INIT_ERROR",
    10: "RSMI_STATUS_NOT_FOUND",
    16: "RSMI_STATUS_BUSY",
    19: "RSMI_STATUS_AMDGPU_RESTART_ERR",
    20: "RSMI_STATUS_DRM_ERROR",
    21: "RSMI_STATUS_FAIL_LOAD_MODULE",
    22: "RSMI_STATUS_FAIL_LOAD_SYMBOL",
    0xFFFFFFFF: "RSMI_STATUS_UNKNOWN_ERROR",
}
NONE_KIND = "mgmt_status_none"  # a code of class none: the line is claimed as read, no error made of it
# names another of app_errors' kinds reads before the table's class (its comment in api_errors.yaml says so)
# (REVFIX: DRIVER_NOT_LOADED is nvidia_stack's smi_no_driver, the module not loaded, in every wording: 'failed with 9'
# too, not the class's warn)
_KIND_OF = {
    "NVML_ERROR_LIB_RM_VERSION_MISMATCH": "nvml_mismatch",
    "NVML_ERROR_LIBRARY_NOT_FOUND": "smi_no_nvml_lib",
    "NVML_ERROR_DRIVER_NOT_LOADED": "smi_no_driver",
}

_NVML = r"(?:\bNVML\b|\bnvml\w*)(?![/.]\w)"  # not a path's or a file's (nvml/collector.go)
# the words a program puts before the number it got back: 'ret=999', 'returned 15', 'failed with 18', 'error: 999'
_SAID = (
    r"[^\n]{0,160}?(?:\bret(?:urn(?:ed|s)?)?(?:\s+(?:code|value))?|\b(?:error|err|status|result|rc)(?:\s+code)?"
    r"|\bcode|\bfailed(?:\s+with)?(?:\s+(?:error|code|status))?)\s*[=:]?\s*\(?\s*"
)
# a miner's NVML read of a card ('NVML: can't get power for GPU #4, error code 999', T-Rex): miner_lost's, whose
# codes other than 15 say nothing of which fault it was and are left to the kernel log
_NVML_MINER = _NVML + r"(?![^\n]{0,80}?\bGPU\s?#\d)"
_NVML_INIT = r"(?:\bnvml_?init\w*|\binit(?:iali[sz]e)? NVML\b|\bNVML init)"
_ZE = r"(?:(?:\b\w+::\w+\s+)?\bze[A-Z]\w*|\bLevel ?Zero\b)"  # R14C: xpumd's 'GPUDeviceStub::init zeInit …' too
_RSMI = r"(?:\bROCm SMI\b|\brsmi_\w+(?:\(\))?)\s+(?:returned|failed(?:\s+with)?)\s*:?\s*(?:code\s*)?"


def _kind_of(name: str) -> str | None:
    """The app_errors kind that reads ``name``: a specific kind (judged_by, _KIND_OF), else its class's."""
    found = api_table().class_of(name)
    if found is None:
        return None
    api, cls = found
    if name in api.judged_by or name in _KIND_OF:
        return api.judged_by.get(name) or _KIND_OF[name]
    if cls == NONE:
        return NONE_KIND
    return f"{api.kind}_{cls}" if cls in CLASSES and cls not in api.read_elsewhere else None


def _camel(name: str, prefix: str) -> str:
    """A binding's exception class for an enum name: NVML_ERROR_GPU_IS_LOST -> GpuIsLost (pynvml's, pyhlml's)."""
    return capwords(name.removeprefix(prefix), "_").replace("_", "")


def _names(prefix: str) -> list[str]:
    return [n for api in api_table().apis if api.prefix == prefix for n in api.names if n.startswith(prefix)]


# the call or the component a line names before the enum's name (the match starts there, where app_errors judges
# whether the line is printed by a program: 'nvmlDeviceGetPowerUsage returned NVML_ERROR_UNKNOWN',
# 'GPUDeviceStub::init zeInit error: 78000001')
_CALLS = {
    "NVML_ERROR_": r"\bnvml\w*(?![/.]\w)(?:\(\))?[^\n]{0,120}?\b",
    "ZE_RESULT_": r"(?:\b\w+::\w+\s+)?\bzes?[A-Z]\w*[^\n]{0,120}?\b",
    "RSMI_STATUS_": r"\brsmi_\w*(?:\(\))?[^\n]{0,120}?\b",
    "AMDSMI_STATUS_": r"\bamdsmi_\w*(?:\(\))?[^\n]{0,120}?\b",
    "HLML_ERROR_": r"\bhlml_\w*(?:\(\))?[^\n]{0,120}?\b",
}
# R14C: a zeInit line printing a code ZE_CODES names is read by that code's class (_forms), not as 'uninitialised'
_KNOWN_CODE = rf"(?!\s*:?\s*(?:0x)?(?:{'|'.join(f'{c:08x}' for c in ZE_CODES)})\b)"
_WORDS = (  # the tools' own words for an init that failed: xpumd's and xpu-smi's (intel/xpumanager), hl-smi's, amd-smi's
    (
        "ZE_RESULT_ERROR_UNINITIALIZED",
        r"(?:\bxpum\w*\s+)?\bLevelZeroInitializationException|\bLevel Zero Initiali[sz]ation "
        r"Error|(?:\b\w+::\w+\s+)?\bzeInit (?:error|failed)\b(?!\s*:\s*ZE_RESULT_)" + _KNOWN_CODE + "|"
        # R5A: xpumcli/xpu-smi finding xpumd not ready (intel/xpumanager): its Level Zero init or the daemon itself
        r"\bXPUM Service Status Error\b",
    ),
    ("HLML_ERROR_UNINITIALIZED", r"\bFailed to initiali[sz]e HLML|\bhlml_init(?:\(\))? failed\b(?!:\s*HLML)"),
    ("AMDSMI_STATUS_INIT_ERROR", r"\bUnable to initiali[sz]e amdsmi|\bamdsmi_init(?:\(\))? failed\b(?!:\s*AMDSMI_STATUS_)"),
    ("RSMI_STATUS_INIT_ERROR", r"\brsmi_init\(\) failed\b(?!:\s*RSMI_STATUS_)"),
)


def _forms() -> dict[str, str]:
    """kind -> the alternatives this module reads it by: one regex per kind and context, its tokens alternated."""
    alts: dict[tuple[str, str], list[str]] = {}

    def add(name: str, context: str, token: str) -> None:
        if (kind := _kind_of(name)) is not None:
            alts.setdefault((kind, context), []).append(token)

    for code, name in NVML_CODES.items():  # a bare small number is anyone's code: only those whose meaning is read
        if _kind_of(name) not in ("nvml_api_application", "nvml_api_resources"):
            add(name, _NVML_MINER + _SAID, str(code))
    for code, name in ZE_CODES.items():
        add(name, _ZE + r"[^\n]{0,160}?(?:\b0x|\b)", f"{code:08x}")
    for code, name in RSMI_CODES.items():
        add(name, _RSMI, str(code))
    for prefix, binding in (("NVML_ERROR_", "NVMLError_"), ("HLML_ERROR_", "HLMLError_")):
        for name in _names(prefix):
            add(name, r"\b", binding + _camel(name, prefix))
    for prefix, call in _CALLS.items():
        for name in _names(prefix):
            add(name, call, name)
    out: dict[str, list[str]] = {}
    for (kind, context), tokens in alts.items():
        out.setdefault(kind, []).append(rf"{context}(?:{'|'.join(sorted(tokens, key=len, reverse=True))})\b(?![.\d])")
    for name, words in _WORDS:
        if (reader := _kind_of(name)) is not None:
            out.setdefault(reader, []).append(words)
    # NVML's words for a code of class none after NVML's context, and go-nvml's names of them wherever they stand
    out.setdefault(NONE_KIND, []).append(
        rf"{_NVML}[^\n]{{0,160}}?[:(\-]\s*(?:Not ?Supported|Insufficient Permissions"
        r"|No data)\b|\bERROR_(?:NOT_SUPPORTED|NO_PERMISSION|NO_DATA|NOT_READY)\b"
        # R3D: pynvml's exception class, nvml-wrapper's (Rust: rtop, nvtop-rs) Debug name of the same code
        r"|\bNVMLError_(?:NotSupported|NoPermission|NoData)\b"
    )
    # R7B: rocm-smi's own line for a status of class none ('ERROR: GPU[0]\t: RSMI_STATUS_INIT_ERROR: An error
    # occurred during initialization, …', rocm_smi.py's printErrLog): the tool's, read and not judged
    quiet = sorted((n for n in _names("RSMI_STATUS_") if _kind_of(n) == NONE_KIND), key=len, reverse=True)
    out.setdefault(NONE_KIND, []).append(rf"\bERROR: (?:\d+ )?GPU\[\d+\]\s*:[^\n]{{0,40}}?\b(?:{'|'.join(quiet)})\b")
    # an init's unknown error is 'Failed to initialize NVML: Unknown Error' (app_errors' nvml_unknown, read first)
    out.setdefault("nvml_unknown", []).append(rf"{_NVML_INIT}{_SAID}999\b(?![.\d])")
    return {kind: "|".join(forms) for kind, forms in out.items()}


def widen(kind: str, pattern: str, extra: dict[str, str] | None = None) -> str:
    """``pattern`` with this module's forms of the names ``kind`` reads."""
    more = (extra if extra is not None else FORMS).get(kind)
    return (f"{pattern}|{more}" if pattern else more) if more else pattern


FORMS = _forms()
# the words app_errors' one search finds these lines by (lower case, each holding one of its anchors)
# Level Zero's calls that name a number (zeInit, zeCommandQueueSynchronize …) and xpumd's words
ZE_WORDS = (
    "zeinit",
    "zecommand",
    "zedevice",
    "zedriver",
    "zemem",
    "zecontext",
    "zemodule",
    "zekernel",
    "zeevent",
    "zefence",
    "level zero",
    "levelzero",
    "xpum service status",
)
KEY_WORDS = (
    *ZE_WORDS,
    "hlml",
    "amdsmi",
    "rsmi_",
    "rocm smi returned",
    "error_not_supported",
    "error_no_permission",
    "error_no_data",
    "error_not_ready",
)


# R14C: Intel XPU Manager's words for a Level Zero init that failed (xpumd's 'xpumInit LevelZeroInitializationException',
# xpu-smi's 'Level Zero Initialization Error'), and a zeInit line that printed the init's result before them
_ZE_ECHO = re.compile(r"\bLevelZeroInitializationException\b|\bLevel Zero Initiali[sz]ation Error\b", re.I)
_ZE_RESULT = re.compile(r"\bzeInit\w*\b[^\n]{0,40}?(?:\bZE_RESULT_ERROR_\w+|\b(?:0x)?7[0-9a-f]{7}\b)", re.I)


def echoes(errors: list[AppError]) -> list[AppError]:
    """``errors`` less the exception lines that follow a zeInit line printing its result, counted on that line: the
    daemon's exception is the result's echo, never a second cause (alone, with no result above it, it stays)."""
    results = [k for k, e in enumerate(errors) if e.kind.startswith("ze_api_") and _ZE_RESULT.search(e.text)]
    out, dropped = list(errors), set()
    for k, e in enumerate(errors):
        before = [r for r in results if errors[r].line < e.line]
        if k not in results and e.kind.startswith("ze_api_") and _ZE_ECHO.search(e.text) and before:
            out[before[-1]] = replace(out[before[-1]], times=out[before[-1]].times + e.times)
            dropped.add(k)
    return [e for k, e in enumerate(out) if k not in dropped]
