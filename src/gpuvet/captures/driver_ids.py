"""The PCI id and memory a GPU driver's own lines print of each module (issue 46, INV2): a kernel log seldom
names the model, but NVRM's 'The NVIDIA GPU 000a:00:00.0 (PCI ID: 10de:2330)', amdgpu's 'initializing kernel
modesetting (VEGA20 0x1002:0x66A1 …)' and kfd's 'added device 1002:73a5' give the id pci.ids names, and amdgpu's
'VRAM: 8176M' the module's memory. Read beside the kernel reader (its lines stay claimed there), so inventory
lists the module a log names with what the log says of it, and nothing the log does not say."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.kernel import bus
from gpuvet.captures.marks import holding
from gpuvet.captures.smi_table import BANNER
from gpuvet.captures.text import Line
from gpuvet.node.catalog import VENDOR_CODE

_BUS = r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]"
_NVRM_ID = re.compile(rf"NVIDIA GPU\s+(?P<bus>{_BUS})\s+\(PCI ID:\s*(?P<id>[0-9A-Fa-f]{{4}}:[0-9A-Fa-f]{{4}})\)")
_MODESET = re.compile(rf"(?:(?P<bus>{_BUS}):.*)?initializing kernel modesetting \((?P<chip>\w+) "
                      r"0x(?P<v>[0-9A-Fa-f]{4}):0x(?P<d>[0-9A-Fa-f]{4})")
_KFD = re.compile(r"amdgpu: added device (?P<v>1002):(?P<d>[0-9A-Fa-f]{4})\b")
_VRAM = re.compile(rf"amdgpu (?P<bus>{_BUS}):(?: amdgpu:)? VRAM: (?P<mib>\d+)M\b")  # 'amdgpu:' again on newer kernels
_VRAM_READY = re.compile(r"amdgpu: (?P<mib>\d+)M of VRAM memory ready")
_NVRM_GPU = re.compile(rf"NVRM: GPU (?P<bus>{_BUS})\b")  # 'NVRM: GPU 0000:01:00.0 is already bound to vfio-pci.'
# the chip an amdgpu firmware file is named for ('amdgpu/vega20_smc.bin', 'amdgpu/navy_flounder_sos.bin'; FreeBSD's
# drm-kmod prints no modesetting line); newer kernels name firmware by IP version (psp_13_0_0_sos): no chip, skipped
_FIRMWARE = re.compile(r"\bamdgpu/(?P<chip>[a-z][a-z0-9_]*?)_(?:k_)?(?:sos|smc|uvd|vce|vcn|ta|asd|toc|pfp|me|ce|mec2?|"
                       r"rlc|sdma1?|gpu_info|dmcub?|mes1?|cap|ip_discovery)\.bin\b")
_IP_VERSION = re.compile(r"_\d+_\d+")
_ARCH = re.compile(r"^\s*AMD arch:\s*(?P<chip>gfx[0-9a-f]{3,4})\s*$")  # a framework's banner (ComfyUI): the module's ISA
# nvidia-smi's banner ('| NVIDIA-SMI 530.41.03  Driver Version: 530.41.03  CUDA Version: 12.1 |', smi_table.BANNER):
# the driver and the CUDA it supports, where the table below it is cut or was not taken; numbers only
_DRIVER_NO = re.compile(r"\d+\.\d+(?:\.\d+)?")
_CUDA_NO = re.compile(r"\d+\.\d+")
MARKERS = ("PCI ID:", "kernel modesetting", "added device", "VRAM", "NVRM: GPU ", "amdgpu/", "AMD arch:", "NVIDIA-SMI")


@dataclass(frozen=True)
class DriverId:
    """One module's id or memory as a driver line printed it; ``bus`` None where the line names no bus."""

    bus: str | None
    pci_id: str | None = None  # 'vvvv:dddd', lowercase
    vendor: str | None = None  # whose driver printed it (NVIDIA, AMD): a bus it names is that vendor's module
    chip: str | None = None  # amdgpu's chip name (VEGA20, CARRIZO)
    vram_mib: int | None = None
    line: int = 0


@dataclass
class DriverIds:
    ids: list[DriverId] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)  # none: the kernel reader claims these lines
    banner: list[tuple[str, str | None]] = field(default_factory=list)  # nvidia-smi's (driver, CUDA), in order

    def of(self, module: str, vendor_code: str, alone: bool) -> DriverId:
        """What the lines say of the module at bus ``module``; the lines naming no bus count only where the
        log names this one module of the vendor (``alone``): never given to one of several."""
        got = DriverId(module)
        for i in self.ids:
            if i.bus == module or (i.bus is None and alone and (i.pci_id is None or i.pci_id[:4] == vendor_code)
                                   and VENDOR_CODE.get(i.vendor or "", vendor_code) == vendor_code):
                got = DriverId(module, got.pci_id or i.pci_id, got.vendor or i.vendor, got.chip or i.chip,
                               got.vram_mib or i.vram_mib, i.line)
        return got

    def placed(self) -> list[tuple[str, str]]:
        """(bus id, vendor) of every module a driver line here names by bus, in the log's order."""
        return list(dict.fromkeys((i.bus, i.vendor) for i in self.ids if i.bus and i.vendor))


def parse(lines: list[Line]) -> DriverIds:
    """Only the lines holding one of MARKERS (every pattern's literal) are searched: a bug report's log holds
    few of them, and a pass of eight searches over each of its lines cost a second (docs/limits.md)."""
    out = DriverIds()
    for at in holding(lines, MARKERS):
        ln = lines[at]
        text = ln.text
        if (m := _NVRM_ID.search(text)) is not None:
            out.ids.append(DriverId(bus(m.group("bus")), m.group("id").lower(), vendor="NVIDIA", line=ln.no))
        elif (m := _MODESET.search(text)) is not None:
            out.ids.append(DriverId(bus(m.group("bus")) if m.group("bus") else None,
                                    f"{m.group('v')}:{m.group('d')}".lower(), chip=m.group("chip"), line=ln.no))
        elif (m := _KFD.search(text)) is not None:
            out.ids.append(DriverId(None, f"{m.group('v')}:{m.group('d')}".lower(), line=ln.no))
        elif (m := _VRAM.search(text)) is not None:
            out.ids.append(DriverId(bus(m.group("bus")), vram_mib=int(m.group("mib")), vendor="AMD", line=ln.no))
        elif (m := _VRAM_READY.search(text)) is not None:
            out.ids.append(DriverId(None, vram_mib=int(m.group("mib")), line=ln.no))
        elif (m := _NVRM_GPU.search(text)) is not None:
            out.ids.append(DriverId(bus(m.group("bus")), vendor="NVIDIA", line=ln.no))
        elif (m := BANNER.search(text)) is not None and (d := _DRIVER_NO.match(m.group(2))) is not None:
            out.banner.append((d.group(), c.group() if (c := _CUDA_NO.match(m.group(3) or "")) else None))
        elif ((m := _FIRMWARE.search(text)) or (m := _ARCH.match(text))) and not _IP_VERSION.search(m.group("chip")):
            out.ids.append(DriverId(None, vendor="AMD", chip=m.group("chip"), line=ln.no))
    return out
