"""Batch L (tests/data/captures/fresh_l/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it (the first 25 rows, then an addendum of 8 by a second
collector). The tables below hold the MANIFEST's "a correct tool should report" column for every file (not
what gpuvet prints): CAUSES with SEVERITY where the row rates a finding, MAY where it allows one without
asking for it, TOLD where it names what the finding must cite, MODULES / FIELDS / SAID where it says what
inventory must read; benchmarks/score_manifest.py --batch l scores the batch against them
(tests/support/blind_batch.py).

Read as batches I, J and K are: "no finding" means nothing at warn or above (an info is allowed); "warn or
critical", "critical or warn" and "warn (or critical)" pin no severity; "warn:" pins warn; "critical:" pins
critical. Inventory expectations count: a file whose doctor answer is right and whose inventory is not is a
known miss, its reason starting 'inventory:'. An inventory item is pinned where the row names it as a fact
of the file (a model, bus id, serial, UUID, driver, memory); where the row hedges ('at most', 'or the dGPU',
'nothing or') it is not. nccl-tests' device lines name a PCI bus number ('[0x1a]'), not a bus id: it is
pinned as words inventory must say. Module names follow gpuvet's own (a bus id as 0000:0C:00.0; 'bus id not
in the log' and 'an AMD module, bus id not in the log' where a kernel line names none; None for the node).
Files gpuvet still gets wrong are KNOWN_MISSES, each with why; their test is a strict xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding

FRESH_L = Path(__file__).parents[1] / "data" / "captures" / "fresh_l"
MIB = 1 << 20
NO_BUS = "bus id not in the log"
AMD_NO_BUS = "an AMD module, bus id not in the log"
A40_BUSES = ("0x01", "0x25", "0x41", "0x61", "0x81", "0xa1", "0xc1", "0xe1")

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # two Xid 31 MMU faults (FAULT_PDE, process python): tinygrad's NV backend, the application's
    "dmesg_tinygrad6947_xid31_mmu_fault_4090.txt": {("xid", "0000:01:00.0")},
    # the missing GPU is not in the cut table: nothing may be invented on the GPUs shown
    "smi_cbio81_node_missing_gpu_gtx680_cut.txt": set(),
    # a user's condensed Xid 31 records (no bus id): an MMU fault of the application on an unnamed GPU
    "xidsummary_vllm53726_gb10_xid31_table.txt": {("xid", NO_BUS)},
    # a WARN in amdgpu's teardown (gmc_v9_0_sw_fini, amdgpu_vram_mgr_fini): a GPU failed to initialize
    "dmesg_rocm1038_amdgpu_one_gpu_not_initialized_trace.txt": {("module_driver_warning", AMD_NO_BUS)},
    # ring comp_1.1.0 timeout, ring reset succeeded, then a gfxhub page fault
    "journal_rocm5997_comp_ring_timeout_reset_pagefault.txt": {("module_ring_reset_recovered", "0000:03:00.0"),
                                                               ("module_page_fault", "0000:03:00.0")},
    # MES unresponsive (REMOVE_QUEUE) and a GPU reset
    "dmesg_rocm5724_strixhalo_mes_remove_queue_gpu_reset.txt": {("module_hung_reset", "0000:C5:00.0")},
    "dmesg_gpuowl276_mes_failed_gpu_reset_rdna3.txt": {("module_hung_reset", "0000:03:00.0")},
    # repeated gfxhub VMC / VM faults: the application or driver
    "journal_mbab48_quoted_vmc_page_fault.txt": {("module_page_fault", "0000:09:00.0")},
    "journal_ethminer1351_quoted_amdgpu_vm_fault_rx580.txt": {("module_page_fault", "0000:07:00.0")},
    "dmesg_rocm2596_quoted_blender_gfxhub_page_fault.txt": {("module_page_fault", "0000:11:00.0")},
    # a VM fault, then the queue eviction's fence timeout (the GPU hung)
    "dmesg_mandelbulber663_rx580_gpu_fault_fence_timeout.txt": {("module_page_fault", "0000:1D:00.0"),
                                                                ("module_fence_timeout", "0000:1D:00.0")},
    # D3cold to D0 failed, RmInitAdapter failed (0x22:0x56:667), repeated
    "dmesg_gpupt39_d3cold_rminitadapter_failed.txt": {("module_init_failed", "0000:01:00.0")},
    # Xid 13 graphics exceptions: the application/driver
    "dmesg_vllm5901_a800_xid13_graphics_exception.txt": {("xid", "0000:43:00.0")},
    # no GPU fault line in the paste; a warn on 'irq 16: nobody cared' (host IRQ) is fair, not asked for
    "journal_cachyos1019_nvrm_load_resource_sanity.txt": set(),
    # Xorg relayed by bumblebeed: '(EE) NVIDIA(GPU-0): Failed to initialize the NVIDIA GPU at PCI:1:0:0'
    "journal_bumblebee550_optirun_xorg_failed_init_gpu.txt": {("module_init_failed", "0000:01:00.0")},
    # the issue form holds no readings: at most a note, nothing critical
    "report_ogkm1193_2x_rtx2080s_fan_err_open_module.txt": set(),
    # rank 1 could not get hcclUniqueId from rank 0 at the c10d store: HCCL's communicator never came up
    "hccl_vllmascend5135_300i_tp2_communicator_recv_failed.txt": {("collective_init_failed", None)},
    # reproduction commands, lsmod, /proc/driver/nvidia/version: no hardware finding can be drawn
    "report_ogkm326_rtx3080_open_module_version_lsmod.txt": set(),
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "smi_gpustat62_4x1080ti_table_cut.txt": set(),
    "smi_paddlecloud344_8x_p40_table_cut.txt": set(),
    "smi_ollama4139_container_2x_gtx1660_cut.txt": set(),
    # PORT_ACTIVE; active_mtu 1024 below max_mtu 4096 is at most an info/warn, not asked for
    "nccl_nccl426_ibv_devinfo_rocev100_header_cut.txt": set(),
    "devicequery_cudaminer57_gtx460_cut.txt": set(),
    "devicequery_pocl890_tegra_x1_nano_cut.txt": set(),
    "dmesg_ogkm489_laptop_nvrm_chipset_setup_error_benign.txt": set(),  # the chipset message is benign
    "smi_club1107_2x_rtx5090_kmd610_cut.txt": set(),
    "rocmsmi_llamacpp3991_2x_7900xtx_plus_igpu_concise.txt": set(),  # unsupported fields are no fault
    "nccl_nccltests74_8x_a40_header_cut.txt": set(),  # no result rows to judge
    "lspci_club1090_nnk_2x_rtx3090.txt": set(),
    "dcgm_dcgm272_nvvs_debug_pcie_start_after_gpuburn.txt": set(),  # debug lines only
    "nccl_nccl676_dgxa100_ibext_disable_roce_chosen.txt": set(),  # NCCL chose NET/IB RoCE: info at most
    "lspci_club931_tree_2x_rtx5090_cut.txt": set(),
    # an NHC bandwidth check's 15 GB/s: the container's setup (UCX_TLS=tcp), not the host: no critical, no module
    "nccl_aznhc142_h200_nhc_allreduce_15gbs_artifact.txt": set(),
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[Finding, str]] = {
    "dmesg_tinygrad6947_xid31_mmu_fault_4090.txt": {("xid", "0000:01:00.0"): "warn"},
    "xidsummary_vllm53726_gb10_xid31_table.txt": {("xid", NO_BUS): "warn"},
    "journal_mbab48_quoted_vmc_page_fault.txt": {("module_page_fault", "0000:09:00.0"): "warn"},
    "journal_ethminer1351_quoted_amdgpu_vm_fault_rx580.txt": {("module_page_fault", "0000:07:00.0"): "warn"},
    "dmesg_rocm2596_quoted_blender_gfxhub_page_fault.txt": {("module_page_fault", "0000:11:00.0"): "warn"},
    "dmesg_gpupt39_d3cold_rminitadapter_failed.txt": {("module_init_failed", "0000:01:00.0"): "critical"},
    "dmesg_vllm5901_a800_xid13_graphics_exception.txt": {("xid", "0000:43:00.0"): "warn"},
    "hccl_vllmascend5135_300i_tp2_communicator_recv_failed.txt": {("collective_init_failed", None): "warn"},
}

# file -> {cause: the highest severity it may have}: what the row allows without asking for it
MAY: dict[str, dict[str, str]] = {
    # 'if the 15 GB/s vs 431 GB/s is read, a warning on the measurement/setup, not on a module'
    "nccl_aznhc142_h200_nhc_allreduce_15gbs_artifact.txt": {"node_health_check_failed": "warn"},
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module)
TOLD: dict[str, tuple[str, ...]] = {
    "dmesg_tinygrad6947_xid31_mmu_fault_4090.txt": ("31",),
    "xidsummary_vllm53726_gb10_xid31_table.txt": ("31",),
    "dmesg_rocm2596_quoted_blender_gfxhub_page_fault.txt": ("blender",),
    "dmesg_gpupt39_d3cold_rminitadapter_failed.txt": ("RmInitAdapter",),
    "dmesg_vllm5901_a800_xid13_graphics_exception.txt": ("13",),
    "hccl_vllmascend5135_300i_tp2_communicator_recv_failed.txt": ("HCCL",),
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "smi_gpustat62_4x1080ti_table_cut.txt": ["0000:03:00.0", "0000:04:00.0", "0000:81:00.0", "0000:82:00.0"],
    "dmesg_tinygrad6947_xid31_mmu_fault_4090.txt": ["0000:01:00.0"],
    "smi_cbio81_node_missing_gpu_gtx680_cut.txt": ["0000:03:00.0", "0000:04:00.0"],
    "smi_paddlecloud344_8x_p40_table_cut.txt": ["0000:04:00.0", "0000:05:00.0", "0000:06:00.0"],
    "smi_ollama4139_container_2x_gtx1660_cut.txt": ["0000:01:00.0", "0000:04:00.0"],
    "nccl_nccl426_ibv_devinfo_rocev100_header_cut.txt": [None, None],  # one on each host
    "xidsummary_vllm53726_gb10_xid31_table.txt": [],
    "dmesg_rocm1038_amdgpu_one_gpu_not_initialized_trace.txt": [],
    "devicequery_cudaminer57_gtx460_cut.txt": [None],
    "devicequery_pocl890_tegra_x1_nano_cut.txt": [None],
    "journal_rocm5997_comp_ring_timeout_reset_pagefault.txt": ["0000:03:00.0"],
    "dmesg_rocm5724_strixhalo_mes_remove_queue_gpu_reset.txt": ["0000:C5:00.0"],
    "journal_mbab48_quoted_vmc_page_fault.txt": ["0000:09:00.0"],
    "dmesg_gpuowl276_mes_failed_gpu_reset_rdna3.txt": ["0000:03:00.0"],
    "dmesg_gpupt39_d3cold_rminitadapter_failed.txt": ["0000:01:00.0"],
    "dmesg_vllm5901_a800_xid13_graphics_exception.txt": ["0000:43:00.0"],
    "journal_cachyos1019_nvrm_load_resource_sanity.txt": [],
    "journal_ethminer1351_quoted_amdgpu_vm_fault_rx580.txt": ["0000:07:00.0"],
    "dmesg_mandelbulber663_rx580_gpu_fault_fence_timeout.txt": ["0000:1D:00.0"],
    "dmesg_rocm2596_quoted_blender_gfxhub_page_fault.txt": ["0000:11:00.0"],
    "smi_club1107_2x_rtx5090_kmd610_cut.txt": ["0000:01:00.0", "0000:02:00.0"],
    "rocmsmi_llamacpp3991_2x_7900xtx_plus_igpu_concise.txt": [None] * 3,
    "nccl_nccltests74_8x_a40_header_cut.txt": [None] * 8,
    "lspci_club1090_nnk_2x_rtx3090.txt": ["0000:0B:00.0", "0000:0C:00.0"],
    "dcgm_dcgm272_nvvs_debug_pcie_start_after_gpuburn.txt": [],
    "journal_bumblebee550_optirun_xorg_failed_init_gpu.txt": ["0000:01:00.0"],
    "nccl_nccl676_dgxa100_ibext_disable_roce_chosen.txt": [],
    "lspci_club931_tree_2x_rtx5090_cut.txt": [],
    "report_ogkm1193_2x_rtx2080s_fan_err_open_module.txt": [None, None],
    "nccl_aznhc142_h200_nhc_allreduce_15gbs_artifact.txt": [],
    "hccl_vllmascend5135_300i_tp2_communicator_recv_failed.txt": [],
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    "smi_gpustat62_4x1080ti_table_cut.txt": {"model": ["GeForce GTX 108"] * 4},  # the table's own '...'
    "dmesg_tinygrad6947_xid31_mmu_fault_4090.txt": {"serial": ["1710424007242"]},
    "smi_cbio81_node_missing_gpu_gtx680_cut.txt": {"model": ["GTX 680"] * 2},
    "smi_paddlecloud344_8x_p40_table_cut.txt": {"model": ["Tesla P40"] * 3},
    "smi_ollama4139_container_2x_gtx1660_cut.txt": {"model": ["GTX 1660"] * 2},
    "nccl_nccl426_ibv_devinfo_rocev100_header_cut.txt": {"model": ["V100-SXM2-32GB"] * 2},
    "devicequery_cudaminer57_gtx460_cut.txt": {"model": ["GeForce GTX 460"], "memory_bytes": [1023 * MIB]},
    "devicequery_pocl890_tegra_x1_nano_cut.txt": {"model": ["Tegra X1"], "memory_bytes": [3960 * MIB]},
    "smi_club1107_2x_rtx5090_kmd610_cut.txt": {"model": ["RTX 5090"] * 2},
    "nccl_nccltests74_8x_a40_header_cut.txt": {"model": ["A40"] * 8},
    "lspci_club1090_nnk_2x_rtx3090.txt": {"model": ["RTX 3090"] * 2},
    "report_ogkm1193_2x_rtx2080s_fan_err_open_module.txt": {
        "model": ["RTX 2080 SUPER"] * 2,
        "uuid": ["GPU-6304bf68-46a6-459f-2dc0-682f676a8d85", "GPU-1177f867-a501-9c09-29b9-30540e93cc9a"]},
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "smi_cbio81_node_missing_gpu_gtx680_cut.txt": ("331.62",),
    "smi_ollama4139_container_2x_gtx1660_cut.txt": ("550.78",),
    # the hosts, the RoCE NIC, and the device lines' bus number '[0x1a]'
    "nccl_nccl426_ibv_devinfo_rocev100_header_cut.txt": ("machine-17", "machine-19", "mlx5_bond_0", "0x1a"),
    "devicequery_cudaminer57_gtx460_cut.txt": ("5.0",),  # driver/runtime 5.0/5.0
    "smi_club1107_2x_rtx5090_kmd610_cut.txt": ("610.57.04",),
    "nccl_nccltests74_8x_a40_header_cut.txt": A40_BUSES,
    "report_ogkm1193_2x_rtx2080s_fan_err_open_module.txt": ("610.43.02",),
    "report_ogkm326_rtx3080_open_module_version_lsmod.txt": ("515.57",),  # /proc's version (captures/env_report.py)
}

# files gpuvet still gets wrong against the tables, and why
KNOWN_MISSES: dict[str, str] = {
    "hccl_vllmascend5135_300i_tp2_communicator_recv_failed.txt": "partial: collective_init_failed is critical where "
                                                                 "the row says warn (the knowledge base's severity: "
                                                                 "the job stops before its first collective)",
}


BATCH = Batch(FRESH_L, CAUSES, severity=SEVERITY, may=MAY, told=TOLD, modules=MODULES, fields=FIELDS, said=SAID,
              known_misses=KNOWN_MISSES)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_l_capture_gets_its_blind_diagnosis = BATCH.tests(33)
