"""Issue 46 (ASC): the Ascend runtime's own return codes as programs print them, each read by its meaning class
(knowledge/ascend_codes.yaml): torch_npu's ``NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is
507048`` (and the older ``NPU error, error code is N``), an ACL sample's ``acl set device 0 failed, errorCode =
507033``, the runtime's TraceBack line ``open device 2 failed, runtime result = 507033.``, a C program's
``aclrtSetDevice(deviceId) failed: 507033``; torch_npu's labels for the codes its task queue stops on (``RuntimeError:
HBM MULTI BIT ECC ERROR, …``, the plog's ``… HCCS LINK ERROR happened.``); and the runtime's and ACL's error-manager
codes by their documented title (``Memory_Allocation_Failure(EL0004): …``, ``EE1001: The argument is invalid.``).

A bare number means nothing alone: only a code in one of those contexts is read, and the device is the one the line
names ('open device 2', 'devId=1') or torch_npu's ``[ERROR] … (PID:…, Device:3, RankID:3)`` line beside it. A code
of class ``none`` (not complete yet, not supported, an overflow flag) is read and judged nothing. HCCL's own codes
(EI/EJ) and the runtime's inner errors (EZ9999 …) stay captures/ascend_errors.py's; torch_npu's ``HCCL function
error: HcclAllReduce(…), error code is 9`` (an HcclResult) is read there through ``hccl_calls``."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

from gpuvet.captures.app_errors import AppErrorsParse, reported
from gpuvet.captures.ascend_marks import CODES
from gpuvet.captures.marks import holding
from gpuvet.captures.nccl_log import LogFailure, LogLine, NcclLog
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line
from gpuvet.knowledge.ascend import acl_code, error_manager, labels, read_apart, unsupported

TOOL = "CANN runtime"
NOT_NAMED = "an Ascend NPU, bus id not in the log"
# the classes whose cause is the NPU's own (its memory, link, a task on it): named even where no line says which
# ('bus id not in the log'); the others are the job's or the node's and name a device only where a line does
_PLACED = frozenset({"ecc", "hardware", "link", "lost", "timeout", "exception"})
# HCCL's stalled collective (EI0002's notify wait, EI9999's task timeout): the runtime's timeout codes beside it are its
# consequence (the stream waited for the collective), said by ascend_errors' collective_stalled, not twice
_STALL = re.compile(r"\bEI0002\b|\bEI9999\b[^\n]*\btask timeout|\bnotify wait\b[^\n]*\btime[sd]? ?out", re.I)
_WORDS = CODES  # a line holds one of these, or it is not read
_CODE = r"(?P<code>[1-5]\d{5})(?!\d)"
_NUMERIC = re.compile(
    r"NPU (?:function )?error(?::\s*(?P<call>[^\n]{1,160}?))?,\s*error code is\s*"
    + _CODE  # torch_npu
    + r"|\berrorCode\s*(?:=|is|:)\s*(?P<c2>[1-5]\d{5})(?!\d)"  # the ACL samples' ERROR_LOG
    + r"|\bruntime result\s*=\s*(?P<c3>[1-5]\d{5})(?!\d)"  # the runtime's TraceBack line
    + r"|\b(?P<api>acl\w{2,60}|rt[A-Z]\w{2,60})\s*\([^)\n]{0,120}\)\s*(?:execute )?fail(?:ed)?\b[^\d\n]{0,24}?"
    r"(?P<c4>[1-5]\d{5})(?!\d)"  # 'aclrtSetDevice(deviceId) failed: 507033', '… failed, ret = 507899'
     + r"|\bfail(?:ed)?,?\s*(?:error ?code|ret(?:Code)?)\s*(?:is|=|:)\s*(?P<c5>[1-5]\d{5})(?!\d)"
)  # 'ACL stream


# synchronize failed, error code:507018', '… failed, ret: 507011'
@cache
def _labels() -> re.Pattern[str]:
    """torch_npu's labels (knowledge/ascend_codes.yaml), the longest first."""
    return re.compile(r"(?<!\w)(" + "|".join(re.escape(k) for k in sorted(labels(), key=len, reverse=True)) + r")(?!\w)")


_THROWN = re.compile(r"^\s*(?:\w+Error:\s*)?$|\bthrow\s+$")
# an error-manager code opening its line (after the error manager's '[PID: N] date', a RecentErrMsg label) or
# after its documented title ('Memory_Allocation_Failure(EL0004): …')
_EM_LEAD = (
    r"^\s*(?:\[ERROR\]\s*RecentErrMsg:\s*|CANN error:\s*)?(?:\[PID:\s*\d{1,9}\]\s*)?"
    r"(?:\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d(?:\.\d{1,6}){0,2}\s+)?"
)
_EM_CODE = re.compile(
    _EM_LEAD + r"(?:(?P<title>[A-Za-z][\w.]{2,80})\s*\(\s*)?(?P<code>E[A-HK-Z]\d{4}|W[A-Z]\d{4})\b\s*\)?"
    r"\s*:?"
)
_DEVICE = re.compile(
    r"\b(?:open|set|reset) device (\d{1,4})\b|\b(?:device_?id|devId|deviceId|dev_id)\s*[=:]\s*(\d{1,4})\b"
    r"|\bchipId:\s*(\d{1,4})\b",
    re.I,
)
_TORCH_DEVICE = re.compile(r"\(PID:\s*\d{1,9},\s*Device:\s*(\d{1,4}),\s*RankID:")  # torch_npu's line (-1: none set)
_TRACE = re.compile(
    r"\[FUNC:\w+\]\[FILE:[\w.]+\]\[LINE:\d+\]\s*$|^\s*TraceBack \(most recent call last\):\s*$|"
    r"^\s*(?:Possible Cause|Solution|Reason)\s*:|^\s*\[Error\]:\s"
)
_BESIDE = 3  # lines: torch_npu's device line stands this close after (or before) the code it reports
_NEARBY = 8  # lines: the CANN code under torch_npu's line
_TRACED = 16  # lines: the runtime's own lines under a code (its TraceBack, its explanation) are this close


def parse(lines: list[Line]) -> AppErrorsParse:
    """Every Ascend return code, torch_npu label and error-manager code the lines print, as application error
    records of kind ``acl_<class>`` (a class ``none`` claimed and not recorded), each kind and device once."""
    out = AppErrorsParse()
    seen: dict[tuple[str, str | None], int] = {}
    last = -1
    stalled = any(_STALL.search(lines[i].text) for i in holding(lines, ("EI0002", "EI9999", "otify wait")))
    for i in holding(lines, _WORDS):
        if i <= last:
            continue
        found = _read_line(lines, i)
        if found is None or _traced_by_runtime(lines, i):
            continue
        cls, said = found
        last = _claim(lines, i, out)
        if cls in ("timeout", "exception") and _said_by_runtime(lines, i):
            out.notes.append(f"line {lines[i].no}: {said}: the runtime's own code under it says this failure")
            continue
        if cls == "none" or cls == "timeout" and stalled:
            why = "read, nothing wrong" if cls == "none" else "the stalled collective's timeout, said by it"
            out.notes += [f"line {lines[i].no}: {said}: {why}"] if stalled or "support" in said else []
            continue
        _add(
            out,
            seen,
            AppError(f"acl_{cls}", lines[i].no, lines[i].text.strip()[:300], _module(lines, i, cls), TOOL, meaning=said),
        )
    if out.errors:
        kinds = ", ".join(dict.fromkeys(e.kind for e in out.errors))
        out.notes.append(f"Ascend runtime codes: {len(out.claimed)} line(s) read ({kinds})")
    return out


def _said_by_runtime(lines: list[Line], i: int) -> bool:
    """Whether the runtime's own code opens a line under the code's (EE1002: Stream synchronize timeout …, which
    ascend_errors reads with its reason): the same failure, said once (R5C)."""
    for j in range(i + 1, min(len(lines), i + _TRACED)):
        em = _EM_CODE.match(lines[j].text)
        if em is not None and em["title"] is None and not read_apart(em["code"]) and "[ERROR]" not in lines[j].text:
            return True
    return False


def _traced_by_runtime(lines: list[Line], i: int) -> bool:
    """Whether line ``i`` is in the TraceBack under a code ascend_errors reads (the runtime's own: EH9999, EE1002 …):
    its 'runtime result = N' is that code's failure, said with it (its reason), not a second one."""
    for j in range(i - 1, max(-1, i - _TRACED), -1):
        text = lines[j].text
        if (em := _EM_CODE.match(text)) is not None:
            return em["title"] is None and not read_apart(em["code"])
        if not (_TRACE.search(text) or text[:1].isspace()):
            return False
    return False


def _read_line(lines: list[Line], i: int) -> tuple[str, str] | None:
    """(class, what the code is) of the line's code, label or error-manager code; None where it holds none."""
    text = lines[i].text
    if (em := _EM_CODE.match(text)) is not None and unsupported(text[em.end() :]):
        return "none", f"{em['code'].upper()}: not supported on this NPU or build (the application's support gap)"
    if (em := _EM_CODE.match(text)) is not None and em["title"] is None and not read_apart(em["code"]):
        return None  # a line opening with the runtime's own code (EH9999: Inner Error, EE1002: …): ascend_errors'
    if (m := _NUMERIC.search(text)) is not None:
        number = int(next(g for g in (m["code"], m["c2"], m["c3"], m["c4"], m["c5"]) if g))
        entry = acl_code(number)
        return entry.cls, f"{number} {entry.name or 'not in the runtime headers'} ({entry.cls})"
    if (label := _label(text)) is not None:
        return labels()[label], f"torch_npu's {label} ({labels()[label]})"
    if em is not None and (row := error_manager(em["code"])) is not None:
        if em["title"] is None and not re.match(r"\s*:", text[em.end("code") :]):
            return None  # a bare code must be followed by its colon ('EE1001: …'), as the error manager prints it
        return row[1], f"{em['code'].upper()} {row[0]} ({row[1]})"
    return None


def _label(text: str) -> str | None:
    """torch_npu's label as it throws or logs it: opening the message ('RuntimeError: UCE ERROR, …'), after 'throw'
    ('… in Run, throw HCCS LINK ERROR.'), or before 'happened' ('HCCL OP RETRY FAILED happened.'); never quoted."""
    for m in _labels().finditer(text):
        before, after = text[: m.start()], text[m.end() : m.end() + 12]
        if before[-1:] in "'\"`" and before or after[:1] in "'\"`":
            continue  # a string literal or a poster's quote: quoted()'s, never the program's own line
        if _THROWN.search(before) or after.startswith((" happened", ",", ".")):
            return m.group(1)
    return None


def _claim(lines: list[Line], i: int, out: AppErrorsParse) -> int:
    """Claims the code's line and the runtime's own lines under it (its TraceBack, '[Error]: …' and the indented
    explanation after it, Possible Cause / Solution); the index of the last one claimed."""
    out.claimed.add(lines[i].no)
    last, explained = i, False  # explained: an '[Error]: …' line opened the runtime's indented explanation
    for j in range(i + 1, min(len(lines), i + _TRACED)):
        text = lines[j].text
        if _TORCH_DEVICE.search(text):
            continue  # torch_npu's device line: ascend_errors' (it places the EI/EJ codes under it)
        explained = "[Error]:" in text or explained and text[:1].isspace()
        if not (_TRACE.search(text) or explained):
            break
        out.claimed.add(lines[j].no)
        last = j
    return last


def _module(lines: list[Line], i: int, cls: str) -> str | None:
    """The NPU the line names, else the device torch_npu's line beside it names; for a class about the NPU itself
    with none named, NOT_NAMED; else None."""
    if (d := _DEVICE.search(lines[i].text)) is not None:
        return f"NPU {next(g for g in d.groups() if g)}"
    for j in [*range(i + 1, min(len(lines), i + _BESIDE + 1)), *range(i - 1, max(-1, i - _NEARBY - 1), -1)]:
        if (t := _TORCH_DEVICE.search(lines[j].text)) is not None:
            return f"NPU {t.group(1)}"
    return NOT_NAMED if cls in _PLACED else None


def _add(out: AppErrorsParse, seen: dict[tuple[str, str | None], int], error: AppError) -> None:
    key = (error.kind, error.module)
    if key in seen:
        k = seen[key]
        out.errors[k] = replace(out.errors[k], times=out.errors[k].times + 1)
        return
    seen[key] = len(out.errors)
    out.errors.append(error)


# --- a poster's sentence: 'our job dies with 'error code is 507054'' (app_errors.reported decides it is a report) ---
_SAID_CODE = re.compile(r"(?:error ?code(?: is)?|errorCode|runtime result|ACL error)\s*[=:]?\s*[`'\"]?" + _CODE)


def quoted(lines: list[Line]) -> AppErrorsParse:
    """The codes and labels a poster's sentence reports ('training on NPU 3 dies with 'error code is 507054''),
    read only where no tool's own line was (captures/formats.read_quoted), each marked ``quoted``."""
    out = AppErrorsParse()
    seen: dict[tuple[str, str | None], int] = {}
    for i in holding(
        lines, ("error code", "errorCode", "runtime result", "ACL error", " ERROR", "FORCE STOP", "RETRY FAILED")
    ):
        text = lines[i].text
        said = [(m, acl_code(int(m["code"]))) for m in _SAID_CODE.finditer(text)]
        named = [(m, labels()[m.group(1)]) for m in _labels().finditer(text)]
        for m, cls in [(m, e.cls) for m, e in said] + named:
            if not reported(text, m.start(), m.end()):
                continue
            out.claimed.add(lines[i].no)
            if cls == "none":  # a status the poster saw (not supported, an overflow flag): read, nothing wrong
                continue
            module = (
                f"NPU {d.group(1)}"
                if (d := re.search(r"\bNPU\s?(\d{1,4})\b", text))
                else NOT_NAMED
                if cls in _PLACED
                else None
            )
            _add(
                out,
                seen,
                AppError(f"acl_{cls}", lines[i].no, text.strip()[:300], module, TOOL, quoted=True, meaning=m.group(0)),
            )
    return out


# --- torch_npu's failed HCCL call: 'HCCL function error: HcclAllReduce(…), error code is 9' ---
_HCCL_CALL = re.compile(
    r"HCCL function error:\s*(?P<fn>[A-Za-z]\w{2,80})\s*\([^\n]{0,300}?\),\s*error code is\s*"
    r"(?P<ret>\d{1,4})\b"
)
_SETUP = re.compile(r"CommInit|GetRootInfo", re.I)  # read by app_errors' collective_init (a set-up failure there)


def hccl_calls(lines: list[Line], out: NcclLog, results: dict[int, str]) -> None:
    """Each HCCL call torch_npu says failed while the job ran, as the collective library's failure (its HcclResult in
    ``results``' words: 9 a timeout is a stalled collective), the device from torch_npu's [ERROR] line after it;
    a set-up call is app_errors' (collective_init), not read twice."""
    for i in holding(lines, ("HCCL function error",)):
        m = _HCCL_CALL.search(lines[i].text)
        if m is None or _SETUP.search(m["fn"]) or int(m["ret"]) == 0:
            continue
        ret, fn = int(m["ret"]), m["fn"]
        dev = next(
            (
                int(t.group(1))
                for j in range(i + 1, min(len(lines), i + _BESIDE + 1))
                if (t := _TORCH_DEVICE.search(lines[j].text)) is not None
            ),
            None,
        )
        message = f"{fn} failed: HcclResult {ret} ({results.get(ret, 'an HCCL error')})"
        at = LogLine(lines[i].no, "HCCL", "ERROR", None, None, dev, fn, message, lines[i].text.strip()[:240])
        out.failures.append(LogFailure("stalled" if ret == 9 else "runtime", at))
        out.claimed.add(lines[i].no)
        out.lines += 1
