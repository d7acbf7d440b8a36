"""Issue 46 (R14E): the kernel's OOM killer (mm/oom_kill.c), a fact of the host, not of any module: the host (or a
memory cgroup, a container's limit) ran out of memory and the kernel killed a process to free it, often the job
itself. Its lines: 'python3 invoked oom-killer: gfp_mask=0x…, order=0, oom_score_adj=0', 'oom-kill:constraint=
CONSTRAINT_MEMCG,nodemask=(null),cpuset=…,task=python3,pid=1234,uid=0', 'Out of memory: Killed process 1234 (python3)
total-vm:…' ('Memory cgroup out of memory: Killed process …' for a cgroup's limit; older kernels 'Out of memory: Kill
process 456 (python) score 50 or sacrifice child' and 'Killed process 456 (python) total-vm:…'), then 'oom_reaper:
reaped process 1234 (python3), now anon-rss:0kB, …'. One event on the node, the processes killed named; its severity
is the knowledge base's (host_out_of_memory)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures import kernel_host
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

KIND = kernel_host.OOM  # kernel_messages.yaml
_HEAD = 600
# the kernel's own framing only (review 67b F5): 'Out of memory: Killed process …' (a cgroup's, an older kernel's
# 'Kill process'), or an older kernel's bare 'Killed process N (name) total-vm:…'; any program's 'Killed process'
# (a supervisor's, a script's) is none
_KILLED = re.compile(r"\b(Memory cgroup )?[Oo]ut of memory(?: \(oom_kill_allocating_task\))?: Kill(?:ed)? "
                     r"process (\d{1,9}),? (?:UID \d+, )?\(([^)]{1,64})\)")
_KILLED_BARE = re.compile(r"\b()Killed process (\d{1,9}) \(([^)]{1,64})\),? total-vm:\d")
_TASK = re.compile(r"\boom-kill:constraint=(\S*?)task=([^,\s]{1,64}),pid=(\d{1,9})")  # the kill's record line
_OTHER = re.compile(r"\binvoked oom-killer: |\boom-kill:constraint=|\boom_reaper: reaped process \d+|"
                    r"\bMemory cgroup out of memory\b|\bOut of memory: ")
_WORDS = ("oom", "Out of memory", "out of memory", "Killed process", "Kill process")


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one host_oom_kill event on the node (its first kill line cited, the processes named), the OOM
    killer's lines claimed."""
    from gpuvet.captures.kernel import KernelEvent

    seen: list[Line] = []
    killed: dict[str, None] = {}
    memcg = False
    for i in holding(lines, _WORDS, marks):
        text = lines[i].text[:_HEAD]
        if (k := _KILLED.search(text) or _KILLED_BARE.search(text)) is not None:
            killed[f"{k.group(3)} ({k.group(2)})"] = None
            memcg = memcg or bool(k.group(1))
        elif (task := _TASK.search(text)) is not None:
            killed[f"{task.group(2)} ({task.group(3)})"] = None
        elif _OTHER.search(text) is None:
            continue
        memcg = memcg or "CONSTRAINT_MEMCG" in text
        seen.append(lines[i])
    if not killed or any(e.kind == KIND for e in out.events):
        return out
    first = next(ln for ln in seen if _KILLED.search(ln.text[:_HEAD]) or _KILLED_BARE.search(ln.text[:_HEAD])
                 or _TASK.search(ln.text[:_HEAD]))
    where = "a memory cgroup's limit (a container's)" if memcg else "the host's memory"
    said = f"{first.text.strip()[:160]} (killed: {', '.join(list(killed)[:6])}; {where})"
    out.events.append(KernelEvent(KIND, "node", said[:240], first.no, count=len(killed)))
    out.claimed.update(ln.no for ln in seen)
    return out
