"""validate's network layer: the NICs beyond the board judged as health and doctor judge them (the
same verdicts, checks/nics.py), as checks of their own layer — a port down or below its design
rate, NICs of the design missing, GPUDirect RDMA's peer memory off."""

from __future__ import annotations

from collections.abc import Sequence

from gpuvet.backends.nic_readings import ACTIVE, Nic, NicReadings
from gpuvet.backends.readings import FabricState, ModuleHealth, Unavailable
from gpuvet.checks import nics
from gpuvet.checks.fabric import live_problem
from gpuvet.checks.model import Check, Layer, Verdict
from gpuvet.checks.nics import declared_nics as declared_nics
from gpuvet.node.vendor_tools import FABRIC_STATE_FIX, FABRIC_STATE_LOOK

_FAILS = {"nic_port_down", "nic_missing"}  # the rest (slow port, no peer memory) are warnings
_VALUE = {"nic_port_down": "down", "nic_port_down_undeclared": "down",
          "nic_missing": "missing", "nic_rate_low": "slow", "peer_memory_missing": "not loaded",
          "nccl_device_absent": "absent"}  # the table's value column; the reason says the rest


def network_checks(readings: NicReadings | Unavailable | None, declared: Sequence[nics.DeclaredNic],
                   vendors: set[str]) -> list[Check]:
    if readings is None or isinstance(readings, Unavailable):
        why = readings.reason if isinstance(readings, Unavailable) else "no NIC listing in this source"
        verdict = Verdict.WARN if declared else Verdict.SKIP
        return [Check(Layer.NETWORK, "nic_ports", verdict, reason=f"can't tell: {why}" if declared else why)]
    if not readings.nics and not declared:
        return [Check(Layer.NETWORK, "nic_ports", Verdict.SKIP, reason="no InfiniBand or RoCE NIC, none declared")]
    verdicts = nics.ports(readings, declared) + nics.peer_memory(readings, vendors)
    slow = {v.nic: v for v in verdicts if v.kind == "nic_rate_low"}
    out = [Check(Layer.NETWORK, v.kind, Verdict.FAIL if v.kind in _FAILS else Verdict.WARN, value=_VALUE[v.kind],
                 reason=v.reason, fix=v.fix, module=v.nic) for v in verdicts if v.kind != "nic_rate_low"]
    out += _rates(readings, slow)
    if not any(v.kind.startswith("nic_") for v in verdicts):
        ports = sum(len(n.ports) for n in readings.nics)
        out.append(Check(Layer.NETWORK, "nic_ports", Verdict.PASS, value=ports, unit="ports",
                         expected=len(declared) or None, evidence={"source": _source(readings, None),
                                                                   "summary": nics.summary(readings)}))
    return out


def _rates(readings: NicReadings, slow: dict[str | None, nics.NicVerdict]) -> list[Check]:
    """Each port up, its rate a figure (fleet's peers compare it across nodes: one node's port at 200
    where the others run 400); a port below its design carries the warning."""
    out = []
    for n in readings.nics:
        for port in n.ports:
            if port.state != ACTIVE or port.rate_gbps is None:
                continue
            v = slow.get(n.device)
            out.append(Check(Layer.NETWORK, "nic_rate", Verdict.WARN if v else Verdict.PASS, value=port.rate_gbps,
                             unit="Gb/s", module=n.device if len(n.ports) == 1 else f"{n.device}/{port.port}",
                             reason=v.reason if v else None, fix=v.fix if v else None,
                             evidence={"source": _source(readings, n), "state": port.state,
                                       "physical_state": port.phys_state, "link_layer": port.link_layer,
                                       "hca_type": n.hca_type}))
    return out


def _source(readings: NicReadings, nic: Nic | None) -> str:
    if nic is not None and nic.read_from:
        return nic.read_from
    return "simulated node (a model, not hardware)" if readings.source == "simulated" else readings.source


def fabric_state_checks(modules: Sequence[ModuleHealth] | None) -> list[Check]:
    """Each module's registration with its switched NVLink domain (NVML's fabric info): a module the
    fabric manager has not registered cannot run the domain's collectives, whatever its links read.
    Nothing where the board has no fabric manager (PCIe cards, a mesh)."""
    out = []
    for m in modules or ():
        f = m.fabric
        if not isinstance(f, FabricState) or f.state == "not_supported":
            continue
        problem = live_problem(f)
        out.append(Check(Layer.INVENTORY, "fabric_state", Verdict.FAIL if problem else Verdict.PASS,
                         value=f"{f.state} / {f.status}", module=m.id, reason=problem,
                         fix=f"{FABRIC_STATE_LOOK}; {FABRIC_STATE_FIX}" if problem else None,
                         evidence={"state": f.state, "status": f.status, "health": f.health}))
    return out
