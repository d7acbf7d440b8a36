"""Turn a ``NodeSpec`` into a ``Node``: expand module groups, fabric and PCIe generators,
check that every name a link uses exists."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from gpuvet.errors import SpecError
from gpuvet.node.catalog import ModuleModel, get_model
from gpuvet.node.model import (
    PCIE_LANE_GBPS,
    Endpoint,
    EndpointKind,
    Host,
    Link,
    LinkKind,
    Module,
    Node,
)
from gpuvet.node.spec import (
    CustomModelSpec,
    FullMeshFabricSpec,
    GroupedFabricSpec,
    LinkClassSpec,
    ModuleGroupSpec,
    ModuleSpec,
    NodeSpec,
    PcieTreeSpec,
    SwitchedFabricSpec,
)


def custom_model(custom: CustomModelSpec) -> ModuleModel:
    return ModuleModel(
        name=custom.name, vendor="custom", memory_bytes=custom.memory_bytes,
        memory_bw_gbps=custom.memory_bw_gbps, tflops=dict(custom.tflops), fabric=custom.fabric,
        fabric_links=custom.fabric_links, fabric_lane_gbps=custom.fabric_lane_gbps,
        pcie_gen=custom.pcie_gen, pcie_width=custom.pcie_width, tdp_w=custom.tdp_w,
        slowdown_c=custom.slowdown_c, shutdown_c=custom.shutdown_c,
        sources={"*": "declared in the spec (custom)"},
    )


def _model_of(model: str | None, custom: CustomModelSpec | None, where: str) -> ModuleModel:
    if custom is not None:
        return custom_model(custom)
    if model is None:
        raise SpecError("a module needs `model:` (a catalog name) or `custom:` figures", where=where,
                        fix="add `model: H200-SXM`, for example.")
    return get_model(model, where=where)


@dataclass(frozen=True)
class _Placed:
    module: Module
    socket: int | None
    attach: str | None


def _modules(spec: NodeSpec, where: str) -> list[_Placed]:
    items: list[ModuleSpec]
    if isinstance(spec.modules, ModuleGroupSpec):
        group = spec.modules
        items = [ModuleSpec(id=f"{group.prefix}{i}", model=group.model, custom=group.custom)
                 for i in range(group.count)]
    else:
        items = list(spec.modules)
    seen: set[str] = set()
    placed = []
    for i, item in enumerate(items):
        if item.id in seen:
            raise SpecError(f"module id {item.id!r} appears twice", where=f"{where}, modules[{i}]",
                            fix="give every module its own id.")
        seen.add(item.id)
        model = _model_of(item.model, item.custom, f"{where}, modules[{i}] ({item.id})")
        placed.append(_Placed(Module(item.id, model, item.bus_id, item.uuid, item.serial), item.socket, item.attach))
    return placed


def _link(a: str, b: str, cls: LinkClassSpec, up: bool = True) -> Link:
    lane = cls.lane_gbps
    if lane is None and cls.kind == "pcie" and cls.gen:
        lane = PCIE_LANE_GBPS[cls.gen]
    return Link(a, b, LinkKind(cls.kind), cls.width, lane, cls.gen, up)


def _pcie(a: str, b: str, gen: int, width: int) -> Link:
    return Link(a, b, LinkKind.PCIE, width, PCIE_LANE_GBPS[gen], gen)


def _host(spec: NodeSpec) -> tuple[list[Endpoint], list[Link]]:
    sockets = [Endpoint(f"cpu{s}", EndpointKind.SOCKET) for s in range(spec.host.sockets)]
    links = []
    if spec.host.socket_link is not None:
        for x, y in itertools.combinations(sockets, 2):
            links.append(_link(x.id, y.id, spec.host.socket_link))
    return sockets, links


def _pcie_tree(tree: PcieTreeSpec | None, placed: list[_Placed], sockets: int
               ) -> tuple[list[Endpoint], list[Link]]:
    gen = tree.gen if tree else None
    per_socket = tree.switches_per_socket if tree else 0
    endpoints: list[Endpoint] = []
    links: list[Link] = []
    parents = [f"cpu{s}" for s in range(sockets)]
    if per_socket:
        parents = [f"pcisw{k}" for k in range(sockets * per_socket)]
        for k, sw in enumerate(parents):
            endpoints.append(Endpoint(sw, EndpointKind.PCIE_SWITCH))
            assert tree is not None
            links.append(_pcie(sw, f"cpu{k // per_socket}", tree.gen, tree.uplink_width))
            for n in range(tree.nics_per_switch):
                nic = f"nic{k * tree.nics_per_switch + n}"
                endpoints.append(Endpoint(nic, EndpointKind.NIC, model=tree.nic_model))
                links.append(_pcie(nic, sw, tree.gen, tree.nic_width))
    per_parent = -(-len(placed) // len(parents)) if placed else 1
    for i, p in enumerate(placed):
        parent = p.attach or (f"cpu{p.socket}" if p.socket is not None and not per_socket
                              else parents[min(i // per_parent, len(parents) - 1)])
        model = p.module.model
        mod_gen = model.pcie_gen or gen or 5
        link_gen = min(mod_gen, gen) if gen else mod_gen
        links.append(_pcie(p.module.id, parent, link_gen, model.pcie_width or 16))
    return endpoints, links


def _fabric(spec: NodeSpec, ids: list[str]) -> tuple[list[Endpoint], list[Link]]:
    fabric = spec.fabric
    if fabric is None:
        return [], []
    if isinstance(fabric, SwitchedFabricSpec):
        switch = Endpoint(fabric.switch, EndpointKind.FABRIC_SWITCH)
        return [switch], [_link(m, fabric.switch, fabric.link) for m in ids]
    if isinstance(fabric, FullMeshFabricSpec):
        return [], [_link(a, b, fabric.link) for a, b in itertools.combinations(ids, 2)]
    assert isinstance(fabric, GroupedFabricSpec)
    if len(ids) % fabric.groups:
        raise SpecError(f"{len(ids)} modules do not split into {fabric.groups} equal groups",
                        where="fabric.groups", fix="make the module count a multiple of groups.")
    size = len(ids) // fabric.groups
    groups = [ids[g * size:(g + 1) * size] for g in range(fabric.groups)]
    links = [_link(a, b, fabric.link) for grp in groups for a, b in itertools.combinations(grp, 2)]
    pairs = [(0, 1)] if fabric.groups == 2 else [(g, (g + 1) % fabric.groups) for g in range(fabric.groups)]
    for g, h in pairs:
        links += [_link(groups[g][k], groups[h][k], fabric.uplink) for k in range(size)]
    return [], links


def _check_names(node_ids: set[str], links: list[Link], where: str) -> None:
    for link in links:
        for end in (link.a, link.b):
            if end not in node_ids:
                raise SpecError(
                    f"a link names {end!r}, which is not a module or endpoint of this node",
                    where=f"{where}, link {link.a}-{link.b}",
                    fix="declare it under `endpoints:` or fix the name.",
                )


def build_node(spec: NodeSpec, where: str = "spec") -> Node:
    """The declared node of ``spec`` (faults are *not* applied here).

    Raises SpecError or CatalogError for inconsistent specs.
    """
    placed = _modules(spec, where)
    ids = [p.module.id for p in placed]
    sockets, host_links = _host(spec)
    pcie_eps, pcie_links = _pcie_tree(spec.pcie, placed, spec.host.sockets)
    if not spec.pcie_known:
        pcie_links = [_unread(link) for link in pcie_links]
    fabric_eps, fabric_links = _fabric(spec, ids)
    extra_eps = [Endpoint(e.id, EndpointKind(e.kind), e.label, e.model) for e in spec.endpoints]
    endpoints = sockets + pcie_eps + fabric_eps
    known = {e.id for e in endpoints}
    endpoints += [e for e in extra_eps if e.id not in known]
    explicit = [_link(ls.between[0], ls.between[1], ls, ls.up) for ls in spec.links]
    if not spec.pcie_known:  # a PCIe link given no speed on an unpublished tree is a placeholder too
        explicit = [_unread(lk) if lk.kind is LinkKind.PCIE and lk.lane_gbps is None and lk.gen is None else lk
                    for lk in explicit]
    if spec.links:  # explicit links describe the module PCIe attachment themselves
        attached = {e for link in explicit if link.kind is LinkKind.PCIE for e in link.ends}
        pcie_links = [link for link in pcie_links if not (link.ends & set(ids) & attached)]
    links = host_links + pcie_links + fabric_links + explicit
    all_ids = set(ids) | {e.id for e in endpoints}
    if len(all_ids) != len(ids) + len(endpoints):
        raise SpecError("a module and an endpoint share an id", where=where, fix="rename one.")
    _check_names(all_ids, links, where)
    host = Host(spec.host.sockets, spec.host.cores_per_socket, spec.host.memory_bytes,
                spec.host.cpu_model)
    return Node(spec.name, tuple(p.module for p in placed), tuple(endpoints), tuple(_dedupe(links)),
                host, spec.pcie_known, spec.fabric_known,
                modules_forward=spec.fabric is not None and spec.fabric.forwards)


def _unread(link: Link) -> Link:
    """A generated PCIe link of a node whose PCIe tree is not published: a placeholder whose
    speed and width no source gave, so routes price it at the kind's typical lane speed, marked
    assumed, and never as a known figure (an assumed Gen5 x16 host path beat a node's real
    fabric links)."""
    return replace(link, lane_gbps=None, gen=None, width_known=False)


def _dedupe(links: list[Link]) -> list[Link]:
    """Later links with the same ends and kind replace earlier ones (explicit beats generated)."""
    by_key: dict[tuple[frozenset[str], LinkKind], Link] = {}
    for link in links:
        by_key[(link.ends, link.kind)] = link
    return list(by_key.values())
