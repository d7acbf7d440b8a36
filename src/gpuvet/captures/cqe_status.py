"""A work completion with error named the way the NIC or the verbs enum names it, not in ibv_wc_status_str's words
(issue 46, R6A): mlx5's CQE syndrome (``CQE syndrome 0x15 (TRANSPORT_RETRY_EXC_ERR, vendor syndrome 0x83)``, a
device-side library's ``CQ requester error TRANSPORT_RETRY_EXC_ERR (15)``, SPDK's ``Error on QP 0x1a wqe[003]:
Transport retry count exceeded (synd 0x15 vend 0x81)``) and libibverbs' enum (``wc.status = IBV_WC_RETRY_EXC_ERR``).

A dumped error CQE is read too: libmlx5's ``mlx5: host: got completion with error:`` and four rows of 32-bit words
(rdma-core providers/mlx5/cq.c dump_cqe), the kernel's ``dump error cqe`` and its hex rows: struct mlx5_err_cqe puts
the vendor syndrome at byte 54, the syndrome at byte 55 and the opcode in byte 63's high nibble (0xd a requester's
error, 0xe a responder's).

Each is the same fact as ibv_wc_status_str's words (rdma_verbs.py reads those): the syndrome becomes the status the
mlx5 driver turns it into (Linux drivers/infiniband/hw/mlx5/cq.c mlx5_handle_error_cqe; rdma-core
providers/mlx5/cq.c), so a retry exceeded is the path to the peer, a flush an echo of a first error. A pasted
source line (``case MLX5_CQE_SYNDROME_…:``, ``return IBV_WC_…;``) is code, not a completion, and is left alone."""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Line

# mlx5's CQE syndromes (include/linux/mlx5/device.h MLX5_CQE_SYNDROME_*) -> (syndrome, ibv_wc_status)
SYNDROMES = {
    "LOCAL_LENGTH_ERR": (0x01, 1),
    "LOCAL_QP_OP_ERR": (0x02, 2),
    "LOCAL_PROT_ERR": (0x04, 4),
    "WR_FLUSH_ERR": (0x05, 5),
    "MW_BIND_ERR": (0x06, 6),
    "BAD_RESP_ERR": (0x10, 7),
    "LOCAL_ACCESS_ERR": (0x11, 8),
    "REMOTE_INVAL_REQ_ERR": (0x12, 9),
    "REMOTE_ACCESS_ERR": (0x13, 10),
    "REMOTE_OP_ERR": (0x14, 11),
    "TRANSPORT_RETRY_EXC_ERR": (0x15, 12),
    "RNR_RETRY_EXC_ERR": (0x16, 13),
    "REMOTE_ABORTED_ERR": (0x22, 16),
}
_BY_NUMBER = {synd: status for synd, status in SYNDROMES.values()}
# libibverbs' enum ibv_wc_status, 1-21 (libibverbs/verbs.h), in its order
ENUM = (
    "LOC_LEN_ERR",
    "LOC_QP_OP_ERR",
    "LOC_EEC_OP_ERR",
    "LOC_PROT_ERR",
    "WR_FLUSH_ERR",
    "MW_BIND_ERR",
    "BAD_RESP_ERR",
    "LOC_ACCESS_ERR",
    "REM_INV_REQ_ERR",
    "REM_ACCESS_ERR",
    "REM_OP_ERR",
    "RETRY_EXC_ERR",
    "RNR_RETRY_EXC_ERR",
    "LOC_RDD_VIOL_ERR",
    "REM_INV_RD_REQ_ERR",
    "REM_ABORT_ERR",
    "INV_EECN_ERR",
    "INV_EEC_STATE_ERR",
    "FATAL_ERR",
    "RESP_TIMEOUT_ERR",
    "GENERAL_ERR",
)
# what a line holds before any regex: a syndrome's or the enum's name, or a syndrome's number
HINTS = ("_ERR", "synd")
# what a text holds for the class's format to run on it (rdma_verbs.MARKS): the names' endings, a syndrome's number
MARKS = (
    "_EXC_ERR",
    "_OP_ERR",
    "_ACCESS_ERR",
    "_REQ_ERR",
    "_PROT_ERR",
    "_FLUSH_ERR",
    "_ABORTED_ERR",
    "_ABORT_ERR",
    "_RESP_ERR",
    "_LENGTH_ERR",
    "_LEN_ERR",
    "_BIND_ERR",
    "IBV_WC_",
    "MLX5_CQE_",
    "syndrome 0x",
    "synd 0x",
    "got completion with error",
)
_NAME = lazy(r"(?<![A-Z_])(?:MLX5_CQE_SYNDROME_)?(?P<name>" + "|".join(sorted(SYNDROMES, key=len, reverse=True)) + r")\b")
_ENUM = lazy(r"\bIBV_WC_(?P<enum>" + "|".join(sorted(ENUM, key=len, reverse=True)) + r")\b")
# 'CQE syndrome 0x15', 'syndrome: 0x15', SPDK's '(synd 0x15 vend 0x81)'
_NUMBER = lazy(r"\b(?:CQE (?:error )?syndrome|syndrome|synd)[:=]?\s*\(?(?P<synd>0x[0-9a-fA-F]{1,2})\b")
_CONTEXT = lazy(r"\b(?:CQE?|cqe|completion|completed|syndrome|synd|status|wc|WC|error|failed|QP)\b")
_VENDOR = lazy(r"\bvend(?:or)?(?:_err)?(?: syndrome| synd)?[:=]?\s*(?P<vend>0x[0-9a-fA-F]{1,4})\b")
_CODE = lazy(r"^\s*(?:case\b|return\b|#define\b|[A-Za-z_][\w.>-]*\s*(?:==|!=)\s*)|\b(?:switch|enum)\s*[({]|;\s*$")


def narrated(text: str) -> bool:
    """A poster's first-person account of a completion ('the .status 9 (IBV_WC_REM_INV_REQ_ERR) … which I cannot find',
    R9C): their narration of values they looked at, never a program's line reporting one (unread_leads.NARRATED)."""
    from gpuvet.captures.unread_leads import NARRATED  # noqa: PLC0415 - only for a line naming a completion

    return NARRATED.search(text) is not None


def completion(ln: Line) -> tuple[int, str | None, str] | None:
    """(ibv_wc_status, the syndrome as the line gives it, the line from a little before the name: a report's
    paragraph names it mid-way) of a completion a line names by the NIC's syndrome or the verbs enum; None for any
    other line and for pasted source code."""
    t = ln.text
    if not any(h in t for h in HINTS) or _CODE.search(t) or not _CONTEXT.search(t) or narrated(t):
        return None
    synd = _NUMBER.search(t)
    vend = _VENDOR.search(t)
    said = (
        " ".join(
            x
            for x in (f"syndrome {synd.group('synd')}" if synd else "", f"vendor {vend.group('vend')}" if vend else "")
            if x
        )
        or None
    )
    if (m := _NAME.search(t)) is not None and (synd is not None or "MLX5_CQE" in t or "CQ" in t):
        return SYNDROMES[m.group("name")][1], said or m.group("name"), _around(t, min((m.start(), *_at(synd))))
    if (e := _ENUM.search(t)) is not None:
        return ENUM.index(e.group("enum")) + 1, said, _around(t, e.start())
    if synd is not None and re.search(r"\b(?:CQE|QP)\b", t) and (status := _BY_NUMBER.get(int(synd.group("synd"), 16))):
        return status, said, _around(t, synd.start())
    return None


def _at(found: re.Match[str] | None) -> tuple[int, ...]:
    return (found.start(),) if found else ()


def _around(text: str, at: int) -> str:
    """The line from a sentence or 100 characters before ``at``, so that the name is in the cited excerpt."""
    start = max(0, at - 100)
    cut = text.rfind(". ", start, at)
    space = text.find(" ", start, at) if start else -1
    return text[cut + 2 if cut >= 0 else space + 1 if space >= 0 else start :].strip()


_WORDS_ROW = lazy(r"^\s*(?:\[[^\]]{1,40}\]\s*)?((?:[0-9a-fA-F]{8}\s+){3}[0-9a-fA-F]{8})\s*$")  # libmlx5's
_BYTES_ROW = lazy(r"^\s*(?:\[[^\]]{1,40}\]\s*)?[0-9a-f]{8}: ((?:[0-9a-f]{2} ?){16})")  # the kernel's print_hex_dump
_ERROR_OPCODES = (0xD, 0xE)  # MLX5_CQE_REQ_ERR, MLX5_CQE_RESP_ERR
LIBMLX5 = lazy(r"\bgot completion with error:?\s*$")


def rows(lines: list[Line], i: int) -> list[Line]:
    """The four rows of 32-bit words libmlx5 prints under its 'got completion with error:' line (none where not)."""
    got = [ln for ln in lines[i + 1 : i + 5] if _WORDS_ROW.match(ln.text)]
    return got if len(got) == 4 and got[-1].no - lines[i].no == 4 else []


def dumped(rows: list[Line]) -> tuple[int, str] | None:
    """(ibv_wc_status, 'syndrome 0x.. vendor 0x..') of a dumped 64-byte error CQE, from either printer's rows; None
    where the rows are not one error CQE (too few bytes, no error opcode, a syndrome mlx5 does not define)."""
    data = bytearray()
    for ln in rows:
        if (w := _WORDS_ROW.match(ln.text)) is not None:
            data += bytes.fromhex("".join(w.group(1).split()))
        elif (b := _BYTES_ROW.match(ln.text)) is not None:
            data += bytes.fromhex(b.group(1).replace(" ", ""))
    if len(data) < 64 or data[63] >> 4 not in _ERROR_OPCODES or (status := _BY_NUMBER.get(data[55])) is None:
        return None
    return status, f"syndrome {data[55]:#04x} vendor {data[54]:#04x}"
