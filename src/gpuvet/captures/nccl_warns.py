"""Which family an NCCL/RCCL WARN belongs to, read from its own words and the file that printed it: a socket
connect that failed, a peer that closed its connection, no usable interface, the bootstrap, P2P/IPC, /dev/shm,
a NET/IB completion error (with its status), a queue pair that would not connect, GPUDirect RDMA, the proxy.
A line cut mid-word (a paste's excerpt) still names its family where its words or its file do: 'Connect to f'
printed by socket.h is a connect that failed, 'NET/IB : Got comple' a completion error."""

from __future__ import annotations

import re
from dataclasses import dataclass

# (family, the words that name it): the first that matches is the family; more specific ones first
_WORDS = (
    ("nccl_ib_completion", r"Got comp\w{0,8}(?:\s|$)|\bcompletion from peer\b"),
    ("nccl_peer_closed", r"closed by (?:remote )?peer|reset by peer|remote process exited|broken pipe|peer closed"),
    ("nccl_ib_qp", r"\bibv_modify_qp\b"),
    ("nccl_socket_connect", r"^(?:\w+: )?connect to\b|\bconnect (?:to \S+ )?returned\b|\bConnect to \S*\s*failed|"
                            r"exceeded error retry count|no POLLOUT|\bsocket(?:Poll|Start)Connect\b|"
                            r"\bcall to connect\b|Maximum retry reached for connect|Network is unreachable|"
                            r"No route to host|Connection (?:refused|timed out)"),
    ("nccl_socket_interface", r"no (?:socket |usable )?(?:listening )?interface found|no usable listening interface|"
                              r"interface found in the same subnet|address family"),
    ("nccl_shm", r"/dev/shm|shared memory segment|posix_fallocate|shm_?open|failed to extend"),
    ("nccl_p2p_ipc", r"P2P/IPC|(?:CUDA|HIP) IPC|(?:cuda|hip)Ipc\w*|hsa_amd_ipc\w*|OpenMemHandle|ipc handle|"
                     r"cuMem(?:Import|Export)\w*|pidfd|peer mapping resources"),
    ("nccl_gdr", r"GPU ?Direct RDMA|\bGDR\b|peer_?mem|peermem|dma-?buf"),
    ("nccl_bootstrap", r"\bbootstrap|unique ?id|Message truncated"),
    ("nccl_proxy", r"\bproxy|Service thread"),
)
_FAMILY = [(name, re.compile(words, re.I)) for name, words in _WORDS]
# the file that printed a WARN names its family where the words were cut before they did
_FILES = {"p2p.cc": "nccl_p2p_ipc", "shm.cc": "nccl_shm", "shmutils.cc": "nccl_shm", "bootstrap.cc": "nccl_bootstrap",
          "proxy.cc": "nccl_proxy"}
# a WARN whose first words alone say it failed, though the line was cut before a failure word ('Connect to f')
_CUT_FAILED = re.compile(r"^(?:\w+: )?Connect to\b|^failed\b|^Proxy Call to\b|"
                         r"^Error while creating|^Call to \w+ failed", re.I)
_STATUS = re.compile(r"\bwith (?:error |status=)(\d{1,3})\b")
_PEER = re.compile(r"([\w.:%\[\]-]+<[1-9]\d{0,4}>)")  # NCCL prints an address as ip<port> (newer: host<port>)
_RANK = re.compile(r"\b(?:to |from |for )?rank (\d{1,6})\b")
# NCCL's INFO line for each connect it retries ('Call to connect returned Connection timed out, retrying')
RETRY = re.compile(r"\bCall to (?:connect|accept) returned (?P<why>[\w ]{3,60}?),? retrying", re.I)


@dataclass(frozen=True)
class WarnFamily:
    """The family a WARN belongs to and what its line names: the peer's address, a rank, an IB status."""

    name: str
    peer: str | None = None  # the address the line names ('10.1.2.3<45678>', 'gpu-node2<56789>')
    rank: int | None = None  # the rank the line names ('Proxy Call to rank 11 failed')
    status: int | None = None  # a NET/IB completion's status (12: transport retry counter exceeded)


def family(message: str, source: str | None) -> WarnFamily | None:
    """The family of one WARN line (its message and the library's file:line), None where none fits."""
    name = next((n for n, words in _FAMILY if words.search(message)), None)
    file = (source or "").rsplit(":", 1)[0].rsplit("/", 1)[-1]
    name = name or _FILES.get(file)
    if name is None:
        return None
    peer, rank, status = _PEER.search(message), _RANK.search(message), _STATUS.search(message)
    return WarnFamily(name, peer.group(1) if peer else None, int(rank.group(1)) if rank else None,
                      int(status.group(1)) if status is not None and name == "nccl_ib_completion" else None)


def cut_failure(message: str) -> bool:
    """A WARN whose words were cut before a failure word, whose first words still say a step failed:
    'Connect to f' (socket.h), 'failed to ope' (p2p.cc); NET/IB's 'Got comple' is nccl_log's own (its status 0 is none)."""
    return _CUT_FAILED.search(message) is not None
