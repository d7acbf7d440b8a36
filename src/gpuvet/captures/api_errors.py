"""The patterns app_errors reads the GPU APIs' error names with (issue 46), built from knowledge/api_errors.yaml:
one kind per API and meaning class (``cuda_api_hardware``, ``nvml_api_lost``, ``ze_api_driver`` …), so any line
that prints a name of the CUDA runtime or driver API, NVML, NCCL, Level Zero or DCGM is a finding of its class's
cause in whatever surrounding it stands. An API's unlisted name (a newer header) is its default class. The words
NVML's and NCCL's error-string functions print count only after their own API's context on the line ('NVML',
an nvml* call; 'NCCL failure', 'NCCL error'; nvidia-smi's 'Unable to determine the device handle …' is the kernel
reader's, a module lost): 'Unknown Error' or 'internal error' alone says
nothing of whose error it was, and 'Not Supported' (an absent field) is never searched."""

from __future__ import annotations

import re

from gpuvet.captures import mgmt_status
from gpuvet.knowledge.api_errors import CLASSES, NONE, Api, api_table

# the context an API's printed words must follow on their line (the words are the pattern's group 1)
_CONTEXT = {
    "nvml_api": r"(?:\bNVML\b|\bnvml\w*)[^\n]{0,160}?[:(\-]\s*",
    "hlml_api": r"(?:\bHLML\b|\bhlml\w*)[^\n]{0,160}?[:(\-]\s*",  # MGL: HLML's words ('AIP is lost') after HLML's context
    "nccl_api": r"\bNCCL (?:failure|error)\b[^\n]{0,200}?['\"(:,]\s*",
    # the runtime's own wrappers: PyTorch's 'CUDA error: …', CUDACHECK's 'Cuda failure 304 '…'' and 'Cuda error
    # file.cuh:307 '…'', a sample's 'CUDA Runtime Error: …', PyTorch's init warning '… Error 304: …'
    "cuda_api": r"(?:\bCUDA (?:runtime |driver )?(?:error|failure)\b[^\n]{0,160}?['\"(:]\s*"
                r"|\bCUDA initialization:[^\n]{0,300}?\bError \d+:\s*)",
}
# the words app_errors' one search finds these lines by (lower case; its _KEY_WORDS holds them)
KEY_WORDS = ("ze_result_", "ur_result_", "pi_error_", "dcgm_st_",
             "ncclinvalid", "ncclsystemerror", "ncclinternalerror", "ncclremoteerror",
             "nccltimeout", "nccl failure", "cuda failure", "cuda error", "cuda runtime error", "cuda initialization",
             *mgmt_status.KEY_WORDS)


# each API's kinds read only a line holding one of its words (lower case): a candidate line of another kind (a bug
# report's many) is not searched with the long name lists
_API_WORDS = {"cuda_api": ("cudaerror", "cuda_error", "cuda error", "cuda failure", "cuda runtime error",
                          "cuda driver error", "cuda initialization"), "nvml_api": ("nvml",), "nccl_api": ("nccl",),
              "ze_api": ("ze_result_", *mgmt_status.ZE_WORDS), "ur_api": ("ur_result_",),  # R9C: Unified Runtime, SYCL PI
              "pi_api": ("pi_error_",), "dcgm_api": ("dcgm_st_",), "hip_api": ("hiperror",),
              # MGL: the management libraries' names, numbers and init words (captures/mgmt_status.py)
              "amdsmi_api": ("amdsmi",), "rsmi_api": ("rsmi", "rocm smi"), "hlml_api": ("hlml",)}


API_WORDS = tuple(w for words in _API_WORDS.values() for w in words)


def words_of(kind: str) -> frozenset[str] | None:
    """The words of API_WORDS a line must hold for ``kind`` to read it; None for a kind not of this table."""
    words = _API_WORDS.get(kind.rsplit("_", 1)[0])
    return frozenset(words) if words is not None and kind.rsplit("_", 1)[1] in CLASSES else None


def kinds() -> dict[str, str]:
    """kind -> the pattern (case-insensitive) of the names and printed words of that API's class."""
    alternatives: dict[str, list[str]] = {}
    for api in api_table().apis:
        for cls in CLASSES:
            if cls not in api.read_elsewhere:
                alternatives.setdefault(f"{api.kind}_{cls}", []).extend(_patterns(api, cls))
    return {kind: "|".join(alts) for kind, alts in alternatives.items() if alts}


def _patterns(api: Api, cls: str) -> list[str]:
    names = sorted((n for n, c in api.names.items() if c == cls), key=len, reverse=True)
    out = [r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b"] if names else []
    if cls == api.default and api.default != NONE:  # a name the table lacks, none of the listed ones
        listed = sorted((n.removeprefix(api.prefix) for n in api.names if n.startswith(api.prefix)), key=len,
                        reverse=True)
        out.append(rf"\b{re.escape(api.prefix)}(?!(?:{'|'.join(map(re.escape, listed))})\b)[A-Za-z0-9_]+\b")
    if words := api.printed.get(cls):
        out.append(_CONTEXT[api.kind] + "(" + "|".join(re.escape(w) for w in words) + r")\b")
    return out


NOT_NAMED = "bus id not in the log"  # captures/kernel.py NO_BUS's words: a module no line places, never invented
_BY_DRIVER_INDEX = ("nvml_api", "dcgm_api")  # tools that number the modules as nvidia-smi does, not a process's view


def module(kind: str, named: str | None) -> str | None:
    """The module an API error line names, as app_errors read it (``named``): NVML's and DCGM's 'GPU N' is the
    driver's index, not a CUDA process's view; a hardware or lost class names NOT_NAMED where the line names none
    (a module failed, which one the line does not say)."""
    api = kind.rsplit("_", 1)[0]
    if named is not None and named.startswith("CUDA device ") and api in _BY_DRIVER_INDEX:
        return f"GPU {named.split()[2]}"
    if named is None and api.endswith("_api") and kind.endswith(("_hardware", "_lost")):
        return NOT_NAMED
    return named
