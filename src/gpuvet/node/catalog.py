"""Catalog of module models with datasheet figures.

Conventions (they differ between vendors' sheets, so we fix them here):
- TFLOPS are *dense* (NVIDIA's sheets print sparse figures with an asterisk; we halve them).
- ``fp64`` is the best dense FP64 rate a GEMM can reach (FP64 tensor/matrix cores where the
  module has them); ``fp32`` is plain FP32 (no TF32); ``tf32`` is the tensor-core TF32 rate.
- Link and memory bandwidths are GB/s (1e9 bytes/s), per direction for links.
- Memory is the total the driver reports (``memory_mib``, as nvidia-smi prints it: "FB Memory
  Usage / Total", MiB), not the marketing figure: an "80GB" H100 shows 81,559 MiB (79.6 GiB,
  85.5 GB); a "141GB" H200 shows 143,771 MiB. ``memory_bytes`` is that total in bytes.
- A figure a vendor does not publish is absent (None), never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from gpuvet.errors import CatalogError
from gpuvet.node.catalog_more import NOT_FOUND, SHEETS, Sheet

DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8")
MIB = 2**20


@dataclass(frozen=True)
class ModuleModel:
    """Datasheet figures of one module model; ``sources`` names the document for each figure."""

    name: str
    vendor: str
    memory_bytes: int | None
    memory_bw_gbps: float | None
    tflops: Mapping[str, float]
    fabric: str | None  # "nvlink", "xgmi", "serdes" (Ascend's HCCS) or None (PCIe only)
    fabric_links: int | None  # links per module
    fabric_lane_gbps: float | None  # per link, per direction
    pcie_gen: int | None
    pcie_width: int | None
    tdp_w: float | None
    slowdown_c: float | None = None
    shutdown_c: float | None = None
    sm_clock_max_mhz: float | None = None
    mem_clock_max_mhz: float | None = None
    switch_reduction: bool = False  # the fabric switch reduces in the network (NVLink SHARP)
    sources: Mapping[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    memory_mib: int | None = None  # the driver's total (nvidia-smi's MiB); memory_bytes = memory_mib × 2^20
    driver_p2p_off: bool = False  # a GeForce card whose driver refuses peer-to-peer (RTX 4090): copies go via host

    def __post_init__(self) -> None:
        if self.memory_mib is not None and self.memory_bytes != self.memory_mib * MIB:
            raise ValueError(f"{self.name}: memory_bytes must be memory_mib × 2^20")

    @property
    def memory_gib(self) -> float | None:
        return None if self.memory_bytes is None else self.memory_bytes / 2**30

    @property
    def fabric_gbps(self) -> float | None:
        """Per-direction bandwidth of all fabric links together."""
        if self.fabric_links is None or self.fabric_lane_gbps is None:
            return None
        return self.fabric_links * self.fabric_lane_gbps

    def peak_tflops(self, dtype: str) -> float | None:
        return self.tflops.get(dtype)

    def figure_names(self) -> list[str]:
        """Names of the published figures (those that need a source)."""
        skip = {"name", "vendor", "sources", "aliases", "tflops", "fabric", "switch_reduction", "memory_mib",
                "driver_p2p_off"}
        named = [f.name for f in fields(self) if f.name not in skip and getattr(self, f.name) is not None]
        return named + [f"tflops.{d}" for d in self.tflops]

    def unsourced(self) -> list[str]:
        """The published figures no source names (a figure the vendor does not publish is None, never borrowed)."""
        return [f for f in self.figure_names() if not self.sources.get(f)]


_H100_SHEET = "NVIDIA H100 Tensor Core GPU datasheet (SXM5 column)"
_H200_SHEET = "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column)"
_A100_SHEET = "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM column)"
_L40S_SHEET = "NVIDIA L40S GPU datasheet"
_B200_SHEET = "NVIDIA HGX B200 datasheet (8-GPU figures divided by 8)"
_MI300X_SHEET = "AMD Instinct MI300X accelerator datasheet"
_SMI_TEMPS = "nvidia-smi -q 'GPU Slowdown/Shutdown Temp' as reported on this model"
_NVLINK4 = "NVLink 4: 18 links x 25 GB/s per direction (900 GB/s bidirectional)"
_SMI_CLOCKS = "nvidia-smi -q 'Max Clocks' (SM, Memory) as reported on this model"
_NVLINK5 = "NVLink 5: 18 links x 50 GB/s per direction (1.8 TB/s bidirectional)"


def _src(sheet: str, **overrides: str) -> Mapping[str, str]:
    """Every figure from ``sheet`` except those overridden."""
    keys = [
        "memory_bytes", "memory_bw_gbps", "fabric_links", "fabric_lane_gbps", "pcie_gen",
        "pcie_width", "tdp_w", "slowdown_c", "shutdown_c", "sm_clock_max_mhz", "mem_clock_max_mhz",
    ] + [f"tflops.{d}" for d in DTYPES]
    overrides.setdefault("memory_bytes", _SMI_MEMORY)  # the driver's total, not the sheet's round figure
    return MappingProxyType({k: overrides.get(k.replace(".", "_"), sheet) for k in keys})


# The driver's memory totals, as nvidia-smi prints them (MiB), and where each was read:
_SMI_MEMORY = "nvidia-smi 'FB Memory Usage / Total' (MiB) as reported on this model"
_H100_MIB = 81_559  # nvidia-smi -q -x of an 8x H100 SXM5 (tests/data/captures/smi_q_x_h100_8gpu.xml)
_H200_MIB = 143_771  # nvidia-smi on H200 SXM (the figure gpuvet issue 19 quotes; tests/fakes/fake_nvml.py)
# A100 80GB: nvidia-smi shows 81920MiB on the A800-SXM4-80GB (the A100 80GB's export variant, same
# HBM2e), driver 535 (github.com/dexmal/dexbotic/issues/41); driver 450 showed 81252MiB for an
# A100-SXM-80GB (github.com/keyu-tian/SparK/issues/8): current drivers are taken.
_A100_80_MIB = 81_920
_L40S_MIB = 46_068  # nvidia-smi --query-gpu=memory.total: "46068 MiB" (github.com/akash-network/provider-configs/pull/99)
_B200_MIB = 183_359  # nvidia-smi: "166593MiB / 183359MiB" (github.com/NVIDIA/TensorRT-LLM/issues/10278)
# MI300X: AMD has no nvidia-smi; 8 CPX partitions of size_in_bytes 25,767,706,624 each (KFD sysfs,
# github.com/ROCm/legacy-rocm-build/issues/4750) make 206,141,652,992 B = 196,592 MiB for the module.
_MI300X_MIB = 196_592
# MI325X: AMD's GPU specifications table gives 256 GiB (rocm.docs.amd.com/en/7.13.0-preview/reference/
# gpu-specs.html); no driver total was found (MI300X's is 16 MiB under its 192 GiB), so the round figure.
_MI325X_MIB = 262_144
# MI250X: amdsmi and the driver show each of the two GCDs as its own device; a LUMI course's
# CRAY_ACC_DEBUG log reads "Device Name: AMD Instinct MI250X ... Total GPU memory 68702699520"
# (= 65,520 MiB a GCD), the same as rocminfo's gfx90a pool of 67,092,480 KB
# (github.com/ROCm/legacy-rocm-build/issues/4563).
_MI250X_GCD_MIB = 65_520
# MI210: 64 GB HBM2e on one gfx90a die, the same memory as one MI250X GCD; rocminfo's gfx90a pool
# (legacy-rocm-build/issues/4563, card not named) is taken: no MI210-named capture was found.
_MI210_MIB = 65_520
_MI325X_SHEET = "AMD Instinct MI325X accelerator datasheet"
_MI250X_SHEET = "AMD Instinct MI250X accelerator datasheet (OAM figures halved: one of its 2 GCDs)"
_MI210_SHEET = "AMD Instinct MI210 accelerator datasheet"
_IF_CDNA2 = ("AMD Instinct MI250 microarchitecture (rocm.docs.amd.com): Infinity Fabric links at 25 GT/s, "
             "50 GB/s per 16-wide link per direction")

# Ascend 910B (Huawei): no vendor datasheet is public (hisilicon.com's Ascend-910 page is gone), so each
# figure names the public page or capture it comes from. npu-smi names the variant ("910B1", "910B2",
# "910B3", "910B4-1"); every one of them prints 65536 MB of HBM, and no source found gives a variant its
# own TDP, link count or rate, so one model covers them. Left unknown (no source found): memory bandwidth
# and peak FP16/BF16 per variant (public pages give 280 and 320 TFLOPS without naming the variant), PCIe
# generation and width. The 910B4 without "-1" (a 32 GB part in vendors' listings) is not aliased.
_ASCEND_NPU_SMI = ("npu-smi info 'HBM-Usage(MB)' total 65536 on 910B1 (arthurchiao.art GPU notes 2), 910B2 "
                   "(github.com/vllm-project/vllm-ascend/issues/975), 910B3 (ms-swift NPU guide; gpustack/llama-box/"
                   "issues/31), 910B4-1 (github.com/Project-HAMi/HAMi-WebUI/issues/47)")
_ASCEND_HCCS = ("HCCS: 7 links a module, one to each of the 7 other NPUs (ms-swift NPU guide: every NPU reaches the "
                "others through 7 HCCS links; npu-smi info -t topo all HCCS); 56 GB/s a link both ways together, "
                "392 GB/s in all (arthurchiao.art 'GPU Performance (Data Sheets) Quick Reference', Ascend 910B "
                "column): 28 GB/s per direction")
_ASCEND_TDP = "arthurchiao.art 'GPU Performance (Data Sheets) Quick Reference': Ascend 910B max power 400 W"
_ASCEND_MIB = 65_536

_MODELS = [
    ModuleModel(
        name="H100-SXM", vendor="nvidia", memory_bytes=_H100_MIB * MIB, memory_mib=_H100_MIB, memory_bw_gbps=3350,
        tflops={"fp64": 67, "fp32": 67, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9},
        fabric="nvlink", fabric_links=18, fabric_lane_gbps=25, pcie_gen=5, pcie_width=16,
        tdp_w=700, slowdown_c=89, shutdown_c=92, sm_clock_max_mhz=1980, mem_clock_max_mhz=2619,
        switch_reduction=True,
        sources=_src(_H100_SHEET, fabric_links=_NVLINK4, fabric_lane_gbps=_NVLINK4,
                     slowdown_c=_SMI_TEMPS, shutdown_c=_SMI_TEMPS,
                     sm_clock_max_mhz=_SMI_CLOCKS, mem_clock_max_mhz=_SMI_CLOCKS),
        aliases=("NVIDIA H100 80GB HBM3", "H100 SXM5", "H100"),
    ),
    ModuleModel(
        name="H200-SXM", vendor="nvidia", memory_bytes=_H200_MIB * MIB, memory_mib=_H200_MIB, memory_bw_gbps=4800,
        tflops={"fp64": 67, "fp32": 67, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9},
        fabric="nvlink", fabric_links=18, fabric_lane_gbps=25, pcie_gen=5, pcie_width=16,
        tdp_w=700, slowdown_c=89, shutdown_c=92, sm_clock_max_mhz=1980, mem_clock_max_mhz=3201,
        switch_reduction=True,
        sources=_src(_H200_SHEET, fabric_links=_NVLINK4, fabric_lane_gbps=_NVLINK4,
                     slowdown_c=_SMI_TEMPS, shutdown_c=_SMI_TEMPS,
                     sm_clock_max_mhz=_SMI_CLOCKS, mem_clock_max_mhz=_SMI_CLOCKS),
        aliases=("NVIDIA H200", "H200"),
    ),
    ModuleModel(
        name="A100-SXM-80GB", vendor="nvidia", memory_bytes=_A100_80_MIB * MIB, memory_mib=_A100_80_MIB,
        memory_bw_gbps=2039,
        tflops={"fp64": 19.5, "fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312},
        fabric="nvlink", fabric_links=12, fabric_lane_gbps=25, pcie_gen=4, pcie_width=16,
        tdp_w=400, slowdown_c=89, shutdown_c=92,
        sources=_src(_A100_SHEET, fabric_links="NVLink 3: 12 links x 25 GB/s per direction",
                     fabric_lane_gbps="NVLink 3: 12 links x 25 GB/s per direction",
                     slowdown_c=_SMI_TEMPS, shutdown_c=_SMI_TEMPS),
        aliases=("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB", "A100"),
    ),
    ModuleModel(
        name="L40S", vendor="nvidia", memory_bytes=_L40S_MIB * MIB, memory_mib=_L40S_MIB, memory_bw_gbps=864,
        tflops={"fp32": 91.6, "tf32": 183, "fp16": 362, "bf16": 362, "fp8": 733},
        fabric=None, fabric_links=None, fabric_lane_gbps=None, pcie_gen=4, pcie_width=16,
        tdp_w=350,
        sources=_src(_L40S_SHEET),
        aliases=("NVIDIA L40S",),
    ),
    ModuleModel(
        name="B200", vendor="nvidia", memory_bytes=_B200_MIB * MIB, memory_mib=_B200_MIB, memory_bw_gbps=8000,
        tflops={"fp64": 37, "tf32": 1100, "fp16": 2250, "bf16": 2250, "fp8": 4500},
        fabric="nvlink", fabric_links=18, fabric_lane_gbps=50, pcie_gen=5, pcie_width=16,
        tdp_w=1000, switch_reduction=True,
        sources=_src(_B200_SHEET, fabric_links=_NVLINK5, fabric_lane_gbps=_NVLINK5),
        aliases=("NVIDIA B200",),
    ),
    ModuleModel(
        name="MI300X", vendor="amd", memory_bytes=_MI300X_MIB * MIB, memory_mib=_MI300X_MIB, memory_bw_gbps=5300,
        tflops={"fp64": 163.4, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4,
                "fp8": 2614.9},
        fabric="xgmi", fabric_links=7, fabric_lane_gbps=64, pcie_gen=5, pcie_width=16,
        tdp_w=750,
        sources=_src(_MI300X_SHEET,
                     fabric_links="MI300X datasheet: 7 Infinity Fabric links, 128 GB/s each (64 per direction)",
                     memory_bytes="KFD sysfs mem_banks size_in_bytes, 8 CPX partitions summed"),
        aliases=("AMD Instinct MI300X",),
    ),
    ModuleModel(
        name="MI325X", vendor="amd", memory_bytes=_MI325X_MIB * MIB, memory_mib=_MI325X_MIB, memory_bw_gbps=6000,
        tflops={"fp64": 163.4, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4,
                "fp8": 2614.9},
        fabric="xgmi", fabric_links=7, fabric_lane_gbps=64, pcie_gen=5, pcie_width=16,
        tdp_w=1000,
        sources=_src(_MI325X_SHEET,
                     fabric_links="MI325X datasheet: 7 Infinity Fabric links, 128 GB/s each (64 per direction)",
                     memory_bytes="AMD GPU specifications table: 256 GiB VRAM (no driver total found)"),
        aliases=("AMD Instinct MI325X",),
    ),
    # One GCD: the unit amdsmi, KFD and torch enumerate. Its fabric is no full mesh (4 links to its
    # package twin, 1-2 to other packages on Frontier-like boards), so the link count is left unknown.
    # "AMD Instinct MI250X/MI250" (rocminfo's name) stays unmatched: it does not say which of the two.
    ModuleModel(
        name="MI250X", vendor="amd", memory_bytes=_MI250X_GCD_MIB * MIB, memory_mib=_MI250X_GCD_MIB,
        memory_bw_gbps=1638.4,
        tflops={"fp64": 47.85, "fp32": 47.85, "fp16": 191.5, "bf16": 191.5},
        fabric="xgmi", fabric_links=None, fabric_lane_gbps=50, pcie_gen=4, pcie_width=16,
        tdp_w=None,
        sources=_src(_MI250X_SHEET, fabric_lane_gbps=_IF_CDNA2,
                     memory_bytes="CRAY_ACC_DEBUG 'Total GPU memory' on an MI250X GCD; rocminfo gfx90a pool"),
        aliases=("AMD Instinct MI250X",),
    ),
    ModuleModel(
        name="MI210", vendor="amd", memory_bytes=_MI210_MIB * MIB, memory_mib=_MI210_MIB, memory_bw_gbps=1638.4,
        tflops={"fp64": 45.3, "fp32": 45.3, "fp16": 181.0, "bf16": 181.0},
        fabric="xgmi", fabric_links=3, fabric_lane_gbps=50, pcie_gen=4, pcie_width=16,
        tdp_w=300,
        sources=_src(_MI210_SHEET,
                     fabric_links="MI210 datasheet: up to 3 Infinity Fabric links (bridge), 100 GB/s each "
                                  "(50 per direction), a full mesh of 4 cards",
                     fabric_lane_gbps=_IF_CDNA2,
                     memory_bytes="rocminfo gfx90a pool (64 GB HBM2e, as one MI250X GCD)"),
        aliases=("AMD Instinct MI210",),
    ),
    ModuleModel(
        name="Ascend910B", vendor="huawei", memory_bytes=_ASCEND_MIB * MIB, memory_mib=_ASCEND_MIB,
        memory_bw_gbps=None, tflops={},
        fabric="serdes", fabric_links=7, fabric_lane_gbps=28, pcie_gen=None, pcie_width=None,
        tdp_w=400,
        sources=MappingProxyType({"memory_bytes": _ASCEND_NPU_SMI, "fabric_links": _ASCEND_HCCS,
                                  "fabric_lane_gbps": _ASCEND_HCCS, "tdp_w": _ASCEND_TDP}),
        aliases=("Ascend 910B", "910B", *(f"{pre}910B{v}" for pre in ("", "Ascend ") for v in ("1", "2", "3", "4-1"))),
    ),
]



def _from_sheet(s: Sheet) -> ModuleModel:
    """A catalog_more row as a model: every figure it gives sourced from its note, else its sheet where the
    sheet is a document (NOT_FOUND is none: such a figure stays unsourced, and the catalog test fails)."""
    figures = {"memory_bytes": s.memory_mib, "memory_bw_gbps": s.memory_bw_gbps, "fabric_links": s.fabric_links,
               "fabric_lane_gbps": s.fabric_lane_gbps, "pcie_gen": s.pcie_gen, "pcie_width": s.pcie_width,
               "tdp_w": s.tdp_w} | {f"tflops.{d}": v for d, v in s.tflops.items()}
    notes = {"memory_bytes": s.notes.get("memory_mib", "")} | s.notes
    sheet = None if s.sheet == NOT_FOUND else s.sheet
    sources = {k: src for k, v in figures.items() if v is not None and (src := notes.get(k) or sheet)}
    return ModuleModel(
        name=s.name, vendor=s.vendor, memory_bytes=None if s.memory_mib is None else s.memory_mib * MIB,
        memory_mib=s.memory_mib, memory_bw_gbps=s.memory_bw_gbps, tflops=MappingProxyType(dict(s.tflops)),
        fabric=s.fabric, fabric_links=s.fabric_links, fabric_lane_gbps=s.fabric_lane_gbps, pcie_gen=s.pcie_gen,
        pcie_width=s.pcie_width, tdp_w=s.tdp_w, sources=MappingProxyType(sources), aliases=s.aliases,
        driver_p2p_off=s.consumer_p2p_off)


_MODELS += [_from_sheet(s) for s in SHEETS]
CATALOG: Mapping[str, ModuleModel] = MappingProxyType({m.name: m for m in _MODELS})


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


_BY_NORM: dict[str, ModuleModel] = {}
for _model in reversed(_MODELS):  # the first model listed wins a name two of them share
    _BY_NORM.update({_norm(n): _model for n in (_model.name, *_model.aliases)})


@dataclass(frozen=True)
class PciId:
    """A PCI vendor:device id and the product pci.ids names for it (in brackets after the chip: 'GH100 [H100 SXM5
    80GB]'): lspci prints the id with -nn, and only the id ('Device [10de:2330]') where its pci.ids is older than
    the module. ``model`` is the catalog model, or None for a product the catalog lacks (another memory variant
    of a catalog chip: its name is kept, never read as the catalog's) or an id pci.ids gives two products."""

    id: str  # 'vvvv:dddd', lowercase hex
    product: str
    model: str | None
    source: str


_PCI_IDS_DB = "pci.ids (https://pci-ids.ucw.cz; mirror github.com/pciutils/pciids, commit c1c12547, 2026-08-22)"
# Every row checked against that pci.ids (issue 46, VERCAT): ids and names as it lists them, AMD's chip name moved
# after the product ('Navi 31 [Radeon Pro W7900]' is 'Radeon Pro W7900 (Navi 31)'). 10de:2321 is pci.ids'
# 'H100L 94GB'; that id is the H100 NVL's by nvidia-smi (tests/data/captures/fresh_q/smicsv_akash91_h100nvl.txt).
VENDOR_CODE = {"NVIDIA": "10de", "AMD": "1002"}  # the one table of a vendor's PCI id (driver_ids, module_lists)
_VENDOR_WORD = {code: word for word, code in VENDOR_CODE.items()}
# Every catalog model's ids as pci.ids lists them, and the other products of the same chips, so that an id alone
# names its variant (H100 SXM5 64/80/94/96 GB are four ids). Ascend 910B (Huawei, 19e5) has no entry in pci.ids.
PCI_IDS: tuple[PciId, ...] = tuple(PciId(i, product, model, _PCI_IDS_DB) for i, product, model in (
    ("10de:2330", "H100 SXM5 80GB", "H100-SXM"),
    ("10de:2331", "H100 PCIe", "H100-PCIe"),
    ("10de:2336", "H100", None),  # no variant in the name: not read as the SXM5 80GB
    ("10de:2337", "H100 SXM5 64GB", None),
    ("10de:2338", "H100 SXM5 96GB", None),
    ("10de:2339", "H100 SXM5 94GB", None),
    ("10de:233a", "H800L 94GB", None),
    ("10de:233d", "H100 96GB", None),
    ("10de:2335", "H200 SXM 141GB", "H200-SXM"),
    ("10de:233b", "H200 NVL", None),
    ("10de:20b2", "A100 SXM4 80GB", "A100-SXM-80GB"),
    ("10de:20b0", "A100 SXM4 40GB", "A100-SXM-40GB"),
    ("10de:20b1", "A100 PCIe 40GB", "A100-PCIe-40GB"),
    ("10de:20b3", "A100-SXM-64GB", None),
    ("10de:20b5", "A100 PCIe 80GB", "A100-PCIe-80GB"),
    ("10de:26b9", "L40S", "L40S"),
    ("10de:2901", "B200", "B200"),
    ("1002:74a1", "Instinct MI300X", "MI300X"),
    ("1002:74a5", "Instinct MI325X", "MI325X"),
    ("1002:740c", "Instinct MI250X/MI250", None),  # one id for the MI250X and the MI250: only a name decides
    ("1002:740f", "Instinct MI210", "MI210"),
    # issue 46: the other models operators run (catalog_more.py), by their pci.ids names
    ("10de:2321", "H100L 94GB", "H100-NVL"),  # pci.ids' name; nvidia-smi names 0x232110DE 'NVIDIA H100 NVL'
    ("10de:2324", "H800", "H800-SXM"),
    ("10de:2329", "H20", "H20-SXM"),
    ("10de:2342", "GH200 120GB / 480GB", "GH200"),
    ("10de:2348", "GH200 144G HBM3e", None),  # the HBM3e module: another memory than the catalog's GH200
    ("10de:1db1", "Tesla V100 SXM2 16GB", "V100-SXM2"),
    ("10de:1db5", "Tesla V100 SXM2 32GB", "V100-SXM2"),
    ("10de:1db4", "Tesla V100 PCIe 16GB", "V100-PCIe"),
    ("10de:1db6", "Tesla V100 PCIe 32GB", "V100-PCIe"),
    ("10de:1eb8", "Tesla T4", "T4"),
    ("10de:27b8", "L4", "L4"),
    ("10de:2236", "A10", "A10"),
    ("10de:2237", "A10G", "A10G"),
    ("10de:2235", "A40", "A40"),
    ("10de:2230", "RTX A6000", "RTX-A6000"),
    ("10de:26b1", "RTX 6000 Ada Generation", "RTX-6000-Ada"),
    ("10de:2684", "GeForce RTX 4090", "RTX-4090"),
    ("10de:2204", "GeForce RTX 3090", "RTX-3090"),
    ("10de:1e04", "GeForce RTX 2080 Ti", "RTX-2080-Ti"),
    ("10de:1e07", "GeForce RTX 2080 Ti Rev. A", "RTX-2080-Ti"),
    ("10de:2206", "GeForce RTX 3080", "RTX-3080"),
    ("10de:2704", "GeForce RTX 4080", "RTX-4080"),
    ("1002:738c", "Instinct MI100", "MI100"),
    ("1002:738e", "Instinct MI100", "MI100"),  # pci.ids lists the MI100 under two ids
    ("1002:74a0", "Instinct MI300A", "MI300A"),
    # issue 46: AMD's Radeon consumer and workstation families (Vega 10/20, Navi 1x/2x/3x/48), named by id so a
    # tool that prints only the device id (rocm-smi 1.x's DID column, a FreeBSD vgapci line) names the card; none
    # is a catalog model: AMD publishes no per-family thermal or bandwidth design figures for them (the limits
    # are each board's own, in its power-play table: rocm-smi -a or the driver's hwmon temp*_crit print them)
    ("1002:66a0", "Radeon Pro/Radeon Instinct (Vega 20)", None),
    ("1002:66a1", "Radeon Pro VII/Radeon Instinct MI50 (Vega 20)", None),
    ("1002:66a3", "Radeon Pro Vega II/Radeon Pro Vega II Duo (Vega 20)", None),
    ("1002:66af", "Radeon VII (Vega 20)", None),
    ("1002:6860", "Instinct MI25/MI25x2/V340/V320 (Vega 10)", None),
    ("1002:6861", "Radeon PRO WX 9100 (Vega 10 XT)", None),
    ("1002:6862", "Radeon PRO SSG (Vega 10 XT)", None),
    ("1002:6863", "Radeon Vega Frontier Edition (Vega 10 XTX)", None),
    ("1002:6864", "Radeon Pro V340/Instinct MI25x2 (Vega 10)", None),
    ("1002:6867", "Radeon Pro Vega 56 (Vega 10 XL)", None),
    ("1002:6868", "Radeon PRO WX 8100/8200 (Vega 10)", None),
    ("1002:6869", "Radeon Pro Vega 48 (Vega 10 XGA)", None),
    ("1002:686b", "Radeon Pro Vega 64X (Vega 10 XTXA)", None),
    ("1002:687f", "Radeon RX Vega 56/64 (Vega 10 XL/XT)", None),
    ("1002:7310", "Radeon Pro W5700X (Navi 10)", None),
    ("1002:7312", "Radeon Pro W5700 (Navi 10)", None),
    ("1002:731f", "Radeon RX 5600 OEM/5600 XT / 5700/5700 XT (Navi 10)", None),
    ("1002:7340", "Radeon RX 5500/5500M / Pro 5300/5300M/5500M (Navi 14)", None),
    ("1002:73a1", "Radeon Pro V620 (Navi 21)", None),
    ("1002:73a2", "Radeon Pro W6900X (Navi 21 Pro-XTA)", None),
    ("1002:73a3", "Radeon PRO W6800 (Navi 21 GL-XL)", None),
    ("1002:73a5", "Radeon RX 6950 XT (Navi 21)", None),
    ("1002:73ab", "Radeon Pro W6800X/Radeon Pro W6800X Duo (Navi 21 Pro-XLA)", None),
    ("1002:73af", "Radeon RX 6900 XT (Navi 21)", None),
    ("1002:73bf", "Radeon RX 6800/6800 XT / 6900 XT (Navi 21)", None),
    ("1002:73df", "Radeon RX 6700/6700 XT/6750 XT / 6800M/6850M XT (Navi 22)", None),
    ("1002:73e3", "Radeon PRO W6600 (Navi 23 WKS-XL)", None),
    ("1002:73ef", "Radeon RX 6650 XT / 6700S / 6800S (Navi 23)", None),
    ("1002:73ff", "Radeon RX 6600/6600 XT/6600M (Navi 23)", None),
    ("1002:743f", "Radeon RX 6400/6500 XT/6500M (Navi 24)", None),
    ("1002:7448", "Radeon Pro W7900 (Navi 31)", None),
    ("1002:7449", "Radeon Pro W7800 48GB (Navi 31)", None),
    ("1002:744c", "Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M (Navi 31)", None),
    ("1002:745e", "Radeon Pro W7800 (Navi 31)", None),
    ("1002:7470", "Radeon PRO W7700 (Navi 32)", None),
    ("1002:747e", "Radeon RX 7700 XT / 7800 XT (Navi 32)", None),
    ("1002:7480", "Radeon RX 7600/7600 XT/7600M XT/7600S/7700S / PRO W7600 (Navi 33)", None),
    ("1002:7489", "Radeon Pro W7500 (Navi 33)", None),
    ("1002:7550", "Radeon RX 9070/9070 XT/9070 GRE (Navi 48)", None),
))
_BY_PCI_ID = {p.id: p for p in PCI_IDS}
for _pci in PCI_IDS:  # pci.ids' product name, bare and after its vendor ('NVIDIA H100 SXM5 80GB'), names the model
    if _pci.model is not None:
        for _name in (_pci.product, f"{_VENDOR_WORD[_pci.id[:4]]} {_pci.product}"):
            _BY_NORM.setdefault(_norm(_name), CATALOG[_pci.model])


def pci_product(pci_id: str) -> PciId | None:
    """The product pci.ids names for a 'vvvv:dddd' id, where it is a catalog model's or the same chip's."""
    return _BY_PCI_ID.get(pci_id.lower())


def find_model(name: str) -> ModuleModel | None:
    """The catalog model for a catalog name or a name a driver reports, or None."""
    return _BY_NORM.get(_norm(name))


def get_model(name: str, where: str | None = None) -> ModuleModel:
    """The catalog model named ``name``.

    Raises CatalogError naming the known models when there is none.
    """
    model = find_model(name)
    if model is None:
        raise CatalogError(
            f"unknown module model {name!r}",
            where=where,
            fix=f"use one of {', '.join(CATALOG)} or give the module's figures under `custom:`.",
        )
    return model


def unknown_model(reported_name: str, memory_bytes: int | None = None) -> ModuleModel:
    """A model a source reports that the catalog lacks: its figures are unknown, not zero."""
    return ModuleModel(
        name=reported_name, vendor="unknown", memory_bytes=memory_bytes,
        memory_bw_gbps=None, tflops={}, fabric=None, fabric_links=None, fabric_lane_gbps=None,
        pcie_gen=None, pcie_width=None, tdp_w=None,
        sources={"memory_bytes": "reported by the source"} if memory_bytes else {},
    )
