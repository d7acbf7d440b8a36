"""What RDMA programs and the kernel's RDMA stack print when a queue pair fails on a NIC (issue 46, RDV), beside
UCX's own lines (captures/ucx.py reads those and calls this for the rest).

Two kinds, as an engineer reads them:

- a work completion with error: the kernel's mlx5_ib (``mlx5_bond_0/1: QP 51291 error: local length error (0x8e 0x0
  0x0)``, drivers/infiniband/hw/mlx5/qp.c, the status in ib_wc_status_msg's words; ``mlx5_0:dump_cqe:272:(pid 0):
  dump error cqe``), Open MPI's openib BTL (``error polling LP CQ with status RETRY EXCEEDED ERROR status number 12
  for wr_id …``), a transfer engine's worker (Mooncake's ``Worker: Process failed for slice (… local_nic: mlx5_0 …):
  transport retry counter exceeded``) or any program printing ibv_wc_status_str's words beside an RDMA device. The
  status says the side: retry exceeded is the path to the peer, a remote error the peer, a local one the program's
  own request; a flushed request only echoes a first error, so flushes beside another error are folded into it.
- a queue pair or verbs resource that could not be set up: a QP's state change (``Failed to modify QP to RTR``,
  ``ibv_modify_qp failed``, NVSHMEM IBGDA's ``Error in mlx5dv_devx_obj_modify for INIT2RTR_QP with syndrome …`` and
  ``ibgda_rc_init2rtr failed``), ibv_create_qp / ibv_reg_mr / ibv_open_device failing, UCX's ``UCX ERROR
  ibv_…() failed``, libfabric's fi_getinfo finding no provider. Read with the errno text beside it (``Connection timed
  out [110]``) and the device the line or the log names (Mooncake's ``RDMA device: mlx5_0, LID: 0, GID: …``).

perftest prints some of the same words ('Failed to modify QP 0x… to RTR'); its own lines stay perftest's: here the
"Failed to …" family is read only from a program's log line (a glog/source-file prefix, a transfer engine's step)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuvet.captures import cqe_status, libmlx5_cqe
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

_TEXT = 240
# the kernel's ib_wc_status_msg words (drivers/infiniband/core/verbs.c) where they differ from ibv_wc_status_str's
KERNEL_WORDS = {"wr flushed": 5, "memory bind operation error": 6, "operation aborted": 17}
# ibv_wc_status_str's words, status 1-21 (libibverbs/verbs.c), as ucx.py keeps them; lower case here
VERBS_WORDS = (
    "local length error",
    "local qp operation error",
    "local ee context operation error",
    "local protection error",
    "work request flushed error",
    "memory management operation error",
    "bad response error",
    "local access error",
    "remote invalid request error",
    "remote access error",
    "remote operation error",
    "transport retry counter exceeded",
    "rnr retry counter exceeded",
    "local rdd violation error",
    "remote invalid rd request",
    "remote aborted error",
    "invalid ee context number",
    "invalid ee context state",
    "fatal error",
    "response timeout error",
    "general error",
)
FLUSH = 5
_PLAIN = (19, 21)
_STATUS_ALT = "|".join(sorted((re.escape(w) for w in (*VERBS_WORDS, *KERNEL_WORDS)), key=len, reverse=True))
_DEV = (
    r"(?:mlx[45]_(?:bond_)?\d{1,3}|bnxt_re\d{1,3}|irdma\d{1,3}|rocep\w{1,24}|efa_\d{1,3}|hfi1_\d{1,3}|qedr\d{1,3}|"
    r"erdma_\d{1,3}|hns_\d{1,3}|rxe\d{1,3}|siw\w{0,16}|ionic_\d{1,3})"
)
# mlx5_ib qp.c's mlx5_ib_qp_err_syndrome: '%s/%d: QP %d error: %s (0x%x 0x%x 0x%x)'
_KERNEL_QP = lazy(
    r"\b(?P<dev>[a-z][\w]{1,24})/(?P<port>\d{1,3}): QP (?P<qp>\d{1,10}) error: (?P<words>[A-Za-z ]{3,60}?)"
    r" \((?P<synd>0x[0-9a-fA-F]{1,8}) 0x[0-9a-fA-F]{1,8} 0x[0-9a-fA-F]{1,8}\)"
)
# mlx5_ib cq.c: mlx5_ib_warn(dev, "dump error cqe") as '<dev>:dump_cqe:<line>:(pid N): dump error cqe'
_DUMP_CQE = lazy(r"\b(?P<dev>" + _DEV + r"):dump_cqe:\d{1,6}:\(pid \d{1,9}\): dump error cqe")
_HEX_ROW = lazy(r"^\s*(?:\[[^\]]{1,40}\]\s*)?[0-9a-f]{8}: (?:[0-9a-f]{2} ){8}")
# Open MPI btl_openib_component.c handle_wc (openib's own status names, the status number after them)
_OPENIB = lazy(
    r"(?:\bfrom (?P<host>[\w.-]{1,64}) to: (?P<peer>[\w.-]{1,64}) )?error polling [LH]P CQ with status "
    r"(?P<words>[A-Z][A-Z ]{3,60}?)(?:\s+status\s+number\s+(?P<code>\d{1,2})\b|\s*$)"
)
_OPENIB_WORDS = {
    "RETRY EXCEEDED": 12,
    "RECEIVER NOT READY": 13,
    "LOCAL LENGTH": 1,
    "LOCAL QP OPERATION": 2,
    "LOCAL PROTOCOL": 4,
    "WORK REQUEST FLUSHED": 5,
    "REMOTE ACCESS": 10,
    "REMOTE OPERATION": 11,
    "INVALID REQUEST": 9,
    "LOCAL ACCESS": 8,
    "BAD RESPONSE": 7,
    "FATAL": 19,
    "GENERAL": 21,
}
# Mooncake's worker: 'Process failed for slice (… local_nic: mlx5_0, peer_nic: host:port@mlx5_1 …): <status>'
_SLICE = lazy(r"[Pp]rocess failed for slice \((?P<inner>.{0,400}?)\)(?::|.{0,80}?error:)\s*(?P<words>[A-Za-z ]{3,60})")
_LOCAL_NIC = lazy(r"\blocal_nic: (?P<dev>[\w.-]{1,32})")
# any other program: ibv_wc_status_str's words on a line that names an RDMA device and says it failed
# rdma-core's example programs (libibverbs/examples: ibv_rc_pingpong and its uc/ud/srq/xsrq siblings), the verbs test
# every admin runs: 'Failed status RNR retry counter exceeded (13) for wr_id 2' (ibv_wc_status_str, the number beside)
_PINGPONG = lazy(r"^\s*Failed status (?P<words>[A-Za-z ]{3,60}?) \((?P<code>\d{1,2})\) for wr_id \d{1,20}\b")
_WORDS_ANY = lazy(r"\b(?P<words>" + _STATUS_ALT + r")\b", re.I)
_DEV_ANY = lazy(r"\b(?P<dev>" + _DEV + r")(?:[:/](?P<port>\d{1,3})\b)?")
_FAILED = lazy(r"\b(?:err(?:or)?|fail(?:ed|ure)?|CQE|WC|wc|completion)\b", re.I)

# substrings a line holds before its regex is tried (issue 43: the format runs on every file holding 'status' or 'QP')
_WORD_HINTS = ("rror", "RROR", "xceeded", "lushed", "bort", "RD request", "EE context")
_DEV_HINTS = ("mlx", "bnxt_re", "irdma", "rocep", "efa_", "hfi1_", "qedr", "erdma_", "hns_", "rxe", "siw", "ionic_")
_HELPER_HINTS = ("ibgda", "ibrc", "gic_", "ibdevx", "nvshmem")
_ENGINE_HINTS = ("port not active", "GID", "No matched device", "DMA BUF", "Failed to allocate new", "Failed to create comp")
_CALL_HINTS = ("ibv_", "mlx5dv_", "rdma_", "fi_", "ucp_", "uct_")
# one search a line before any other: every line the class reads holds one of these (its hex rows follow a dump)
_GATE = (
    "QP",
    "rror",
    "RROR",
    "ailed",
    "xceeded",
    "lushed",
    "bort",
    "RD request",
    "EE context",
    "RDMA device",
    "best gid",
    "GID",
    "port not active",
    "DMA BUF",
    "non-zero status",
    "dump error cqe",
    "rdma_",
    "worker_pool",
    "transfer_",
    "endpoint_store",
    "topology.",
    "transport.",
    "test_wc",
    "No matched device",
    "fi_getinfo",
    *cqe_status.HINTS,
)
# a program's log line, not perftest's: glog ('E1207 12:00:00.000 123 file.cpp:45]'), a source file:line, a step tag
_FOREIGN = lazy(
    r"^\s*(?:\S+\s+){0,4}?[IWEF]\d{4}(?:\d{4})? \d\d:\d\d:\d\d|\b[\w.-]{1,64}\.(?:c|cc|cpp|cu|cxx|h|hpp|rs|go|py):"
    r"\d{1,6}\b|\[Handshake\]|\btransfer[_ ]engine\b|\bmooncake\b",
    re.I,
)
_STATE = r"(?P<state>INIT|RTR|RTS|RESET|ERR)"
_SETUP = lazy(
    r"\bFailed to modify QP\b(?:\s+(?:0x[0-9a-fA-F]{1,8}|\d{1,10}))?(?:\s+from\s+\w+)?\s+to\s+" + _STATE + r"\b"
    r"|\b(?P<what2>Create QP type \d{1,3}) failed"
    r"|\bFailed to (?P<what>create QP|register memory|create CQ|open (?:RDMA |IB )?device|allocate PD|"
    r"query (?:port|gid|device))\b"
)
# a transfer engine's own checks of a device before it sets up (Mooncake rdma_context.cpp), by the step each names
_ENGINE_SETUP = lazy(
    r"\bDevice (?P<port>[\w.-]{1,32}) port not active|\bNo suitable GID found on (?P<gid>[\w.-]{1,32})/"
    r"|\b(?P<null>GID is NULL), please check your GID index|\bNo matched device found: (?P<missing>[\w.-]{1,32})"
    r"|\bDMA BUF supported required for GPU RDMA without nvidia-peermem\b.{0,80}?RNIC (?P<dmabuf>[\w.-]{1,32})"
    r"|\bFailed to (?P<res>allocate new protection domain|create completion (?:queue|channel))"
)
_ENGINE_STEPS = {
    "port": "the port is not Active",
    "gid": "no usable GID on the port (RoCE v2 / IB GID with an address)",
    "null": "the GID index reads a null GID (MC_GID_INDEX)",
    "missing": "the device named is not on the node",
    "dmabuf": "GPU memory registration: no dma-buf support and no nvidia-peermem",
    "res": "",
}
# calls that name themselves (verbs, mlx5dv, librdmacm, libfabric, UCX's ucp/uct), 'failed' after them; perftest prints none
_CALL = lazy(
    r"\b(?P<call>(?:ibv|mlx5dv|rdma|fi|ucp|uct)_[a-z_0-9]{2,40})(?:\([^)]{0,160}\))?(?:\s+(?:call|to \w+))?\s*"
    r"(?:failed|returned (?:error|-?\d{1,5}|NULL))"
)
# NVSHMEM's IB transports: devx QP state changes, ibgda/ibrc/gic state helpers
_DEVX = lazy(r"\bError in (?P<call>mlx5dv_devx_obj_\w+) for (?P<state>\w{3,20}?)_QP with syndrome (?P<synd>\w{1,10})")
_HELPER = lazy(
    r"\b(?P<call>(?:ibgda|ibrc|gic|ibdevx|nvshmemt?_ib\w*?)_\w{0,20}?(?P<state>rst2init|init2rtr|rtr2rts|"
    r"init2init|rts2rts|connect|ep_create|ep_connect|qp_create)\w{0,16}) failed"
)
_NVSHMEM_STATUS = lazy(r"/transport/(?:ibgda|ibrc|ibdevx|ibgic|common)/[\w.]{1,40}:\d{1,6}: non-zero status: \d{1,5}")
_ERRNO = lazy(
    r"(?::\s*|\s-\s)(?P<errno>Connection timed out|Invalid argument|Cannot allocate memory|Operation not "
    r"permitted|Permission denied|No such device|No data available|Connection refused|Network is "
    r"unreachable|No route to host|Input/output error|Bad address|Resource temporarily unavailable|"
    r"Operation not supported|Function not implemented|No space left on device|Destination is unreachable|"
    r"Endpoint timeout|Connection reset by remote peer)(?:\s*\[(?P<code>\d{1,4})\])?"
)
_FI_GETINFO = lazy(r"\bfi_getinfo\b.{0,60}?(?:-61\b|No data available|failed)")
# a transfer engine's listing of the devices it opened (Mooncake rdma_context.cpp: 'RDMA device: mlx5_0, LID: 0, …')
_OPENED = lazy(r"\bRDMA device: (?P<dev>[\w.-]{1,32}), LID:|\bFind best gid index: \d{1,3} on (?P<dev2>[\w.-]{1,32})/")
# the program's own lines that say nothing failed, read so a healthy log is no refusal: a transfer engine's glog INFO /
# WARNING lines from its RDMA files, ucx_info -d's '#   Transport: rc_mlx5' listing, mlx5_ib's write-combining probe
_ENGINE_INFO = lazy(
    r"^\s*[IW]\d{4}(?:\d{4})? \d\d:\d\d:\d\d[.\d]*\s+\d{1,9} (?:rdma_\w{1,30}|worker_pool|transfer_\w{1,30}|"
    r"endpoint_store|topology|transport)\.(?:cpp|cc|h):\d{1,6}\]"
)
_UCX_INFO = lazy(
    r"^\s*#\s{1,24}(?:Transport|Device|Type|System device|Memory domain|Component|Capabilities|Bandwidth|"
    r"Latency|Overhead|Priority|Device address|Interface address|Error handling|Connection establishment|"
    r"Atomic [\w ]{1,20}|Memory invalidation|register|remote key|rkey_ptr|alloc|memory types|Resource sizes|"
    r"Node|put_\w{1,10}|get_\w{1,10}|am_\w{1,10}|domain|connection|device num paths|max eps)\s*:"
)
_WC_PROBE = lazy(r"\bmlx5_ib_test_wc:\d{1,6}:\(pid \d{1,9}\): Error -95 while trying to test write-combining")
MARKS = (
    "QP",
    "error polling",
    "ailed for slice",
    "dump error cqe",
    "ibv_",
    "mlx5dv_",
    "fi_getinfo",
    "non-zero status",
    "retry counter exceeded",
    "flushed error",
    "length error",
    "access error",
    "protection error",
    "WR flushed",
    "operation error",
    "request error",
    "RD request",
    "aborted error",
    "EE context",
    "timeout error",
    "bad response",
    "RDD violation",
    "bind operation",
    "RDMA device:",
    "Find best gid",
    "Flushed Error",
    "operation aborted",
    "register memory",
    "open device",
    "open RDMA device",
    "open IB device",
    "create CQ",
    "allocate PD",
    "query port",
    "query device",
    "gic_",
    "ibdevx",
    "nvshmem",
    "endpoint_store",
    "topology.",
    "transport.",
    "port not active",
    "GID",
    "No matched device",
    "DMA BUF",
    "protection domain",
    "completion queue",
    "completion channel",
    "ibgda",
    "ibrc",
    "init2rtr",
    "INIT2RTR",
    "RTR2RTS",
    "ucp_",
    "uct_",
    "Transport:",
    "Memory domain:",
    "mlx5_ib_test_wc",
    "rdma_",
    "worker_pool",
    "transfer_",
    *cqe_status.MARKS,  # R6A: a syndrome's or the verbs enum's name, a syndrome's number
)


@dataclass(frozen=True)
class VerbsCompletion:
    """One work completion with error a program or the kernel printed (the status in verbs words and number)."""

    line: int
    host: str | None
    device: str | None
    port: int | None
    source: str  # who printed it: "the kernel's mlx5_ib", "Open MPI openib", "a transfer engine"
    status: int  # 1-21, ibv_wc_status
    qp: str | None
    syndrome: str | None
    text: str


@dataclass(frozen=True)
class VerbsSetup:
    """A queue pair or verbs resource a program could not set up: the step, the errno text, the device."""

    line: int
    device: str | None  # the device the line names, else the ones the log opened ('mlx5_0/mlx5_1'), else None
    step: str  # 'modify QP to RTR', 'INIT2RTR (mlx5dv_devx_obj_modify, syndrome 764216)', 'ibv_reg_mr'
    reason: str | None  # 'Connection timed out [110]'
    text: str


@dataclass
class VerbsParse:
    completions: list[VerbsCompletion]
    setups: list[VerbsSetup]
    claimed: set[int]


def foreign(text: str) -> bool:
    """A program's log line (glog, a source file:line, a transfer engine's step), not perftest's own."""
    return _FOREIGN.search(text) is not None


def status_words(status: int) -> str:
    """ibv_wc_status_str's words for ``status``, capitalised."""
    w = VERBS_WORDS[status - 1]
    return w[:1].upper() + w[1:].replace("qp", "QP").replace("ee ", "EE ").replace("rnr", "RNR").replace("rdd", "RDD")


def _code(words: str) -> int | None:
    w = words.strip().lower()
    return VERBS_WORDS.index(w) + 1 if w in VERBS_WORDS else KERNEL_WORDS.get(w)


def _completion(ln: Line) -> VerbsCompletion | None:
    t = ln.text
    if "NET/" not in t and (named := cqe_status.completion(ln)) is not None:  # R6A: by a CQE syndrome's or enum's
        return VerbsCompletion(ln.no, None, _device(t), None, "a completion by its CQE syndrome or verbs enum",
                               named[0], None, named[1], named[2][:_TEXT])  # name (a report's prose may name NCCL)
    if "NET/" in t or "NCCL " in t:
        return None  # NCCL's and its plugins' lines are nccl_warns'
    text = t.strip()[:_TEXT]
    if " QP " in t and (m := _KERNEL_QP.search(t)) is not None and (code := _code(m.group("words"))) is not None:
        return VerbsCompletion(
            ln.no,
            None,
            m.group("dev"),
            int(m.group("port")),
            "the kernel's mlx5_ib",
            code,
            m.group("qp"),
            m.group("synd"),
            text,
        )
    if "error polling" in t and (m := _OPENIB.search(t)) is not None:
        code = (
            int(m.group("code"))
            if m.group("code")
            else next((c for k, c in _OPENIB_WORDS.items() if m.group("words").startswith(k)), None)
        )
        if code is not None and 1 <= code <= len(VERBS_WORDS):
            return VerbsCompletion(ln.no, m.group("host"), None, None, "Open MPI's openib BTL", code, None, None, text)
    if "for wr_id" in t and (pp := _pingpong(ln)) is not None:
        return pp
    if "for slice" in t and (m := _SLICE.search(t)) is not None:
        words = m.group("words").strip().lower()
        code = next((c for w in (*VERBS_WORDS, *KERNEL_WORDS) if words.startswith(w) and (c := _code(w))), None)
        if code is not None:
            nic = _LOCAL_NIC.search(m.group("inner"))
            return VerbsCompletion(
                ln.no, None, nic.group("dev") if nic else None, None, "a transfer engine's worker", code, None, None, text
            )
    if (
        any(w in t for w in _WORD_HINTS)
        and any(d in t for d in _DEV_HINTS)
        and (w := _WORDS_ANY.search(t)) is not None
        and (d := _DEV_ANY.search(t)) is not None
        and _FAILED.search(t)
    ):
        code = _code(w.group("words"))
        if code is not None and code not in _PLAIN:  # 'fatal error', 'general error' alone are any program's words
            port = d.group("port")
            return VerbsCompletion(
                ln.no, None, d.group("dev"), int(port) if port else None, "an RDMA program", code, None, None, text
            )
    return None


def _pingpong(ln: Line) -> VerbsCompletion | None:
    """rdma-core's example programs' failed completion, where its words and number agree (no other program's
    sentence)."""
    if (m := _PINGPONG.match(ln.text)) is None or _code(m.group("words")) != (code := int(m.group("code"))):
        return None
    return VerbsCompletion(ln.no, None, None, None, "rdma-core's ibv_*_pingpong", code, None, None,
                           ln.text.strip()[:_TEXT])


def _setup(ln: Line) -> VerbsSetup | None:
    t = ln.text
    if "NET/" in t or "NCCL " in t:
        return None
    text = t.strip()[:_TEXT]
    step: str | None = None
    if "mlx5dv_devx" in t and (m := _DEVX.search(t)) is not None:
        step = f"{m.group('state')} ({m.group('call')}, syndrome {m.group('synd')})"
    elif " failed" in t and any(h in t for h in _HELPER_HINTS) and (m := _HELPER.search(t)) is not None:
        step = f"{m.group('state').upper() if '2' in m.group('state') else m.group('state')} ({m.group('call')})"
    elif "fi_getinfo" in t and _FI_GETINFO.search(t) is not None:
        step = "fi_getinfo (libfabric found no provider for the NIC)"
    elif any(h in t for h in _ENGINE_HINTS) and (m := _ENGINE_SETUP.search(t)) is not None:
        key = next(k for k, v in m.groupdict().items() if v is not None)
        step = _ENGINE_STEPS[key] or m.group("res")
        return VerbsSetup(ln.no, m.group(key) if key not in ("null", "res") else _device(t), step, None, text)
    elif (
        ("failed" in t or "returned" in t)
        and any(h in t for h in _CALL_HINTS)
        and (m := _CALL.search(t)) is not None
        and not m.group("call").startswith("fi_")
    ):
        step = m.group("call")
    elif "ailed" in t and (m := _SETUP.search(t)) is not None and (m.group("what2") or _FOREIGN.search(t)):
        step = f"modify QP to {m.group('state')}" if m.group("state") else m.group("what") or m.group("what2")
    if step is None:
        return None
    e = _ERRNO.search(t)
    reason = (f"{e.group('errno')} [{e.group('code')}]" if e.group("code") else e.group("errno")) if e else None
    return VerbsSetup(ln.no, _device(t), step, reason, text)


def _device(text: str) -> str | None:
    d = _DEV_ANY.search(text)
    return d.group("dev") if d else None


def _dumped(ln: Line, dev: str, got: tuple[int, str] | None) -> VerbsCompletion:
    """The kernel's dumped error CQE: its status decoded from its rows (R6A: cqe_status.dumped), else unknown (0)."""
    said = "the kernel's mlx5_ib (an error CQE dumped" + (
        ", its status decoded from it)" if got else ", its status not in the line)"
    )
    return VerbsCompletion(
        ln.no, None, dev, None, said, got[0] if got else 0, None, got[1] if got else None, ln.text.strip()[:_TEXT]
    )


def _libmlx5(head: libmlx5_cqe.Headline) -> VerbsCompletion:
    """libmlx5's completion error whose rows cqe_status.rows did not take: decoded from the rows the paste kept
    (blank lines between them), else its status not in the capture."""
    if (got := cqe_status.dumped(list(head.rows))) is not None:
        return VerbsCompletion(head.line, head.host, None, None, "libmlx5 (a dumped error CQE)", got[0], None, got[1],
                               head.text)
    return VerbsCompletion(head.line, head.host, None, None, "libmlx5 (its CQE rows not in the capture)", 0, None,
                           libmlx5_cqe.NOT_IN_ROWS, head.text)


def _rows_after(lines: list[Line], i: int) -> list[Line]:
    """The hex rows of a dumped CQE under its line (four 16-byte rows; a few more kept if the dump is longer)."""
    rows = []
    for ln in lines[i + 1 : i + 9]:
        if _HEX_ROW.match(ln.text) is None:
            break
        rows.append(ln)
    return rows


def _quiet(text: str, listing: bool) -> bool:
    """``listing``: the text holds ucx_info -d's 'Transport:' or 'Memory domain:' (its other rows are read with them)."""
    return bool(
        _ENGINE_INFO.match(text)
        or (listing and "#" in text and _UCX_INFO.match(text))
        or ("test_wc" in text and _WC_PROBE.search(text))
    )


def parse(lines: list[Line], marks: Marks | None = None) -> VerbsParse:
    """The class's lines in ``lines`` (only those holding one of _GATE's words are searched; a dump's hex rows and
    ucx_info's listing rows read beside them): completions with error (a flush beside another error folded into it),
    set-up failures (named by the devices the log opened where the line names none)."""
    comps: list[VerbsCompletion] = []
    setups: list[VerbsSetup] = []
    claimed: set[int] = set()
    opened: list[str] = []
    dumps: list[tuple[Line, str, tuple[int, str] | None]] = []
    found = holding(lines, _GATE, marks)
    listing = bool(holding(lines, ("Transport:", "Memory domain:"), marks))
    if listing:
        found = sorted({*found, *holding(lines, ("#",), marks)})
    for i in found:
        ln = lines[i]
        if ("RDMA device: " in ln.text or "best gid" in ln.text) and (o := _OPENED.search(ln.text)) is not None:
            dev = o.group("dev") or o.group("dev2")
            opened += [dev] if dev not in opened else []
            claimed.add(ln.no)
        elif (c := _completion(ln)) is not None:
            comps.append(c)
            claimed.add(ln.no)
        elif (s := _setup(ln)) is not None:
            setups.append(s)
            claimed.add(ln.no)
        elif (
            "got completion with error" in ln.text
            and cqe_status.LIBMLX5.search(ln.text)
            and (got := cqe_status.dumped(rows := cqe_status.rows(lines, i)))
        ):  # R6A: libmlx5's dumped error CQE
            head = libmlx5_cqe.headline(lines, i)
            comps.append(
                VerbsCompletion(
                    ln.no, head.host if head else None, None, None, "libmlx5 (a dumped error CQE)", got[0], None,
                    got[1], ln.text.strip()[:_TEXT]
                )
            )
            claimed |= {ln.no, *(r.no for r in rows)}
        elif "got completion with error" in ln.text and (head := libmlx5_cqe.headline(lines, i)) is not None:
            comps.append(_libmlx5(head))  # R14B: its rows apart, cut from the capture, or no error CQE
            claimed |= {ln.no, *(r.no for r in head.rows)}
        elif "dump error cqe" in ln.text and (d := _DUMP_CQE.search(ln.text)) is not None:
            dumps.append((ln, d.group("dev"), cqe_status.dumped(_rows_after(lines, i))))  # R6A: its status
            claimed.add(ln.no)
            claimed |= {row.no for row in _rows_after(lines, i)}
        elif ("non-zero status" in ln.text and _NVSHMEM_STATUS.search(ln.text)) or _quiet(ln.text, listing):
            claimed.add(ln.no)
    if dumps and not any("WC error" in ln.text for ln in lines):  # mlx5_ib's 'WC error: N' is nic_driver's
        comps += [_dumped(ln, dev, got) for ln, dev, got in dumps]
    if any(c.status not in (FLUSH, 0) for c in comps):
        comps = [c for c in comps if c.status != FLUSH]  # the flushes echo the first error
    where = "/".join(opened) or None
    setups = [s if s.device or where is None else VerbsSetup(s.line, where, s.step, s.reason, s.text) for s in setups]
    return VerbsParse(comps, setups, claimed)

