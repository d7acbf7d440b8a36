"""A fake Linux RDMA tree (``/sys/class/infiniband``, the PCI functions it links to, ``/sys/module``,
``/sys/class/net``), laid out as the kernel writes it, for the NIC reader and the checks on it."""

from __future__ import annotations

import os
from pathlib import Path

COUNTERS = {"symbol_error": 0, "link_downed": 1, "port_rcv_errors": 0, "excessive_buffer_overrun_errors": 0,
            "link_error_recovery": 0, "port_xmit_data": 123456789}


def fake_port(root: Path, dev: str, port: int, state: str = "4: ACTIVE", phys: str = "5: LinkUp",
              rate: str = "400 Gb/sec (4X NDR)", layer: str = "InfiniBand") -> None:
    p = root / "sys" / "class" / "infiniband" / dev / "ports" / str(port)
    (p / "counters").mkdir(parents=True)
    for name, text in (("state", state), ("phys_state", phys), ("rate", rate), ("link_layer", layer)):
        (p / name).write_text(text + "\n")
    for name, value in COUNTERS.items():
        (p / "counters" / name).write_text(f"{value}\n")


def fake_hca(root: Path, dev: str, bus: str, hca: str = "MT4129", netdev: str | None = None, **port: str) -> None:
    """One adapter as the kernel lays it out: class entry, the PCI function it links to, ports."""
    pci = root / "sys" / "devices" / "pci0000:00" / bus
    (pci / "net").mkdir(parents=True)
    (pci / "numa_node").write_text("1\n")
    if netdev:
        (pci / "net" / netdev).mkdir()
    cls = root / "sys" / "class" / "infiniband" / dev
    cls.mkdir(parents=True)
    os.symlink(pci, cls / "device")
    for name, text in (("hca_type", hca), ("fw_ver", "28.39.1002"), ("node_guid", "b83f:d203:00a1:b2c4")):
        (cls / name).write_text(text + "\n")
    fake_port(root, dev, 1, **port)


def rail_node(root: Path, nics: int = 8, peer_memory: bool = True, port_of: dict[str, dict[str, str]] | None = None
              ) -> Path:
    """A rail-optimised node's NICs: ``nics`` ConnectX-7 at 400 Gb/s; ``port_of={"mlx5_3": {...}}``
    changes one port; nvidia_peermem loaded unless told otherwise."""
    for i in range(nics):
        fake_hca(root, f"mlx5_{i}", f"0000:{0x19 + 0x10 * i:02x}:00.0", **(port_of or {}).get(f"mlx5_{i}", {}))
    if peer_memory:
        (root / "sys" / "module" / "nvidia_peermem").mkdir(parents=True)
    return root
