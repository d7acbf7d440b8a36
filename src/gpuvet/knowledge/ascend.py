"""Issue 46 (ASC): Ascend's own tables as typed records: what a runtime return code means (ascend_codes.yaml: the
ACL/runtime headers' codes, the error manager's documented codes, torch_npu's labels, each in one meaning class) and
what an NPU fault code npu-smi prints asks for (npu_fault_codes.yaml: the level Ascend's cluster software handles it
at, its documented cause). The readers (captures/ascend_codes.py, captures/npu_smi.py) ask here; the causes a class
names are doctor's (capture_errors.KIND_CAUSES)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import cast

from gpuvet import knowledge

# the meaning classes of ascend_codes.yaml (its header says what each is); "none" is a status, never a finding
CLASSES = (
    "ecc",
    "hardware",
    "link",
    "lost",
    "collective",
    "timeout",
    "exception",
    "driver",
    "no_device",
    "permission",
    "resources",
    "application",
    "none",
)
# ACL's documentation groups an unlisted code by its first digit: 1 the caller's, 2 a resource, 3 storage, 5 the
# runtime's internal error
_BY_FIRST_DIGIT = {"1": "application", "2": "resources", "3": "resources", "5": "driver"}
_SEVERITIES = {"critical": 3, "warn": 2, "info": 1}


@dataclass(frozen=True)
class AclCode:
    """A runtime return code: its number, its header name (None where the table lacks it) and its class."""

    code: int
    name: str | None
    cls: str


@cache
def _codes() -> dict[str, object]:
    return knowledge._read("ascend_codes.yaml")


def acl_code(code: int) -> AclCode:
    """The code's entry; a code the table lacks takes its first digit's class (ACL's own grouping)."""
    row = cast(dict[int, list[str]], _codes()["acl"]).get(code)
    if row is not None:
        return AclCode(code, row[0], row[1])
    return AclCode(code, None, _BY_FIRST_DIGIT.get(str(code)[0], "driver"))


def error_manager(code: str) -> tuple[str, str] | None:
    """(documented title, class) of a runtime/ACL error-manager code (EE1002, EL0004 …); None for one not listed."""
    row = cast(dict[str, list[str]], _codes()["error_manager"]).get(code.upper())
    return (row[0], row[1]) if row is not None else None


# the classes of an error-manager code that are the runtime's own error on the NPU (a timeout, an execution error):
# printed bare ('EE1002: …'), captures/ascend_errors.py reads them as before (npu_runtime_error, the reason after)
RUNTIME_KEPT = frozenset({"timeout", "exception"})


# the runtime saying what it does not do on this SoC or build (llama.cpp's 'CANN error: EZ9903: … support for
# Ascend910 is not implemented'): the application's or build's support gap, not a fault of the NPU (R5C, issue 46)
_UNSUPPORTED = re.compile(
    r"\b(?:is|are) not (?:implemented|supported)\b|\bnot supported (?:on|for|by)\b|\bunsupported\b", re.I
)


def unsupported(message: str) -> bool:
    """Whether a runtime code's message says the SoC or build does not support what was asked."""
    return _UNSUPPORTED.search(message) is not None


def read_apart(code: str) -> bool:
    """Whether a bare error-manager code is read by its class (captures/ascend_codes.py), not as the runtime's error:
    a documented code of any class but RUNTIME_KEPT."""
    row = error_manager(code)
    return row is not None and row[1] not in RUNTIME_KEPT


@cache
def labels() -> dict[str, str]:
    """torch_npu's device-error labels ('UCE ERROR', 'HCCS LINK ERROR' …) and the class each stands for."""
    return dict(cast(dict[str, str], _codes()["labels"]))


@dataclass(frozen=True)
class NpuFault:
    """An NPU fault code npu-smi prints: the level it is handled at, that level's severity and words, its cause."""

    code: str
    level: str
    severity: str  # critical, warn or info
    said: str
    meaning: str | None


@cache
def _faults() -> dict[str, NpuFault]:
    data = knowledge._read("npu_fault_codes.yaml")
    meanings = cast(dict[str, str], data["meanings"])
    out: dict[str, NpuFault] = {}
    for level, row in cast(dict[str, dict[str, object]], data["levels"]).items():
        severity, said = str(row["severity"]), str(row["said"])
        for code in cast(list[str], row["codes"]):
            key = str(code).upper()
            held = out.get(key)
            if held is None or _SEVERITIES[severity] > _SEVERITIES[held.severity]:  # listed twice: the graver level
                out[key] = NpuFault(key, level, severity, said, meanings.get(key))
    for code, meaning in meanings.items():
        out.setdefault(code.upper(), NpuFault(code.upper(), "unlisted", "unknown", "no handling level listed", meaning))
    return out


def npu_fault(code: str) -> NpuFault | None:
    """The fault code's entry ('80E18402', '0x80e18402'); None for a code neither table lists."""
    key = code.upper().removeprefix("0X")
    return _faults().get(key)
