"""The settings a job gives NCCL that turn a transport off or narrow it (NCCL's environment reference, and its
'NCCL_X set by environment to V' INFO lines, init.cc / param.cc): P2P, shared memory, InfiniBand, GPUDirect RDMA,
PXN, NVLS, CollNet, multi-node NVLink, the socket-only network. A job's own choice, said as info with every such
setting the log shows (issue 46: NCCL_SHM_DISABLE=1 beside NCCL_P2P_LEVEL=LOC was left unsaid), never a fault."""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy

_SET = r"(?:=| set by environment to )[\"']?"
LIMITS = lazy(r"\bNCCL_(?:P2P|SHM|IB|NET_GDR|PXN|CUMEM|NVLS|COLLNET|MNNVL)_DISABLE" + _SET + r"1\b|"
              r"\bNCCL_(?:NVLS|COLLNET|MNNVL)_ENABLE" + _SET + r"0\b|"
              r"\bNCCL_(?:P2P|NET_GDR|SHM)_LEVEL" + _SET + r"(?:LOC|0)\b|"
              r"\bNCCL_NET" + _SET + r"Socket\b", re.I)


def said(lines: list[tuple[int, str]]) -> list[str]:
    """Each transport-limiting setting the lines give, with its line, once per setting (its first line)."""
    found: dict[str, str] = {}
    for no, text in lines:
        for m in LIMITS.finditer(text):
            setting = re.sub(r" set by environment to ", "=", m.group(0)).replace('"', "").replace("'", "")
            found.setdefault(setting.split("=")[0].upper(), f"{setting} (line {no})")
    return list(found.values())
