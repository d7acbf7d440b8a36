"""HCCL's link-establishment failures (R9C, issue 46): the lines its socket manager and transport manager print
when the link to a peer device could not be set up (CANN's HCCL docs, "建链超时 (EI0006)"; hccl_socket_manager.cc,
transport_manager.cc, detect_connect_anomalies.cc):

    [Wait][LinkEstablish]wait socket establish timeout, role[1] rank[1] timeout[120 s]
    [Wait][LinksEstablishCompleted] is failed. ret[9].
    [Create][Sockets]Wait links establish completed failed, local role is client. ret[9]
    _________________________LINK_ERROR_INFO___________ and its rows '|  192.0.2.199(0)  |  16666  | …'
    the connection failure between this device and target device may be due to the following reasons:
    [InitChannelStage][Timeout]Transport init error! createLink para:… remoteIpAddr[192.168.200.100/0] …

Such a line says what failed (the link between two devices or hosts, the network or the peer), where the generic
collective error says only that the library failed: nccl_log reads each HCCL failure of these as kind "link".
The peer is taken from the lines that name it (LINK_ERROR_INFO's dest_ip(user_rank), createLink's remoteIpAddr,
the detector's dstRank), never invented."""

from __future__ import annotations

import re
from collections.abc import Iterable

# the socket manager's and the connect detector's files: every ERROR they print is about a link to a peer
_FILES = ("hccl_socket_manager.cc", "detect_connect_anomalies.cc")
_WORDS = re.compile(
    r"LinksEstablishCompleted|\bLinkEstablish\b|socket establish timeout|links? establish(?:ed)? (?:completed )?"
    r"failed|connection failure between this device and (?:the )?target device|LINK_ERROR_INFO|"
    r"fails to connect to dstRank|createLink para|\[CreateLink\]|\[InitChannelStage\]\[Timeout\]",
    re.I,
)
# LINK_ERROR_INFO's row: '|  192.0.2.199(0)   |  16666  |   192.0.3.198(1)   | …' (dest_ip(user_rank) first), after
# the thread's id where the plog prints it apart ('[hccl_socket_manager.cc:583] [18744]   |  …')
_ROW = re.compile(r"^\s*(?:\[\d{1,9}\]\s*)?\|\s*(?P<ip>\d{1,3}(?:\.\d{1,3}){3})\((?P<rank>\d{1,6})\)\s*\|")
_REMOTE = re.compile(r"remoteUserrank\[(?P<rank>\d{1,6})\]-remoteIpAddr\[(?P<ip>[\d.]{7,15})/(?P<dev>\d{1,4})\]")
_RANK = re.compile(r"\bremoteRank\[(?P<rank>\d{1,6})\]")  # createLink's line cut before its address
_DST = re.compile(r"to dstRank \(server (?P<ip>[\d.]{7,15}), device ID (?P<dev>\d{1,4})\)")


def link_failure(source: str | None, message: str) -> bool:
    """True for an HCCL ERROR that reports the link to a peer device could not be set up."""
    file = (source or "").rsplit(":", 1)[0].rsplit("/", 1)[-1]
    return file in _FILES or _WORDS.search(message) is not None


def peer(messages: Iterable[str]) -> str | None:
    """The peer the failed link led to, as the lines name it (the first one named); None where none does."""
    for msg in messages:
        if (m := _ROW.match(msg)) is not None:
            return f"device ip {m.group('ip')} (rank {m.group('rank')})"
        if (m := _REMOTE.search(msg)) is not None:
            return f"rank {m.group('rank')} on {m.group('ip')} device {m.group('dev')}"
        if (m := _DST.search(msg)) is not None:
            return f"{m.group('ip')} device {m.group('dev')}"
        if (m := _RANK.search(msg)) is not None:
            return f"rank {m.group('rank')}"
    return None
