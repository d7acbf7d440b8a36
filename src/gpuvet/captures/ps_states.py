"""Issue 46 (R14D): a process listing (``ps aux``, ``ps -el``, ``ps -eo pid,stat,wchan:32,cmd``, ``top``'s task
table) in which a GPU task sits in uninterruptible sleep (state ``D``, ``Ds``, ``D+``, ``Dsl``): nvidia-smi,
nvidia-persistenced, nvidia-container-cli, the DCGM host engine, or any task whose wait channel is in the GPU
driver (``os_acquire_mutex``, ``_nv012345rm``, ``uvm_…``). It is the fact the kernel's hung-task watchdog reports
(kernel_host's driver_hung_task) where the listing shows it lasts: in D past the watchdog's 120 s (an ETIME column)
or in two listings. One snapshot is a warn of its own (driver_task_blocked): nvidia-smi also waits in D for seconds
while a driver starts, so one listing shows a task blocked, not a wedge (review 67b F8).

A listing whose GPU tasks all run or sleep normally is read (its rows claimed, a note), never refused; ``ps -ef``
prints no state, so its rows are read and said to show none."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuvet.captures.kernel_places import NO_BUS
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

KIND = "gpu_task_uninterruptible"  # kernel_messages.yaml's kind
ONCE = "gpu_task_blocked_once"  # one snapshot: blocked at that moment (driver_task_blocked, warn)
# the GPU stack's own programs (a basename's start: nvidia-persistenced is cut to 15 characters in comm columns)
_GPU_TASK = re.compile(r"(?:^|/)(?:nvidia-(?:smi|persistenc\w*|container-\w+|docker\w*|cuda-mps-\w+|modprobe|"
                       r"debugdump|fabricmanag\w*|powerd|ctk|bug-report\S*)|nv-hostengine|nv-fabricmanager|"
                       r"dcgm\w*|nvidia_gpu_exporter|rocm-smi|amd-smi)\b")
# a wait channel in a GPU driver's own code (review 67b F1; the drivers' sources): nvidia.ko's os-interface.c
# (os_acquire_mutex, os_acquire_semaphore, os_acquire_rwlock_*, os_delay*), its nv_*/nvidia_* entry points and the
# obfuscated _nv012345rm symbols, nvidia-uvm's uvm_*, nouveau's nvkm_*/nouveau_*, amdgpu's amdgpu_* and amdkfd's
# kfd_*. Not os_/rm_ alone (other drivers use them) nor 'nv' alone (nvme_*). ps -el prints 6 characters of it.
_GPU_WCHAN = re.compile(r"^(?:os_acquire_\w+|os_delay\w*|_nv\d{6}rm|nv_\w+|nvidia_\w+|uvm_\w+|nvkm_\w+|nouveau_\w+|"
                        r"amdgpu_\w+|kfd_\w+)$")
_WCHAN_CUT = 6  # ps -l's WCHAN column: a name cut to this width is matched as the start of one above
_NV_CUT = re.compile(r"^_nv\d{3}$")  # an obfuscated _nv012345rm cut to 6
_GPU_WCHAN_STARTS = ("os_acquire_", "os_delay", "nv_", "nvidia_", "uvm_", "nvkm_", "nouveau_", "amdgpu_",
                     "kfd_")
# ps aux's row (also the BSD 'u' forms): USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND, with or without
# its header (a 'ps aux | grep nvidia' drops it)
_AUX = re.compile(r"^\s*(?P<user>\S+)\s+(?P<pid>\d+)\s+\d+(?:\.\d+)?\s+\d+(?:\.\d+)?\s+\d+\s+\d+\s+\S+\s+"
                  r"(?P<stat>[DRSTtZXIWKPNLsl<+]{1,8})\s+\S+(?:\s\d{2})?\s+[\d:.-]+\s+(?P<cmd>\S.*)$")
_HEADER = re.compile(r"^\s*(?:[A-Z%+]+\s+)*PID\s+(?:[A-Z%+]+\s+)*(?:COMMAND|CMD|COMM|ARGS)\b")
_STATE_COLS = ("STAT", "S", "STATE")
_ELAPSED_COLS = ("ELAPSED", "ETIME")
_ETIME = re.compile(r"^(?:(?:(\d{1,5})-)?(\d{1,2}):)?(\d{1,2}):(\d{2})$")
HUNG_AFTER_S = 120  # the kernel's hung_task_timeout_secs default: a task in D this long is what its watchdog reports
_CMD_COLS = ("COMMAND", "CMD", "COMM", "ARGS")
WORDS = ("PID", "nvidia", "nv-hostengine", "dcgm", "smi")
_ROW_WORDS = ("nvidia", "nv-hostengine", "dcgm", "rocm-smi", "amd-smi")


@dataclass(frozen=True)
class Task:
    """One row: the task's pid, its state letters, its wait channel where a column gives one, its command."""

    pid: str
    stat: str
    wchan: str
    cmd: str
    line: Line
    elapsed: str = ""  # ps' ETIME/ELAPSED where a column gives it


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with one event for the GPU tasks a listing shows in uninterruptible sleep (the first quoted, the
    others counted), on no module (a listing names none); a listing's other rows claimed."""
    if marks is not None and not any(marks.may(w) for w in WORDS):
        return out
    tasks, heads = _tasks(lines, marks)
    gpu = [t for t in tasks if _GPU_TASK.search(t.cmd.split()[0] if t.cmd.split() else "") or _in_driver(t.wchan)]
    if not gpu:
        return out
    out.claimed.update([t.line.no for t in tasks] + heads)
    stuck = [t for t in gpu if t.stat.startswith("D")]
    if not stuck:
        said = "none in uninterruptible sleep (D)" if all(t.stat for t in gpu) else \
            "the listing prints no process state (ps -ef): whether one hangs is not shown"
        out.notes.append(f"process listing: {len(gpu)} GPU task(s) ({', '.join(_names(gpu))}), {said}")
        return out
    from gpuvet.captures.kernel import KernelEvent
    from gpuvet.captures.kernel_host import HUNG

    said = ", ".join(f"{n} (pid {t.pid}, {t.stat})" for n, t in zip(_names(stuck), stuck, strict=True))
    if (hung := next((e for e in out.events if e.kind == HUNG), None)) is not None:  # review 67b F8: one fact
        same = " (the same pid)" if any(f":{t.pid} blocked" in hung.text for t in stuck) else ""
        out.notes.append(f"process listing: {len(stuck)} GPU task(s) in uninterruptible sleep (D): {said}: the "
                         f"wedge the kernel's hung-task report on line {hung.line} names{same}, read there")
        return out
    lasting = [t for t in stuck if _lasted(t, stuck)]
    if not lasting:  # review 67b F8: one snapshot shows no hang that lasts, yet a task blocked in the driver (warn)
        out.events.append(KernelEvent(ONCE, NO_BUS, stuck[0].line.text.strip()[:240], stuck[0].line.no,
                                      count=len(stuck)))
        out.notes.append(f"process listing: {len(stuck)} GPU task(s) in uninterruptible sleep (D) in one snapshot: "
                         f"{said}: blocked in the driver at that moment; a wedge lasts: list again "
                         "(ps -o pid,stat,etime,wchan,cmd) or read dmesg for the kernel's 'blocked for more than' report")
        return out
    first = lasting[0]
    out.events.append(KernelEvent(KIND, NO_BUS, first.line.text.strip()[:240], first.line.no, count=len(lasting)))
    out.notes.append(f"process listing: {len(stuck)} GPU task(s) in uninterruptible sleep (D): {said}; in D for "
                     "minutes or in two listings: " + ", ".join(f"pid {t.pid}" for t in lasting))
    return out


def _lasted(task: Task, stuck: list[Task]) -> bool:
    """``task`` stays in D past the kernel's hung-task timeout (its elapsed column) or in a second listing."""
    return _seconds(task.elapsed) >= HUNG_AFTER_S or any(t.pid == task.pid and t.line.no != task.line.no
                                                         for t in stuck)


def _seconds(elapsed: str) -> int:
    """ps' etime ('[[dd-]hh:]mm:ss') in seconds; 0 where none or unread."""
    if (m := _ETIME.match(elapsed)) is None:
        return 0
    days, hours, minutes, secs = (int(g) if g else 0 for g in m.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + secs


def _in_driver(wchan: str) -> bool:
    """``wchan`` is a GPU driver's function, whole or cut to ps -l's column width (the start of one)."""
    if _GPU_WCHAN.match(wchan):
        return True
    if len(wchan) != _WCHAN_CUT:
        return False
    return bool(_NV_CUT.match(wchan)) or any(p.startswith(wchan) or wchan.startswith(p) for p in _GPU_WCHAN_STARTS)


def _names(tasks: list[Task]) -> list[str]:
    """Each task's program: a path's last part; a kernel thread's name (kworker/u64:2) whole (review 67b F1)."""
    return [_name(t.cmd.split()[0]) if t.cmd.split() else t.pid for t in tasks]


def _name(program: str) -> str:
    return program.rsplit("/", 1)[-1] if program.startswith(("/", ".")) else program


def _tasks(lines: list[Line], marks: Marks | None) -> tuple[list[Task], list[int]]:
    """The rows of every listing (under a header its columns by name, else ps aux's row form), and the line
    numbers of the headers that had rows."""
    found: dict[int, Task] = {}
    heads: list[int] = []
    for i in (i for i in holding(lines, ("PID",), marks) if _HEADER.match(lines[i].text)):
        rows = _under(lines, i)
        found.update((t.line.no, t) for t in rows)
        heads += [lines[i].no] if rows else []
    for i in holding(lines, _ROW_WORDS, marks):  # headerless, a row matters only as a GPU task's
        ln = lines[i]
        if ln.no not in found and (m := _AUX.match(ln.text)) is not None:
            found[ln.no] = Task(m.group("pid"), m.group("stat"), "", m.group("cmd").strip(), ln)
    return [found[n] for n in sorted(found)], heads


def _under(lines: list[Line], head: int) -> list[Task]:
    """The rows below a header, split into its columns (the command last, whole); a row that does not fit ends it."""
    cols = lines[head].text.split()
    state = next((cols.index(c) for c in _STATE_COLS if c in cols), None)
    cmd = next((cols.index(c) for c in _CMD_COLS if c in cols), None)
    if cmd is None or cmd != len(cols) - 1:
        return []
    wchan = cols.index("WCHAN") if "WCHAN" in cols else None
    elapsed = next((cols.index(c) for c in _ELAPSED_COLS if c in cols), None)
    pid = cols.index("PID")
    rows: list[Task] = []
    for ln in lines[head + 1:]:
        parts = ln.text.split(None, len(cols) - 1)
        if len(parts) < len(cols) or not parts[pid].isdigit() or (
                state is not None and not re.fullmatch(r"[A-Za-z<+]{1,8}", parts[state])):
            break
        rows.append(Task(parts[pid], parts[state] if state is not None else "", parts[wchan] if wchan is not None
                         else "", parts[cmd].strip(), ln, parts[elapsed] if elapsed is not None else ""))
    return rows
