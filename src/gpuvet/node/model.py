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


@dataclass(frozen=True)
class Endpoint:
    id: str
    kind: EndpointKind
    label: str | None = None  # e.g. a NIC's device name


@dataclass(frozen=True)
class Link:
    """A physical link; ``lane_gbps`` is None when the per-lane speed is not known."""

    a: str
    b: str
    kind: LinkKind
    width: int
    lane_gbps: float | None
    gen: int | None = None
    up: bool = True

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
class Node:
    """A node; ``pcie_known``/``fabric_known`` are False when a source could not see them."""


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

    @property
    def module_ids(self) -> list[str]:
        return [m.id for m in self.modules]

    def module(self, module_id: str) -> Module:
        for m in self.modules:
            if m.id == module_id:
                return m
        raise KeyError(module_id)

    def endpoint_ids(self) -> list[str]:
        return self.module_ids + [e.id for e in self.endpoints]

    def kind_of(self, endpoint_id: str) -> EndpointKind:
        if any(m.id == endpoint_id for m in self.modules):
            return EndpointKind.MODULE
        for e in self.endpoints:
            if e.id == endpoint_id:
                return e.kind
        raise KeyError(endpoint_id)

    def links_of(self, endpoint_id: str) -> list[Link]:
        return list(self._links_by_endpoint.get(endpoint_id, ()))

    @cached_property
    def _links_by_endpoint(self) -> dict[str, tuple[Link, ...]]:
        """Built once per node: telemetry asks for a module's links at every sample."""
        index: dict[str, list[Link]] = {}
        for link in self.links:
            index.setdefault(link.a, []).append(link)
            if link.b != link.a:
                index.setdefault(link.b, []).append(link)
        return {k: tuple(v) for k, v in index.items()}

    def pcie_link(self, module_id: str) -> Link | None:
        """The module's own PCIe link to its parent (switch, bridge or socket)."""
        for link in self.links_of(module_id):
            if link.kind is LinkKind.PCIE:
                return link
        return None

    def fabric_links(self) -> list[Link]:
        return [link for link in self.links if link.kind.is_fabric]

    def sockets(self) -> list[str]:
        return [e.id for e in self.endpoints if e.kind is EndpointKind.SOCKET]


HOST = "host"  # a transfer endpoint meaning host memory


@dataclass(frozen=True)
class Transfer:
    """Bytes from one endpoint to another: a module id, or HOST."""

    src: str
    dst: str
    nbytes: int
    pinned: bool = True  # host memory pinned (page-locked); ignored between modules
