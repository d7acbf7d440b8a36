"""What the live vendor backends (NVIDIA, AMD) build the same way from their readings.

Each vendor reads its own library; once a reading is in hand, the inventory's lost-module note,
a module's own PCIe link and the host record are vendor-free, so they are written once here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from gpuvet.backends.base import ModuleLost
from gpuvet.backends.readings import HostInfo, Inventory, ModuleInfo, SoftwareInfo
from gpuvet.node.model import PCIE_LANE_GBPS, Host, Link, LinkKind


class LiveDevice(Protocol):
    """A module as a live backend enumerated it."""

    id: str
    bus_id: str
    uuid: str


D = TypeVar("D", bound=LiveDevice)


def inventory_of(backend: str, devices: Sequence[D], read: Callable[[D], ModuleInfo], host: HostInfo,
                 software: SoftwareInfo) -> Inventory:
    """Every module that answers; one that stops answering while read is named in a note, not dropped silently."""
    modules, notes = [], []
    for d in devices:
        try:
            modules.append(read(d))
        except ModuleLost as exc:
            notes.append(f"{d.id} ({d.bus_id}, {d.uuid}) was lost while being read: {exc.what}.")
    return Inventory(backend, False, tuple(modules), host, software, tuple(notes))


def own_pcie_link(module: str, gen: object, width: object) -> Link | None:
    """A module's link to its upstream port at its maximum generation and current width.
    The current generation drops at idle to save power, so the capability is the maximum; the
    width does not drop at idle, so a narrow width is a real finding. An unread width is unknown,
    not x16: no link (and no GB/s) is claimed for it."""
    if not isinstance(width, int):
        return None
    gen_i = gen if isinstance(gen, int) else None
    return Link(module, "?", LinkKind.PCIE, width, PCIE_LANE_GBPS.get(gen_i) if gen_i else None, gen_i)


def host_of(info: HostInfo, sockets: int) -> Host:
    """The host record of a live node: what the host reading gave, None where it could not tell."""
    return Host(sockets, None, info.memory_bytes if isinstance(info.memory_bytes, int) else None,
                info.cpu_model if isinstance(info.cpu_model, str) else None)
