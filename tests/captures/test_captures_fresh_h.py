"""Batch H (tests/data/captures/fresh_h/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold the MANIFEST's "a correct tool should
report" column for every file (not what gpuvet prints): CAUSES with SEVERITY where the row rates a finding,
MAY where it allows one without asking for it, TOLD where it names what the finding must cite, MODULES /
FIELDS / SAID / NICS / HOSTS where it says what inventory and topo must read; benchmarks/score_manifest.py
--batch h scores the batch against them (tests/support/blind_batch.py).

As the MANIFEST scored its rows, "no finding" means nothing at warn or above; a row that says "warn/critical"
or "critical or warn" pins no severity. Its inventory expectations count here although the MANIFEST scored
them apart (its first-contact 27/37 is doctor's answer alone): a file whose doctor answer is right and whose
inventory is not is a known miss all the same, its line starting 'inventory:'. Module names follow gpuvet's
own (a bus id as 0000:0C:00.0; 'gpuN' for a topo -m module; 'host GPU n' / 'HOST GPU n' for a runtime log's
device; 'host and GPU not in the log'; node findings name no module). Files gpuvet still gets wrong are
KNOWN_MISSES, each with why (the MANIFEST's after-fixes cell, or its first-contact cell where that says
'(pending)'); their test is a strict xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding, Nic

FRESH_H = Path(__file__).parents[1] / "data" / "captures" / "fresh_h"
NO_HOST = "host and GPU not in the log"
NO_BUS = "bus id not in the log"
MIB = 2**20

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # nvidia-smi cannot reach the module: 'GPU is lost' / 'Unknown Error' (glued to Chinese prose; with the root
    # port's corrected Data Link Layer Timeouts above it)
    "smi_marian251_gpu_lost_inline_fence.txt": {("module_fell_off_bus", "0000:03:00.0")},
    "smi_chatglmft95_chinese_prose_unknown_error_3090.txt": {("module_fell_off_bus", "0000:05:00.0")},
    "smi_kern_returnn1486_unknown_error_aer_dll_timeout_dmesgH.txt": {("module_fell_off_bus", "0000:03:00.0"),
                                                                      ("pcie_aer_errors", "0000:00:03.0")},
    # gpu-burn never ran ('load module' failed, no work on any of the 6): a setup fault, no hardware named
    "gpuburn_gpuburn7_6gpu_load_module_all_ok_no_work.txt": {("application_cuda_error", None)},
    # topo -m rows, header cut: GPU2 reads NODE/SYS to every peer where the others read NV18; one module named
    "topo_vllm16336_8xb200_gpu2_no_nvlink_text_fence.txt": {("nvlink_down", "gpu2")},
    # NVLS setup failed (transport/nvls.cc Cuda failure 1) and HPL's CUDA 700 on host gpu46
    "nccl_warn_nccl1562_h200_nvls_invalid_argument_list.txt": {("nvls_setup_failed", "gpu46 GPU 0")},
    # a Completion Timeout the kernel's AER could not recover (no handler): the eGPU is unusable, Xid 31 follows
    "kern_ogkm1229_egpu_5090_aer_cmpltto_xid31.txt": {("module_fell_off_bus", "0000:63:00.0")},
    # a fatal Surprise Down on the root port (no recovery line in the excerpt): the card below it is lost
    "aer_vgpuunlock114_2080ti_pve_fatal_sdes_rootport.txt": {("pcie_aer_fatal", "0000:00:01.1")},
    # NET/IB found no device, NCCL uses NET/Socket over eno3 for a multi-node DDP job (the host's lines)
    "nccl_info_pytorch124380_ibext_no_device_socket_eno3.txt": {("nccl_socket_fallback", "10-12-3-162")},
    # HCCL EI0002 notify wait timeout on rank 6 of 8 (Broadcast); Ascend EE1002 stream sync timeout (507046)
    "hccl_lmdeploy3354_910_ei0002_notify_timeout_rank6.txt": {("collective_stalled", NO_HOST)},
    "ascend_pytorch48_ee1002_stream_sync_timeout_507046.txt": {("npu_runtime_error", NO_HOST)},
    # amdgpu: 'GPU thermal throttling temperature reached ... HBM' on the MI100
    "amd_kern_rocm1468_mi100_hbm_thermal_throttle_sensors.txt": {("thermal_throttling", "0000:29:00.0")},
    # NET/IB completion status 12 (retry exceeded), vendor err 129, on mlx5_10 towards 192.168.3.5
    "nccl_warn_nccl1698_ib_status12_vendor129_mlx5_10_intermittent.txt": {("collective_runtime_error",
                                                                           "mycl-g2 GPU 6")},
    # the NVIDIA probe was never called for the 3 devices (nouveau or another driver owns them): the driver
    # initialised none of them. The kernel line gives a count, no bus id: gpuvet's module with no bus id
    "kern_bigdata133_probe_not_called_nouveau_3dev_chinese.txt": {("module_init_failed", NO_BUS)},
    # the driver could not bring the module up: RmInitAdapter failed (BIOS: above 4G / resizable BAR off; a
    # Raspberry Pi's root complex), or the 280.13 release does not support the GT 520M (probe failed)
    "kern_ogkm862_5090_no_devices_rminit_bar_syslog.txt": {("module_init_failed", "0000:01:00.0")},
    "kern_bumblebeeold583_2011_gt520m_not_supported_probe_failed.txt": {("module_init_failed", "0000:01:00.0")},
    "kern_rpi26_gtx750ti_aarch64_rminit_failed.txt": {("module_init_failed", "0000:01:00.0")},
    # deviceQuery: cudaGetDeviceCount returned 35, the driver older than the CUDA runtime
    "devq_tf990_returned35_driver_insufficient_sudo_prompt.txt": {("driver_runtime_mismatch", None)},
    # amdgpu: Fatal error during GPU init, probe failed with error -12 on both MI210
    "amd_kern_rocm6281_2x_mi210_probe_failed_12_dmesg_grep.txt": {("module_init_failed", "0000:C3:00.0"),
                                                                  ("module_init_failed", "0000:83:00.0")},
    # p2pBandwidthLatencyTest: 'P2P=Enabled' pairs at ~6-8.6 GB/s bidirectional, far below any PCIe path: P2P
    # does not work for any pair (traffic staged through the host), one node finding, not 12 degraded links
    "p2p_nccl1127_8x3090_bidir_enabled_6gbs_cut.txt": {("p2p_disabled", None)},
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "topo_club3090_1140_2x5090_phb_p2p_gns.txt": set(),  # PHB is the board's design; GNS at most info
    "smiq_k8svgpu25_titanv_in_pod_head_cut.txt": set(),
    "smiq_dcgm50_remapped_rows_temps_fragment.txt": set(),
    "smixml_pai2192_ecc_errors_fragment.xml": set(),
    "topo_vllm31594_8xb200_nic11nic12_merged_header.txt": set(),
    "topo_unsloth3872_8xb200_nv18_4numa_cut.txt": set(),
    "xpusmi_xpumanager158_b580_default_table_no_name.txt": set(),
    "xpusmi_sglang38873_arc_pro_b60_topology_discovery_cut.txt": set(),
    "dcgmi_kempnerpulse15_discovery_8xh100_elided.txt": set(),
    "smi_dcgm91_h100pcie_mig_on_table_cut.txt": set(),  # MIG on is a configuration
    "lspci_cloudstack11701_nnm_8x_mi325x.txt": set(),
    "smiq_ogkm421_rtx_a3000_laptop_head.txt": set(),
    "smi_openbmc637_4x_p100_sxm2_ppc64_2016_table.txt": set(),
    "smiq_mangohud636_d_performance_idle_active.txt": set(),  # 'Idle' is not a throttle fault
    "nccltests_nccltests287_5090_alltoall_single_rank_sudo.txt": set(),  # one rank: busbw 0 by design
    "devq_rpgremode9_gtx770_after_driver_update.txt": set(),
    "ibvdevinfo_deepep55_ib_ports_active_fragment.txt": set(),
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding (not where it says "warn or critical")
SEVERITY: dict[str, dict[Finding, str]] = {
    "smi_marian251_gpu_lost_inline_fence.txt": {("module_fell_off_bus", "0000:03:00.0"): "critical"},
    "smi_chatglmft95_chinese_prose_unknown_error_3090.txt": {("module_fell_off_bus", "0000:05:00.0"): "critical"},
    "smi_kern_returnn1486_unknown_error_aer_dll_timeout_dmesgH.txt": {
        ("module_fell_off_bus", "0000:03:00.0"): "critical", ("pcie_aer_errors", "0000:00:03.0"): "warn"},
    "gpuburn_gpuburn7_6gpu_load_module_all_ok_no_work.txt": {("application_cuda_error", None): "warn"},
    "kern_ogkm1229_egpu_5090_aer_cmpltto_xid31.txt": {("module_fell_off_bus", "0000:63:00.0"): "critical"},
    "aer_vgpuunlock114_2080ti_pve_fatal_sdes_rootport.txt": {("pcie_aer_fatal", "0000:00:01.1"): "critical"},
    "nccl_info_pytorch124380_ibext_no_device_socket_eno3.txt": {("nccl_socket_fallback", "10-12-3-162"): "warn"},
    "ascend_pytorch48_ee1002_stream_sync_timeout_507046.txt": {("npu_runtime_error", NO_HOST): "warn"},
    "amd_kern_rocm1468_mi100_hbm_thermal_throttle_sensors.txt": {("thermal_throttling", "0000:29:00.0"): "warn"},
    "nccl_warn_nccl1698_ib_status12_vendor129_mlx5_10_intermittent.txt": {("collective_runtime_error",
                                                                           "mycl-g2 GPU 6"): "warn"},
    "kern_bigdata133_probe_not_called_nouveau_3dev_chinese.txt": {("module_init_failed", NO_BUS): "critical"},
    "kern_ogkm862_5090_no_devices_rminit_bar_syslog.txt": {("module_init_failed", "0000:01:00.0"): "critical"},
    "kern_bumblebeeold583_2011_gt520m_not_supported_probe_failed.txt": {("module_init_failed", "0000:01:00.0"):
                                                                        "critical"},
    "kern_rpi26_gtx750ti_aarch64_rminit_failed.txt": {("module_init_failed", "0000:01:00.0"): "critical"},
    "amd_kern_rocm6281_2x_mi210_probe_failed_12_dmesg_grep.txt": {("module_init_failed", "0000:C3:00.0"): "critical",
                                                                  ("module_init_failed", "0000:83:00.0"): "critical"},
    "p2p_nccl1127_8x3090_bidir_enabled_6gbs_cut.txt": {("p2p_disabled", None): "warn"},
}

# file -> {cause: the highest severity it may have}: the same fault said once more, as the row allows it
MAY: dict[str, dict[str, str]] = {
    # 'the Xid 31 MMU fault follows from it'; the AER lines are the same fault said again
    "kern_ogkm1229_egpu_5090_aer_cmpltto_xid31.txt": {"xid": "warn", "pcie_aer_errors": "warn",
                                                      "pcie_aer_fatal": "critical",
                                                      "pcie_fatal_unrecovered": "critical"},
    "aer_vgpuunlock114_2080ti_pve_fatal_sdes_rootport.txt": {"pcie_aer_errors": "warn"},
    "smi_kern_returnn1486_unknown_error_aer_dll_timeout_dmesgH.txt": {"pcie_port_receiver_errors": "warn"},
    "nccl_warn_nccl1562_h200_nvls_invalid_argument_list.txt": {"application_cuda_error": "critical",  # the HPL 700
                                                               "collective_runtime_error": "critical"},
    "kern_bigdata133_probe_not_called_nouveau_3dev_chinese.txt": {"module_cannot_attach": "critical"},
    "kern_ogkm862_5090_no_devices_rminit_bar_syslog.txt": {"no_modules_visible": "critical"},  # 'No devices found'
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module)
TOLD: dict[str, tuple[str, ...]] = {
    "smi_marian251_gpu_lost_inline_fence.txt": ("GPU is lost",),
    "smi_chatglmft95_chinese_prose_unknown_error_3090.txt": ("Unknown Error",),
    "smi_kern_returnn1486_unknown_error_aer_dll_timeout_dmesgH.txt": ("Unknown Error", "Data Link Layer"),
    "gpuburn_gpuburn7_6gpu_load_module_all_ok_no_work.txt": ("load module",),
    "nccl_warn_nccl1562_h200_nvls_invalid_argument_list.txt": ("invalid argument", "700"),  # 'also the CUDA 700'
    "aer_vgpuunlock114_2080ti_pve_fatal_sdes_rootport.txt": ("SDES",),
    "nccl_info_pytorch124380_ibext_no_device_socket_eno3.txt": ("eno3",),
    "hccl_lmdeploy3354_910_ei0002_notify_timeout_rank6.txt": ("EI0002", "Broadcast"),  # the stalled collective
    "ascend_pytorch48_ee1002_stream_sync_timeout_507046.txt": ("EE1002",),
    "amd_kern_rocm1468_mi100_hbm_thermal_throttle_sensors.txt": ("HBM",),
    "nccl_warn_nccl1698_ib_status12_vendor129_mlx5_10_intermittent.txt": ("mlx5_10", "192.168.3.5", "vendor err 129"),
    "kern_ogkm862_5090_no_devices_rminit_bar_syslog.txt": ("BAR",),  # the fix: above 4G / resizable BAR
    "kern_bumblebeeold583_2011_gt520m_not_supported_probe_failed.txt": ("not supported",),
    "devq_tf990_returned35_driver_insufficient_sudo_prompt.txt": ("35",),
    "kern_bigdata133_probe_not_called_nouveau_3dev_chinese.txt": ("nouveau",),
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "topo_club3090_1140_2x5090_phb_p2p_gns.txt": [None, None],
    "smiq_k8svgpu25_titanv_in_pod_head_cut.txt": ["0000:82:00.0"],
    "smiq_dcgm50_remapped_rows_temps_fragment.txt": [None],
    "smi_marian251_gpu_lost_inline_fence.txt": ["0000:03:00.0"],
    "smixml_pai2192_ecc_errors_fragment.xml": [],  # no module name or bus id in the fragment
    "gpuburn_gpuburn7_6gpu_load_module_all_ok_no_work.txt": [None] * 6,
    "topo_vllm31594_8xb200_nic11nic12_merged_header.txt": [None] * 8,
    "xpusmi_xpumanager158_b580_default_table_no_name.txt": ["0000:09:00.0"],
    "xpusmi_sglang38873_arc_pro_b60_topology_discovery_cut.txt": ["0000:17:00.0"],  # only device 0 shown
    "dcgmi_kempnerpulse15_discovery_8xh100_elided.txt": ["0000:19:00.0"],  # the other 7 elided
    "smi_dcgm91_h100pcie_mig_on_table_cut.txt": ["0000:17:00.0"],
    "lspci_cloudstack11701_nnm_8x_mi325x.txt": ["05:00.0", "15:00.0", "65:00.0", "75:00.0", "85:00.0"],
    "smiq_ogkm421_rtx_a3000_laptop_head.txt": ["0000:01:00.0"],
    "smi_openbmc637_4x_p100_sxm2_ppc64_2016_table.txt": ["0002:01:00.0", "0003:01:00.0", "0006:01:00.0",
                                                         "0007:01:00.0"],
    "smiq_mangohud636_d_performance_idle_active.txt": ["0000:0E:00.0"],
    "kern_bigdata133_probe_not_called_nouveau_3dev_chinese.txt": ["0000:5A:00.0", "0000:5E:00.0", "0000:62:00.0"],
    "amd_kern_rocm6281_2x_mi210_probe_failed_12_dmesg_grep.txt": ["83:00.0", "C3:00.0"],  # lspci's order
    "nccltests_nccltests287_5090_alltoall_single_rank_sudo.txt": [None],
    "devq_rpgremode9_gtx770_after_driver_update.txt": [None],
    "amd_kern_rocm1468_mi100_hbm_thermal_throttle_sensors.txt": ["0000:29:00.0"],
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    "topo_club3090_1140_2x5090_phb_p2p_gns.txt": {"numa_node": [0, 0]},
    "smiq_k8svgpu25_titanv_in_pod_head_cut.txt": {"serial": ["0324917182924"], "vbios_version": ["88.00.36.00.01"],
                                                  "pcie_gen_max": [3]},
    "gpuburn_gpuburn7_6gpu_load_module_all_ok_no_work.txt": {"model": ["TITAN RTX", "RTX 2080 Ti", "RTX 2080 Ti",
                                                                       "RTX 2080 Ti", "RTX 2080 Ti", "TITAN RTX"]},
    "xpusmi_xpumanager158_b580_default_table_no_name.txt": {"model": ["Intel"], "memory_bytes": [12216 * MIB],
                                                            "power_limit_w": [190.0]},
    "xpusmi_sglang38873_arc_pro_b60_topology_discovery_cut.txt": {"model": ["Arc(TM) Pro B60|Arc Pro B60"]},
    "dcgmi_kempnerpulse15_discovery_8xh100_elided.txt": {"model": ["H100 80GB HBM3"]},
    "smi_dcgm91_h100pcie_mig_on_table_cut.txt": {"model": ["H100 PCIe"], "memory_bytes": [81559 * MIB],
                                                 "power_limit_w": [350.0]},
    "lspci_cloudstack11701_nnm_8x_mi325x.txt": {"model": ["MI325X"] * 5},
    "smiq_ogkm421_rtx_a3000_laptop_head.txt": {"model": ["RTX A3000 Laptop GPU"],
                                               "vbios_version": ["94.04.42.40.02"]},
    "smi_openbmc637_4x_p100_sxm2_ppc64_2016_table.txt": {"model": ["Tesla P100-SXM2"] * 4},
    # lspci's third line is cut after 'NVIDIA': its device id is not in the file
    "kern_bigdata133_probe_not_called_nouveau_3dev_chinese.txt": {"model": ["1db6|V100", "1db6|V100", "NVIDIA"]},
    "amd_kern_rocm6281_2x_mi210_probe_failed_12_dmesg_grep.txt": {"model": ["MI210"] * 2},
    "nccltests_nccltests287_5090_alltoall_single_rank_sudo.txt": {"model": ["RTX 5090"]},
    "devq_rpgremode9_gtx770_after_driver_update.txt": {"model": ["GeForce GTX 770"], "memory_bytes": [2047 * MIB]},
    "amd_kern_rocm1468_mi100_hbm_thermal_throttle_sensors.txt": {"model": ["MI100|AMD"]},
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "topo_club3090_1140_2x5090_phb_p2p_gns.txt": ("0-63",),  # CPU affinity
    "topo_unsloth3872_8xb200_nv18_4numa_cut.txt": ("0-27", "28-55", "56-83"),
    "dcgmi_kempnerpulse15_discovery_8xh100_elided.txt": ("8 GPUs",),  # '8 GPUs found (Active)'
    "smiq_mangohud636_d_performance_idle_active.txt": ("495.44",),  # the driver
    "nccltests_nccltests287_5090_alltoall_single_rank_sudo.txt": ("GENOA-01",),
    "devq_rpgremode9_gtx770_after_driver_update.txt": ("7.0", "6.5"),  # driver / runtime CUDA versions
    "ibvdevinfo_deepep55_ib_ports_active_fragment.txt": ("mlx5_3", "28.37.1700"),
}

NICS: dict[str, list[Nic]] = {}

# topo -m: the host side of each GPU, as its NUMA Affinity column says
HOSTS: dict[str, list[str]] = {
    "topo_club3090_1140_2x5090_phb_p2p_gns.txt": ["cpu0", "cpu0"],
}

# files gpuvet still gets wrong against the tables, and why (the MANIFEST's after-fixes cell, else its
# first-contact cell); run at 169a7de
KNOWN_MISSES: dict[str, str] = {
    "nccl_info_pytorch124380_ibext_no_device_socket_eno3.txt": "miss, decided: one host on NET/Socket after NET/IB "
                                                               "'No device found' is can't tell (the log proves no "
                                                               "second node), as batch G's nccl1519",
}



BATCH = Batch(FRESH_H, CAUSES, severity=SEVERITY, may=MAY, told=TOLD, modules=MODULES, fields=FIELDS, said=SAID,
              nics=NICS, hosts=HOSTS, known_misses=KNOWN_MISSES)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_h_capture_gets_its_blind_diagnosis = BATCH.tests(37)
