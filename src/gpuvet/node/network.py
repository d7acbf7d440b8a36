"""What a node's NICs carry between nodes, for collectives that span nodes. NCCL runs one ring (or
more) per NIC rail, so a collective across nodes is bound by the sum of the node's NIC bandwidth,
at the share of the line rate NCCL reaches per NIC.

Fitted on: NVIDIA/nccl-tests #119 (a maintainer: "~24 GB/s is the peak per 200G NIC", 96 GB/s busbw
for 4 x HDR 200G NICs per node): 24 of 25 GB/s = 0.96. Checked on: NVIDIA/nccl-tests #290 (a
maintainer: "for NDR @ 400Gbps you should see 46-48GB/s per NIC", two nodes with NCCL_ALGO=RING):
the model's 48 GB/s per 400G NIC is at the top of that range, 4 % above its bottom; and on
NVIDIA/nccl-tests #309 (two HGX H100 hosts, 8 GPU-NIC pairs, NVLS off: 368.76 GB/s): 384, +4.1 %. Assumed: one port
per NIC cabled (a rail-optimised node), and the NIC bound holds for every collective (all_to_all
across nodes is not separately fitted)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuvet.node.model import EndpointKind, Node
from gpuvet.node.nic_catalog import find_nic_model

NET_EFFICIENCY = 0.96  # the share of a NIC's line rate NCCL's busbw reaches across nodes (fit: nccl-tests #119)
NET_SOURCES = ("https://github.com/NVIDIA/nccl-tests/issues/119 (fit)",
               "https://github.com/NVIDIA/nccl-tests/issues/290 (check)",
               "https://github.com/NVIDIA/nccl-tests/issues/309 (check)")


@dataclass(frozen=True)
class NodeNetwork:
    nics: int
    model: str  # the NICs' model(s), joined
    line_gbps: float  # the node's NICs' line rate, summed (Gb/s, one direction)

    @property
    def busbw_gbs(self) -> float:
        """The busbw (GB/s) a collective across such nodes reaches at bandwidth-bound sizes."""
        return self.line_gbps / 8 * NET_EFFICIENCY

    def words(self) -> str:
        return f"{self.nics} x {self.line_gbps / self.nics:g} Gb/s {self.model}"


def node_network(node: Node) -> NodeNetwork | None:
    """The node's NICs as designed (their declared models), or None when it declares none with a
    model the catalog knows."""
    models = [find_nic_model(e.model) for e in node.endpoints if e.kind is EndpointKind.NIC]
    known = [m for m in models if m is not None]
    if not known or len(known) < len(models):
        return None
    names = ", ".join(sorted({m.name for m in known}))
    return NodeNetwork(len(known), names, float(sum(m.rate_gbps for m in known)))
