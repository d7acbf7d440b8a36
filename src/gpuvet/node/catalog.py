"""Catalog of module models with datasheet figures.

Conventions (they differ between vendors' sheets, so we fix them here):
- TFLOPS are *dense* (NVIDIA's sheets print sparse figures with an asterisk; we halve them).
- ``fp64`` is the best dense FP64 rate a GEMM can reach (FP64 tensor/matrix cores where the
  module has them); ``fp32`` is plain FP32 (no TF32); ``tf32`` is the tensor-core TF32 rate.
- Link and memory bandwidths are GB/s (1e9 bytes/s), per direction for links.
- A figure a vendor does not publish is absent (None), never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from gpuvet.errors import CatalogError

DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8")


@dataclass(frozen=True)
class ModuleModel:
    """Datasheet figures of one module model; ``sources`` names the document for each figure."""

    name: str
    vendor: str
    memory_bytes: int | None
    memory_bw_gbps: float | None
    tflops: Mapping[str, float]
    fabric: str | None  # "nvlink", "xgmi" or None (PCIe only)
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
        skip = {"name", "vendor", "sources", "aliases", "tflops", "fabric", "switch_reduction"}
        named = [f.name for f in fields(self) if f.name not in skip and getattr(self, f.name) is not None]
        return named + [f"tflops.{d}" for d in self.tflops]


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
    return MappingProxyType({k: overrides.get(k.replace(".", "_"), sheet) for k in keys})


_GiB = 1024**3

_MODELS = [
    ModuleModel(
        name="H100-SXM", vendor="nvidia", memory_bytes=80 * _GiB, memory_bw_gbps=3350,
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
        name="H200-SXM", vendor="nvidia", memory_bytes=141 * 10**9, memory_bw_gbps=4800,
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
        name="A100-SXM-80GB", vendor="nvidia", memory_bytes=80 * _GiB, memory_bw_gbps=2039,
        tflops={"fp64": 19.5, "fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312},
        fabric="nvlink", fabric_links=12, fabric_lane_gbps=25, pcie_gen=4, pcie_width=16,
        tdp_w=400, slowdown_c=89, shutdown_c=92,
        sources=_src(_A100_SHEET, fabric_links="NVLink 3: 12 links x 25 GB/s per direction",
                     fabric_lane_gbps="NVLink 3: 12 links x 25 GB/s per direction",
                     slowdown_c=_SMI_TEMPS, shutdown_c=_SMI_TEMPS),
        aliases=("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB", "A100"),
    ),
    ModuleModel(
        name="L40S", vendor="nvidia", memory_bytes=48 * _GiB, memory_bw_gbps=864,
        tflops={"fp32": 91.6, "tf32": 183, "fp16": 362, "bf16": 362, "fp8": 733},
        fabric=None, fabric_links=None, fabric_lane_gbps=None, pcie_gen=4, pcie_width=16,
        tdp_w=350,
        sources=_src(_L40S_SHEET),
        aliases=("NVIDIA L40S",),
    ),
    ModuleModel(
        name="B200", vendor="nvidia", memory_bytes=180 * 10**9, memory_bw_gbps=8000,
        tflops={"fp64": 37, "tf32": 1100, "fp16": 2250, "bf16": 2250, "fp8": 4500},
        fabric="nvlink", fabric_links=18, fabric_lane_gbps=50, pcie_gen=5, pcie_width=16,
        tdp_w=1000, switch_reduction=True,
        sources=_src(_B200_SHEET, fabric_links=_NVLINK5, fabric_lane_gbps=_NVLINK5),
        aliases=("NVIDIA B200",),
    ),
    ModuleModel(
        name="MI300X", vendor="amd", memory_bytes=192 * 10**9, memory_bw_gbps=5300,
        tflops={"fp64": 163.4, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4,
                "fp8": 2614.9},
        fabric="xgmi", fabric_links=7, fabric_lane_gbps=64, pcie_gen=5, pcie_width=16,
        tdp_w=750,
        sources=_src(_MI300X_SHEET,
                     fabric_links="MI300X datasheet: 7 Infinity Fabric links, 128 GB/s each (64 per direction)"),
        aliases=("AMD Instinct MI300X",),
    ),
]

CATALOG: Mapping[str, ModuleModel] = MappingProxyType({m.name: m for m in _MODELS})


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def find_model(name: str) -> ModuleModel | None:
    """The catalog model for a catalog name or a name a driver reports, or None."""
    key = _norm(name)
    for model in _MODELS:
        if key == _norm(model.name) or key in (_norm(a) for a in model.aliases):
            return model
    return None


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
