"""The one reader of the Linux RDMA tree: ``/sys/class/infiniband/<dev>`` (hca_type, fw_ver,
node_guid, device -> the PCI function, device/net/<netdev>) and each
``ports/<n>/{state,phys_state,rate,link_layer,counters/*}``, and ``/sys/module`` for the
peer-memory module GPUDirect RDMA needs. Tests give a fake tree under ``root``."""

from __future__ import annotations

import re
from pathlib import Path

from gpuvet.backends.nic_readings import ERROR_COUNTERS, TRAFFIC_COUNTERS, Nic, NicPort, NicReadings
from gpuvet.backends.readings import Unavailable

ROOT = Path("/")  # where /sys is: tests give a fake tree
MAX_DEVICES = 256  # more RDMA devices than any node has: a bound on a strange tree
MAX_PORTS = 16
PEER_MEMORY_MODULES = ("nvidia_peermem", "nv_peer_mem", "amdgpu_peermem")  # NVIDIA's (in-driver, older), AMD's
_RATE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*Gb/sec(?:\s*\((\d+X)[^)]*\))?")


def _text(path: Path, limit: int = 256) -> str | None:
    try:
        with path.open("rb") as f:
            return f.read(limit).decode("ascii", "replace").strip()
    except OSError:
        return None


def _state(text: str | None) -> str:
    """sysfs writes "4: ACTIVE" / "5: LinkUp"; the word is what is judged."""
    return text.split(":", 1)[-1].strip() if text else "unknown"


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def _port(path: Path) -> NicPort:
    rate = _RATE.search(_text(path / "rate") or "")
    counters = {name: value for name in ERROR_COUNTERS
                if (value := _int(_text(path / "counters" / name))) is not None}
    traffic = {name: value for name in TRAFFIC_COUNTERS
               if (value := _int(_text(path / "counters" / name))) is not None}
    return NicPort(int(path.name), _state(_text(path / "state")), _state(_text(path / "phys_state")),
                   float(rate.group(1)) if rate else None, rate.group(2) if rate and rate.group(2) else None,
                   _text(path / "link_layer") or "unknown", counters, traffic)


def _nic(path: Path) -> Nic:
    device = path / "device"
    bus = device.resolve().name if device.exists() else None
    ports = sorted((p for p in (path / "ports").iterdir() if p.name.isdigit()), key=lambda p: int(p.name)) \
        if (path / "ports").is_dir() else []
    net = device / "net"
    netdevs = tuple(sorted(p.name for p in net.iterdir())) if net.is_dir() else ()
    numa = _text(device / "numa_node")
    return Nic(path.name, _text(path / "hca_type"), bus, tuple(_port(p) for p in ports[:MAX_PORTS]),
               _text(path / "fw_ver"), _text(path / "node_guid"), netdevs,
               int(numa) if numa and numa.lstrip("-").isdigit() and int(numa) >= 0 else None)


def peer_memory(root: Path | None = None) -> str | None:
    root = ROOT if root is None else root
    modules = root / "sys" / "module"
    return next((m for m in PEER_MEMORY_MODULES if (modules / m).is_dir()), None)


def interfaces(root: Path | None = None) -> tuple[str, ...] | None:
    root = ROOT if root is None else root
    net = root / "sys" / "class" / "net"
    try:
        return tuple(sorted(p.name for p in net.iterdir()))[:MAX_DEVICES * 4] if net.is_dir() else None
    except OSError:
        return None


def read_nics(root: Path | None = None) -> NicReadings | Unavailable:
    """Every RDMA device and its ports; no /sys/class/infiniband is a node without any (an empty
    list), a tree that cannot be listed is Unavailable."""
    root = ROOT if root is None else root
    tree = root / "sys" / "class" / "infiniband"
    if not tree.exists():
        return NicReadings((), peer_memory(root), "sysfs", interfaces(root))
    try:
        devices = sorted(tree.iterdir())[:MAX_DEVICES]
    except OSError as exc:
        return Unavailable(f"cannot list {tree}: {exc.strerror}")
    return NicReadings(tuple(_nic(d) for d in devices), peer_memory(root), "sysfs", interfaces(root))
