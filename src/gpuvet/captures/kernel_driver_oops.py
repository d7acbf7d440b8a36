"""Issue 46 (FX68C): the kernel crashed in a GPU driver. An oops (mm/fault.c's 'BUG: kernel NULL pointer
dereference, address: …' and 'BUG: unable to handle page fault for address: …', dumpstack.c's 'Oops: 0000 [#1]',
traps.c's 'general protection fault …: 0000 [#1]', 'kernel BUG at …!') whose RIP or call trace names a GPU driver's
module ('RIP: 0010:os_acquire_mutex+0x4b/0x60 [nvidia]', a frame 'amdgpu_pasid_free_delayed+0x116/0x1f0 [amdgpu]'):
the driver's code took the kernel down, so the node needs a reboot and the driver (and its firmware) an update; the
oops is what the vendor needs. One event per host (REV68a: each host's oops its own finding; a host's other
distinct oopses named in it), saying the kernel the task line names, the faulting function
(the RIP, ppc64's NIP, and the driver's frame nearest it where the RIP is the kernel's; '? ' frames only
where no reliable one names a module), the task, the host (a serial console's
'nid002982 login:' prompt glued to a line; a syslog's host column is given by read.py) and the driver's line just
before it (amdgpu's 'Failed to create process VM object'). Left to their readers: a driver that oopsed while it
loaded (kernel_unknown's driver_load_oops) and an Intel reset that crashed (kernel_intel_reset); an oops that
names no GPU driver is the host's (kernel_host's host_kernel_oops)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpuvet.captures import gpu_modules, kernel_unknown
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelEvent, KernelParse

KIND = "gpu_driver_oops"  # kernel_messages.yaml
WORDS = ("general protection fault", "Oops: ", "BUG: ", "kernel BUG at")
_HEAD = 1000  # characters of a line searched
# x86's and arm64's 'Oops: 0000 [#1]', ppc64's 'Oops: Kernel access of bad area, sig: 11 [#1]'
OOPS = re.compile(r"\bgeneral protection fault\b.{0,80}\[#\d+\]|\bOops: [0-9a-fx]+ \[#\d+\]|"
                  r"\bOops: [A-Za-z][\w ,:-]{0,80}\[#\d+\]|"
                  r"\bBUG: (?:unable to handle (?:page fault|kernel)|kernel NULL pointer dereference)|"
                  r"\bkernel BUG at \S+:\d+!")
FRAME = gpu_modules.FRAME
# x86's 'RIP: 0010:f+0x…', arm64's 'pc : f+0x…', ppc64's 'NIP [c008…] f+0x…' (its register dump's bare
# 'NIP:  c008…' address is no function: a name is asked for)
_RIP = re.compile(r"\b(?:(?:RIP|pc)\s*:\s*(?:[0-9a-f]{4}:)?|NIP \[[0-9a-f]{1,16}\]\s{1,4})([A-Za-z_.$][^\s]{0,119})")
_TASK = re.compile(r"\bCPU: \d+ (?:UID: \d+ )?PID: \d+ Comm: (\S{1,40})")
_KERNEL = re.compile(r"\b(?:Not tainted|Tainted: [A-Z ]{1,40}?)\s+(\d+\.\d+[\w.+~-]{0,120})")
_END = ("---[ end trace", "Kernel panic", "</TASK>")
# agetty's serial console prompt ('nid002982 login:', a kernel line often glued after it); never ssh's
# 'Last login: Mon Dec  7 … from 10.0.0.5'
_PROMPT = re.compile(r"^\s*(?!Last\b)([A-Za-z0-9][\w.-]{0,62}) login:(?!\s*(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\b)\s*")
_SHELL = re.compile(r"^\s*\[[\w.-]{1,32}@([A-Za-z0-9][\w.-]{0,62})[ :][^\]]{0,120}\][#$]|"
                    r"^\s*[\w.-]{1,32}@([A-Za-z0-9][\w.-]{0,62}):[^\s#$]{0,120}[#$] ")  # '[root@gpu17 ~]#'
_STAMP = re.compile(r"^\s*(?:<\d>)?(?:\[[^\]]{1,40}\]\s*)?")  # dmesg's '[ 1234.5]' (after a console prompt)
_STAMPED = re.compile(r"^\s*(?:<\d>)?\[\s*\d+\.\d+\]|\bkernel:")  # a line the kernel logged, not a quote
# a commit message or changelog quoting an oops (git log's 'commit …', its trailers)
_CHANGELOG = re.compile(r"^commit [0-9a-f]{7,40}\b|^Author: |^\s*(?:Signed-off-by|Reported-by|Fixes|Link|Cc): ")
SPAN = 60  # lines: an oops prints its header, task, RIP and call trace within this many
BEFORE = 60  # lines: the driver's line this close before the oops is what it was doing
_LOADERS = re.compile(r"\bComm: (?:modprobe|insmod|systemd-udevd|udevd|kmod)\b|\b(?:do_init_module|load_module)\+0x")


@dataclass(frozen=True)
class _Block:
    """One oops, its lines scanned once: its frames in any module (function+0x…, module, reliable: not marked
    '? ' nor '(unreliable)'), whether its RIP is in a GPU driver, its RIP, task and kernel."""

    frames: tuple[tuple[str, str, bool], ...]
    rip_framed: bool
    rip: str | None
    task: str | None
    kernel: str | None
    loader: bool
    logged: bool  # a task line or a dmesg/syslog stamp: the kernel printed it (not a quote in a changelog)


def _scan(lines: list[Line], i: int, end: int) -> _Block:
    frames: list[tuple[str, str, bool]] = []
    rip = task = kernel = None
    rip_framed = loader = logged = False
    for ln in lines[i:end]:
        t = ln.text[:_HEAD]
        m = gpu_modules.ANY_FRAME.search(t) if "+0x" in t else None
        if m is not None:
            frames.append((m.group(1), m.group(2), not t[:m.start()].rstrip().endswith("?")
                           and "(unreliable)" not in t[m.end():]))
        if rip is None and (r := _RIP.search(t)) is not None:
            rip = r.group(1)
            rip_framed = m is not None and gpu_modules.gpu(m.group(2))
        if task is None and (k := _TASK.search(t)) is not None:
            task = k.group(1)
            kernel = (v.group(1) if (v := _KERNEL.search(t)) is not None else None)
        loader = loader or _LOADERS.search(t) is not None
        logged = logged or task is not None or _STAMPED.search(t) is not None
    return _Block(tuple(frames), rip_framed, rip, task, kernel, loader, logged)


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one event on the node for each distinct oops in a GPU driver's code (by console host, driver
    module and faulting function), counting its repeats; an amdgpu WARNING read at that oops's RIP
    (amd_driver_warning) is this crash's, so it goes."""
    groups: dict[tuple[str | None, str, str], list[tuple[int, int, str, _Block]]] = {}
    for i, end in _oopses(lines, marks):
        block = _scan(lines, i, end)
        frame = _driver_frame(block)
        if frame is None or lines[i].no in out.claimed or (block.rip_framed and block.loader) or _quoted(lines, i, block):
            continue
        module = frame.rsplit("[", 1)[-1].rstrip("]")
        key = (_console_host(lines, i, marks), module, (block.rip or frame).split("+")[0])
        groups.setdefault(key, []).append((i, end, frame, block))
    hosts: dict[str | None, list[list[tuple[int, int, str, _Block]]]] = {}
    for (host, _m, _f), found in groups.items():
        hosts.setdefault(host, []).append(found)
    for host, kinds in hosts.items():
        _event(lines, out, kinds, host)
    return out


def _event(lines: list[Line], out: KernelParse, kinds: list[list[tuple[int, int, str, _Block]]],
           host: str | None) -> None:
    """The event of one host's oopses (doctor keeps one finding per cause and place): the first distinct oops
    said in full, each other distinct one (another driver or faulting function) named after it; every block
    claimed, an amdgpu WARNING inside one dropped."""
    from gpuvet.captures.kernel import KernelEvent

    i, end, frame, block = kinds[0][0]
    before = _driver_line(lines, i)
    said = [f"RIP {_where(frame, block)}", f"after '{before[:80]}'" if before else "",
            f"kernel {block.kernel}" if block.kernel else "", f"task {block.task}" if block.task else ""]
    head = _bare(lines[i].text).split(", address")[0][:100]
    others = [f"line {lines[o[0][0]].no}: RIP {_where(o[0][2], o[0][3])}" for o in kinds[1:]]
    text = head + " (" + ", ".join(w for w in said if w) + ")" + (
        f"; {len(others)} other distinct oops(es): " + "; ".join(others) if others else "")
    shown = tuple(s for s in (head, before, f"RIP {_where(frame, block)}") if s)
    blocks = [(a, b) for found in kinds for a, b, _f, _b in found]
    out.events = [e for e in out.events if not (e.kind == "amd_driver_warning" and any(
        lines[a].no <= e.line <= lines[b - 1].no for a, b in blocks))]
    out.events.append(KernelEvent(KIND, "node", text[:600], lines[i].no, count=len(blocks), host=host, shown=shown))
    for a, b in blocks:  # each oops's block, its registers and trace: read as the crash
        out.claimed.update(ln.no for ln in lines[a:b])


def _where(frame: str, block: _Block) -> str:
    """The faulting function: the RIP, with the driver's frame where the RIP is the kernel's."""
    rip = block.rip
    return frame if rip is None or frame.split(" ")[0] == rip else f"{rip} in {frame}"


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
    return _driver_frame(_scan(lines, i, end))


def _driver_frame(block: _Block) -> str | None:
    """The first GPU driver's frame; frames the unwinder marked unreliable ('? f+0x…', ppc64's '(unreliable)') are
    stack leftovers, counted only where no reliable frame names a module at all."""
    reliable = [f for f in block.frames if f[2]]
    said = reliable if reliable else list(block.frames)
    return next((f"{f} [{m}]" for f, m, _r in said if gpu_modules.gpu(m)), None)


def _quoted(lines: list[Line], i: int, block: _Block) -> bool:
    """An oops quoted in a commit message or changelog: no task line nor kernel stamp, a commit's header or
    trailer near it."""
    if block.logged:
        return False
    near = lines[max(0, i - BEFORE):min(len(lines), i + SPAN)]
    return any(_CHANGELOG.search(ln.text[:200]) for ln in near)


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
    """The host a serial console's login prompt (or a shell prompt, '[root@gpu17 ~]#') names, the last before
    the oops."""
    prompts = [j for j in holding(lines, ("login:", "@"), marks) if j <= i]
    for j in reversed(prompts):
        text = lines[j].text[:200]
        if (m := _PROMPT.match(text)) is not None:
            return m.group(1)
        if (m := _SHELL.match(text)) is not None:
            return m.group(1) or m.group(2)
    return None


def around(no: int, oopses: list[int]) -> bool:
    """Whether line ``no`` is an oops's lead (its driver's line just before) or in its trace."""
    return any(o - kernel_unknown.CONTEXT <= no < o + SPAN for o in oopses)


def hosted(events: list[KernelEvent], host: str | None) -> list[KernelEvent]:
    """The oops events given the file's host (a syslog's host column, read.py) where their lines named none."""
    if host is None:
        return events
    return [replace(e, host=host) if e.kind == KIND and e.host is None else e for e in events]
