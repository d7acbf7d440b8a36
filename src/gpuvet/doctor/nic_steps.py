"""Doctor's step for the network beyond the board (interconnect-slow, after the module fabric): each
NIC port up at its design rate, GPUDirect RDMA's peer memory, NCCL's device variables. The verdicts
are the NIC checks' (checks/nics.py), the same health gives; this only turns them into causes."""

from __future__ import annotations

from gpuvet.backends.nic_readings import NicReadings
from gpuvet.backends.readings import Unavailable
from gpuvet.checks import nics
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, finding
from gpuvet.doctor.outcome import HIGH, Outcome, clear, confirmed, unknown
from gpuvet.node.model import EndpointKind


def _declared(ev: Evidence) -> list[nics.DeclaredNic]:
    from gpuvet.node.nic_catalog import find_nic_model

    if ev.declared is None:
        return []
    return [nics.DeclaredNic(e.id, find_nic_model(e.model)) for e in ev.declared.endpoints
            if e.kind is EndpointKind.NIC]


def _readings(ev: Evidence) -> NicReadings | Unavailable | None:
    return ev.backend.nics() if ev.backend is not None else None


def nic_ports(ev: Evidence) -> Outcome:
    readings = _readings(ev)
    if readings is None:
        return unknown("can't tell: no NIC listing (ibstat, ibv_devinfo, ibdev2netdev) in the evidence")
    if isinstance(readings, Unavailable):
        return unknown(f"can't tell: the NICs could not be read ({readings.reason})")
    if not readings.nics and not _declared(ev):
        return unknown("can't tell: no InfiniBand or RoCE NIC on this node, and none declared")
    env = ev.env if ev.backend is not None and ev.backend.local_host else {}
    verdicts = nics.ports(readings, _declared(ev)) + nics.nccl_environment(readings, env)
    vendors = {m.model.vendor for m in ev.node.modules} if ev.node is not None else set()
    verdicts += nics.peer_memory(readings, vendors)
    if verdicts:
        found = [finding(v.kind, HIGH, None, fix=v.fix, nic=v.nic, reading=v.reason) for v in verdicts]
        return confirmed(f"{len(verdicts)} NIC finding(s): {verdicts[0].reason}", *found)
    cited = [Cited(n.read_from or readings.source, f"{n.device} port {p.port}", f"{p.state} {p.rate_gbps:g} Gb/s"
                   if p.rate_gbps is not None else p.state) for n in readings.nics for p in n.ports]
    if not cited:
        return unknown(f"can't tell: {len(readings.nics)} NIC(s) listed without their ports")
    return clear(nics.summary(readings), *cited)
