"""Issue 46 (FX68C): the kernel crashed in a GPU driver. An oops (mm/fault.c's 'BUG: kernel NULL pointer
dereference, address: …' and 'BUG: unable to handle page fault for address: …', dumpstack.c's 'Oops: 0000 [#1]',
traps.c's 'general protection fault …: 0000 [#1]', 'kernel BUG at …!') whose RIP or call trace names a GPU driver's
module ('RIP: 0010:os_acquire_mutex+0x4b/0x60 [nvidia]', a frame 'amdgpu_pasid_free_delayed+0x116/0x1f0 [amdgpu]'):
the driver's code took the kernel down, so the node needs a reboot and the driver (and its firmware) an update; the
oops is what the vendor needs. One event on the node, saying the kernel the task line names, the faulting function
(the RIP, and the driver's frame nearest it where the RIP is the kernel's), the task, the host (a serial console's
'nid002982 login:' prompt glued to a line; a syslog's host column is given by read.py) and the driver's line just
before it (amdgpu's 'Failed to create process VM object'). Left to their readers: a driver that oopsed while it
loaded (kernel_unknown's driver_load_oops) and an Intel reset that crashed (kernel_intel_reset); an oops that
names no GPU driver is the host's (kernel_host's host_kernel_oops)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures import kernel_unknown
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelEvent, KernelParse

KIND = "gpu_driver_oops"  # kernel_messages.yaml
WORDS = ("general protection fault", "Oops: ", "BUG: ", "kernel BUG at")
_HEAD = 1000  # characters of a line searched
OOPS = re.compile(r"\bgeneral protection fault\b.{0,80}\[#\d+\]|\bOops: [0-9a-fx]+ \[#\d+\]|"
                  r"\bBUG: (?:unable to handle (?:page fault|kernel)|kernel NULL pointer dereference)|"
                  r"\bkernel BUG at \S+:\d+!")
# the GPU and accelerator drivers' modules (AMD's DKMS build ships amdgpu with its own amdttm, amdkcl, amd_sched)
_GPU_MODULES = (r"nvidia\w{0,20}|amdgpu|amdkfd|amdttm|amdkcl|amd_sched|amddrm\w{0,20}|i915|xe|habanalabs|"
                r"nouveau|radeon|mtgpu|ascend\w{0,20}|davinci\w{0,20}|drv_(?:devm|davinci|pcie_host|dvpp)\w{0,20}|devdrv\w{0,20}")
FRAME = re.compile(r"([\w.$]{1,120}\+0x[0-9a-f]{1,16}/0x[0-9a-f]{1,16}) \[(" + _GPU_MODULES + r")\]")
_RIP = re.compile(r"\b(?:RIP|pc)\s*:\s*(?:[0-9a-f]{4}:)?(\S{1,120})")
_TASK = re.compile(r"\bCPU: \d+ (?:UID: \d+ )?PID: \d+ Comm: (\S{1,40})")
_KERNEL = re.compile(r"\b(?:Not tainted|Tainted: [A-Z ]{1,40}?)\s+(\d+\.\d+[\w.+~-]{0,120})")
_END = ("---[ end trace", "Kernel panic", "</TASK>")
_PROMPT = re.compile(r"^\s*([A-Za-z0-9][\w.-]{0,62}) login:\s*")
_STAMP = re.compile(r"^\s*(?:<\d>)?(?:\[[^\]]{1,40}\]\s*)?")  # dmesg's '[ 1234.5]' (after a console prompt)
SPAN = 60  # lines: an oops prints its header, task, RIP and call trace within this many
BEFORE = 60  # lines: the driver's line this close before the oops is what it was doing
_LOADERS = re.compile(r"\bComm: (?:modprobe|insmod|systemd-udevd|udevd|kmod)\b|\b(?:do_init_module|load_module)\+0x")


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one event on the node for the first oops in a GPU driver's code, counting every such oops;
    an amdgpu WARNING read at that oops's RIP (amd_driver_warning) is this crash's, so it goes."""
    from gpuvet.captures.kernel import KernelEvent

    found = [(i, end, frame) for i, end in _oopses(lines, marks) if (frame := in_driver(lines, i, end)) is not None
             and lines[i].no not in out.claimed and not _loading(lines, i, end)]
    if not found:
        return out
    i, end, frame = found[0]
    span = [ln.text[:_HEAD] for ln in lines[i:end]]
    rip = next((m.group(1) for t in span if (m := _RIP.search(t)) is not None), None)
    task = next((m.group(1) for t in span if (m := _TASK.search(t)) is not None), None)
    kernel = next((m.group(1) for t in span if "PID:" in t and (m := _KERNEL.search(t)) is not None), None)
    before = _driver_line(lines, i)
    host = _console_host(lines, i, marks)
    where = frame if rip is None or frame.split(" ")[0] == rip else f"{rip} in {frame}"
    said = [f"RIP {where}", f"after '{before[:80]}'" if before else "", f"kernel {kernel}" if kernel else "",
            f"task {task}" if task else ""]  # the host is the finding's place (KernelEvent.host)
    head = _bare(lines[i].text).split(", address")[0][:100]
    text = head + " (" + ", ".join(w for w in said if w) + ")"
    shown = tuple(s for s in (head, before, f"RIP {where}") if s)
    out.events = [e for e in out.events if not (e.kind == "amd_driver_warning" and lines[i].no <= e.line
                                                 <= lines[end - 1].no)]
    out.events.append(KernelEvent(KIND, "node", text[:400], lines[i].no, count=len(found), host=host, shown=shown))
    out.claimed.update(ln.no for ln in lines[i:end])  # the oops's block, its registers and trace: read as the crash
    return out


def _oopses(lines: list[Line], marks: Marks | None) -> list[tuple[int, int]]:
    """Each oops as (its first header's index, the index its trace ends before): the headers one oops prints
    ('BUG: kernel NULL pointer dereference', then 'Oops: 0000 [#1]') are one."""
    out: list[tuple[int, int]] = []
    for i in holding(lines, WORDS, marks):
        if (out and i < out[-1][1]) or OOPS.search(lines[i].text[:_HEAD]) is None:
            continue
        out.append((i, end_of(lines, i)))
    return out


def end_of(lines: list[Line], i: int) -> int:
    """The index past an oops's trace: its end marker's line, else SPAN lines on."""
    last = min(len(lines), i + SPAN)
    return next((j + 1 for j in range(i + 1, last) if any(w in lines[j].text[:_HEAD] for w in _END)), last)


def in_driver(lines: list[Line], i: int, end: int) -> str | None:
    """The GPU driver's frame an oops names (its RIP's where that is the driver's, else the first of its trace),
    as 'function+0x… [module]', or None: the oops is the host kernel's own."""
    for ln in lines[i:end]:
        if (m := FRAME.search(ln.text[:_HEAD])) is not None:
            return f"{m.group(1)} [{m.group(2)}]"
    return None


def _loading(lines: list[Line], i: int, end: int) -> bool:
    """The RIP is the driver's and a module loader ran it: kernel_unknown's driver_load_oops."""
    texts = [ln.text[:_HEAD] for ln in lines[i:end]]
    rip_in_driver = any(_RIP.search(t) and FRAME.search(t) for t in texts)
    return rip_in_driver and any(_LOADERS.search(t) for t in texts)


def _driver_line(lines: list[Line], i: int) -> str | None:
    """The GPU driver's last line before the oops (its error line first), a console prompt glued to it taken off."""
    near = [_bare(ln.text[:_HEAD]) for ln in lines[max(0, i - BEFORE):i]]
    ours = [t for t in near if kernel_unknown.driver_of(t) is not None and not FRAME.search(t)]
    errors = [t for t in ours if kernel_unknown.error_worded(t)]
    said = errors or ours
    return said[-1] if said else None


def _bare(text: str) -> str:
    """A kernel line without a console prompt glued to it nor dmesg's stamp."""
    return _STAMP.sub("", _PROMPT.sub("", text, 1), 1).strip()


def _console_host(lines: list[Line], i: int, marks: Marks | None) -> str | None:
    """The host a serial console's login prompt names, the last before the oops."""
    prompts = [j for j in holding(lines, ("login:",), marks) if j <= i]
    return next((m.group(1) for j in reversed(prompts) if (m := _PROMPT.match(lines[j].text[:200])) is not None), None)


def around(no: int, oopses: list[int]) -> bool:
    """Whether line ``no`` is an oops's lead (its driver's line just before) or in its trace."""
    return any(o - kernel_unknown.CONTEXT <= no < o + SPAN for o in oopses)


def hosted(events: list[KernelEvent], host: str | None) -> list[KernelEvent]:
    """The oops events given the file's host (a syslog's host column, read.py) where their lines named none."""
    if host is None:
        return events
    return [replace(e, host=host) if e.kind == KIND and e.host is None else e for e in events]
