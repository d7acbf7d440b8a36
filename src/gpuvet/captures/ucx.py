"""UCX's own error lines about an RDMA port: a work completion with error, as its mlx5 transports print it
(``[host:pid:thread] ib_mlx5_log.c:139  Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81
hw_synd 0/0)``; newer versions put a timestamp before the bracket and ``UCX  ERROR`` after the source), and the
queue pair's work request it dumps on the next line (``DCI QP 0xa9f wqe[0]: SEND s-e [rqpn 0xa66 rlid 703]``).

Each is one failure on one NIC port: what failed (the completion's status in UCX's words), the device and
port, the host and process that saw it. The status tells the side: a retry count exceeded means the remote
port never acknowledged (the fabric or the peer's port between them), a remote access / remote QP error that
the peer refused (its process gone or its memory unregistered), a local one is the program's own request.
Without its bracketed prefix a line is read only with UCX's syndrome after the port (``(synd 0x…``).

UCX also says when it cannot set up a port at all because the process may lock too little memory
(``ibv_create_cq(cqe=4096) failed: Cannot allocate memory : Please set max locked memory (ulimit -l) to
'unlimited' (current: 64 kbytes)``): the node's limit, read with the call that failed and the limit it names.

A program on raw verbs (uccl, a transfer engine) prints the same failure as the completion queue entry's verbs
status (``CQE ERROR wr_id=3 status=12(transport retry counter exceeded) opcode=1 vendor_err=0xa qp_num=0x2c10``):
read as one completion error of the same meaning, on the device the line names (``dev=mlx5_0``, ``on mlx5_0:1``)
or on a NIC it does not name (issue 46, batch K)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures import cqe_status, rdma_verbs
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import Marks
from gpuvet.captures.text import Line

_TEXT = 240  # characters of a line kept as evidence
# '[1737742661.094513] [cn0244:260472:0]      ib_mlx5_log.c:139  UCX  ERROR   ': the timestamp, host, pid,
# thread ids, source file and line, UCX's level word: ERROR or WARN (review 56: an INFO line's 'Using active port
# on mlx5_0:1/IB' is no error); a line without a level word (older UCX) is read only with the syndrome after the port
_PREFIX = (r"^\s*(?:\[\d{1,12}\.\d{1,9}\]\s*)?\[(?P<host>[\w.-]{1,64}):(?P<pid>\d{1,9})(?::\d{1,9}){0,3}\]\s+"
           r"[\w.-]{1,64}\.c:\d{1,6}\s+")
_ERROR = r"(?P<what>[A-Za-z][A-Za-z ]{2,60}?)\s+on\s+(?P<dev>[\w.-]{1,64}):(?P<port>\d{1,3})/(?P<tl>IB|RoCE|Eth)\b"
_SYND_AFTER = r"\s*\(synd (?P<synd>0x[0-9a-fA-F]{1,8})\b"
_LEVELLED = lazy(_PREFIX + r"UCX\s+(?:ERROR|WARN)\s+" + _ERROR)
_UNLEVELLED = lazy(_PREFIX + r"(?!UCX\s)" + _ERROR + _SYND_AFTER)
_BARE = lazy(r"^\s*" + _ERROR + _SYND_AFTER)
# the same behind a launcher's 'host: ' or quoted in a sentence: UCX's port and syndrome after it are its alone
_INSIDE = lazy(r"(?:\bUCX\s+(?:ERROR|WARN)\s+)?" + _ERROR + _SYND_AFTER)
# UCX's own lines at a level below WARN ('UCX  INFO  Using active port on mlx5_0:1/IB'): read as its, no error
_QUIET = lazy(_PREFIX + r"UCX\s+(?:INFO|DIAG|DEBUG|TRACE\w*|DATA|REQ|FUNC|POLL|PRINT)\s")
_SYND = lazy(r"\(synd (0x[0-9a-fA-F]{1,8})\b")
# the work request dumped under the error: 'DCI QP 0xa9f wqe[0]: SEND …', 'RC QP 0x1c4 wqe[12]: RDMA_READ …'
_WQE = lazy(r"^\s*(?:\[[\w.-]{1,64}:\d{1,9}(?::\d{1,9}){0,3}\]\s+[\w.-]{1,64}\.c:\d{1,6}\s+)?"
            r"(?:UCX\s+\w+\s+)?(?:DCI|DCT|RC|DC|UD|QP)\b[\w ]{0,8}\b0x[0-9a-fA-F]{1,8} wqe\[\d{1,9}\]:")


# UCX's advice after a verbs call the memlock limit failed (its own words name the limit: 'max locked memory')
_MEMLOCK = lazy(_PREFIX + r"(?:UCX\s+(?:ERROR|WARN)\s+)?(?P<call>\w{2,40})\([^)]{0,80}\) failed:.{0,80}?"
                r"max locked memory \(ulimit -l\)")
_CURRENT = lazy(r"\(current: ([\w ]{1,20})\)")


# ibverbs' work-completion statuses (enum ibv_wc_status, 1-21) in the words ibv_wc_status_str gives them
_WC_STATUS = ("local length error", "local QP operation error", "local EE context operation error",
              "local protection error", "Work Request Flushed Error", "memory management operation error",
              "bad response error", "local access error", "remote invalid request error", "remote access error",
              "remote operation error", "transport retry counter exceeded", "RNR retry counter exceeded",
              "local RDD violation error", "remote invalid RD request", "remote aborted error",
              "invalid EE context number", "invalid EE context state", "fatal error", "response timeout error",
              "general error")
# a completion word, then the entry's status as its number and/or its verbs words: 'CQE ERROR … status=12(transport
# retry counter exceeded)', 'WC error: status 5 (Work Request Flushed Error)', 'completion with status: 12'
_VERBS = lazy(r"\b(?:CQE|CQ|WC|wc|[Cc]ompletion)\b.{0,80}?\b(?:wc[._])?status\s*[=:]?\s*(?P<code>\d{1,2})\b"
              r"(?:\s*\((?P<words>[A-Za-z][A-Za-z ]{2,60})\))?")
_VERBS_DEV = lazy(r"(?:\b(?:dev(?:ice)?|hca|ibdev|nic)\s*[=:]?\s*|\bon\s+)(?P<dev>[a-z][a-z0-9]{1,12}_[\w.]{1,16})"
                  r"(?::(?P<port>\d{1,3})\b|.{0,40}?\bport\s*[=:]?\s*(?P<port2>\d{1,3})\b)?")

_FAILED = lazy(r"err|fail", re.I)
# the same statuses by their enum names ('wc status IBV_WC_RETRY_EXC_ERR (12)'), in the enum's order
_WC_ENUM = ("LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR", "LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR",
            "BAD_RESP_ERR", "LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR",
            "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR", "REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR",
            "INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR", "GENERAL_ERR")
_VERBS_ENUM = lazy(r"\bstatus\b.{0,20}?\bIBV_WC_(?P<enum>[A-Z_]{6,24})\b")


def _verbs(ln: Line) -> UcxError | None:
    """A raw-verbs program's completion error line (status 1-21, not NCCL's own NET/IB line, read elsewhere)."""
    if "status" not in ln.text or "NET/IB" in ln.text:
        return None
    if (e := _VERBS_ENUM.search(ln.text)) is not None and e.group("enum") in _WC_ENUM:
        code = _WC_ENUM.index(e.group("enum")) + 1
        words = _WC_STATUS[code - 1]
    elif (m := _VERBS.search(ln.text)) is None or not 1 <= (code := int(m.group("code"))) <= len(_WC_STATUS):
        return None
    else:
        words = (m.group("words") or _WC_STATUS[code - 1]).strip()
        if words.lower() not in {w.lower() for w in _WC_STATUS}:
            return None  # a status number with other words: some other library's status, not a verbs completion
        if m.group("words") is None and _FAILED.search(ln.text) is None:
            return None  # a bare number is a verbs status only on a line that says the entry failed
    if cqe_status.narrated(ln.text):  # R9C: a poster's account of a status, not a program's line
        return None
    dev = _VERBS_DEV.search(ln.text)
    port = dev.group("port") or dev.group("port2") if dev else None
    return UcxError(ln.no, None, None, dev.group("dev") if dev else None, int(port) if port else None, "verbs",
                    f"{words[:1].upper()}{words[1:]} (status {code})", None, ln.text.strip()[:_TEXT])


@dataclass(frozen=True)
class UcxLimit:
    """A verbs call UCX says failed for the max locked memory limit (ulimit -l): the node's set-up, no port's."""

    line: int
    host: str
    pid: int
    call: str  # ibv_create_cq, ibv_reg_mr
    current: str | None  # the limit UCX read, '64 kbytes'
    text: str


@dataclass(frozen=True)
class UcxError:
    """One work completion with error on one port, as UCX printed it."""

    line: int
    host: str | None  # the bracket's host ('master'); None: a line without UCX's prefix
    pid: int | None
    device: str | None  # mlx5_0; None: a verbs completion line that names no device
    port: int | None
    transport: str  # IB, RoCE
    what: str  # the completion's status in UCX's words: 'Transport retry count exceeded', 'Remote access'
    syndrome: str | None  # the CQE syndrome, 0x15 for a retry exceeded
    text: str


@dataclass
class UcxParse:
    errors: list[UcxError] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)
    limits: list[UcxLimit] = field(default_factory=list)  # calls the memlock limit failed
    setups: list[rdma_verbs.VerbsSetup] = field(default_factory=list)  # QPs/verbs resources a program could not set up


def parse(lines: list[Line]) -> UcxParse:
    """UCX's completion errors in ``lines``, each work-request line under one claimed with it, and its lines
    below WARN claimed as read (no error)."""
    out = UcxParse()
    for ln in lines:
        m = _LEVELLED.match(ln.text) or _UNLEVELLED.match(ln.text) or _BARE.match(ln.text) \
            or ("synd" in ln.text and _INSIDE.search(ln.text)) or None
        if m is not None:
            prefixed = "host" in m.groupdict()
            synd = _SYND.search(ln.text)
            out.errors.append(UcxError(ln.no, m.group("host") if prefixed else None,
                                       int(m.group("pid")) if prefixed else None, m.group("dev"), int(m.group("port")),
                                       m.group("tl"), m.group("what").strip(), synd.group(1) if synd else None,
                                       ln.text.strip()[:_TEXT]))
            out.claimed.add(ln.no)
        elif (v := _verbs(ln)) is not None:
            out.errors.append(v)
            out.claimed.add(ln.no)
        elif "locked memory" in ln.text and (m := _MEMLOCK.match(ln.text)) is not None:
            current = _CURRENT.search(ln.text)
            out.limits.append(UcxLimit(ln.no, m.group("host"), int(m.group("pid")), m.group("call"),
                                       current.group(1).strip() if current else None, ln.text.strip()[:_TEXT]))
            out.claimed.add(ln.no)
        elif (out.errors and _WQE.match(ln.text)) or ("UCX" in ln.text and _QUIET.match(ln.text)):
            out.claimed.add(ln.no)
    return out


def parse_verbs(lines: list[Line], marks: Marks | None = None) -> UcxParse:
    """The class's other lines (captures/rdma_verbs.py) as UCX's records: a format of its own, run only on a text
    holding its markers (VERBS_MARKS) and on the lines UCX's own format left."""
    out = UcxParse()
    _add_verbs(out, rdma_verbs.parse(lines, marks))
    return out


def _add_verbs(out: UcxParse, v: rdma_verbs.VerbsParse) -> None:
    """The other programs' and the kernel's completion errors as UCX's (one cause, one grouping), their set-ups."""
    for c in v.completions:
        what = (f"{rdma_verbs.status_words(c.status)} (status {c.status})" if c.status else
                "An error completion (its status not in the line)")
        out.errors.append(UcxError(c.line, c.host, None, c.device, c.port, c.source, what, c.syndrome, c.text))
    out.setups += v.setups
    out.claimed |= v.claimed


MARKS = ("/IB", "/RoCE", "/Eth", "locked memory", "status")  # formats.py's: UCX's port, memlock, a verbs status
VERBS_MARKS = rdma_verbs.MARKS  # the class's other lines (parse_verbs)
