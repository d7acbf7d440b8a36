"""Ascend's runtime errors as a program prints them (torch_npu, MindSpore, a CANN application): CANN's
error-code lines (``EI0006: … Getting socket times out``, ``EJ0001: … Failed to initialize the HCCP
process``, ``EI9999 … hccl fftsplus task timeout …``) and torch_npu's own line above them, which names
the device and rank (``[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST
call hccl api failed.``).

CANN's documentation gives HCCL the codes EI**** and HCCP EJ****: those are the collective library's
errors, read as HCCL's own log lines (nccl_log's records), so doctor judges them with the plog's. A
code of another component (the runtime's EE/EH/EZ …: 'EH9999: wait for compute device to finish
failed, runtime result = 107020', 'rtDeviceSynchronize execute failed, reason=[task timeout]') is not
the collective's: it is kept apart (``AscendLog.runtime``), an error of the NPU's runtime while the job
ran. The host is never printed on these lines: the failure is named by device.

A CANN traceback may carry no code of its own, only the HCCL call that failed and its HcclResult
(``… fails to invoke the HcclAllocComResourceByTiling function of the hccl module. ret = 9``): that is the
collective's error too, its result read by hccl_types.h's names (9 a timeout, 11-14 a TCP/RoCE connect or
transfer, 19 the network); a call that sets the communicator or its resources up (Init, Alloc, Create,
Resource) failing is a set-up failure."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gpuvet.captures.nccl_log import LogFailure, LogLine, NcclLog
from gpuvet.captures.text import Line

__all__ = ["AscendLog", "NcclLog", "parse"]

_TEXT = 240  # characters of a line kept as evidence
# CANN's error manager may lead the line with the process and time ('[PID: 749] 2025-12-29-03:16:15.787.356 '), and
# llama.cpp's ggml-cann with 'CANN error: ' (R5C): read past
_LEAD = r"^\s*(?:CANN error:\s*)?(?:\[PID:\s*\d{1,9}\]\s*)?(?:\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d(?:\.\d{1,6}){0,2}\s+)?"
_CODE = re.compile(_LEAD + r"(?P<code>E[A-Z]\d{4})\b:?\s*(?P<msg>\S.*)?$")
# HCCL's code written after its name, the whole line ('Communication_Error_Get_Socket(EI0006)'): the name is
# the message; only the collective's codes (EI/EJ) in this form, a bracketed code of another kind is not claimed
_NAMED = re.compile(_LEAD + r"(?P<name>[A-Za-z][\w.]{2,80})\s*\(\s*(?P<code>E[IJ]\d{4})\s*\)\s*[.:]?\s*(?P<msg>\S.*)?$")
_COLLECTIVE = ("EI", "EJ")  # HCCL's and HCCP's codes; any other prefix is another component's (the runtime's)
_REASON = re.compile(r"reason=\[([^\]]{1,80})\]")  # the runtime's words for what failed ('task timeout')
# torch_npu's line: '[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.'
_TORCH_NPU = re.compile(r"^\s*\[ERROR\]\s+[\d:. -]{8,32}\s*\(PID:\s*(?P<pid>\d{1,9}),\s*Device:\s*(?P<dev>-?\d{1,4}),"
                        r"\s*RankID:\s*(?P<rank>-?\d{1,6})\)\s*(?P<err>ERR\d{5})?\s*(?P<msg>.*)$")
_ON_DEVICE = re.compile(r"\b(?:device\(chipId:|deviceId=|device_id=)\s*(\d{1,4})\b")
_TRACE = re.compile(r"\[FUNC:\w+\]\[FILE:[\w.]+\]\[LINE:\d+\]\s*$|^\s*TraceBack \(most recent call last\):\s*$")
# the set-up codes of CANN's HCCL error list (environment, rank table, versions, transport, binding); any
# other code is an error while the job ran, unless its words say initialisation
_INIT_CODES = frozenset({"EI0001", "EI0004", "EI0008", "EI0009", "EI0014", "EI0015", "EI0016", "EI0017",
                         "EI0019", "EI0020"})
# a collective that waited for a rank that never came: EI0002's notify wait, EI9999's '… task timeout occurred'
_STALLED = re.compile(r"\btask timeout\b|\bnotify wait\b.*\btime[sd]? ?out|\bstuck notify\b", re.I)
_INIT_WORDS = re.compile(r"\binitiali[sz]|\binit\b|rank ?table", re.I)
# HCCL's task tag names the collective it ran ('tag[Broadcast_172.16.38.219%eth0_60000_0_…]', 'tag:[HcomAllReduce_…')
_OP_TAG = re.compile(r"\btag\s*:?\s*\[\s*\w*?(AllReduce|AllGather|ReduceScatter|Broadcast|All[Tt]oAll(?:VC?)?|"
                     r"BatchSendRecv|Reduce|Scatter|Gather|Send|Recv)(?![a-z])")
# an HCCL/HCOM call named with its non-zero result: 'the HcclAllocComResourceByTiling function … ret = 9'
_CALL = re.compile(r"\b(?P<fn>H(?:ccl|com)[A-Z]\w{2,60})\b[^\n]{0,80}?\bret(?:code)?\s*[=:]\s*(?P<ret>\d{1,4})\b")
_RESULTS = {1: "a parameter error", 2: "an empty pointer", 3: "a memory error", 4: "an internal error",
            5: "not supported", 6: "a resource not found", 7: "a resource unavailable", 8: "a system call failed",
            9: "a timeout", 11: "a TCP connect failure", 12: "a RoCE connect failure", 13: "a TCP transfer failure",
            14: "a RoCE transfer failure", 15: "a runtime call failed", 16: "a driver call failed",
            19: "a network error", 20: "try again", 21: "the remote side's error"}  # HcclResult (hccl_types.h)
_SETUP_CALL = re.compile(r"Init|Alloc|Create|Resource|Comm(?:Init|Config)", re.I)
NEARBY = 8  # lines: torch_npu's device line stands this close above the code it reports


@dataclass
class AscendLog(NcclLog):
    """HCCL's failures (``failures``, as the plog's) and the runtime's error codes (``runtime``)."""

    runtime: list[LogFailure] = field(default_factory=list)


def parse(lines: list[Line]) -> AscendLog:
    """The HCCL/HCCP error codes in ``lines``, each with the device torch_npu's line names, and the other
    components' codes apart; an empty AscendLog where there is none."""
    out = AscendLog()
    place: tuple[int, int | None, int | None, int | None] | None = None  # (index, pid, device, rank)
    last: LogFailure | None = None
    traced: LogFailure | None = None  # the code whose 'TraceBack' lines are being read
    for i, ln in enumerate(lines):
        if "ERROR" in ln.text and (t := _TORCH_NPU.match(ln.text)) is not None:
            place = (i, int(t.group("pid")), _number(t.group("dev")), _number(t.group("rank")))
            out.claimed.add(ln.no)
            continue
        m = _CODE.match(ln.text) or _NAMED.match(ln.text)
        if m is None and "ret" in ln.text and (call := _call(ln, place if place and i - place[0] <= NEARBY else None)):
            out.claimed.add(ln.no)
            out.lines += 1
            if traced is not None:
                traced = last = _fold(out, traced, call)
            elif not any(f.at.source == call.at.source for f in out.failures):  # each call once (a traceback repeats)
                out.failures.append(call)
                last = call
            continue
        if m is None:
            if last is not None and _TRACE.search(ln.text):  # the runtime's trace under a code: part of it
                out.claimed.add(ln.no)
                traced = last if (last.at.source or "").startswith(_COLLECTIVE) and last in out.failures else traced
            continue
        traced = None
        if not m.group("code").startswith(_COLLECTIVE) and _documented(m.group("code"), m.group("msg") or ""):
            continue  # a documented runtime/ACL code, or one saying 'not supported': ascend_codes.py reads it (ASC, R5C)
        near = place if place is not None and i - place[0] <= NEARBY else None
        failure = _failure(ln, m, near)
        out.claimed.add(ln.no)
        out.lines += 1
        if not m.group("code").startswith(_COLLECTIVE):
            _runtime(out, failure, lines, i)
            last = None
            continue
        if last is not None and last.at.source == failure.at.source and (
                last.at.dev == failure.at.dev or None in (last.at.dev, failure.at.dev)):
            if len(failure.at.message) > len(last.at.message):  # 'EI9999: Inner Error!', then what it was
                out.failures[-1] = last = failure
            continue
        out.failures.append(failure)
        last = failure
    from gpuvet.captures import ascend_codes  # ASC: torch_npu's 'HCCL function error: HcclX(…), error code is N'

    ascend_codes.hccl_calls(lines, out, _RESULTS)
    out.libs = ["HCCL"] if out.failures else []
    from gpuvet.captures import synapse_errors  # YX1: Intel Gaudi's Synapse statuses and HCL checks, as the same records

    synapse_errors.read(lines, out)
    return out


def _documented(code: str, message: str) -> bool:
    from gpuvet.knowledge.ascend import read_apart, unsupported  # the table read only where a runtime code was printed

    return read_apart(code) or unsupported(message)


def _fold(out: AscendLog, code: LogFailure, call: LogFailure) -> LogFailure:
    """A failed HCCL call on the trace CANN prints under a code is that code's failure, not a second one; a call
    that sets the communicator up makes the code a set-up failure (issue 46, batch R: EI0006 under Alloc)."""
    k = out.failures.index(code)
    if call.kind == "init" and code.kind != "init":
        out.failures[k] = replace(code, kind="init")
    return out.failures[k]


def _runtime(out: AscendLog, failure: LogFailure, lines: list[Line], i: int) -> None:
    """Another component's code: kept apart, once per code and device (a traceback repeats it, 'EH9999:
    Inner Error!' then what it was), with the runtime's reason from the lines under it ('reason=[task
    timeout]') added to the first one's message."""
    reason = next((r.group(1) for ln in lines[i + 1:i + 4] if (r := _REASON.search(ln.text)) is not None), None)
    at = failure.at
    k = next((k for k, f in enumerate(out.runtime) if f.at.source == at.source and f.at.dev == at.dev), None)
    if k is None:
        out.runtime.append(replace(failure, at=replace(at, lib="CANN runtime")))
        k = len(out.runtime) - 1
    kept = out.runtime[k].at
    if reason and reason not in kept.message:
        out.runtime[k] = replace(out.runtime[k], at=replace(kept, message=f"{kept.message} ({reason})"[:_TEXT]))


def _call(ln: Line, near: tuple[int, int | None, int | None, int | None] | None) -> LogFailure | None:
    """An HCCL call's failed result on a traceback line, as the collective's failure (set-up or while running)."""
    m = _CALL.search(ln.text)
    if m is None or int(m.group("ret")) == 0:
        return None
    ret, fn = int(m.group("ret")), m.group("fn")
    message = f"{fn} failed: HcclResult {ret} ({_RESULTS.get(ret, 'an HCCL error')})"
    at = LogLine(ln.no, "HCCL", "ERROR", None, near[1] if near else None, near[2] if near else None, fn, message,
                 ln.text.strip()[:_TEXT])
    kind = "init" if _SETUP_CALL.search(fn) else "stalled" if ret == 9 else "runtime"
    return LogFailure(kind, at, near[3] if near is not None else None, None)


def _number(text: str | None) -> int | None:
    return int(text) if text is not None and int(text) >= 0 else None


def _failure(ln: Line, m: re.Match[str], near: tuple[int, int | None, int | None, int | None] | None) -> LogFailure:
    code, message = m.group("code"), (m.group("msg") or "").strip()
    if "name" in m.groupdict():  # 'Communication_Error_Get_Socket(EI0006)': the name says what failed
        message = f"{m.group('name').replace('_', ' ')} {message}".strip()
    on = _ON_DEVICE.search(message)
    dev = near[2] if near is not None else int(on.group(1)) if on is not None else None
    at = LogLine(ln.no, "HCCL", "ERROR", None, near[1] if near else None, dev, code, message[:_TEXT],
                 ln.text.strip()[:_TEXT])
    kind = "init" if code in _INIT_CODES or _INIT_WORDS.search(message.split("Solution")[0]) else \
        "stalled" if code == "EI0002" or _STALLED.search(message) else "runtime"
    op = _OP_TAG.search(message)  # past the evidence's cut too: the tag stands late in EI0002's line
    return LogFailure(kind, at, near[3] if near is not None else None, op.group(1) if op else None)
