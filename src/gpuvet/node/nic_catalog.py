"""The NICs GPU nodes leave through: what each model should do (ports, rate per port, link layers,
PCIe attachment). A NIC read live is judged against its model here, never against the rate it
reports. The PCI device ids (what sysfs' ``hca_type`` and ``lspci -nn`` show) name the model."""

from __future__ import annotations

import re
from dataclasses import dataclass

_BRIEF = "NVIDIA networking product brief"


@dataclass(frozen=True)
class NicModel:
    name: str
    hca_types: tuple[str, ...]  # sysfs hca_type / ibstat "CA type" (MT4129), and the PCI device id
    ports: int  # the common single- or dual-port card; a spec may say otherwise
    rate_gbps: int  # per port, the fastest the card runs (Gb/s; IB and Ethernet alike)
    link_layers: tuple[str, ...]  # "InfiniBand", "Ethernet" (RoCE)
    pcie_gen: int
    pcie_width: int
    source: str
    # the slowest Ethernet speed the driver's release notes list for the model (MLNX_OFED "Uplink Speed"):
    # an Active Ethernet port below it runs at no speed any card of the model is built for; None: not listed
    slowest_eth_gbps: float | None = None


NIC_MODELS = (
    NicModel("ConnectX-5", ("MT4119", "0x1017"), 1, 100, ("InfiniBand", "Ethernet"), 3, 16,
             f"{_BRIEF}: ConnectX-5 VPI, EDR 100 Gb/s, PCIe Gen3/4 x16", 1),
    NicModel("ConnectX-6", ("MT4123", "0x101b"), 1, 200, ("InfiniBand", "Ethernet"), 4, 16,
             f"{_BRIEF}: ConnectX-6 VPI, HDR 200 Gb/s, PCIe Gen4 x16", 10),
    NicModel("ConnectX-6 Dx", ("MT4125", "0x101d"), 2, 100, ("Ethernet",), 4, 16,
             f"{_BRIEF}: ConnectX-6 Dx, 2 x 100 GbE, PCIe Gen4 x16", 10),
    NicModel("ConnectX-7", ("MT4129", "0x1021"), 1, 400, ("InfiniBand", "Ethernet"), 5, 16,
             f"{_BRIEF}: ConnectX-7, NDR 400 Gb/s, PCIe Gen5 x16", 1),
    NicModel("ConnectX-8", ("MT4131", "0x1023"), 1, 800, ("InfiniBand", "Ethernet"), 6, 16,
             f"{_BRIEF}: ConnectX-8 SuperNIC, XDR 800 Gb/s, PCIe Gen6 x16"),
    NicModel("BlueField-3", ("MT41692", "0xa2dc"), 1, 400, ("InfiniBand", "Ethernet"), 5, 16,
             f"{_BRIEF}: BlueField-3 DPU / SuperNIC, 400 Gb/s, PCIe Gen5 x16"),
)


def find_nic_model(text: str | None) -> NicModel | None:
    """The model a name, an ``hca_type`` or a device id names; None when none does."""
    if not text:
        return None
    key = text.strip().lower()
    for model in NIC_MODELS:
        if key in (t.lower() for t in model.hca_types) or key == model.name.lower():
            return model
    for model in sorted(NIC_MODELS, key=lambda m: -len(m.name)):  # "ConnectX-6 Dx" before "ConnectX-6"
        if re.search(rf"\b{re.escape(model.name.lower())}\b", key):
            return model
    return None


def nic_model_names() -> list[str]:
    return [m.name for m in NIC_MODELS]
