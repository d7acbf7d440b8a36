"""The models operators run besides the flagship boards (issue 46): PCIe cards, bridged pairs, export
variants, consumer and workstation cards, older Instinct parts. Each row holds the vendor's published
figures and the document they come from; catalog.py builds them into ModuleModels.

Same conventions as catalog.py: dense TFLOPS (sparse figures halved), GB/s per direction for links,
memory as the driver's total (MiB) where a capture printed it, else None (the marketing figure is
not the driver's total); a figure the vendor does not publish is None. ``bridge`` names an NVLink
or Infinity Fabric bridge the card takes: whether one is fitted a log does not say, so such a pair
is priced over PCIe only where the capture shows no bridge (catalog users read ``fabric``)."""

from __future__ import annotations

from typing import NamedTuple


class Sheet(NamedTuple):
    """One model's published figures; ``sheet`` names the document every figure comes from unless
    ``notes`` names another for that figure (keys as ModuleModel's field names). A sheet of NOT_FOUND is
    no document: a figure it holds is sourced only by its note (catalog.py leaves one without unsourced)."""

    name: str
    vendor: str
    sheet: str
    memory_mib: int | None
    memory_bw_gbps: float | None
    tflops: dict[str, float]
    fabric: str | None
    fabric_links: int | None
    fabric_lane_gbps: float | None
    pcie_gen: int | None
    pcie_width: int | None
    tdp_w: float | None
    aliases: tuple[str, ...]
    notes: dict[str, str] = {}
    consumer_p2p_off: bool = False  # GeForce since the RTX 4090: the driver turns peer-to-peer off


# Where a driver total was read: the capture that printed it ("FB Memory Usage / Total" or the table's MiB).
_MIB = "nvidia-smi's total as printed in tests/data/captures/"
_NVL4 = "NVLink 4 at 25 GB/s per link per direction"
_NVL3 = "NVLink 3 at 25 GB/s per link per direction"
_BRIDGE_112 = "NVLink bridge: 112.5 GB/s both ways together (the sheet gives no link count)"
_H100_PB = ("NVIDIA H100 PCIe product brief PB-11133-001 (a Gen5 x16 card, 350 W maximum TDP, memory bandwidth "
            "above 2,000 GB/s)")
_DERIVED = " (the count derived from the sheet's total, which it does not print)"
# Checked against vendor sources (issue 46, VERCAT): a figure no vendor document found gives is None, never
# recalled. The export variants (H800, H20, A800) and GH200: their sheets were not found, only secondary pages
# quoting them, so their figures are unknown here; each keeps only a driver total a capture printed.
NOT_FOUND = "no vendor datasheet found for this model: figures unknown (None), never recalled"

SHEETS: tuple[Sheet, ...] = (
    Sheet("H100-PCIe", "nvidia", "NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe column)", 81_559, 2000,
          {"fp64": 51, "fp32": 51, "tf32": 378, "fp16": 756.5, "bf16": 756.5, "fp8": 1513},
          "nvlink", 12, 25, 5, 16, 350, ("NVIDIA H100 PCIe", "H100 PCIe"),
          {"memory_mib": _MIB + "fresh_h/smi_dcgm91_h100pcie_mig_on_table_cut.txt",
           "memory_bw_gbps": _H100_PB, "pcie_gen": _H100_PB, "pcie_width": _H100_PB, "tdp_w": _H100_PB,
           "fabric_links": "H100 datasheet: NVLink bridge 600 GB/s = 12 x " + _NVL4 + _DERIVED,
           "fabric_lane_gbps": _NVL4}),
    Sheet("H100-NVL", "nvidia", "NVIDIA H100 Tensor Core GPU datasheet (H100 NVL column)", 95_830, 3900,
          {"fp64": 60, "fp32": 60, "tf32": 417.5, "fp16": 835.5, "bf16": 835.5, "fp8": 1670.5},
          "nvlink", 12, 25, 5, 16, 400, ("NVIDIA H100 NVL", "H100 NVL"),
          {"memory_mib": _MIB + "fresh_f/smi_gpuburn141_h100nvl_table_no_fence.txt",
           "fabric_links": "H100 datasheet: NVLink bridge 600 GB/s = 12 x " + _NVL4, "fabric_lane_gbps": _NVL4}),
    # NVLink modules all three (NCCL logs of H800 and H20 nodes route over NVLink); link count and rate unknown.
    Sheet("H800-SXM", "nvidia", NOT_FOUND, None, None, {}, "nvlink", None, None, None, None, None,
          ("NVIDIA H800", "NVIDIA H800 80GB HBM3", "H800")),
    Sheet("H20-SXM", "nvidia", NOT_FOUND, None, None, {}, "nvlink", None, None, None, None, None,
          ("NVIDIA H20", "H20")),
    # The 96GB HBM3 module ('GH200 480GB': its LPDDR5X); the 144GB HBM3e one is another memory, not aliased.
    Sheet("GH200", "nvidia", NOT_FOUND, None, None, {}, "nvlink", None, None, None, None, None,
          ("NVIDIA GH200 480GB", "GH200")),
    Sheet("A100-PCIe-40GB", "nvidia", "NVIDIA A100 Tensor Core GPU datasheet (40GB PCIe column)", 40_960, 1555,
          {"fp64": 19.5, "fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312},
          "nvlink", 12, 25, 4, 16, 250, ("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB"),
          {"memory_mib": _MIB + "fresh_u/smi_apptainer1201_a100pcie_table.txt",
           "fabric_links": "A100 datasheet: NVLink bridge for 2 GPUs 600 GB/s = 12 x " + _NVL3,
           "fabric_lane_gbps": _NVL3}),
    Sheet("A100-PCIe-80GB", "nvidia", "NVIDIA A100 Tensor Core GPU datasheet (80GB PCIe column)", 81_920, 1935,
          {"fp64": 19.5, "fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312},
          "nvlink", 12, 25, 4, 16, 300, ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"),
          {"memory_mib": "the A100 80GB's driver total (catalog.py: _A100_80_MIB)",
           "fabric_links": "A100 datasheet: NVLink bridge for 2 GPUs 600 GB/s = 12 x " + _NVL3,
           "fabric_lane_gbps": _NVL3}),
    Sheet("A100-SXM-40GB", "nvidia", "NVIDIA A100 Tensor Core GPU datasheet (40GB SXM column)", 40_960, 1555,
          {"fp64": 19.5, "fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312},
          "nvlink", 12, 25, 4, 16, 400, ("NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB"),
          {"memory_mib": _MIB + "fresh_f/smi_instructlab2341_azure_a100_domain_busids.txt (A100-SXM4-40GB)",
           "fabric_links": "A100 datasheet: NVLink 600 GB/s = 12 x " + _NVL3, "fabric_lane_gbps": _NVL3}),
    Sheet("A800-SXM-80GB", "nvidia", NOT_FOUND, 81_920, None, {}, "nvlink", None, None, None, None, None,
          ("NVIDIA A800-SXM4-80GB", "A800-SXM4-80GB", "A800"),
          {"memory_mib": _MIB + "fresh_f/smi_dexbotic41_a800_zsh_prompt.txt (A800-SXM4-80GB)"}),
    Sheet("V100-SXM2", "nvidia", "NVIDIA Tesla V100 datasheet (SXM2 column)", None, 900,
          {"fp64": 7.8, "fp32": 15.7, "fp16": 125}, "nvlink", 6, 25, 3, 16, 300,
          ("Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB", "V100 SXM2"),
          {"fabric_links": "V100 datasheet: NVLink 300 GB/s = 6 NVLink 2 links x 25 GB/s per direction",
           "fabric_lane_gbps": "NVLink 2 at 25 GB/s per link per direction"}),
    Sheet("V100-PCIe", "nvidia", "NVIDIA Tesla V100 datasheet (PCIe column)", None, 900,
          {"fp64": 7, "fp32": 14, "fp16": 112}, None, None, None, 3, 16, 250,
          ("Tesla V100-PCIE-16GB", "Tesla V100-PCIE-32GB", "V100 PCIe")),
    Sheet("T4", "nvidia", "NVIDIA T4 Tensor Core GPU datasheet", 15_360, 320, {"fp32": 8.1, "fp16": 65},
          None, None, None, 3, 16, 70, ("Tesla T4", "NVIDIA T4", "T4"),
          {"memory_mib": _MIB + "fresh_s/smi_ollama1438_t4_azure.txt"}),
    Sheet("L4", "nvidia", "NVIDIA L4 Tensor Core GPU datasheet", None, 300,
          {"fp32": 30.3, "tf32": 60, "fp16": 121, "bf16": 121, "fp8": 242.5},
          None, None, None, 4, 16, 72, ("NVIDIA L4", "L4")),
    Sheet("A10", "nvidia", "NVIDIA A10 Tensor Core GPU datasheet", None, 600,
          {"fp32": 31.2, "tf32": 62.5, "fp16": 125, "bf16": 125}, None, None, None, 4, 16, 150, ("NVIDIA A10", "A10")),
    # AWS's variant: NVIDIA publishes no A10G sheet; AWS's G5 page gives only its 24 GB.
    Sheet("A10G", "nvidia", "AWS EC2 G5 instance page", 23_028, None, {}, None, None, None, None, None, None,
          ("NVIDIA A10G", "A10G"), {"memory_mib": _MIB + "fresh_e/smi_dcgmexp313_a10g_gpu0_err.txt"}),
    Sheet("A40", "nvidia", "NVIDIA A40 datasheet", 46_068, 696, {"fp32": 37.4, "tf32": 74.8, "fp16": 149.7,
          "bf16": 149.7}, "nvlink", None, None, 4, 16, 300, ("NVIDIA A40", "A40"),
          {"memory_mib": "nvidia-smi's total in tests/data/telemetry/real/a40_audio_training_6h_table.txt"}),
    Sheet("RTX-A6000", "nvidia", "NVIDIA RTX A6000 datasheet", 49_140, 768, {"fp32": 38.7}, "nvlink", None, None,
          4, 16, 300, ("NVIDIA RTX A6000", "RTX A6000"),
          {"memory_mib": _MIB + "fresh_t/smicsv_tgi2238_a6000_noheader.txt"}),
    Sheet("RTX-6000-Ada", "nvidia", "NVIDIA RTX 6000 Ada Generation datasheet", None, 960, {"fp32": 91.1},
          None, None, None, 4, 16, 300, ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada Generation", "RTX 6000 Ada")),
    Sheet("RTX-4090", "nvidia", "NVIDIA Ada Lovelace GPU architecture whitepaper (GeForce RTX 4090 column)", 24_564,
          1008, {"fp32": 82.6}, None, None, None, 4, 16, 450,
          ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090", "RTX 4090"),
          {"memory_mib": _MIB + "dev_k_ops/ctr_nixpkgs420638_podman_cdi_spec_dir_smi_4090_ok.txt"},
          consumer_p2p_off=True),
    Sheet("RTX-3090", "nvidia", "NVIDIA Ampere GA102 GPU architecture whitepaper (GeForce RTX 3090 column)",
          24_576, 936, {"fp32": 35.6}, "nvlink", None, None, 4, 16, 350,
          ("NVIDIA GeForce RTX 3090", "GeForce RTX 3090", "RTX 3090"),
          {"memory_mib": _MIB + "fresh_k/rigreport_club585_2x3090_x4_powercap.txt"}),
    # issue 46 (R12B): GeForce cards benchmark logs name; each figure from NVIDIA's architecture
    # whitepaper for the card (its reference board's column), the NVLink bridge's figure where it takes one.
    Sheet("RTX-2080-Ti", "nvidia", "NVIDIA Turing GPU architecture whitepaper (GeForce RTX 2080 Ti column)", 11_264,
          616, {"fp32": 13.4}, "nvlink", 2, 25, 3, 16, 250,
          ("NVIDIA GeForce RTX 2080 Ti", "GeForce RTX 2080 Ti", "RTX 2080 Ti"),
          {"memory_mib": _MIB + "fresh_ax/nvidiasmi_autodl2080ti_table_idle.txt",
           "fabric_links": "Turing whitepaper: TU102 has two x8 NVLink 2 links, 100 GB/s both ways together",
           "fabric_lane_gbps": "Turing whitepaper: 25 GB/s per x8 link per direction"}),
    Sheet("RTX-3080", "nvidia", "NVIDIA Ampere GA102 GPU architecture whitepaper (GeForce RTX 3080 column)", None,
          760, {"fp32": 29.8}, None, None, None, 4, 16, 320, ("NVIDIA GeForce RTX 3080", "GeForce RTX 3080")),
    Sheet("RTX-4080", "nvidia", "NVIDIA Ada Lovelace GPU architecture whitepaper (GeForce RTX 4080 column)", None,
          716.8, {"fp32": 48.7}, None, None, None, 4, 16, 320, ("NVIDIA GeForce RTX 4080", "GeForce RTX 4080"),
          consumer_p2p_off=True),
    # fp32 is the FP32 matrix rate, as for MI210/MI250X/MI300X (the vector rate is half of it, 23.1).
    Sheet("MI100", "amd", "AMD Instinct MI100 accelerator datasheet", None, 1228.8,
          {"fp64": 11.5, "fp32": 46.1, "fp16": 184.6, "bf16": 92.3}, "xgmi", 3, None, 4, 16, 300,
          ("AMD Instinct MI100", "Instinct MI100", "Arcturus GL-XL [Instinct MI100]"),
          {"tflops.fp32": "MI100 datasheet: 46.1 TFLOPS peak FP32 matrix; AMD lab notes 'AMD matrix cores' "
                          "(gpuopen.com): MI100 FP32 256 flops/clock/CU on matrix cores, 128 on vector units"}),
    # One GCD, as MI250X: the OAM's figures halved (the driver shows each GCD as its own device).
    Sheet("MI250", "amd", "AMD Instinct MI250 accelerator datasheet (OAM figures halved: one of its 2 GCDs)",
          65_520, 1638.4, {"fp64": 45.25, "fp32": 45.25, "fp16": 181, "bf16": 181}, "xgmi", None, 50, 4, 16, None,
          ("AMD Instinct MI250",),
          {"memory_mib": "one gfx90a GCD's driver total (catalog.py: _MI250X_GCD_MIB)",
           "fabric_lane_gbps": "AMD Instinct MI250 microarchitecture (rocm.docs.amd.com): 50 GB/s per link per "
                               "direction"}),
    Sheet("MI50", "amd", "AMD Radeon Instinct MI50 accelerator datasheet", None, 1024,
          {"fp64": 6.6, "fp32": 13.3, "fp16": 26.5}, "xgmi", 2, None, 4, 16, 300, ("AMD Radeon Instinct MI50",)),
    Sheet("MI60", "amd", "AMD Radeon Instinct MI60 accelerator datasheet", None, 1024,
          {"fp64": 7.4, "fp32": 14.7, "fp16": 29.5}, "xgmi", 2, None, 4, 16, 300, ("AMD Radeon Instinct MI60",)),
    Sheet("MI300A", "amd", "AMD Instinct MI300A APU datasheet", None, 5300,
          {"fp64": 122.6, "fp32": 122.6, "tf32": 490.3, "fp16": 980.6, "bf16": 980.6, "fp8": 1961.2},
          "xgmi", None, None, 5, 16, 550, ("AMD Instinct MI300A",)),
)
