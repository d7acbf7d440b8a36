"""How busy the host is, and how many threads a CPU benchmark should therefore own.

A 2-core machine with one other busy process runs a 2-thread GEMM 30× slower than a 1-thread
one (the two threads wait on each other while one is descheduled), so the CPU engine chooses
its thread count from the CPUs this process may run on (the affinity mask, not
``os.cpu_count()``) minus what other processes are using right now, and every CPU figure says
how it was taken. A busy host is a reason to distrust the CPU's figures, not a fault of it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

BUSY_CPUS = 0.5  # other processes using half a CPU or more make the host "busy"


@dataclass(frozen=True)
class BusyProcess:
    pid: int
    name: str
    cpus: float  # CPUs' worth of time it used during the window


@dataclass(frozen=True)
class HostLoad:
    """What other processes used of this process's CPUs during a short window."""

    cpus: int  # CPUs this process may run on
    other_cpus: float  # CPUs' worth used by other processes
    load_1m: float | None
    top: tuple[BusyProcess, ...] = ()
    window_s: float = 0.0

    @property
    def busy(self) -> bool:
        return self.other_cpus >= BUSY_CPUS

    @property
    def free_cpus(self) -> float:
        return max(0.0, self.cpus - self.other_cpus)

    def describe(self) -> str:
        """One line a person can act on."""
        text = f"other processes used {self.other_cpus:.1f} of the {self.cpus} CPUs this run may use"
        if self.load_1m is not None:
            text += f" (load average {self.load_1m:.2f})"
        if self.top:
            text += "; busiest: " + ", ".join(f"{p.name} (pid {p.pid}, {p.cpus:.1f} CPU)" for p in self.top)
        return text


def affinity_cpus() -> int:
    """CPUs this process may run on (a container's or taskset's mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _process_times() -> dict[int, tuple[str, float]]:
    import psutil  # only where the host is read: a simulated node's benchmarks never load it

    out: dict[int, tuple[str, float]] = {}
    for proc in psutil.process_iter(["name", "cpu_times"]):
        times = proc.info.get("cpu_times")
        if times is not None:
            out[proc.pid] = (str(proc.info.get("name") or "?"), float(times.user + times.system))
    return out


def read_host_load(window_s: float = 0.25, top: int = 3) -> HostLoad:
    """CPU time other processes used over ``window_s`` (process CPU-time deltas; this process and
    its threads excluded), and the busiest of them."""
    me = os.getpid()
    before = _process_times()
    start = time.perf_counter()
    time.sleep(window_s)
    after = _process_times()
    elapsed = max(time.perf_counter() - start, 1e-3)
    used = []
    for pid, (name, seconds) in after.items():
        if pid == me or pid not in before:
            continue
        delta = seconds - before[pid][1]
        if delta > 0:
            used.append(BusyProcess(pid, name, delta / elapsed))
    used.sort(key=lambda p: p.cpus, reverse=True)
    cpus = affinity_cpus()
    other = min(float(cpus), sum(p.cpus for p in used))
    try:
        load: float | None = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = None
    busiest = tuple(used[:top])
    return HostLoad(cpus, round(other, 2), load, busiest, elapsed)


def choose_threads(load: HostLoad, physical_cores: int | None = None) -> int:
    """One thread per CPU that no other process is using, never more than the physical cores
    in reach (SMT siblings share the FMA units), at least one."""
    ceiling = load.cpus if not physical_cores else min(load.cpus, physical_cores)
    return max(1, min(ceiling, int(load.free_cpus + 0.5)))


@dataclass(frozen=True)
class HostPlacement:
    """Whether the host holds the modules back: its CPU use, and the NUMA nodes of the CPUs this
    process may run on (empty when the host does not say)."""

    cpu_percent: float  # whole host, over a short window
    process_numa: frozenset[int]


def read_host_placement(window_s: float = 0.5, sys_node: Path = Path("/sys/devices/system/node")) -> HostPlacement:
    import psutil

    load = float(psutil.cpu_percent(interval=window_s))
    try:
        cpus = psutil.Process().cpu_affinity() or []
    except (AttributeError, psutil.Error):
        cpus = []
    numa_of_cpu = cpu_numa(sys_node)
    return HostPlacement(load, frozenset(n for c in cpus if (n := numa_of_cpu.get(c)) is not None))


def cpu_numa(sys_node: Path = Path("/sys/devices/system/node")) -> dict[int, int]:
    """CPU -> NUMA node, from the kernel's cpulist of each node ('0-3,8-11')."""
    out = {}
    for node in sys_node.glob("node[0-9]*"):
        try:
            text = (node / "cpulist").read_text().strip()
        except OSError:
            continue
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            if lo.isdigit():
                for c in range(int(lo), int(hi or lo) + 1):
                    out[c] = int(node.name[4:])
    return out
