"""Issue 46 (R9A): the NVIDIA kernel driver's GSP RPC and NVLink failures as the driver prints them, which no
message of kernel.py named (kernel_phrases.py appends these to its NVRM table, so kernel.py reads them as it reads
its own; kernel_messages.yaml gives each its cause).

- The GSP RPC poll's stack dump: on an RPC that timed out, _kgspRpcRecvPoll (src/nvidia/src/kernel/gpu/gsp/
  kernel_gsp.c, open-gpu-kernel-modules 580.x) logs Xid 119 and dumps the kernel stack through os_dump_stack; a
  journal excerpt often keeps only that stack ('_kgspRpcRecvPoll+0x650/0x820 [nvidia]' under '_issueRpcAndWait'),
  whose frame is the driver's own word that it was left waiting on the GSP. Only the frame with its offset and the
  [nvidia] module tag is read: the function's name in prose or source is no stack.
- NVLink link discovery: knvlinkDiscoverPostRxDetLinks_GH100 (src/nvidia/src/kernel/gpu/nvlink/arch/hopper/
  kernel_nvlink_gh100.c) prints "Getting peer0's postRxDetLinkMask failed!" and knvlinkUpdatePostRxDetectLinkMask_IMPL
  (kernel_nvlink.c) "Failed to update Rx Detect Link mask!" when the links past receiver detection cannot be read
  from a peer: the NVLinks between the modules are not discovered (gpud's nvlink_driver_wedge: the driver retries
  and nvidia-smi hangs)."""

from __future__ import annotations

import re

# the frame as the kernel prints it: 'func+0xOFF/0xLEN [nvidia]' (a '? ' before it: a stale frame, not read)
_FRAME = r"(?<!\? )\b_?kgspRpcRecvPoll\+0x[0-9a-fA-F]+/0x[0-9a-fA-F]+ \[nvidia\]"
# (kind, pattern): kernel_phrases makes them its KernelMessage records (it imports this module, not the reverse)
NVRM: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("nv_gsp_rpc_stack", re.compile(_FRAME)),
    (
        "nv_nvlink_discovery_failed",
        re.compile(r"\bGetting peer\d{0,3}(?:'s)? postRxDetLinkMask failed\b|\bFailed to update Rx Detect Link mask\b"),
    ),
)
WORDS: dict[str, tuple[str, ...]] = {
    "nv_gsp_rpc_stack": ("rpcrecvpoll+",),
    "nv_nvlink_discovery_failed": ("postrxdet", "rx detect link mask"),
}

FRAME_WORD = "RpcRecvPoll+"  # kernel.py reads a line without the NVRM word where it holds this (the frame)


def reset_asked(fields: dict[str, str]) -> str | None:
    """nvidia-smi -q's fields printed as NVML_ERROR_RESET_REQUIRED ('GPU requires reset', bracketed or not): the
    driver's word that the module needs a reset, as -q's GPU Recovery Action says it; said with the first field."""
    asked = [k for k, v in fields.items() if v.strip().strip("[]").lower() == "gpu requires reset"]
    return f"{asked[0]}: GPU requires reset ({len(asked)} field(s))" if asked else None


def lost_said(fields: dict[str, str]) -> str | None:
    """nvidia-smi's fields printed as NVML_ERROR_GPU_IS_LOST ('GPU is lost', bracketed or not; query-gpu's cell is
    kept as 'GPU Lost'): the driver's word that the module is off the bus, as the kernel's Xid 79 and NVML's error in
    a program's line say it (one fact, one verdict: module_fell_off_bus, never an unread sensor)."""
    lost = [k for k, v in fields.items() if v.strip().strip("[]").lower() == "gpu is lost"]
    return f"{lost[0]}: GPU is lost ({len(lost)} field(s))" if lost else fields.get("GPU Lost")
