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
    visible_env: tuple[str, ...] = ()  # variables that hide modules from the runtime
    device_files: tuple[str, ...] = ()  # what a process must open to use a module
    permissions_fix: str = ""


TOOLS = {
    "nvidia": VendorTools("nvidia-smi nvlink -s", "nvidia-smi nvlink -s -i <index>",
                          "`nvidia-smi -L`, `lspci | grep -i nvidia`", "the kernel log for Xid 79",
                          ("CUDA_VISIBLE_DEVICES",), ("/dev/nvidiactl",),
                          "add the user to the video group or fix /dev/nvidia* permissions (udev rules)"),
    # ROCm honours all three; ROCR_ filters below HIP_, and HIP also reads CUDA_VISIBLE_DEVICES
    "amd": VendorTools("amd-smi xgmi (or rocm-smi --showtopo)", "amd-smi xgmi and amd-smi metric --ecc for it",
                       "`amd-smi list`, `lspci | grep -i -e amd -e ati`",
                       "the kernel log for amdgpu resets and RAS errors",
                       ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"), ("/dev/kfd",),
                       "add the user to the render and video groups (/dev/kfd, /dev/dri/renderD*), or fix their "
                       "udev rules"),
}


def tools_for(models: Iterable[ModuleModel]) -> VendorTools:
    """The one vendor's tools; NVIDIA's for a node of unknown modules (as before); both, joined,
    for a node that mixes vendors."""
    known = sorted({m.vendor for m in models} & set(TOOLS))
    if len(known) <= 1:
        return TOOLS[known[0] if known else "nvidia"]
    parts = [TOOLS[v] for v in known]

    def joined(name: str) -> str:
        return " / ".join(getattr(t, name) for t in parts)

    return VendorTools(joined("link_state"), joined("module_link"), joined("list_modules"), joined("lost_module_log"),
                       tuple(dict.fromkeys(v for t in parts for v in t.visible_env)),
                       tuple(dict.fromkeys(d for t in parts for d in t.device_files)), joined("permissions_fix"))
