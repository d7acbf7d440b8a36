"""The NVIDIA stack's error-worded lines that report no fault (issue 46, R12C), read as benign wherever a line no
reader claimed is searched for failure words (unread_leads), so they never become an invented warn:

- nvidia-peermem's 'detected invalid context, skipping further processing' (open-gpu-kernel-modules
  kernel-open/nvidia-peermem/nvidia-peermem.c, nv_get_p2p_free_callback's peer_err at KERN_ERR): the driver's free
  callback for GPU memory whose peer-memory context was already released, as at a process's teardown; the module
  skips it by design. gpud and other agents count its repeats; alone it is no GPU or NIC fault. Read in every
  framing (/dev/kmsg's 'PRI,SEQ,USEC,-;', dmesg -x's 'kern  :err   : ', a bare line).
- dcgmi's help legends (DCGM dcgmi/Stats.cpp's 'stats' footer, and the same 'Field - description' rows of its other
  commands' help): 'Single Bit ECC Errors - Number of ECC single bit errors that occurred', 'Critical XID Errors -
  Number of critical XID Errors': a field's name and what it counts, text and never a reading.
- libfabric's GDRCopy probe at start-up (R14E; ofiwg/libfabric src/hmem_cuda_gdrcopy.c, cuda_gdrcopy_hmem_init and
  cuda_gdrcopy_dl_hmem_init): 'gdrcopy_dl_hmem_init failed!', 'Failed to dlopen libgdrapi.so', 'Failed to find
  gdr_open', 'gdr_open failed!' (libgdrapi or the gdrdrv module absent): libfabric goes on without GDRCopy (the EFA
  provider's small GPU copies take the slower path), as aws-ofi-nccl runs do on nodes without gdrcopy. Its failures
  on a registration ('gdr_pin_buffer failed!', 'gdr_map failed!') and the provider's own ('fi_getinfo' finding none,
  no EFA device) are not these and stay leads."""

from __future__ import annotations

from gpuvet.captures.lazy_re import lazy

PEERMEM_INVALID = lazy(r"\bnvidia-peermem\b.{0,80}\bdetected invalid context, skipping further processing\b")
# a legend row: a field's name (capitalised words, an optional '(*)' mark), a dash, then what it counts or shows;
# dcgmi nvlink's 'NVLINK Error description' legend ('CRC FLIT Error => Data link receive flow control digit CRC error.')
_LEGEND = lazy(
    r"^\s*[A-Z][\w'./%]*(?: [\w'./%]+){0,5}\s+(?:\(\*\)\s+)?-\s+(?:Number of|Time of|Total |Runtime % at|"
    r"Statistics for|Utilization of|Maximum amount of|PID of|Process (?:start|end) time)\b|"
    r"^\s*[A-Z][\w ]{2,40}\bError description\s*$|^\s*[A-Z][\w ]{2,30}\bError\s+=>\s+[A-Z][a-z]"
)
# a help text's option row ('  -e  --errors                Print NvLink errors for a given gpuId (-g).'): the
# option's name, then what it does in two or more spaces' distance
_OPTION = lazy(r"^\s*(?:-\w,?\s+)?--[a-z][\w-]*(?:[ =]<?[\w/-]+>?)?\s{2,}[A-Z][a-z]+ ")
# libfabric's core log line ('libfabric:PID:TIME::core:core:cuda_gdrcopy_hmem_init():191<warn> …') of the probe
_GDRCOPY_PROBE = lazy(
    r"\b(?:gdrcopy_dl_hmem_init failed!|Failed to dlopen libgdrapi\.so|Failed to find gdr_\w+|gdr_open failed!)"
)
_SAID = {
    "peermem_invalid_context": "nvidia-peermem's 'detected invalid context, skipping further processing': the free "
    "callback of memory already released, at a process's teardown",
    "dcgmi_help_legend": "dcgmi's help legends: a field's or option's description, text and no reading",
    "libfabric_gdrcopy_absent": "libfabric's GDRCopy probe at start-up ('gdrcopy_dl_hmem_init failed!'): libgdrapi or "
    "gdrdrv absent, libfabric goes on without GDRCopy",
}


def benign(text: str) -> str | None:
    """The name of the benign line ``text`` is, or None."""
    if "peermem" in text and PEERMEM_INVALID.search(text):
        return "peermem_invalid_context"
    if ("-" in text or "=>" in text or "description" in text) and (_LEGEND.match(text) or _OPTION.match(text)):
        return "dcgmi_help_legend"
    if "gdr" in text and _GDRCOPY_PROBE.search(text):
        return "libfabric_gdrcopy_absent"
    return None


def said(names: list[str]) -> str:
    """The benign lines' kinds in words, each once."""
    return "; ".join(_SAID[n] for n in dict.fromkeys(names))
