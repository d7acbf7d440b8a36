"""Issue 46: the kernel's own lines about a GPU, not its driver's messages. The IOMMU refusing the module's DMA
(AMD-Vi's ``Event logged [IO_PAGE_FAULT …]``, Intel VT-d's ``DMAR: [DMA Read] Request device [07:00.0] fault
addr``): the module's reads and writes, peer-to-peer above all, blocked by address translation; read where the
line names the GPU (its driver's dev_printk prefix, or a bus id the log's GPU driver lines name). And the hung-task
watchdog (``INFO: task nvidia-smi:123 blocked for more than 120 seconds.``) where the task hangs in the GPU driver:
its call trace runs through the driver, or the driver's errors (an Xid, a reset) came before it. A task stuck in
the driver holds it; the module cannot be reset under it, the host must reboot."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures import gpu_modules, kernel_driver_oops
from gpuvet.captures.kernel_places import NO_BUS
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key as bus

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

IOMMU = "iommu_dma_fault"  # the kinds (kernel_messages.yaml) read here
HUNG = "driver_hung_task"
OOPS = "host_kernel_oops"  # R7B: the kernel itself crashed outside any GPU driver's code
OOM = "host_oom_kill"  # R14E: the OOM killer's kills (captures/kernel_oom.py reads them): the host's memory
KINDS = (IOMMU, HUNG, OOPS, OOM)
_HEAD = 1000  # characters of a line searched
_BDF = r"(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_GPU_PREFIX = re.compile(r"(?:^|[\s\]:])(?:nvidia|amdgpu|i915|xe) (" + _BDF + r"): ")
_IOMMU = re.compile(r"AMD-Vi: Event logged \[IO_PAGE_FAULT(?: device=(?P<amd>" + _BDF + r"))?"
                    r"|DMAR: ?\[DMA (?:Read|Write)[^\]]{0,20}\] Request device \[(?P<intel>" + _BDF + r")\]")
_HUNG = re.compile(r"\bINFO: task (\S{1,40}):\d+ blocked for more than \d+ seconds")
# a call trace's frame in a GPU driver ('os_acquire_mutex+0x4b/0x60 [nvidia]'); a program that lives in the driver
_FRAME = gpu_modules.FRAME  # a frame in a GPU driver's module (one list: captures/gpu_modules.py)
_GPU_TASKS = ("nvidia-smi", "nvidia-persiste", "nv-hostengine", "nvidia-modprobe", "dcgm", "rocm-smi", "amd-smi")
TRACE = 40  # lines: a hung task's trace follows it within this many lines
ERRORS_BEFORE = 60  # lines: the driver's errors this close before a hung task are what it waits on
# the driver's errors before a hung task: kinds that leave a module wedged or reset (an Xid is always one)
_BEFORE = ("amd_ring_timeout", "amd_gpu_reset", "amd_reset_failed", "amd_recovery_failed", "gsp_rpc_failed",
           "gsp_failed", "needs_reset", "intel_gpu_hang", "intel_wedged")


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with an event per module whose DMA the IOMMU refused and one per module a task hangs on."""
    _iommu(lines, out, marks)
    _hung(lines, out, marks)
    _oops(lines, out, marks)
    return out


def _iommu(lines: list[Line], out: KernelParse, marks: Marks | None) -> None:
    """IOMMU page faults on a GPU: one event per module, counted; none on a module the driver's own messages judge
    (a hung or faulting job's stray DMA after its ring timeout or Xid is that fault's context, not the IOMMU's)."""
    from gpuvet.captures.kernel import KernelEvent

    gpus = {m.module for m in out.modules}
    judged = {e.module for e in out.events} | {x.bus_id for x in out.xids}
    found: dict[str, KernelEvent] = {}
    for i in holding(lines, ("IO_PAGE_FAULT", "DMAR"), marks):
        ln = lines[i]
        head = ln.text[:_HEAD]
        if (m := _IOMMU.search(head)) is None:
            continue
        prefix = _GPU_PREFIX.search(head[:m.start()])
        where = bus(prefix.group(1)) if prefix else bus(m.group("amd") or m.group("intel") or "")
        if where is None or (prefix is None and where not in gpus) or where in judged:
            continue  # another device's fault (a NIC, a disk controller), a bus id no GPU line names, or context
        seen = found.get(where)
        found[where] = KernelEvent(IOMMU, where, ln.text.strip()[:240], ln.no) if seen is None else \
            KernelEvent(IOMMU, where, seen.text, seen.line, seen.count + 1)
        out.claimed.add(ln.no)
    out.events += list(found.values())


def _hung(lines: list[Line], out: KernelParse, marks: Marks | None) -> None:
    """A task the watchdog found blocked in a GPU driver: one event, on the module the driver's errors before it
    name (the one module, else said as unknown)."""
    from gpuvet.captures.kernel import KernelEvent

    for i in holding(lines, ("blocked for more than",), marks):
        ln = lines[i]
        if (m := _HUNG.search(ln.text[:_HEAD])) is None:
            continue
        since = ln.no - ERRORS_BEFORE
        before = {x.bus_id for x in out.xids if since <= x.line < ln.no} | \
            {e.module for e in out.events if e.kind in _BEFORE and since <= e.line < ln.no}
        in_driver = m.group(1).startswith(_GPU_TASKS) or any(
            _FRAME.search(t.text[:_HEAD]) for t in lines[i + 1:i + TRACE] if not _HUNG.search(t.text[:_HEAD]))
        if not before and not in_driver:
            continue  # a task hung elsewhere (a disk, a filesystem): not the GPU's
        module = next(iter(before)) if len(before) == 1 else NO_BUS
        out.events.append(KernelEvent(HUNG, module, ln.text.strip()[:240], ln.no))
        out.claimed.add(ln.no)
        return  # one hung driver: the watchdog repeats it for every task that waits on it



# R7B: an oops's header (arch/x86/kernel/traps.c 'general protection fault, probably for non-canonical address …:
# 0000 [#1] SMP NOPTI', dumpstack.c's 'Oops: 0000 [#1]', mm/fault.c's 'BUG: unable to handle page fault for address',
# 'kernel BUG at mm/slub.c:305!'), then its task ('CPU: 21 PID: 389232 Comm: ufep … Tainted: P OE …') and its RIP
_OOPS = re.compile(r"\bgeneral protection fault\b.{0,80}\[#\d+\]|\bOops: [0-9a-fx]+ \[#\d+\]|"
                   r"\bBUG: unable to handle (?:page fault|kernel)|\bkernel BUG at \S+:\d+!")
_TASK = re.compile(r"\bCPU: \d+ (?:UID: \d+ )?PID: \d+ Comm: (\S{1,40})(?:.*?\bTainted: ([A-Z ]{1,40}?)\s+\d)?")
_RIP = re.compile(r"\b(?:RIP|pc)\s*:\s*(?:[0-9a-f]{4}:)?(\S{1,80})")
OOPS_SPAN = 30  # lines: an oops prints its header, its task and its RIP within this many lines


def _oops(lines: list[Line], out: KernelParse, marks: Marks | None) -> None:
    """The kernel's own crash (a general protection fault, an Oops, a BUG) whose RIP and trace name no GPU
    driver's frame: one event on the node, its task, taint and RIP quoted; an oops in a GPU driver's code is that
    driver's (kernel_unknown, kernel_intel_reset)."""
    from gpuvet.captures.kernel import KernelEvent

    heads = [i for i in holding(lines, ("general protection fault", "Oops: ", "BUG: ", "kernel BUG at"), marks)
             if _OOPS.search(lines[i].text[:_HEAD]) is not None]
    if not heads or any(e.kind == OOPS for e in out.events):
        return
    i = heads[0]
    span = [t.text[:_HEAD] for t in lines[i:i + OOPS_SPAN]]
    if any(" [tenstorrent]" in t for t in span) or \
            kernel_driver_oops.in_driver(lines, i, kernel_driver_oops.end_of(lines, i)) is not None:  # R8A: tt_faults
        return  # in a GPU driver's code: that driver's readers judge it (FX68C: kernel_driver_oops)
    since = lines[i].no - ERRORS_BEFORE
    if any(since <= e.line <= lines[i].no for e in out.events) or any(since <= x.line <= lines[i].no for x in out.xids):
        return  # right after a GPU driver's own fault (a reset, a failed init, an Xid): its aftermath, judged there
    task = next((m for t in span if (m := _TASK.search(t)) is not None), None)
    rip = next((m.group(1) for t in span if (m := _RIP.search(t)) is not None), None)
    said = [f"task {task.group(1)}" if task else "", f"RIP {rip}" if rip else "",
            f"tainted {' '.join(task.group(2).split())}" if task and task.group(2) else ""]
    text = lines[i].text.strip()[:200] + " (" + ", ".join(w for w in said if w) + ")"
    out.events.append(KernelEvent(OOPS, "node", text[:240], lines[i].no, count=len(heads)))
    out.claimed.update(lines[j].no for j in range(i, min(len(lines), i + OOPS_SPAN)) if _OOPS.search(
        lines[j].text[:_HEAD]) or _TASK.search(lines[j].text[:_HEAD]) or _RIP.search(lines[j].text[:_HEAD]))
