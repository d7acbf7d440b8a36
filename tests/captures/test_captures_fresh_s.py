"""Batch S (tests/data/captures/fresh_s/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold the MANIFEST's "a correct tool should
report" column for every file (not what gpuvet prints): CAUSES with SEVERITY where the row rates a finding,
MAY where it allows one without asking for it, TOLD where it names what the finding must cite, MODULES /
FIELDS / SAID where it says what inventory must read; benchmarks/score_manifest.py --batch s scores the batch
against them (tests/support/blind_batch.py).

Read as batches P to R are: "no finding" means nothing at warn or above (an info is allowed); "warn:" pins
warn ("warn (critical if …)" too: the row's first rating); "critical:" pins critical; "critical/warn" and
"warn (or critical)" pin no severity. A row naming a fault gpuvet has no cause of its own for (an IOMMU's
IO_PAGE_FAULT, a stress run with no work done) is held as the cause gpuvet files that meaning under, and TOLD
holds what the row says it must name. Inventory expectations count (a known miss's reason starting
'inventory:'): a bus id, a model, a driver, a memory size, a NUMA placement, a host the row names as a fact of
the file is pinned; a reading (a temperature, a power draw) is not. Files gpuvet still gets wrong are
KNOWN_MISSES, each with why; their test is a strict xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding

FRESH_S = Path(__file__).parents[1] / "data" / "captures" / "fresh_s"
NPU0 = "GPU 0 (host not in the log)"

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # 4 GPUs at 0 Gflops/s and 0 C under gpu-fryer's load, its 'All GPUs seem healthy' notwithstanding
    # (the row names all 4 GPUs; each is named since issue 46's LEFT item 4, no longer one node-wide finding)
    "gpufryer_gpufryer10_4gpu_zero_gflops.txt": {("application_cuda_error", f"GPU {i}") for i in range(4)},
    "dmesg_sglang34260_xid13_cga.txt": {("xid", "0000:9A:00.0")},  # Xid 13 SM CGA exceptions: the application
    "smi_hiveos61_gpu_lost_statsjson.txt": {("module_fell_off_bus", "0000:0A:00.0")},  # 'GPU is lost'
    # ring comp_1.1.1 timeout and a reset
    "dmesg_rocm5933_7900xtx_comp_ring.txt": {("module_hung_reset", "0000:03:00.0")},
    # ring page1 (SDMA) timeout, BACO reset, VRAM lost
    "dmesg_xformers14_mi25_page1_reset.txt": {("module_hang_recovered", "0000:2B:00.0")},
    # repeated AMD-Vi IO_PAGE_FAULT from the GPU: the IOMMU blocks its DMA/P2P (iommu=pt)
    "dmesg_cudasamples48_amdvi_io_page_fault.txt": {("iommu_dma_fault", "0000:07:00.0")},
    # 'Unable to determine the device handle … Unknown Error': unreachable by NVML
    "smi_instanceloc20_unknown_error_81.txt": {("module_fell_off_bus", "0000:81:00.0")},
    # lshw: the MI25 MxGPU is UNCLAIMED, no driver bound
    "lshw_rocm1638_mi25_mxgpu_unclaimed.txt": {("gpu_no_driver_bound", "AF8C:00:00.0")},
    # 'Driver not initialized (amdgpu not found in modules)', 0 OpenCL devices: no AMD GPU usable
    "rocmsmi_rocm4098_4xmi210_driver_not_loaded.txt": {("no_modules_visible", None)},
    "rocmsmi_rocm1752_vm_no_gpus.txt": {("no_modules_visible", None)},  # 'No AMD GPUs specified'
    # Xid 45 then tasks blocked > 120 s: GPU/driver wedged, reboot
    "dmesg_gpud117_xid45_hung_task.txt": {("module_needs_reset", "0000:61:00.0")},  # wedged: a reboot
    # NV_ERR_RESET_REQUIRED on GPU0, no bus id in the log
    "journal_ogkm1045_rtx5080_reset_required.txt": {("module_needs_reset", "GPU0")},
    # BusMaster-, MSI disabled, IRQ 255: no driver has initialised the H100
    "lspci_nvtrust51_h100_busmaster_off.txt": {("gpu_no_driver_bound", "61:00.0")},
    # EI0002: rank 25's AllReduce notify wait timed out on remote rank 24
    "hccl_vllmascend3413_ei0002_notify_timeout.txt": {("collective_stalled", NPU0)},
    # the HCCL watchdog: ALLREDUCE SeqNum 196 timed out after 3600 s on ranks 0 and 1
    "hccl_vllmascend382_watchdog_allreduce_timeout.txt": {("collective_runtime_error", None)},
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "gpuburn_gpuburn48_2x1080_run.txt": set(),  # 0 errors on both; GPU 1 hotter: info at most
    "nccl_nccltests373_ibext_roce_3node.txt": set(),  # NET/IBext_v8 over RoCE: not a Socket fallback
    "smi_ollama1438_t4_azure.txt": set(),
    "smi_ollama10765_gtx1650_nvcc.txt": set(),
    "smi_ollama11676_rtx4080_logprefix.txt": set(),
    "smi_ollama9362_p100_driver418.txt": set(),  # an old driver: info at most
    "smi_club3090510_2x3090_kmd.txt": set(),  # GPU0 at its 250 W cap while busy: normal load
    "lspci_cloudhv4353_quadro_rtx4000.txt": set(),
    "lspci_kubevirt45_gtx1660s_iommu.txt": set(),
    "dmesg_openlinkhub174_vfio_bound_quoted.txt": set(),  # bound to vfio-pci on purpose: info at most
    "topo_vllm6732_8gpu_nv18_tabs.txt": set(),  # NV18 every pair
    "topo_vllm14537_8gpu_56nics.txt": set(),  # rows GPU2-7 cut: nothing invented
    "dmesg_rocm1758_navi21_init_rings.txt": set(),  # a clean init
    "devicequery_tf18316_1050ti_quoted.txt": set(),
    "nccl_deepspeed5022_topo_paths_indented.txt": set(),  # NVL/NVB: the hybrid cube-mesh design
    "nccltests_dgxspark103_2x_gb10.txt": set(),  # sizes up to 64 KiB: latency-bound, 0 #wrong
    "dmesg_rocm1401_polaris_init_grep.txt": set(),  # a clean init
    "dmesg_rocm1541_mi50_ras_eeprom_i2c.txt": set(),  # RAS EEPROM unreadable (no SMBus on the slot): info at most
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[Finding, str]] = {
    "dmesg_sglang34260_xid13_cga.txt": {("xid", "0000:9A:00.0"): "warn"},
    "smi_hiveos61_gpu_lost_statsjson.txt": {("module_fell_off_bus", "0000:0A:00.0"): "critical"},
    "dmesg_cudasamples48_amdvi_io_page_fault.txt": {("iommu_dma_fault", "0000:07:00.0"): "warn"},
    "smi_instanceloc20_unknown_error_81.txt": {("module_fell_off_bus", "0000:81:00.0"): "critical"},
    "lshw_rocm1638_mi25_mxgpu_unclaimed.txt": {("gpu_no_driver_bound", "AF8C:00:00.0"): "warn"},
    "rocmsmi_rocm1752_vm_no_gpus.txt": {("no_modules_visible", None): "warn"},
    "lspci_nvtrust51_h100_busmaster_off.txt": {("gpu_no_driver_bound", "61:00.0"): "warn"},
    "hccl_vllmascend3413_ei0002_notify_timeout.txt": {("collective_stalled", NPU0): "warn"},
    "hccl_vllmascend382_watchdog_allreduce_timeout.txt": {("collective_runtime_error", None): "warn"},
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module)
TOLD: dict[str, tuple[str, ...]] = {
    "gpufryer_gpufryer10_4gpu_zero_gflops.txt": ("0 Gflops/s",),
    "dmesg_sglang34260_xid13_cga.txt": ("13",),
    "dmesg_rocm5933_7900xtx_comp_ring.txt": ("comp_1.1.1",),
    "dmesg_xformers14_mi25_page1_reset.txt": ("page1",),
    "dmesg_cudasamples48_amdvi_io_page_fault.txt": ("IO_PAGE_FAULT", "iommu=pt"),
    "smi_instanceloc20_unknown_error_81.txt": ("Unknown Error",),
    "lshw_rocm1638_mi25_mxgpu_unclaimed.txt": ("UNCLAIMED",),
    "rocmsmi_rocm4098_4xmi210_driver_not_loaded.txt": ("amdgpu",),
    "rocmsmi_rocm1752_vm_no_gpus.txt": ("No AMD GPUs specified",),
    "dmesg_gpud117_xid45_hung_task.txt": ("45", "blocked"),
    "journal_ogkm1045_rtx5080_reset_required.txt": ("NV_ERR_RESET_REQUIRED",),
    "lspci_nvtrust51_h100_busmaster_off.txt": ("BusMaster",),
    "hccl_vllmascend3413_ei0002_notify_timeout.txt": ("EI0002", "24"),
    "hccl_vllmascend382_watchdog_allreduce_timeout.txt": ("3600", "196"),
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "gpuburn_gpuburn48_2x1080_run.txt": [None, None],
    "gpufryer_gpufryer10_4gpu_zero_gflops.txt": [None] * 4,
    "dmesg_sglang34260_xid13_cga.txt": ["0000:9A:00.0"],
    "nccl_nccltests373_ibext_roce_3node.txt": ["0000:31:00.0"],  # busId 31000 on host bigo
    "smi_ollama1438_t4_azure.txt": ["0001:00:00.0"],  # 00000001:00:00.0, domain 1
    "smi_ollama10765_gtx1650_nvcc.txt": ["0000:01:00.0"],
    "smi_ollama11676_rtx4080_logprefix.txt": ["0000:06:00.0"],
    "smi_ollama9362_p100_driver418.txt": ["0000:00:09.0"],
    "smi_club3090510_2x3090_kmd.txt": ["0000:04:00.0", "0000:0A:00.0"],
    "smi_hiveos61_gpu_lost_statsjson.txt": ["0000:0A:00.0"],
    "lspci_cloudhv4353_quadro_rtx4000.txt": ["0000:65:00.0"],  # functions .1-.3 are not GPUs
    "lspci_kubevirt45_gtx1660s_iommu.txt": ["01:00.0"],
    "dmesg_openlinkhub174_vfio_bound_quoted.txt": ["0000:01:00.0"],
    "topo_vllm6732_8gpu_nv18_tabs.txt": [None] * 8,
    "topo_vllm14537_8gpu_56nics.txt": [None] * 8,  # from the header; rows GPU2-7 cut
    "dmesg_rocm5933_7900xtx_comp_ring.txt": ["0000:03:00.0"],
    "dmesg_xformers14_mi25_page1_reset.txt": ["0000:2B:00.0"],
    "dmesg_rocm1758_navi21_init_rings.txt": ["0000:CC:00.0"],
    "dmesg_cudasamples48_amdvi_io_page_fault.txt": ["0000:07:00.0"],
    "smi_instanceloc20_unknown_error_81.txt": ["0000:81:00.0"],
    "devicequery_tf18316_1050ti_quoted.txt": [None],
    "nccl_deepspeed5022_topo_paths_indented.txt": [f"0000:{b}0:00.0" for b in range(1, 9)],  # bus 10-80:00
    "lshw_rocm1638_mi25_mxgpu_unclaimed.txt": ["AF8C:00:00.0"],  # the Hyper-V VGA is not a compute GPU
    "rocmsmi_rocm4098_4xmi210_driver_not_loaded.txt": [],
    "rocmsmi_rocm1752_vm_no_gpus.txt": [],
    "dmesg_gpud117_xid45_hung_task.txt": ["0000:61:00.0"],
    "nccltests_dgxspark103_2x_gb10.txt": ["000F:01:00.0", "000F:01:00.0"],  # one per host
    "journal_ogkm1045_rtx5080_reset_required.txt": [None],
    "dmesg_rocm1401_polaris_init_grep.txt": ["0000:08:00.0"],
    "dmesg_rocm1541_mi50_ras_eeprom_i2c.txt": [None],
    "lspci_nvtrust51_h100_busmaster_off.txt": ["61:00.0"],
    "hccl_vllmascend3413_ei0002_notify_timeout.txt": [None],
    "hccl_vllmascend382_watchdog_allreduce_timeout.txt": [],  # 2 ranks, devices unknown
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    "gpuburn_gpuburn48_2x1080_run.txt": {"model": ["GTX 1080"] * 2},
    "gpufryer_gpufryer10_4gpu_zero_gflops.txt": {"model": [None] * 4},
    "dmesg_sglang34260_xid13_cga.txt": {"model": [None]},
    "smi_ollama1438_t4_azure.txt": {"model": ["Tesla T4"]},
    "smi_ollama10765_gtx1650_nvcc.txt": {"model": ["GTX 1650"]},
    "smi_ollama11676_rtx4080_logprefix.txt": {"model": ["RTX 4080"]},
    "smi_ollama9362_p100_driver418.txt": {"model": ["P100-PCIE"]},
    "smi_club3090510_2x3090_kmd.txt": {"model": ["RTX 3090"] * 2},
    "smi_hiveos61_gpu_lost_statsjson.txt": {"model": [None]},
    "lspci_cloudhv4353_quadro_rtx4000.txt": {"model": ["Quadro RTX 4000|1eb1|1EB1"]},
    "lspci_kubevirt45_gtx1660s_iommu.txt": {"model": ["GTX 1660 SUPER"]},
    "topo_vllm6732_8gpu_nv18_tabs.txt": {"numa_node": [0, 1, 1, 0, 2, 3, 3, 2]},
    "topo_vllm14537_8gpu_56nics.txt": {"numa_node": [0, 0] + [None] * 6},
    "dmesg_rocm1758_navi21_init_rings.txt": {"model": ["73a5|73A5|Navi 21"]},
    "devicequery_tf18316_1050ti_quoted.txt": {"model": ["GTX 1050 Ti"], "memory_bytes": [4096 * 2**20]},
    "lshw_rocm1638_mi25_mxgpu_unclaimed.txt": {"model": ["MI25"]},
    "nccltests_dgxspark103_2x_gb10.txt": {"model": ["GB10"] * 2},
    "dmesg_rocm1401_polaris_init_grep.txt": {"memory_bytes": [4096 * 2**20]},
    "lspci_nvtrust51_h100_busmaster_off.txt": {"model": ["H100 PCIe"]},
    "hccl_vllmascend3413_ei0002_notify_timeout.txt": {"model": ["Ascend|NPU"]},
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "nccl_nccltests373_ibext_roce_3node.txt": ("bigo", "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"),
    "smi_ollama1438_t4_azure.txt": ("525.147.05",),
    "smi_ollama10765_gtx1650_nvcc.txt": ("550.144.03",),
    "smi_ollama11676_rtx4080_logprefix.txt": ("575.64.05",),
    "smi_club3090510_2x3090_kmd.txt": ("610.43.02",),
    "topo_vllm6732_8gpu_nv18_tabs.txt": ("NIC0", "NIC1"),
    "topo_vllm14537_8gpu_56nics.txt": ("NV18",),
    "nccl_deepspeed5022_topo_paths_indented.txt": ("NET/0",),
    "nccltests_dgxspark103_2x_gb10.txt": ("spark-d708", "spark-dbf4"),
    "lspci_nvtrust51_h100_busmaster_off.txt": ("128G",),  # its BAR1
}

# files gpuvet still gets wrong against the tables, and why; run at HEAD
KNOWN_MISSES: dict[str, str] = {
    "dmesg_rocm1541_mi50_ras_eeprom_i2c.txt": "inventory: no finding (right), but the AMD GPU the three amdgpu lines "
                                              "name (no bus id) is not listed",
    "hccl_vllmascend3413_ei0002_notify_timeout.txt": "severity: collective_stalled (EI0002, remote rank 24) rated "
                                                     "critical where the row says warn",
    "nccl_deepspeed5022_topo_paths_indented.txt": "inventory: no finding (right), the 8 GPUs of the path dump "
                                                  "listed, but NET/0 is not",
    "nccl_nccltests373_ibext_roce_3node.txt": "inventory: the GPU on host bigo listed, but its 4 RoCE HCAs "
                                              "(mlx5_0..3) are not",
    "rocmsmi_rocm1752_vm_no_gpus.txt": "severity: no_modules_visible rated critical where the row says warn",
}


BATCH = Batch(FRESH_S, CAUSES, severity=SEVERITY, told=TOLD, modules=MODULES, fields=FIELDS, said=SAID,
              known_misses=KNOWN_MISSES)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_s_capture_gets_its_blind_diagnosis = BATCH.tests(33)
