"""NCCL's own dump of a node's topology in its NCCL_DEBUG=INFO log ('=== System : maxBw 12.0 totalBw 12.0 ===',
then one line per link, '+ PCI[12.0] - GPU/1A000 (0)', '+ NVL[240.0] - GPU/…'): the paths NCCL found between
its GPUs and the rate it gives them. A node whose GPUs NCCL joins by PCIe only runs its collectives at that
rate; the GPU lines name each rank's bus id, so the log lists its modules even where no channel line survived."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SYSTEM = re.compile(r"^=== System : maxBw (?P<max>\d{1,5}(?:\.\d{1,3})?) totalBw (?P<total>\d{1,6}(?:\.\d{1,3})?)")
# '+ PCI[12.0] - GPU/1A000 (0)': the link's kind and rate, the node it reaches, its id (a GPU's: its bus id as
# NCCL writes it) and, for a GPU, its rank; a PCI switch's parenthesis holds its vendor, device and subsystem ids
_LINK = re.compile(r"^\+ (?P<link>[A-Z]{2,5})\[(?P<bw>\d{1,5}(?:\.\d{1,3})?)\] - (?P<kind>[A-Z]{2,5})/"
                   r"(?P<id>[0-9A-Fa-f]{1,16})(?: \((?P<extra>[0-9A-Fa-f]{1,16})\))?")
# the rate NCCL gives a PCIe link of x16 lanes at each generation (GB/s); another figure is said as a figure only
_PCIE_X16 = {12.0: "PCIe Gen3 x16", 24.0: "PCIe Gen4 x16", 48.0: "PCIe Gen5 x16"}


@dataclass
class NcclTopo:
    """One host's topology as NCCL printed it: its fastest path's rate, the GPUs (rank -> NCCL bus id), the kinds
    of link that reach a GPU, and the PCIe switches on the way."""

    host: str | None
    line: int
    max_bw: float | None = None
    gpus: dict[int, str] = field(default_factory=dict)
    gpu_links: set[str] = field(default_factory=set)  # PCI, NVL, C2C… (the links whose far end is a GPU)
    switches: list[str] = field(default_factory=list)  # '18000 (10b5:8747)'

    def said(self) -> str:
        """'axon: 4 GPU(s) (1A000, 1B000, 3D000, 3E000) joined by PCIe only, maxBw 12.0 GB/s (NCCL's rate for a
        PCIe Gen3 x16 link), behind PCIe switch(es) 18000 (10b5:8747); no NVLink'."""
        where = f"{self.host}: " if self.host else ""
        gpus = ", ".join(self.gpus[r] for r in sorted(self.gpus))
        bw = f"maxBw {self.max_bw:g} GB/s" if self.max_bw is not None else "maxBw not in the excerpt"
        if self.max_bw is not None and self.max_bw in _PCIE_X16:
            bw += f" (NCCL's rate for a {_PCIE_X16[self.max_bw]} link)"
        links = "by PCIe only" if self.gpu_links == {"PCI"} else f"by {'/'.join(sorted(self.gpu_links))}"
        switches = f", behind PCIe switch(es) {', '.join(self.switches)}" if self.switches else ""
        nvlink = "; no NVLink" if "NVL" not in self.gpu_links else ""
        return f"{where}{len(self.gpus)} GPU(s) ({gpus}) joined {links}, {bw}{switches}{nvlink}"


def add(host: str | None, line: int, message: str, topos: dict[str | None, NcclTopo]) -> bool:
    """Read one INFO message into its host's topology; False for any other line."""
    if (s := _SYSTEM.match(message)) is not None:
        topos.setdefault(host, NcclTopo(host, line)).max_bw = float(s.group("max"))
        return True
    if not message.startswith("+ ") or (m := _LINK.match(message)) is None:
        return False
    topo = topos.setdefault(host, NcclTopo(host, line))
    node, extra = m.group("id").upper(), m.group("extra")
    if m.group("kind") == "GPU":
        topo.gpu_links.add(m.group("link"))
        if extra is not None and extra.isdigit():
            topo.gpus.setdefault(int(extra), node)
    elif m.group("kind") == "PCI" and extra is not None and len(extra) == 16:
        switch = f"{node} ({extra[:4].lower()}:{extra[4:8].lower()})"
        topo.switches += [switch] if switch not in topo.switches else []
    return True
