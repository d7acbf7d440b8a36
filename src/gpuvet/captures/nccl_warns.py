"""Which family an NCCL/RCCL WARN belongs to, read from its own words and the file that printed it: a socket
connect that failed, a peer that closed its connection, no usable interface, the bootstrap, P2P/IPC, /dev/shm,
a NET/IB completion error (with its status), a queue pair that would not connect, GPUDirect RDMA, the proxy, a
message whose size the two ends disagree on. A WARN none names is still a lead (UNNAMED), save those NCCL prints on
healthy runs (BENIGN, each with why): read as "clear" it would hide what the log says.
A line cut mid-word (a paste's excerpt) still names its family where its words or its file do: 'Connect to f'
printed by socket.h is a connect that failed, 'NET/IB : Got comple' a completion error."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuvet.captures.lazy_re import lazy

_CUDA = r"\b(?:Cuda|Hip|ROCr) failure (?:\d{1,4} )?'"  # checks.h's and cudawrap.h's quote of the runtime's words
# (family, the words that name it): the first that matches is the family; more specific ones first
_WORDS = (
    # a CUDA/HIP call that found no code of the library for this GPU: the runtime's words for a kernel or symbol the
    # build lacks (cudaErrorSymbolNotFound, NoKernelImageForDevice, InvalidDeviceFunction, InvalidKernelImage,
    # UnsupportedPtxVersion; HIP's hipErrorNoBinaryForGpu): the build's architectures or toolkit, never the module
    ("nccl_kernel_image", r"named symbol not found|no kernel image is available|invalid device function|"
                          r"device kernel image is invalid|PTX was compiled with an unsupported toolchain|"
                          r"\b(?:cuda|hip)Error(?:SymbolNotFound|NoKernelImageForDevice|InvalidDeviceFunction|"
                          r"InvalidKernelImage|UnsupportedPtxVersion|NoBinaryForGpu)\b|\bCUDA_ERROR_(?:NOT_FOUND|"
                          r"NO_BINARY_FOR_GPU|INVALID_IMAGE|UNSUPPORTED_PTX_VERSION)\b"),
    # a CUDA call of NCCL that failed with an error whose own words name the cause under the collective (checks.h's
    # 'Cuda failure', cudawrap.h's 'Cuda failure N'): the module's memory, the driver, the fabric manager, a fault of
    # the work on the module; each family's cause is the runtime's (knowledge/nccl_warns.yaml)
    ("nccl_cuda_ecc", rf"{_CUDA}uncorrectable ECC error|\b(?:cudaErrorECCUncorrectable|CUDA_ERROR_ECC_UNCORRECTABLE)\b"),
    ("nccl_cuda_driver", rf"{_CUDA}CUDA driver version is insufficient|\bcudaErrorInsufficientDriver\b|"
                         r"requires CUDA driver \d|installed CUDA driver <|cuDriverGetVersion failed"),
    ("nccl_cuda_system_not_ready", rf"{_CUDA}system not yet initialized|\bcudaErrorSystemNotReady\b"),
    ("nccl_cuda_fault", rf"{_CUDA}(?:an illegal memory access|unspecified launch failure|an illegal instruction|"
                        r"misaligned address|hardware stack error|the launch timed out)"),
    ("nccl_cuda_unknown", rf"{_CUDA}(?:unknown error|initialization error|OS call failed)"),
    ("nccl_cuda_unsupported", rf"{_CUDA}operation not supported"),
    ("nccl_ib_completion", r"Got comp\w{0,8}(?:\s|$)|\bcompletion from peer\b|\bCQE with error\b"),
    # the HCA's own events (ibv_get_async_event): a port that went down, a device or a queue in a fatal state
    ("nccl_ib_async_event", r"\basync (?:fatal |error )?event\b"),  # 2.19+: 'Got async error event: …'
    ("nccl_ib_device", r"\bUnable to (?:open|query) (?:device|port)|\bncclIbRoceGetVersionNum\b|\bmarked as failed\b|"
                       r"\bDetected \d+ failed devices\b|\bno functional device\b|\bmlx5dv_get_data_direct"),
    ("nccl_ib_link_types", r"\bincompatible devices\b|\bdevice is incompatible with the local\b"),
    ("nccl_ib_post", r"\bibv_(?:post_send|post_recv|poll_cq)\b"),
    ("nccl_version_mismatch", r"\bMismatched NCCL version\b|\bNCCL version mismatch\b"),
    ("nccl_peer_closed", r"closed by (?:remote )?peer|reset by peer|remote process exited|broken pipe|peer closed"),
    # a send or receive on a connection already made that failed or timed out (mid-run): no connect that failed
    ("nccl_socket_io", r"\bCall to (?:recv|send|read|write)\b(?! returned)|\bsocket ?progress(?: error)?\b|"
                       r"\b(?:recv|send)(?:msg)? (?:from|to) \S+ failed|\b(?:Receiving|Sending) data over socket\b|"
                       r"\bSocket recv failed\b|\b(?:Recv from|Send to) rank \d+ failed"),
    ("nccl_ib_qp", r"\bibv_modify_qp\b"),
    ("nccl_socket_connect", r"^(?:\w+: )?connect to\b|\bconnect (?:to \S+ )?returned\b|\bConnect to \S*\s*failed|"
                            r"exceeded error retry count|no POLLOUT|\bsocket(?:Poll|Start)Connect\b|"
                            r"\bcall to connect\b|Maximum retry reached for connect|Network is unreachable|"
                            r"Connect\w*: exceeded timeouts|No route to host|Connection (?:refused|timed out)"),
    ("nccl_socket_interface", r"no (?:socket |usable )?(?:listening |IP )?interface found|no usable listening interface|"
                              r"interface found in the same subnet|address family|"
                              r"no device found (?:after excluding|matching)|NCCL_OOB_NET_IFNAME"),
    ("nccl_shm", r"/dev/shm|shared memory (?:segment|file)|posix_fallocate|shm_?(?:open|unlink)|failed to extend|"
                 r"ShmObject|\bshm (?:close|unlink) failed|Could not map \S+ size"),
    ("nccl_p2p_mappings_exhausted", r"peer mapping resources"),  # too many peers mapped: no pair's fault
    ("nccl_p2p_ipc", r"P2P/IPC|(?:CUDA|HIP) IPC|(?:cuda|hip)Ipc\w*|hsa_amd_ipc\w*|OpenMemHandle|ipc handle|"
                     r"cuMem(?:Import|Export)\w*|pidfd"),
    ("nccl_gdr", r"GPU ?Direct RDMA|\bGDR\b|peer_?mem|peermem|dma-?buf|\bgdr_\w+|\bGDRCOPY\b"),
    # NET/Socket's: the two ends disagree on a message's size ('receiving'; the bootstrap's says 'received': its own)
    ("nccl_message_truncated", r"NET/Socket\b.*\bmessage truncated\b|\bmessage truncated\s*:\s*receiving\b|"
                               r"\bcollective mismatch error\b|\bposted incorrect receive info\b"),
    # an address whose family is neither (a garbage sockaddr: a peer's exchange corrupt or of another NCCL): no setting
    ("nccl_bootstrap", r"\bbootstrap|unique ?id|Message truncated|\bNCCL_COMM_ID\b|\bneither AF_INET"),
    ("nccl_proxy", r"\bproxy|\bncclProxy\w|Service thread"),
)
_FAMILY = [(name, lazy(words, re.I)) for name, words in _WORDS]
_SHM_OWN = ("nccl_cuda_unknown", "nccl_cuda_unsupported")  # a CUDA error of SHM's cuMem host path: nccl_shm_cuda
# the file that printed a WARN names its family where the words were cut before they did
_FILES = {"p2p.cc": "nccl_p2p_ipc", "shm.cc": "nccl_shm", "shmutils.cc": "nccl_shm", "bootstrap.cc": "nccl_bootstrap",
          "proxy.cc": "nccl_proxy"}
# SHM's own CUDA call that failed (its cuMem host buffers), not /dev/shm: a 'Cuda failure' printed by shm.cc
_SHM_CUDA = lazy(r"\b(?:Cuda|Hip) failure\b|\bcuMem\w*|peer access is not supported", re.I)
# a WARN whose first words alone say it failed, though the line was cut before a failure word ('Connect to f')
_CUT_FAILED = lazy(r"^(?:\w+: )?Connect to\b|^failed\b|^Proxy Call to\b|"
                   r"^Error while creating|^Call to \w+ failed", re.I)
# RCCL's ncclInit() advice, printed once per process whatever the job does (init.cc: /proc/sys/kernel/numa_balancing,
# /proc/cmdline's iommu=pt, older releases' amd_iommu=on, the HSA_FORCE_FINE_GRAIN_PCIE variable) and its tuner's
# note for an architecture it has no cutoffs for: settings to check, said as a note (doctor's nccl_log), no failure
_RCCL_ADVICE = (r"\bNUMA auto balancing enabled\b|\bMissing \W?(?:amd_)?iommu=(?:pt|on)\W? from (?:the )?kernel "
                r"command line\b|\bMissing \W?HSA_FORCE_FINE_GRAIN_PCIE=1\W? from (?:the )?environment\b|"
                r"\bLL cutoff points not detected for a supported arch\b")
# WARNs NCCL and RCCL print on a healthy run (each with why): a WARN no family names and none of these is a lead
BENIGN = (
    # libibverbs' names of the events no failure raises (ibv_event_type_str): the subnet manager's sweep, a queue's
    # life (communication established, send queue drained, last WQE reached, path migrated, SRQ limit reached)
    (r"Got non-fatal async event|Got async (?:error )?event\s*:\s*(?:client reregistration|port active|GID table change|"
     r"LID change|SM change|P_Key change|communication established|send queue drained|path migrated|"
     r"SRQ limit reached|last WQE reached)|\bGID table changed",
     "NET/IB passing on an InfiniBand async event no failure raises (the subnet manager's reregistration, a GID/LID/"
     "P_Key change, a queue's own life): NCCL goes on"),
    (r"\bNET/Plugin\b|\bNET/OFI\b.*\b(?:provider|not supported|only EFA)|plugin (?:not found|load)|"
     r"\bnot using it\b", "a network plugin absent or not for this fabric: NCCL falls back to its internal transports"),
    (r"\b(?:GPU ?Direct RDMA|GDR(?:Copy)?)\b.*\bdisabled\b|\bGIN is disabled\b",
     "GPUDirect RDMA or GDRCopy switched off by setting or absence: NCCL stages through host memory"),
    (r"\bcuda ?Driver ?Version\b(?!.*Minimum requirement)", "the CUDA driver version noted at init"),
    (r"\b(?:setting (?:\w+ )?to|defaulting to|is being ignored|Unsetting|has been set to)\b|"
     r"\bnot found, using \S+|\busing \S+ instead\b",
     "a setting NCCL corrected or ignored: it goes on with its own value"),
    (r"\bGot completion from peer \S+ with (?:error |status=)0\b",
     "a work completion of status 0: a success, which NCCL never warns of (a sentence naming one)"),
    (r"\bremote FLID configured as zero\b", "NET/IB using the destination LID: a routing note, no failure"),
    (_RCCL_ADVICE,
     "RCCL's advice at init (the kernel's NUMA balancing on, the distro default; iommu=pt, amd_iommu=on or "
     "HSA_FORCE_FINE_GRAIN_PCIE=1 not set; no LL cutoffs tuned for the GPU): a performance or stability setting to "
     "check, no failure"),
)
_BENIGN = [(lazy(words, re.I), why) for words, why in BENIGN]
_STATUS = lazy(r"\bwith (?:error |status=)(\d{1,3})\b")
_PEER = lazy(r"([\w.:%\[\]-]+<[1-9]\d{0,4}>)")  # NCCL prints an address as ip<port> (newer: host<port>)
_RANK = lazy(r"\b(?:to |from |for )?rank (\d{1,6})\b")
# NCCL's INFO line for each connect it retries ('Call to connect returned Connection timed out, retrying')
UNNAMED = "nccl_warn_unnamed"  # the family of a WARN none of _WORDS names (knowledge/nccl_warns.yaml)
RETRY = lazy(r"\bCall to (?:connect|accept) returned (?P<why>[\w ]{3,60}?),? retrying", re.I)


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
    path = (source or "").rsplit(":", 1)[0]
    file = "" if "net_ib/" in path else path.rsplit("/", 1)[-1]  # net_ib/p2p.cc is NET/IB's, not the P2P transport's
    shm_cuda = file in ("shm.cc", "shmutils.cc") and _SHM_CUDA.search(message) is not None
    name = "nccl_shm_cuda" if shm_cuda and name in (None, *_SHM_OWN) else name  # SHM's cuMem path, not the driver's
    name = name or _FILES.get(file)
    if name is None:
        return None
    peer, rank, status = _PEER.search(message), _RANK.search(message), _STATUS.search(message)
    return WarnFamily(name, peer.group(1) if peer else None, int(rank.group(1)) if rank else None,
                      int(status.group(1)) if status is not None and name == "nccl_ib_completion" else None)


def benign(message: str) -> str | None:
    """Why a WARN NCCL prints on healthy runs is no fault (None: it may be one)."""
    return next((why for words, why in _BENIGN if words.search(message)), None)


_ADVICE = lazy(_RCCL_ADVICE, re.I)


def advice(message: str) -> bool:
    """RCCL's init advice (_RCCL_ADVICE): a setting to check, said as a note."""
    return _ADVICE.search(message) is not None


def unnamed(message: str) -> WarnFamily:
    """A WARN no family names, with the peer and rank its words give: a lead, quoted, never a 'clear'."""
    peer, rank = _PEER.search(message), _RANK.search(message)
    return WarnFamily(UNNAMED, peer.group(1) if peer else None, int(rank.group(1)) if rank else None)


def cut_failure(message: str) -> bool:
    """A WARN whose words were cut before a failure word, whose first words still say a step failed:
    'Connect to f' (socket.h), 'failed to ope' (p2p.cc); NET/IB's 'Got comple' is nccl_log's own (its status 0 is none)."""
    return _CUT_FAILED.search(message) is not None
