"""The node as data: modules, other endpoints, physical links, host.

A ``Node`` is what a spec declares *and* what a backend finds; the two are compared by
``node.diff``. Links are physical and symmetric: ``bandwidth_gbps`` is per direction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cached_property

from gpuvet.node.catalog import ModuleModel

# Per-lane, per-direction PCIe bandwidth after line encoding (GB/s).
PCIE_LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


class EndpointKind(StrEnum):
    MODULE = "module"
    FABRIC_SWITCH = "fabric_switch"  # NVSwitch and the like
    PCIE_SWITCH = "pcie_switch"
    HOST_BRIDGE = "host_bridge"
    SOCKET = "socket"  # a CPU socket and its memory: where host<->module traffic ends
    NIC = "nic"


class LinkKind(StrEnum):
    NVLINK = "nvlink"
    XGMI = "xgmi"
    SERDES = "serdes"
    PCIE = "pcie"
    SMP = "smp"  # inter-socket (UPI, xGMI between CPUs)

    @property
    def is_fabric(self) -> bool:
        """Module-to-module fabric (as opposed to the host's PCIe/SMP tree)."""
        return self in (LinkKind.NVLINK, LinkKind.XGMI, LinkKind.SERDES)


@dataclass(frozen=True)
class Module:
    """One compute module: its model's figures and where it sits."""

    id: str
    model: ModuleModel
    bus_id: str | None = None
    uuid: str | None = None
    serial: str | None = None  # the board serial where known (a spec may set it; the ledger follows it)


@dataclass(frozen=True)
class Endpoint:
    id: str
    kind: EndpointKind
    label: str | None = None  # e.g. a NIC's device name
    model: str | None = None  # a NIC's model (node/nic_catalog.py), where declared


@dataclass(frozen=True)
class Link:
    """A physical link; ``lane_gbps`` is None when the per-lane speed is not known.

    ``width_known`` is False where no source gave the width (an N/A from the driver, a topology
    matrix without a module list): ``width`` then holds a nominal x16 for modelled capacities
    only, and no comparison treats it as read."""

    a: str
    b: str
    kind: LinkKind
    width: int
    lane_gbps: float | None
    gen: int | None = None
    up: bool = True
    width_known: bool = True

    @property
    def bandwidth_gbps(self) -> float | None:
        if self.lane_gbps is None:
            return None
        return self.width * self.lane_gbps

    @property
    def ends(self) -> frozenset[str]:
        return frozenset((self.a, self.b))

    def other(self, end: str) -> str:
        return self.b if end == self.a else self.a

    def relabel(self, mapping: dict[str, str]) -> Link:
        return replace(self, a=mapping.get(self.a, self.a), b=mapping.get(self.b, self.b))


@dataclass(frozen=True)
class Host:
    sockets: int = 1
    cores_per_socket: int | None = None
    memory_bytes: int | None = None
    cpu_model: str | None = None


@dataclass(frozen=True)
class _Index:
    """Lookups by id, built once per node: a node of 576 modules asks them millions of times."""

    kind: dict[str, EndpointKind]
    module: dict[str, Module]
    links_of: dict[str, tuple[Link, ...]]
    module_ids: tuple[str, ...]
    sockets: tuple[str, ...]


@dataclass(frozen=True)
class Node:
    """A node; ``pcie_known``/``fabric_known`` are False when a source could not see them.

    A node never changes (faults make a new one), so what is derived from it — the id index,
    routes, the link matrix — is computed once and kept in ``memo`` (not part of equality, not
    pickled)."""

    name: str
    modules: tuple[Module, ...]
    endpoints: tuple[Endpoint, ...]
    links: tuple[Link, ...]
    host: Host
    pcie_known: bool = True
    fabric_known: bool = True
    # pairs whose PCIe relation the source could not see (topo -m prints NV# instead)
    unseen_relations: frozenset[frozenset[str]] = frozenset()
    # modules pass on traffic between other modules (a torus of SerDes links); never NVLink/xGMI
    modules_forward: bool = False

    @cached_property
    def memo(self) -> dict[str, object]:
        """Derived data keyed by who derives it (see ``node.memo.per_node``)."""
        return {}

    @cached_property
    def _index(self) -> _Index:
        kind: dict[str, EndpointKind] = {}
        module: dict[str, Module] = {}
        for m in self.modules:
            module.setdefault(m.id, m)
            kind.setdefault(m.id, EndpointKind.MODULE)
        for e in self.endpoints:
            kind.setdefault(e.id, e.kind)
        links: dict[str, list[Link]] = {}
        for link in self.links:
            links.setdefault(link.a, []).append(link)
            if link.b != link.a:
                links.setdefault(link.b, []).append(link)
        return _Index(kind, module, {k: tuple(v) for k, v in links.items()}, tuple(m.id for m in self.modules),
                      tuple(e.id for e in self.endpoints if e.kind is EndpointKind.SOCKET))

    def __getstate__(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if k not in ("memo", "_index")}

    @property
    def module_ids(self) -> list[str]:
        return list(self._index.module_ids)

    def module(self, module_id: str) -> Module:
        return self._index.module[module_id]  # KeyError(module_id) when absent

    def endpoint_ids(self) -> list[str]:
        return self.module_ids + [e.id for e in self.endpoints]

    def kind_of(self, endpoint_id: str) -> EndpointKind:
        return self._index.kind[endpoint_id]  # KeyError(endpoint_id) when absent

    def links_of(self, endpoint_id: str) -> list[Link]:
        return list(self._index.links_of.get(endpoint_id, ()))

    def pcie_link(self, module_id: str) -> Link | None:
        """The module's own PCIe link to its parent (switch, bridge or socket)."""
        for link in self.links_of(module_id):
            if link.kind is LinkKind.PCIE:
                return link
        return None

    def fabric_links(self) -> list[Link]:
        return [link for link in self.links if link.kind.is_fabric]

    def sockets(self) -> list[str]:
        return list(self._index.sockets)


HOST = "host"  # a transfer endpoint meaning host memory


@dataclass(frozen=True)
class Transfer:
    """Bytes from one endpoint to another: a module id, or HOST."""

    src: str
    dst: str
    nbytes: int
    pinned: bool = True  # host memory pinned (page-locked); ignored between modules
