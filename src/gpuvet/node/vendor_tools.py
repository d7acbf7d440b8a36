"""The vendor's own commands a fix points to, by the catalog's vendor of the modules judged.

A fix that tells an AMD operator to run ``nvidia-smi nvlink -s`` sends them nowhere; checks stay
vendor-free and ask here for the words (vendor words live in the catalog layer, gateways and
capture readers only)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuvet.node.catalog import ModuleModel


@dataclass(frozen=True)
class VendorTools:
    link_state: str  # shows each fabric link's state
    module_link: str  # one module's own links ({m}: the module)
    list_modules: str  # lists the modules the driver and the bus see
    lost_module_log: str  # what in the kernel log tells a lost module


TOOLS = {
    "nvidia": VendorTools("nvidia-smi nvlink -s", "nvidia-smi nvlink -s -i <index>",
                          "`nvidia-smi -L`, `lspci | grep -i nvidia`", "the kernel log for Xid 79"),
    "amd": VendorTools("amd-smi xgmi (or rocm-smi --showtopo)", "amd-smi xgmi and amd-smi metric --ecc for it",
                       "`amd-smi list`, `lspci | grep -i -e amd -e ati`",
                       "the kernel log for amdgpu resets and RAS errors"),
}


def tools_for(models: Iterable[ModuleModel]) -> VendorTools:
    """The one vendor's tools; NVIDIA's for a node of unknown modules (as before); both, joined,
    for a node that mixes vendors."""
    known = sorted({m.vendor for m in models} & set(TOOLS))
    if len(known) <= 1:
        return TOOLS[known[0] if known else "nvidia"]
    parts = [TOOLS[v] for v in known]
    return VendorTools(*(" / ".join(getattr(t, f) for t in parts) for f in VendorTools.__dataclass_fields__))
