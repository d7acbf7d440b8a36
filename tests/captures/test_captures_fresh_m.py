"""Batch M (tests/data/captures/fresh_m/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold the MANIFEST's "a correct tool should
report" column for every file (not what gpuvet prints): CAUSES with SEVERITY where the row rates a finding,
MAY where it allows one without asking for it, TOLD where it names what the finding must cite, MODULES /
FIELDS / SAID where it says what inventory must read; benchmarks/score_manifest.py --batch m scores the batch
against them (tests/support/blind_batch.py).

Read as batches K and L are: "no finding" means nothing at warn or above (an info is allowed); "warn or
critical" and "critical or warn" pin no severity; "warn:" pins warn; "critical:" pins critical. Inventory
expectations count: a file whose doctor answer is right and whose inventory is not is a known miss, its
reason starting 'inventory:'. An inventory item is pinned where the row names it as a fact of the file (a
model, bus id, UUID, driver, memory, link); where the row hedges ('nothing reliable', 'at most', 'or none',
'unreliable', '~') it is not. A healthy file refused (exit 2) is a miss: no row here accepts a refusal.
Module names follow gpuvet's own (a bus id as 0000:0C:00.0; 'bus id not in the log' and 'an AMD module, bus
id not in the log' where a kernel line names none; 'HOST GPU N' where an NCCL line's prefix names its host and
device; 'host and GPU not in the log' for a collective's finding where the row names no host or device; None
for the node).
Files gpuvet still gets wrong are KNOWN_MISSES, each with why; their test is a strict xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding

FRESH_M = Path(__file__).parents[1] / "data" / "captures" / "fresh_m"
MIB = 1 << 20
NO_BUS = "bus id not in the log"
AMD_NO_BUS = "an AMD module, bus id not in the log"
NO_HOST = "host and GPU not in the log"
NCCL925_BUSES = ["0000:16:00.0", "0000:10:00.0", "0000:49:00.0", "0000:4D:00.0", "0000:8F:00.0", "0000:8A:00.0",
                 "0000:C6:00.0", "0000:CA:00.0"]  # the NET/7 line's GPU/16000 … GPU/CA000, in its order

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # ring gfx timeout, then GPU Recovery Failed: -110 (sdma0 ring test failed): wedged until a reboot
    "journal_qubes7648_amdgpu_gfx_timeout_recovery_failed_indented.txt": {("module_hung_reset", "0000:04:00.0"),
                                                                          ("module_needs_reset", "0000:04:00.0")},
    # the open kernel module's GSP falcon core dump (kflcnCoreDumpNondestructive TRACE) after a GSP hang
    "kmsg_ogkm446_talos_prefix_gsp_coredump_trace_cut.txt": {("module_needs_reset", NO_BUS)},
    # uccl: 'Failed to modify QP to RTR: Connection timed out' (errno 110) on ACTIVE RoCE ports: the network
    "rdma_uccl641_mi355x_ionic_modify_qp_rtr_timeout_cut.txt": {("rdma_test_failed", None)},
    # NCCL WARN ibv_modify_qp INIT->RTR 110 on host-01.example.com [5]: the rail/cross-NIC configuration
    "nccl_nccl2013_hgx_ibv_modify_qp_110_cross_nic.txt": {("collective_link_failed", "host-01.example.com GPU 5")},  # R14A
    # 'Cannot get number of CUDA devices: operation not supported' while lspci lists 4 NVIDIA GPUs: the runtime
    # sees no GPU it can use (a driver/runtime problem, not the program's own error)
    "lspci_gpujpeg20_quoted_4x_1b06_cuda_count_fail.txt": {("framework_sees_no_module", None)},
    # two GTX 1060 on different driver versions and 'CudaDevicesDetection found no devices': reinstall the driver
    "winlog_nhm1001_2x_gtx1060_mixed_driver_no_cuda_devices_cut.txt": {("framework_sees_no_module", None)},
    # PSP firmware loading failed, hw_init of <psp> failed -22, amdgpu_device_ip_init failed
    "dmesg_lrb384_amdgpu_psp_fw_load_failed_minus22_cut.txt": {("module_init_failed", "0000:03:00.0")},
    # drmn0 'Fatal error during GPU init' after PSP firmware loading failed; attaches after the fix: at most warn
    "dmesg_kmsdrm234_freebsd_drmn0_psp_load_fatal_then_ok.txt": {("module_init_failed", AMD_NO_BUS)},
    # amdgpu/psp_13_0_8_toc.bin missing (-2): Fatal error during GPU init
    "dmesg_kernelci2238_amdgpu_psp_toc_missing_fatal_init.txt": {("module_init_failed", "0000:04:00.0")},
    # 'GPU2: unable to get fan speed - GPU is lost (15)': the module on the riser dropped off the bus
    "minerlog_trex642_3060ti_riser_gpu_lost_15_cut.txt": {("module_fell_off_bus", "GPU 2")},
    # 'NVRM Xid (PCI:0000:0b:00) : 32' (PBDMA: a corrupted push buffer, usually the bus): the card's riser/slot
    "dmesg_xmrstak2054_11x_gtx750_xid32_spaced_colon.txt": {("xid", "0000:0B:00.0")},
    # HCCL could not listen on 192.168.20.160:16666 (port in use), then rank 12's socket links timed out
    "hccl_vllmascend1955_port_in_use_socket_timeout_cut.txt": {("collective_init_failed", NO_HOST)},
    # the inter-node channels run over NET/Socket (TCP) between manolinux and manolinux1
    "nccl_nccltests179_two_nodes_net_socket_timeout_cut.txt": {("nccl_socket_fallback", "manolinux1")},
    # proxy Connect to rank 14 failed: 'Connection closed by remote peer 10.104.148.191' (the [6] lines' host)
    "nccl_nccl914_roce_proxy_connection_closed_by_peer.txt": {("collective_init_failed", "host GPU 6")},
    # 'NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver': no GPU usable
    "smi_nv304_11_failed_communicate_driver.txt": {("no_modules_visible", None)},
    "smi_gcpinstall18_failed_after_kernel_upgrade.txt": {("no_modules_visible", None)},
    # 'No devices were found' with the driver loaded (nvidia-docker-plugin stuck discovering GPU devices): no GPU
    # visible, critical or warn
    "smi_nvdocker933_no_devices_found_plugin_stuck.txt": {("no_modules_visible", None)},
    # the template's prose: an uncorrectable NVLink error on the TP=2 pair (PCI 66:00.0 and 76:00.0)
    "report_ogkm1355_8x_b300_xid145_template_cut.txt": {("nvlink_errors", "0000:66:00.0"),
                                                        ("nvlink_errors", "0000:76:00.0")},
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "xpusmi_xpum127_discovery_json_b580_cut.txt": set(),  # an xpu-smi CLI question; firmware status normal
    "rocmsmi_lrb4414_setsclk_not_supported_8x_mi300x_cut.txt": set(),  # 'Not supported' answers to a set command
    "lspci_lrb6165_vvv_strix_halo_x16_no_aer_cut.txt": set(),  # the link at its capability, no errors
    "rvs_rvs427_pqt_p2p_2x_mi25_epyc.txt": set(),  # 7 GB/s uni, 12 GB/s bidi: Gen3 P2P on EPYC
    "rocmbw_rvs254_numa_distance_10x_mi25_cut.txt": set(),  # every pair accessible
    "nodecond_aicr2641_gb300_imex_unhealthy_false_positive.txt": set(),  # no IMEX daemon: a service's state
    "nccl_nccl925_info_topo_search_8gpu_nvl_8net_cut.txt": set(),  # a normal graph search
    "smicsv_nvset80_throttle_supported_gtx1080.txt": set(),  # a supported-reasons mask is no active throttle
    "topo_vllm6746_8x_h100_nv18_12nic_tail_cut.txt": set(),  # NV18 to every peer: a normal HGX H100
    "amdgputop_smc223_json_rx5700xt_details_cut.txt": set(),
    "amdgputop_agt60_d_rx6600_device_info_cut.txt": set(),  # ResizableBAR disabled: info at most
    "hipbw_tfu359_d2h_pinned_table_cut.txt": set(),  # D2H ~14.2 GB/s: PCIe Gen3 x16
    "nvccli_nvdocker895_info_geforce920m_cut.txt": set(),
    "lspci_club1253_tree_2x_rtx5090_cut.txt": set(),
    "fahlspci_fah1149_gtx980_not_recognized_devices_file.txt": set(),  # one bus for both cards: a listing artefact
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[Finding, str]] = {
    "journal_qubes7648_amdgpu_gfx_timeout_recovery_failed_indented.txt": {("module_hung_reset", "0000:04:00.0"):
                                                                          "critical",
                                                                          ("module_needs_reset", "0000:04:00.0"):
                                                                          "critical"},
    "rdma_uccl641_mi355x_ionic_modify_qp_rtr_timeout_cut.txt": {("rdma_test_failed", None): "warn"},
    "lspci_gpujpeg20_quoted_4x_1b06_cuda_count_fail.txt": {("framework_sees_no_module", None): "warn"},
    "winlog_nhm1001_2x_gtx1060_mixed_driver_no_cuda_devices_cut.txt": {("framework_sees_no_module", None): "warn"},
    "dmesg_lrb384_amdgpu_psp_fw_load_failed_minus22_cut.txt": {("module_init_failed", "0000:03:00.0"): "critical"},
    "dmesg_kmsdrm234_freebsd_drmn0_psp_load_fatal_then_ok.txt": {("module_init_failed", AMD_NO_BUS): "warn"},
    "dmesg_kernelci2238_amdgpu_psp_toc_missing_fatal_init.txt": {("module_init_failed", "0000:04:00.0"): "critical"},
    "dmesg_xmrstak2054_11x_gtx750_xid32_spaced_colon.txt": {("xid", "0000:0B:00.0"): "warn"},
    "nccl_nccltests179_two_nodes_net_socket_timeout_cut.txt": {("nccl_socket_fallback", "manolinux1"): "warn"},
    "nccl_nccl914_roce_proxy_connection_closed_by_peer.txt": {("collective_init_failed", "host GPU 6"): "warn"},
}

# file -> {cause: the highest severity it may have}: what the row allows without asking for it
MAY: dict[str, dict[str, str]] = {
    # the VMC page fault the thread's conclusion names as the first step of the failed initialisation
    "dmesg_lrb384_amdgpu_psp_fw_load_failed_minus22_cut.txt": {"module_page_fault": "warn"},
    # the listen failure the row names (port in use), said on its own beside the communicator's
    "hccl_vllmascend1955_port_in_use_socket_timeout_cut.txt": {"collective_runtime_error": "warn"},
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module)
TOLD: dict[str, tuple[str, ...]] = {
    "journal_qubes7648_amdgpu_gfx_timeout_recovery_failed_indented.txt": ("-110",),
    "kmsg_ogkm446_talos_prefix_gsp_coredump_trace_cut.txt": ("GSP",),
    "rdma_uccl641_mi355x_ionic_modify_qp_rtr_timeout_cut.txt": ("RTR",),
    "nccl_nccl2013_hgx_ibv_modify_qp_110_cross_nic.txt": ("ibv_modify_qp", "110"),
    "lspci_gpujpeg20_quoted_4x_1b06_cuda_count_fail.txt": ("operation not supported",),
    "dmesg_lrb384_amdgpu_psp_fw_load_failed_minus22_cut.txt": ("PSP",),
    "dmesg_kmsdrm234_freebsd_drmn0_psp_load_fatal_then_ok.txt": ("PSP",),
    "dmesg_kernelci2238_amdgpu_psp_toc_missing_fatal_init.txt": ("psp_13_0_8_toc.bin",),
    "minerlog_trex642_3060ti_riser_gpu_lost_15_cut.txt": ("GPU is lost",),
    "dmesg_xmrstak2054_11x_gtx750_xid32_spaced_colon.txt": ("32",),
    "hccl_vllmascend1955_port_in_use_socket_timeout_cut.txt": ("16666",),
    "nccl_nccltests179_two_nodes_net_socket_timeout_cut.txt": ("Socket",),
    "nccl_nccl914_roce_proxy_connection_closed_by_peer.txt": ("rank 14",),
    "smi_nvdocker933_no_devices_found_plugin_stuck.txt": ("No devices were found",),
    "report_ogkm1355_8x_b300_xid145_template_cut.txt": ("NVLink",),
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "xpusmi_xpum127_discovery_json_b580_cut.txt": [None],
    "journal_qubes7648_amdgpu_gfx_timeout_recovery_failed_indented.txt": ["0000:04:00.0"],
    "rocmsmi_lrb4414_setsclk_not_supported_8x_mi300x_cut.txt": [None] * 8,  # GPU[0] .. GPU[7]
    "lspci_lrb6165_vvv_strix_halo_x16_no_aer_cut.txt": ["0000:C1:00.0"],
    "rvs_rvs427_pqt_p2p_2x_mi25_epyc.txt": [None, None],  # rvs ids 453 and 15450
    "rocmbw_rvs254_numa_distance_10x_mi25_cut.txt": [None] * 10,  # devices 2-11 (0 and 1 are the CPUs)
    "nodecond_aicr2641_gb300_imex_unhealthy_false_positive.txt": ["0000:9D:00.0"],
    "rdma_uccl641_mi355x_ionic_modify_qp_rtr_timeout_cut.txt": [],  # no GPU inventory
    "nccl_nccl925_info_topo_search_8gpu_nvl_8net_cut.txt": NCCL925_BUSES,
    "lspci_gpujpeg20_quoted_4x_1b06_cuda_count_fail.txt": ["0000:19:00.0", "0000:1A:00.0", "0000:67:00.0",
                                                           "0000:68:00.0"],
    "winlog_nhm1001_2x_gtx1060_mixed_driver_no_cuda_devices_cut.txt": [None] * 3,  # PnP instance ids only
    "dmesg_lrb384_amdgpu_psp_fw_load_failed_minus22_cut.txt": ["0000:03:00.0"],
    "dmesg_kmsdrm234_freebsd_drmn0_psp_load_fatal_then_ok.txt": [None],
    "dmesg_kernelci2238_amdgpu_psp_toc_missing_fatal_init.txt": ["0000:04:00.0"],
    "minerlog_trex642_3060ti_riser_gpu_lost_15_cut.txt": [None, None],  # GPU1, GPU2
    "dmesg_xmrstak2054_11x_gtx750_xid32_spaced_colon.txt": ["0000:0B:00.0"],
    "topo_vllm6746_8x_h100_nv18_12nic_tail_cut.txt": [None] * 4,  # GPU4-7: the rows the cut kept
    "hccl_vllmascend1955_port_in_use_socket_timeout_cut.txt": [],
    "nccl_nccltests179_two_nodes_net_socket_timeout_cut.txt": ["0000:01:00.0", None, None, None],  # rank 0 first
    "nccl_nccl914_roce_proxy_connection_closed_by_peer.txt": [],
    "amdgputop_smc223_json_rx5700xt_details_cut.txt": [None],
    "amdgputop_agt60_d_rx6600_device_info_cut.txt": ["0000:03:00.0"],
    "hipbw_tfu359_d2h_pinned_table_cut.txt": [],
    "smi_nv304_11_failed_communicate_driver.txt": [],
    "smi_nvdocker933_no_devices_found_plugin_stuck.txt": [],
    "smi_gcpinstall18_failed_after_kernel_upgrade.txt": [],
    "nvccli_nvdocker895_info_geforce920m_cut.txt": ["0000:08:00.0"],
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    "xpusmi_xpum127_discovery_json_b580_cut.txt": {"model": ["0xe211|0xE211|Arc Pro B60"], "ecc_enabled": [False]},
    "rocmsmi_lrb4414_setsclk_not_supported_8x_mi300x_cut.txt": {"model": [None] * 8},  # not named in the paste
    "lspci_lrb6165_vvv_strix_halo_x16_no_aer_cut.txt": {"model": ["Strix Halo"], "pcie_gen_current": [4],
                                                        "pcie_width_current": [16]},
    "rvs_rvs427_pqt_p2p_2x_mi25_epyc.txt": {"model": [None, None]},  # MI25 is the thread's word, not the file's
    "rocmbw_rvs254_numa_distance_10x_mi25_cut.txt": {"model": [None] * 10},
    "nodecond_aicr2641_gb300_imex_unhealthy_false_positive.txt": {"model": [None]},  # model not printed
    "lspci_gpujpeg20_quoted_4x_1b06_cuda_count_fail.txt": {"model": ["GTX 1080 Ti"] * 4},  # device 1b06
    "winlog_nhm1001_2x_gtx1060_mixed_driver_no_cuda_devices_cut.txt": {
        "model": ["HD Graphics", "GTX 1060 6GB", "GTX 1060 6GB"]},  # in the dump's order
    "dmesg_lrb384_amdgpu_psp_fw_load_failed_minus22_cut.txt": {"memory_bytes": [8176 * MIB]},
    "minerlog_trex642_3060ti_riser_gpu_lost_15_cut.txt": {"model": [None, None]},  # not in the log lines
    "topo_vllm6746_8x_h100_nv18_12nic_tail_cut.txt": {"numa_node": [1] * 4},
    "amdgputop_smc223_json_rx5700xt_details_cut.txt": {"model": ["RX 5700 XT"], "memory_bytes": [8176 * MIB]},
    "amdgputop_agt60_d_rx6600_device_info_cut.txt": {"model": ["Radeon RX 6600"], "memory_bytes": [8176 * MIB]},
    "nvccli_nvdocker895_info_geforce920m_cut.txt": {"model": ["GeForce 920M"],
                                                    "uuid": ["GPU-4712226b-88e6-a01e-efb0-a5950a64f8d9"]},
    "report_ogkm1355_8x_b300_xid145_template_cut.txt": {"model": ["B300"] * 8},  # from the template's prose
    "fahlspci_fah1149_gtx980_not_recognized_devices_file.txt": {"model": ["GTX 980|GM204|13c0|13C0"] * 2},
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "xpusmi_xpum127_discovery_json_b580_cut.txt": ("BMG__21.1180",),  # the GFX firmware
    "rvs_rvs427_pqt_p2p_2x_mi25_epyc.txt": ("453", "15450"),  # rvs's GPU ids
    "rdma_uccl641_mi355x_ionic_modify_qp_rtr_timeout_cut.txt": ("4096",),  # active_mtu 5: the RoCE ports' MTU
    "topo_vllm6746_8x_h100_nv18_12nic_tail_cut.txt": ("NIC0", "NIC7"),
    "nccl_nccltests179_two_nodes_net_socket_timeout_cut.txt": ("manolinux", "manolinux1"),
    "nvccli_nvdocker895_info_geforce920m_cut.txt": ("384.130",),
    "report_ogkm1355_8x_b300_xid145_template_cut.txt": ("595.71.05",),
}

# files gpuvet still gets wrong against the tables, and why (the MANIFEST's first-contact cell); run at 7d60c18
KNOWN_MISSES: dict[str, str] = {
    "dmesg_kernelci2238_amdgpu_psp_toc_missing_fatal_init.txt": "partial: module_init_failed on 0000:04:00.0 is "
                                                                "right, but the finding does not cite the missing "
                                                                "firmware file amdgpu/psp_13_0_8_toc.bin (-2)",
    "dmesg_kmsdrm234_freebsd_drmn0_psp_load_fatal_then_ok.txt": "partial: module_init_failed is critical where the "
                                                                "row caps it at warn (the later block shows the GPU "
                                                                "attaching after the fix)",
    "lspci_gpujpeg20_quoted_4x_1b06_cuda_count_fail.txt": "inventory: the failed count of the CUDA devices is read "
                                                          "(framework_sees_no_module, warn), but lspci's device 1b06 "
                                                          "is listed as 'NVIDIA Device 1b06', not GTX 1080 Ti",
    "minerlog_trex642_3060ti_riser_gpu_lost_15_cut.txt": "inventory: GPU 2's loss is read (module_fell_off_bus), but "
                                                         "the cards GPU1 and GPU2 the miner's health line names are "
                                                         "not listed",
    "nccl_nccl914_roce_proxy_connection_closed_by_peer.txt": "partial: collective_init_failed is critical where the "
                                                             "row says warn, and the redacted 'host :22337' line adds"
                                                             " a second critical on 'host and GPU not in the log'",
    "nccl_nccl925_info_topo_search_8gpu_nvl_8net_cut.txt": "inventory: the NCCL search lines' GPU/16000 … GPU/CA000 "
                                                           "(8 GPUs) and NET/N devices are not listed",
    "nccl_nccltests179_two_nodes_net_socket_timeout_cut.txt": "inventory: the 4 ranks on manolinux and manolinux1 "
                                                              "(rank 0's busId 1000) are not listed",
    "nodecond_aicr2641_gb300_imex_unhealthy_false_positive.txt": "inventory: the DCGM condition's 'GPU:0 "
                                                                 "PCI:0000:9d:00.0' is not listed as a module",
    "rdma_uccl641_mi355x_ionic_modify_qp_rtr_timeout_cut.txt": "inventory: uccl's 'Verifying port state' blocks (two "
                                                               "ACTIVE RoCE ports, active_mtu 5 = 4096) are skipped",
    "report_ogkm1355_8x_b300_xid145_template_cut.txt": "miss: exit 0, no cause: the template's prose (an "
                                                       "uncorrectable NVLink error on the pair at PCI 66:00.0 / "
                                                       "76:00.0, 8x B300, driver 595.71.05) is not read",
    "rocmbw_rvs254_numa_distance_10x_mi25_cut.txt": "inventory: the Device Numa Distance matrix is read (12 devices "
                                                    "said, no finding) but which are GPUs only the cut device list "
                                                    "said: no module invented",
    "topo_vllm6746_8x_h100_nv18_12nic_tail_cut.txt": "inventory: the header-less topo -m tail lists 8 modules (gpu0-3"
                                                     " 'unknown (topo -m)' from the columns) where only GPU4-7 have "
                                                     "rows; NIC0-NIC7 not listed",
    "winlog_nhm1001_2x_gtx1060_mixed_driver_no_cuda_devices_cut.txt": "inventory: 'CudaDevicesDetection found no "
                                                                      "devices' is read (framework_sees_no_module), "
                                                                      "but the Win32_VideoController dump's adapters "
                                                                      "(two GTX 1060 on driver 22.21.13.8233 and "
                                                                      "21.21.13.7651) are not listed nor compared",
    "xpusmi_xpum127_discovery_json_b580_cut.txt": "inventory: discovery -j is read (the module, its memory; firmware "
                                                  "and 'memory ECC disabled' said in a note) but the ECC state is "
                                                  "not the module's field (ecc_disabled would warn on a part without "
                                                  "ECC)",
}


BATCH = Batch(FRESH_M, CAUSES, severity=SEVERITY, may=MAY, told=TOLD, modules=MODULES, fields=FIELDS, said=SAID,
              known_misses=KNOWN_MISSES)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_m_capture_gets_its_blind_diagnosis = BATCH.tests(33)
