"""Faults declared in a spec, checked against the node and applied to it.

Applying a fault gives the node a simulated backend *finds*; the declared node stays as it
is, so ``diff(declared, found)`` must name exactly the injected faults.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from gpuvet.errors import SpecError
from gpuvet.node.model import EndpointKind, Link, Node
from gpuvet.node.spec import (
    EccRisingFault,
    FabricRegistrationFault,
    FaultSpec,
    LinkDegradedFault,
    LinkDownFault,
    MemClockFlappingFault,
    MissingModuleFault,
    ModuleAddedFault,
    ModuleLostFault,
    NicErrorsFault,
    NicPortDownFault,
    NicRateLowFault,
    PowerCapLowFault,
    SilentCorruptionFault,
    ThermalCreepFault,
    WiringSwapFault,
    XidFault,
)


def _fault_where(where: str, index: int, fault: FaultSpec) -> str:
    return f"{where}, faults[{index}] ({fault.kind})"


def _require_module(node: Node, module_id: str, where: str) -> None:
    if module_id not in node.module_ids:
        shown = ", ".join(node.module_ids[:8]) + (" …" if len(node.modules) > 8 else "")
        raise SpecError(f"names module {module_id!r}, which the node does not have", where=where,
                        fix=f"use one of its modules: {shown}.")


def _require_nic(node: Node, nic: str, where: str) -> None:
    nics = [e.id for e in node.endpoints if e.kind is EndpointKind.NIC]
    if nic not in nics:
        raise SpecError(f"names NIC {nic!r}, which the node does not have", where=where,
                        fix=f"use one of its NICs: {', '.join(nics[:8]) or 'none (pcie.nics_per_switch: 0)'}.")


def find_link(node: Node, a: str, b: str, where: str) -> Link:
    """The link between ``a`` and ``b``; a fabric link is preferred over PCIe if both exist."""
    for end in (a, b):
        if end not in node.endpoint_ids():
            raise SpecError(f"names {end!r}, which is not a module or endpoint of the node",
                            where=where, fix="check the name against `gpuvet topo --node …`.")
    candidates = [link for link in node.links if link.ends == frozenset((a, b))]
    if not candidates:
        theirs = ", ".join(f"{link.a}-{link.b}" for link in node.links_of(a)[:6])
        raise SpecError(f"there is no link between {a} and {b}", where=where,
                        fix=f"name a link that exists; {a}'s links are: {theirs}.")
    return sorted(candidates, key=lambda link: not link.kind.is_fabric)[0]


def check_faults(node: Node, faults: Sequence[FaultSpec], where: str) -> None:
    """Raise SpecError for a fault that names something the node does not have."""
    for i, fault in enumerate(faults):
        at = _fault_where(where, i, fault)
        if isinstance(fault, (MissingModuleFault, MemClockFlappingFault, PowerCapLowFault, SilentCorruptionFault,
                              ThermalCreepFault, ModuleLostFault, ModuleAddedFault, EccRisingFault, XidFault)):
            _require_module(node, fault.module, at)
        elif isinstance(fault, (LinkDownFault, LinkDegradedFault)):
            find_link(node, fault.between[0], fault.between[1], at)
        elif isinstance(fault, FabricRegistrationFault):
            _require_module(node, fault.module, at)
        elif isinstance(fault, (NicPortDownFault, NicRateLowFault, NicErrorsFault)):
            _require_nic(node, fault.nic, at)
        elif isinstance(fault, WiringSwapFault):
            for m in fault.modules:
                _require_module(node, m, at)
            if fault.modules[0] == fault.modules[1]:
                raise SpecError("swaps a module with itself", where=at, fix="name two modules.")


def _swap_wiring(node: Node, x: str, y: str) -> Node:
    """Exchange where two modules are cabled into the module fabric (the PCIe tree when the
    node has no fabric): their slots stay, their fabric cables are crossed."""
    fabric = [link for link in node.links if link.kind.is_fabric]
    moved = set(map(id, fabric)) if fabric else {id(node.pcie_link(x)), id(node.pcie_link(y))}
    mapping = {x: y, y: x}
    links = tuple(link.relabel(mapping) if id(link) in moved else link for link in node.links)
    return replace(node, links=links)


def _without(node: Node, module: str) -> Node:
    links = tuple(link for link in node.links if module not in link.ends)
    return replace(node, modules=tuple(m for m in node.modules if m.id != module), links=links)


def _moves(module: str, faults: Sequence[FaultSpec], off_bus: Collection[int]) -> list[tuple[float, bool]]:
    """(at, added) of a module's comings and goings; an Xid in ``off_bus`` (the knowledge base's
    off-bus Xids, passed in: node/ reads no other package) takes it off the bus as module_lost does."""
    out = []
    for f in faults:
        if isinstance(f, (ModuleLostFault, ModuleAddedFault)) and f.module == module:
            out.append((f.at_s, isinstance(f, ModuleAddedFault)))
        elif isinstance(f, XidFault) and f.module == module and f.code in off_bus:
            out.append((f.at_s, False))
    return sorted(out)


def present_at(module: str, faults: Sequence[FaultSpec], now_s: float, off_bus: Collection[int] = ()) -> bool:
    """Whether a module is there at ``now_s``, after its module_lost/module_added events (and
    off-bus Xids) in time order; a module whose first such event is ``module_added`` is absent until then."""
    moves = _moves(module, faults, off_bus)
    if not moves:
        return True
    present = not moves[0][1]
    for at, added in moves:
        if at <= now_s:
            present = added
    return present


def moving_modules(faults: Sequence[FaultSpec], off_bus: Collection[int] = ()) -> set[str]:
    """The modules that come or go during the run (module_lost/module_added, off-bus Xids)."""
    return {f.module for f in faults if isinstance(f, (ModuleLostFault, ModuleAddedFault))
            or (isinstance(f, XidFault) and f.code in off_bus)}


def apply_fault(node: Node, fault: FaultSpec, now_s: float = 0.0) -> Node:
    """The node as found at simulated time ``now_s``: a fault applies once its ``at`` is reached
    (presence after module_lost/module_added is settled by ``apply_faults``)."""
    if isinstance(fault, (ModuleAddedFault, ModuleLostFault)) or fault.at_s > now_s:
        return node
    if isinstance(fault, MissingModuleFault):
        links = tuple(link for link in node.links if fault.module not in link.ends)
        modules = tuple(m for m in node.modules if m.id != fault.module)
        return replace(node, modules=modules, links=links)
    if isinstance(fault, (LinkDownFault, LinkDegradedFault)):
        target = find_link(node, fault.between[0], fault.between[1], "fault")
        if isinstance(fault, LinkDownFault):
            changed = replace(target, up=False)
        else:
            assert target.lane_gbps is not None
            changed = replace(target, lane_gbps=target.lane_gbps * fault.factor)
        return replace(node, links=tuple(changed if link is target else link for link in node.links))
    if isinstance(fault, WiringSwapFault):
        return _swap_wiring(node, *fault.modules)
    return node  # behavioural kinds (clocks, power, p2p) leave the topology alone; backends act on them


def apply_faults(node: Node, faults: Sequence[FaultSpec], now_s: float = 0.0,
                 off_bus: Collection[int] = ()) -> Node:
    """The node found at ``now_s``; ``off_bus``: the Xids that take a module off the bus."""
    for module in moving_modules(faults, off_bus):
        if not present_at(module, faults, now_s, off_bus):
            node = _without(node, module)
    for fault in faults:
        node = apply_fault(node, fault, now_s)
    return node
