"""The host: CPU, sockets, NUMA, memory, OS. Always present, GPU or not."""

from __future__ import annotations

import platform
import socket
import sys
from pathlib import Path

import psutil

from gpuvet import __version__
from gpuvet.backends.base import Backend
from gpuvet.backends.readings import HostInfo, Inventory, SoftwareInfo, Unavailable
from gpuvet.node.model import Endpoint, EndpointKind, Host, Link, LinkKind, Node


def _cpuinfo() -> list[str]:
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _cpu_model(lines: list[str]) -> str | Unavailable:
    for line in lines:
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or Unavailable("no model name in /proc/cpuinfo")


def _sockets(lines: list[str]) -> int | Unavailable:
    ids = {line.split(":", 1)[1].strip() for line in lines if line.startswith("physical id")}
    return len(ids) if ids else Unavailable("no 'physical id' in /proc/cpuinfo")


def _numa_nodes() -> int | Unavailable:
    nodes = list(Path("/sys/devices/system/node").glob("node[0-9]*"))
    return len(nodes) if nodes else Unavailable("no /sys/devices/system/node")


def read_host_info() -> HostInfo:
    lines = _cpuinfo()
    cores = psutil.cpu_count(logical=False)
    threads = psutil.cpu_count(logical=True)
    return HostInfo(
        hostname=socket.gethostname(),
        cpu_model=_cpu_model(lines),
        sockets=_sockets(lines),
        cores_physical=cores if cores else Unavailable("psutil could not count cores"),
        threads_logical=threads if threads else Unavailable("psutil could not count threads"),
        numa_nodes=_numa_nodes(),
        memory_bytes=int(psutil.virtual_memory().total),
        os=f"{platform.system()} {platform.release()}",
        kernel=platform.version(),
        python=sys.version.split()[0],
    )


def host_node(info: HostInfo, modules: tuple = ()) -> Node:  # type: ignore[type-arg]
    count = info.sockets if isinstance(info.sockets, int) else 1
    sockets = tuple(Endpoint(f"cpu{s}", EndpointKind.SOCKET) for s in range(count))
    links = tuple(Link(a.id, b.id, LinkKind.SMP, 1, None)
                  for i, a in enumerate(sockets) for b in sockets[i + 1:])
    host = Host(count, None, info.memory_bytes if isinstance(info.memory_bytes, int) else None,
                info.cpu_model if isinstance(info.cpu_model, str) else None)
    return Node(info.hostname, modules, sockets, links, host)


class HostBackend(Backend):
    """No GPU modules: the host alone, with a note saying why no module was found."""

    name = "host"
    simulated = False

    def __init__(self, why_no_modules: str) -> None:
        self.why_no_modules = why_no_modules
        self._info = read_host_info()

    def inventory(self) -> Inventory:
        software = SoftwareInfo(__version__, Unavailable(self.why_no_modules),
                                Unavailable(self.why_no_modules), Unavailable(self.why_no_modules))
        note = f"No GPU module found ({self.why_no_modules}); showing the host only."
        hint = "Try the simulated supernode: gpuvet inventory --sim hgx-h200-8"
        return Inventory(self.name, False, (), self._info, software, (note, hint))

    def node(self) -> Node:
        return host_node(self._info)

