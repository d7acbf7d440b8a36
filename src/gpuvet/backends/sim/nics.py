"""The simulated node's NICs: each NIC endpoint of the spec as sysfs would list it (mlx5_0, … in
the spec's order), a ConnectX card of the declared model with its one port ACTIVE at the model's
rate, InfiniBand; the NIC faults change what is read, never the design."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from gpuvet.backends.nic_readings import Nic, NicPort, NicReadings
from gpuvet.backends.readings import FabricState
from gpuvet.node.model import EndpointKind, Node
from gpuvet.node.nic_catalog import NicModel, find_nic_model
from gpuvet.node.spec import (
    FabricRegistrationFault,
    FaultSpec,
    NicErrorsFault,
    NicPortDownFault,
    NicRateLowFault,
    PeerMemoryMissingFault,
)


def _counters(nic_id: str, faults: Sequence[FaultSpec], now_s: float) -> dict[str, int]:
    """Error counters at ``now_s``: zero, unless a nic_errors fault has counted since its ``at``."""
    out = {"symbol_error": 0, "link_downed": 0}
    for f in faults:
        if isinstance(f, NicErrorsFault) and f.nic == nic_id:
            out[f.counter] = out.get(f.counter, 0) + int(f.per_hour * (now_s - f.at_s) / 3600)
    return out


def _port(nic_id: str, rate: float | None, faults: Sequence[FaultSpec], now_s: float = 0.0) -> NicPort:
    counters = _counters(nic_id, faults, now_s)
    for f in faults:
        if isinstance(f, NicPortDownFault) and f.nic == nic_id:
            return NicPort(1, "DOWN", "Polling", None, None, "InfiniBand", counters)
    slow = [f.gbps for f in faults if isinstance(f, NicRateLowFault) and f.nic == nic_id]
    return NicPort(1, "ACTIVE", "LinkUp", slow[-1] if slow else rate, "4X", "InfiniBand", counters)


@functools.lru_cache(maxsize=256)
def _nic_model(name: str | None) -> NicModel | None:
    """The catalog's model (watch reads the NICs on every slow tick: looked up once)."""
    return find_nic_model(name)


def simulated_nics(declared: Node, faults: Sequence[FaultSpec], now_s: float) -> NicReadings:
    active = [f for f in faults if f.at_s <= now_s]
    nics = []
    for i, e in enumerate(e for e in declared.endpoints if e.kind is EndpointKind.NIC):
        model = _nic_model(e.model)
        nics.append(Nic(e.label or f"mlx5_{i}", model.hca_types[0] if model else None, None,
                        (_port(e.id, float(model.rate_gbps) if model else None, active, now_s),),
                        netdevs=(f"ibp{i}s0",)))
    peer = None if any(isinstance(f, PeerMemoryMissingFault) for f in active) or not nics else "nvidia_peermem"
    return NicReadings(tuple(nics), peer, "simulated")


def simulated_fabric(declared: Node, faults: Sequence[FaultSpec], now_s: float) -> dict[str, FabricState]:
    """Each module's registration with a switched NVLink domain (none on a board without fabric
    switches): completed, unless a fabric_registration fault holds it back or calls it unhealthy."""
    if not any(e.kind is EndpointKind.FABRIC_SWITCH for e in declared.endpoints):
        return {}
    held = {f.module: f.state for f in faults if isinstance(f, FabricRegistrationFault) and f.at_s <= now_s}
    out = {}
    for m in declared.modules:
        state = held.get(m.id)
        if state == "unhealthy":
            out[m.id] = FabricState("completed", "success", "unhealthy", 1)
        else:
            out[m.id] = FabricState(state or "completed", "success", "healthy", 1)
    return out
