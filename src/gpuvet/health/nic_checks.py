"""Health's NIC checks: the NIC verdicts (checks/nics.py) as findings, with what was read cited.
A source that holds no NIC listing (a capture without one) skips them; one that could not be read
cannot tell."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpuvet.backends.nic_readings import NicReadings
from gpuvet.backends.readings import Unavailable
from gpuvet.checks import nics
from gpuvet.checks.model import Cited
from gpuvet.health.model import Finding, Status


def _source(readings: NicReadings) -> str:
    return "simulated node (a model, not hardware)" if readings.source == "simulated" else readings.source


def nic(readings: NicReadings | Unavailable | None, declared: Sequence[nics.DeclaredNic],
        env: Mapping[str, str]) -> list[Finding]:
    """Every port up at its design rate, the design's NICs there, NCCL's variables naming them."""
    if readings is None:
        if declared:
            return [Finding("nic", Status.UNKNOWN, f"can't tell: {len(declared)} NICs declared, but this source "
                            "holds no NIC listing")]
        return [Finding("nic", Status.SKIP, "no NIC listing in this source")]
    if isinstance(readings, Unavailable):
        return [Finding("nic", Status.UNKNOWN, f"cannot read the NICs: {readings.reason}")]
    if not readings.nics and not declared:
        return [Finding("nic", Status.SKIP, "no InfiniBand or RoCE NIC on this node (none declared)")]
    verdicts = nics.ports(readings, declared) + nics.nccl_environment(readings, env)
    if verdicts:  # a port down or a NIC missing drains; a slow port or a wrong NCCL variable warns (faults.yaml)
        return [Finding("nic", Status.FAIL if v.kind in nics.DRAINING else Status.WARN, v.reason, fix=v.fix)
                for v in verdicts]
    cited = [Cited(_source(readings), f"{n.device} port {p.port}", f"{p.state} {p.rate_gbps:g} Gb/s {p.link_layer}"
                   if p.rate_gbps is not None else f"{p.state} {p.link_layer}")
             for n in readings.nics for p in n.ports]
    return [Finding("nic", Status.OK, nics.summary(readings), evidence=tuple(cited))]


def peer_memory(readings: NicReadings | Unavailable | None, vendors: set[str]) -> list[Finding]:
    """GPUDirect RDMA's peer-memory module, where NVIDIA modules sit beside an RDMA port that is up."""
    if readings is None or isinstance(readings, Unavailable) or "nvidia" not in vendors:
        return [Finding("peer_memory", Status.SKIP, "no NVIDIA modules beside a readable NIC listing")]
    if isinstance(readings.peer_memory, Unavailable):
        return [Finding("peer_memory", Status.UNKNOWN, f"cannot tell: {readings.peer_memory.reason}")]
    verdicts = nics.peer_memory(readings, vendors)
    if verdicts:  # GPUDirect off: slower across nodes, not wrong (a host may use DMA-BUF instead): a warning
        return [Finding("peer_memory", Status.WARN, v.reason, fix=v.fix) for v in verdicts]
    if readings.peer_memory is None:
        return [Finding("peer_memory", Status.SKIP, "no RDMA port up: GPUDirect RDMA has nothing to peer with")]
    return [Finding("peer_memory", Status.OK, f"{readings.peer_memory} loaded: GPUDirect RDMA available",
                    evidence=(Cited(_source(readings), "peer-memory module", readings.peer_memory),))]
