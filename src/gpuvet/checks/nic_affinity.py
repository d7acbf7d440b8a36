"""Each module's nearest NIC, and the modules whose nearest NIC is farther than the design's.

GPUDirect RDMA moves a module's data straight to a NIC; when the nearest NIC is across the
socket (SYS) where the design pairs the module with a NIC on its own PCIe switch, every
multi-node transfer crosses the CPU interconnect and collectives slow down. Pure: nodes in,
verdicts out. Relations are ``nvidia-smi topo -m``'s (node/relations.py).

PIX and PXB count alike: a board drawn with one switch tier reads PXB on hardware with two
(the common HGX riser), and neither crosses a host bridge. So "farther" means a step across
a host bridge, between host bridges or across the socket."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from gpuvet.checks.nics import NicVerdict
from gpuvet.node.model import EndpointKind, Node
from gpuvet.node.relations import PcieRelation, relations_from

FIX = ("pin each rank to the NIC beside its module (NCCL_IB_HCA, or NCCL_TOPO_FILE); check the "
       "card sits in the slot the design gives it (lspci -tv, nvidia-smi topo -m), and that ACS or the "
       "BIOS does not route the switch's peer traffic through the root port")
ON_SWITCH = frozenset({PcieRelation.PIX, PcieRelation.PXB})


@dataclass(frozen=True)
class NearestNic:
    """A module's nearest NIC and their relation; None where no NIC is reached, or where the
    source did not give every relation (``unread``: a topo -m row cut short) and the nearest one
    it gave is not on the module's switch, so a nearer one may be in the part not read."""

    module: str
    nic: str | None
    relation: PcieRelation | None
    unread: int = 0  # NICs whose relation to the module the source did not give


def _distance(relation: PcieRelation) -> int:
    """PIX and PXB as one step (see the module's docstring), then PHB, NODE, SYS."""
    return 0 if relation in ON_SWITCH else relation.rank - 1


def nics_of(node: Node) -> list[str]:
    """The NIC endpoints of a node, in its order."""
    return [e.id for e in node.endpoints if e.kind is EndpointKind.NIC]


def nearest(node: Node) -> list[NearestNic]:
    """Per module, the nearest NIC (the first in the node's order among equals)."""
    nics = nics_of(node)
    return [_nearest_one(node, m, nics) for m in node.module_ids]


def _nearest_one(node: Node, module: str, nics: list[str]) -> NearestNic:
    rel = relations_from(node, module) if nics else {}
    seen = [n for n in nics if frozenset((module, n)) not in node.unseen_relations]
    found = [(rel[n].rank, i, n) for i, n in enumerate(seen) if n in rel]
    unread = len(nics) - len(seen)
    if not found:
        return NearestNic(module, None, None, unread)
    best = rel[min(found)[2]]
    if unread and best not in ON_SWITCH:
        return NearestNic(module, None, None, unread)
    return NearestNic(module, min(found)[2], best, unread)


@dataclass(frozen=True)
class Judged:
    """One module's nearest NIC found, and the relation its design gives it."""

    found: NearestNic
    design: PcieRelation | None
    basis: str  # "declared", "its peers", or "" where no design is known

    @property
    def far(self) -> bool:
        r, d = self.found.relation, self.design
        return r is not None and d is not None and _distance(r) > _distance(d)


def judge(found: Node, design: Node | None, basis: str = "declared") -> list[Judged]:
    """Each module's nearest NIC against the design's (same module id), else its peers'."""
    here = nearest(found)
    if design is not None and nics_of(design):
        want = {n.module: n.relation for n in nearest(design)}
        return [Judged(n, want.get(n.module), basis if n.module in want else "") for n in here]
    peers = peer_design(here)
    return [Judged(n, peers, "its peers" if peers else "") for n in here]


def peer_design(found: Sequence[NearestNic]) -> PcieRelation | None:
    """Inferred design where none is declared: when most modules read a NIC on their switch
    (PIX/PXB), that is the board's design, and a module that reads only SYS strays from it.
    Nothing is inferred from a board whose modules mostly sit away from their NICs."""
    read = [n.relation for n in found if n.relation is not None]
    near = Counter(r for r in read if r in ON_SWITCH)
    if len(read) < 3 or sum(near.values()) * 2 <= len(read):
        return None
    return near.most_common(1)[0][0]


def far(found: Node, design: Node | None, basis: str = "declared") -> list[NicVerdict]:
    """``nic_far`` (warn) for each module whose nearest NIC is farther than its design's. Without a
    declared design only SYS is judged (the peers' case: an odd NODE or PHB is no socket crossing)."""
    out = []
    for j in judge(found, design, basis):
        if not j.far or (j.basis == "its peers" and j.found.relation is not PcieRelation.SYS):
            continue
        out.append(NicVerdict("nic_far", j.found.nic, f"{j.found.module}'s nearest NIC {j.found.nic} is "
                              f"{j.found.relation}, design {j.design} ({j.basis}): RDMA crosses "
                              f"{_crossing(j.found.relation)}", FIX, j.found.module))
    return out


def _crossing(relation: PcieRelation | None) -> str:
    return {PcieRelation.SYS: "the socket link", PcieRelation.NODE: "the socket's host bridges",
            PcieRelation.PHB: "the host bridge"}.get(relation or PcieRelation.PIX, "a PCIe switch")
