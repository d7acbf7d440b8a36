"""NCCL's INFO lines that say a path between GPUs was lost at set-up, though no WARN follows: NCCL goes on over
a slower one, or fails later for the reason the line gave. Each is read from where NCCL prints it (gpuvet's
own reading, none quoted): graph/paths.cc checks, for two GPUs its topology joins closer than across CPU sockets,
that NVML reports P2P usable between them ('P2P is disabled between connected GPUs a and b': NVML says not, so
their traffic goes through host memory); transport/p2p.cc asks the CUDA driver whether one device can reach the
other ('Could not enable P2P between dev a(=bus) and dev b(=bus)': it cannot; 'peer query failed': the query
itself failed); enqueue.cc sizes the kernels' shared memory ('ncclMaxSharedMem N exceeds device/fn maxSharedMem
M': this NCCL's kernels need more than the GPU gives a block, a build that does not know the GPU)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuvet.captures.lazy_re import lazy

if TYPE_CHECKING:
    from gpuvet.captures.nccl_log import LogLine

# (knowledge/nccl_warns.yaml's family, the INFO line's words)
_LINES = (
    ("nccl_p2p_disabled", lazy(r"^P2P is disabled between (?:NVLINK )?connected GPUs (\d{1,3}) and (\d{1,3})\b")),
    ("nccl_p2p_not_enabled", lazy(r"^Could not enable P2P between dev (\d{1,3})(?:\(=([0-9a-fA-F]{1,12})\))? "
                                  r"and dev (\d{1,3})(?:\(=([0-9a-fA-F]{1,12})\))?")),
    ("nccl_p2p_query_failed", lazy(r"^peer query failed between dev (\d{1,3})(?:\(=([0-9a-fA-F]{1,12})\))? "
                                   r"and dev (\d{1,3})(?:\(=([0-9a-fA-F]{1,12})\))?")),
    ("nccl_kernel_shared_memory", lazy(r"^(?:cudaArch \d+ )?ncclMaxSharedMem (\d{1,9}) exceeds device/fn "
                                       r"maxSharedMem (\d{1,9})")),
    # R8C: net_ib.cc at init, where neither a peer-memory module nor dma-buf lets the HCA reach GPU memory
    ("nccl_gdr_disabled", lazy(r"^NET/IB ?: GPU ?Direct RDMA Disabled for HCA (\d{1,3}) '([\w.:-]{1,40})'")),
)
P2P_KINDS = ("nccl_p2p_disabled", "nccl_p2p_not_enabled", "nccl_p2p_query_failed")
# the job's own setting that turns P2P off ('NCCL_P2P_DISABLE set by environment to 1', NCCL_P2P_LEVEL=LOC/0)
P2P_OFF = lazy(r"\bNCCL_P2P_DISABLE(?:=| set by environment to )1\b|"
               r"\bNCCL_P2P_LEVEL(?:=| set by environment to )(?:LOC|0)\b", re.I)
# the job's own setting that turns GPUDirect RDMA off (R8C): NCCL then says it disabled, by design
GDR_OFF = lazy(r"\bNCCL_NET_GDR_(?:DISABLE|LEVEL)(?:=| set by environment to )(?:1|LOC|0)\b", re.I)


@dataclass(frozen=True)
class Fallback:
    """One such line: its family, the pair of devices it names (CUDA device numbers, with NCCL's bus id where the
    line gives one: '2 (0000:03:00.0)'), or the two shared-memory figures."""

    kind: str
    at: LogLine
    pair: tuple[str, str] | None = None
    figures: tuple[int, int] | None = None


def fallback(at: LogLine) -> Fallback | None:
    """The fallback one INFO line announces; None for any other line."""
    message = at.message
    if at.level != "INFO" or message[:1] not in "PCpncN":
        return None
    for kind, words in _LINES:
        m = words.match(message)
        if m is None:
            continue
        if kind == "nccl_kernel_shared_memory":
            return Fallback(kind, at, figures=(int(m.group(1)), int(m.group(2))))
        if kind == "nccl_gdr_disabled":  # the HCA it names, as a pair of one (its index, its name)
            return Fallback(kind, at, pair=(m.group(2), f"HCA {m.group(1)}"))
        if kind == "nccl_p2p_disabled":
            return Fallback(kind, at, pair=(f"GPU {m.group(1)}", f"GPU {m.group(2)}"))
        return Fallback(kind, at, pair=(_dev(m.group(1), m.group(2)), _dev(m.group(3), m.group(4))))
    return None


def _dev(dev: str, bus: str | None) -> str:
    from gpuvet.captures.nccl_log import bus_of

    return f"GPU {dev} ({bus_of(bus)})" if bus else f"GPU {dev}"
