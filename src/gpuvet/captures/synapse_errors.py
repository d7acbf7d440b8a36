"""Issue 46 (YX1): Intel Gaudi's runtime errors as a program prints them: a Synapse call's status
(``synDeviceAcquire(&handle, nullptr) failed with synapse error: 20``, ``… failed with synStatus 8``) and the
collective library HCL's failed check (``hcl_device_control_factory.cpp::71(initDevice): The condition [ false ]
failed. Invalid server type (4[OCP1]) requested to generate controller.``), read as Habana HCCL's failures beside
CANN's (captures/ascend_errors.py: the same records doctor judges as a collective library's log).

The status is decoded by synapse_common_types.h's synStatus enum (the Gaudi documentation's table of the same
codes). A call that acquires or opens the device, or a check inside the library's device set-up (initDevice,
server type, the device's controller), failing is a set-up failure: the job never ran, most often the node's
configuration (the server type the library is built for, another process holding the device), not the module.
R10B: the PyTorch bridge's framing, ``synStatus=20 [Device already acquired] Device acquire failed.``, is read
as the call's; synDeviceAlreadyAcquired (20), in either framing, is the device held by another process or
container: the driver's or the device's state (kind "held", doctor's api_reports_driver_state), not a collective."""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures.marks import holding
from gpuvet.captures.nccl_log import LogFailure, LogLine, NcclLog
from gpuvet.captures.text import Line

LIB = "Habana HCCL"  # Intel Gaudi's collective library (HCL), not Ascend's HCCL
MARKERS = ("synapse error", "synStatus", "The condition [")
_TEXT = 240
# synStatus (synapse_common_types.h)
_STATUS = ("synSuccess", "synInvalidArgument", "synCbFull", "synOutOfHostMemory", "synOutOfDeviceMemory",
           "synObjectAlreadyInitialized", "synObjectNotInitialized", "synCommandSubmissionFailure", "synNoDeviceFound",
           "synDeviceTypeMismatch", "synFailedToInitializeCb", "synFailedToFreeCb", "synFailedToMapCb",
           "synFailedToUnmapCb", "synFailedToAllocateDeviceMemory", "synFailedToFreeDeviceMemory",
           "synFailedNotEnoughDevicesFound", "synDeviceReset", "synUnsupported", "synWrongParamsFile",
           "synDeviceAlreadyAcquired", "synNameIsAlreadyUsed", "synBusy", "synAllResourcesTaken", "synUnavailable",
           "synInvalidTensorDimensions", "synFail", "synOutOfResources", "synUninitialized", "synAlreadyInitialized",
           "synFailedSectionValidation", "synSynapseTerminated", "synAssertAsync", "synInvalidEventHandle",
           "synMappingNotFound", "synFailedDynamicPatching", "synFailedStaticPatching", "synFailedToSubmitWorkload",
           "synInvalidSectionsDefinition", "synInvalidTensorProperties", "synFailHccl", "synFailedToCollectTime")
_CALL = re.compile(r"\b(?P<call>syn[A-Z]\w{2,60})\s*\([^)\n]{0,120}\)\s*failed with (?:synapse error|synStatus)"
                   r"\s*:?\s*(?P<code>\d{1,3})\b")
_CHECK = re.compile(r"(?P<file>\w{1,80}\.(?:cpp|cc|h|hpp))::(?P<line>\d{1,6})\((?P<fn>\w{1,60})\): The condition "
                    r"\[.{0,120}?\] failed\.\s*(?P<msg>\S.{0,200})$")
# the bridge's own framing (habana_frameworks' synapse helpers): the status, its name in words, the message
_BRACKET = re.compile(r"\bsynStatus\s*=\s*(?P<code>\d{1,3})\s*\[(?P<name>[^\]\n]{1,60})\]\s*(?P<msg>[^`\n]{0,200})")
_HELD = 20  # synDeviceAlreadyAcquired: another process or container holds the device
_SETUP = re.compile(r"Acquire|Open|Init|initDevice|server type|controller|Comm(?:Init|Config)", re.I)


def read(lines: list[Line], out: NcclLog) -> None:
    """Each Synapse call's failed status and each failed HCL check in ``lines`` (once each, its repeats counted)."""
    seen: dict[str, int] = {}
    for ln in (lines[i] for i in holding(lines, MARKERS)):
        failure = _failure(ln)
        if failure is None:
            if _succeeded(ln.text):  # R10B: a status of success is the runtime's line, read and no failure
                out.claimed.add(ln.no)
                out.lines += 1
            continue
        out.claimed.add(ln.no)
        out.lines += 1
        key = f"{failure.at.source}: {failure.at.message}"
        if key in seen:
            k = seen[key]
            out.failures[k] = _counted(out.failures[k])
            continue
        seen[key] = len(out.failures)
        out.failures.append(failure)
    if seen and LIB not in out.libs:
        out.libs.append(LIB)


def _failure(ln: Line) -> LogFailure | None:
    text = ln.text.strip()
    if (c := _CALL.search(text)) is not None and int(c["code"]) != 0:
        code = int(c["code"])
        name = _STATUS[code] if code < len(_STATUS) else "an unknown synStatus"
        message = f"{c['call']} failed: synStatus {code} ({name})"
        source, what = c["call"], c["call"]
    elif (b := _BRACKET.search(text)) is not None and int(b["code"]) != 0:
        code = int(b["code"])
        name = _STATUS[code] if code < len(_STATUS) else "an unknown synStatus"
        message = f"Synapse: synStatus {code} ({name}, '{b['name'].strip()}') {b['msg'].strip()}".strip()
        source, what = "synStatus", b["msg"]
    elif (h := _CHECK.search(text)) is not None:
        message = f"Habana HCL check failed in {h['fn']}: {h['msg'].strip()}"
        source, what = f"{h['file']}:{h['line']}", f"{h['fn']} {h['msg']}"
    else:
        return None
    at = LogLine(ln.no, LIB, "ERROR", None, None, None, source, message[:_TEXT], text[:_TEXT])
    if f"synStatus {_HELD} (" in message:
        return LogFailure("held", at)
    return LogFailure("init" if _SETUP.search(what) else "runtime", at)


def _succeeded(text: str) -> bool:
    """A Synapse status of 0 (synSuccess) in either framing."""
    found = _CALL.search(text) or _BRACKET.search(text)
    return found is not None and int(found["code"]) == 0


def _counted(failure: LogFailure) -> LogFailure:
    """The failure once more: its message says how many times the lines printed it."""
    m = re.search(r" \(printed (\d+) times\)$", failure.at.message)
    base, n = (failure.at.message[:m.start()], int(m.group(1)) + 1) if m else (failure.at.message, 2)
    return replace(failure, at=replace(failure.at, message=f"{base} (printed {n} times)"))
