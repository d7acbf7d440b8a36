"""Issue 46 (R4B): a GPU driver's own report that it ran short of something it needs, in the drivers' words.

The NVIDIA resource manager's allocation failures: 'NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory
[NV_ERR_NO_MEMORY] (0x00000051) returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359' (the open
modules' src/nvidia/src/libraries/nvport and utils/nvassert.h print 'Check failed: %s [%s] (0x%08x) returned from
%s'; nvAssertOkFailedNoLog the same for an assertion), NV_ERR_INSUFFICIENT_RESOURCES the same way: the driver
could not allocate (warn: driver_out_of_resource). Where the text itself shows the line benign (the poster counts
it on healthy runs, 'at rest', 'not a reliable indicator'), it is read as that (info), never refused.

The i915 and xe GuC not answering the driver's requests: i915's 'GUC: TLB invalidation response timed out for
seqno %u' (gt/uc/intel_guc.c) and 'CT: No response for request %#x (fence %u)' (intel_guc_ct.c), xe's 'TLB
invalidation fence timeout, seqno=%d recv=%d' (xe_gt_tlb_invalidation.c) and 'Timed out wait for G2H, fence %u,
action %04x' (xe_guc_ct.c): the module's firmware stopped answering (warn: module_firmware_unresponsive).

Issue 46 (FX68A): the same check line with a status code (src/common/sdk/nvidia/inc/nvstatuscodes.h) that says
the call was refused for a reason of software, never of the GPU: the object busy or held by another client
(NV_ERR_STATE_IN_USE from the profiler when two DCGM/exporter instances ask for its PMA stream, NV_ERR_IN_USE,
NV_ERR_BUSY_RETRY, NV_ERR_DMA_IN_USE, NV_ERR_MAX_SESSION_LIMIT_REACHED), the caller not allowed
(NV_ERR_INSUFFICIENT_PERMISSIONS) or the call not offered on this GPU or driver (NV_ERR_NOT_SUPPORTED,
NV_ERR_FEATURE_NOT_ENABLED): info (driver_call_refused). A line naming any other code (NV_ERR_GPU_IS_LOST,
NV_ERR_RESET_REQUIRED, NV_ERR_ECC_ERROR, NV_ERR_TIMEOUT, ...) is not read here: its own rule or the unnamed
driver error lead (warn) judges it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.kernel_places import NO_BUS, index_buses, intel_module_of, module_of
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelEvent, KernelParse

NO_MEMORY, NO_MEMORY_BENIGN, GUC_SILENT = "nv_rm_no_memory", "nv_rm_no_memory_benign", "intel_guc_no_response"
REFUSED = "nv_rm_call_refused"
KINDS = (NO_MEMORY, NO_MEMORY_BENIGN, GUC_SILENT, REFUSED)  # kernel_messages.yaml gives their causes
WORDS = (
    "NV_ERR_NO_MEMORY",
    "NV_ERR_INSUFFICIENT_RESOURCES",
    "_IN_USE",
    "NV_ERR_BUSY_RETRY",
    "NV_ERR_MAX_SESSION",
    "NV_ERR_INSUFFICIENT_PERMISSIONS",
    "NV_ERR_NOT_SUPPORTED",
    "NV_ERR_FEATURE_NOT_ENABLED",
    "TLB invalidation",
    "No response for request",
    "wait for G2H",
    "mmio request",
)  # every line read holds one
_HEAD = 400
_NV = re.compile(r"\bNV_ERR_(?:NO_MEMORY|INSUFFICIENT_RESOURCES)\b")
# the status codes of a call refused for software's reasons (busy, held, not allowed, not offered); _ANY_NV: any code
REFUSED_CODES = ("NV_ERR_STATE_IN_USE", "NV_ERR_IN_USE", "NV_ERR_BUSY_RETRY", "NV_ERR_DMA_IN_USE",
                 "NV_ERR_MAX_SESSION_LIMIT_REACHED", "NV_ERR_INSUFFICIENT_PERMISSIONS", "NV_ERR_NOT_SUPPORTED",
                 "NV_ERR_FEATURE_NOT_ENABLED")
_ANY_NV = re.compile(r"\bNV_ERR_[A-Z0-9_]{1,48}\b")
# the resource manager's own line: its prefix, its check macros' words, or the call it names
_NV_LINE = re.compile(r"\bNVRM\b|\bnv(?:Check|Assert)Ok\w*|\bCheck failed\b|\breturned from \w+|\bRmAlloc\w*")
_GUC = re.compile(
    r"\bTLB invalidation (?:response timed out|fence timeout)\b|\bCT: No response for request\b|"
    r"\bTimed out wait for G2H\b"
    # R8C: intel_guc.c's guc_send_mmio: the GuC answered a host request with a failure ('GUC: mmio request 0x4100:
    # failure 201/0'), the firmware and the driver disagreeing (hwconfig then not read)
    r"|\bGU?C: mmio request 0x[0-9a-fA-F]{1,8}: failure [0-9a-fA-F]{1,8}/\d{1,8}"
)
_INTEL_LINE = re.compile(r"\b(?:i915|xe)\b|\[drm\]|\bGU?C\b|\bGT\d:")
# the poster's words showing the allocation failure benign: counted on healthy runs, at rest, said harmless
_BENIGN = re.compile(
    r"\b(?:benign|harmless|cosmetic|(?:can|may) (?:safely )?be ignored|safe to ignore|"
    r"not (?:a )?reliable (?:indicator|sign)|(?:healthy|successful) (?:ones|runs?|starts?|startups?)|"
    r"went healthy|at rest|on (?:every|each|a) healthy)\b",
    re.I,
)
# each of _BENIGN's phrases holds one of these (lower case): a text holding none is not searched line by line
_BENIGN_WORDS = ("benign", "harmless", "cosmetic", "ignore", "reliable", "healthy", "successful", "at rest")
SHOWN = 3


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one event per kind and module whose lines it holds (counted, the first quoted), those lines
    claimed."""
    found: dict[tuple[str, str], list[Line]] = {}
    buses: dict[str, str] | None = None
    for i in holding(lines, WORDS, marks):
        head = lines[i].text[:_HEAD]
        if _NV.search(head) is not None and _NV_LINE.search(head) is not None:
            buses = index_buses(lines) if buses is None else buses
            module = module_of(lines, i, buses)
            key = (NO_MEMORY, f"a module of nvidia, {NO_BUS}" if module == NO_BUS else module)
        elif _refused(head):
            buses = index_buses(lines) if buses is None else buses
            module = module_of(lines, i, buses)
            key = (REFUSED, f"a module of nvidia, {NO_BUS}" if module == NO_BUS else module)
        elif _GUC.search(head) is not None and _INTEL_LINE.search(head) is not None:
            key = (GUC_SILENT, intel_module_of(lines, i))
        else:
            continue
        found.setdefault(key, []).append(lines[i])
    if not found:
        return out
    judged = {e.module for e in out.events}  # a module another message judged: its failure's context (an init's)
    context = (NO_MEMORY, REFUSED)  # REV68a: a refusal on a module whose init failed is never 'not at fault'
    out.claimed |= {ln.no for (kind, module), said in found.items() if kind in context and module in judged for ln in said}
    found = {(kind, module): said for (kind, module), said in found.items() if kind not in context or module not in judged}
    benign = any(k == NO_MEMORY for k, _ in found) and _shown_benign(lines, found)
    out.events += [
        _event(NO_MEMORY_BENIGN if kind == NO_MEMORY and benign else kind, module, said)
        for (kind, module), said in found.items()
    ]
    out.claimed |= {ln.no for said in found.values() for ln in said}
    return out


# the driver bringing the GPU up (GSP's boot, the adapter's init): a refusal there is the init's failure, not a
# call refused for software's reasons (REV68a: 'NV_ERR_NOT_SUPPORTED … returned from kgspInitRm(…)')
_INIT_PATH = re.compile(r"\b(?:kgspInitRm|kgspBootstrap\w{0,30}|kgspPrepare\w{0,30}|RmInitAdapter|rm_init_adapter|"
                        r"gpuStateInit\w{0,20}|gpumgrAttachGpu|osInitNvMapping)\b")


def _refused(head: str) -> bool:
    """The resource manager's line whose every status code is one of a call refused for software's reasons,
    outside the GPU's initialisation."""
    codes = set(_ANY_NV.findall(head))
    return bool(codes) and codes <= set(REFUSED_CODES) and _NV_LINE.search(head) is not None and \
        _INIT_PATH.search(head) is None


def _shown_benign(lines: list[Line], found: dict[tuple[str, str], list[Line]]) -> bool:
    """The text's own words (not the driver's lines) show the allocation failure benign."""
    low = "\n".join(ln.text for ln in lines).lower()
    words = [w for w in _BENIGN_WORDS if w in low]
    if not words:
        return False
    read = {ln.no for said in found.values() for ln in said}
    return any(
        ln.no not in read and any(w in ln.text.lower() for w in words) and _BENIGN.search(ln.text) is not None
        for ln in lines
    )


def _event(kind: str, module: str, said: list[Line]) -> KernelEvent:
    from gpuvet.captures.kernel import KernelEvent

    driver = "nvidia" if kind != GUC_SILENT else "xe" if re.search(r"\bxe\b", said[0].text) else "i915"
    return KernelEvent(
        kind,
        module,
        said[0].text.strip()[:240],
        said[0].no,
        count=len(said),
        driver=driver,
        shown=tuple(ln.text.strip()[:240] for ln in said[:SHOWN]),
    )
