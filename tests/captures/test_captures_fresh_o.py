"""Batch O (tests/data/captures/fresh_o/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold the MANIFEST's "a correct tool should
report" column for every file (not what gpuvet prints): CAUSES with SEVERITY where the row rates a finding,
MAY where it allows one without asking for it, TOLD where it names what the finding must cite, MODULES /
FIELDS / SAID where it says what inventory must read; benchmarks/score_manifest.py --batch o scores the batch
against them (tests/support/blind_batch.py).

Read as batches K to N are: "no finding" means nothing at warn or above (an info is allowed, so 'at most
info' asks nothing more); "warn (or error)" pins no severity; "warn:" pins warn; "critical:", "critical (or
error)", "error/critical" and "error:" pin critical (gpuvet has no 'error': its next step up from warn is
critical). Inventory expectations count: a file whose doctor answer is right and whose inventory is not is
a known miss, its reason starting 'inventory:'. An inventory item is pinned where the row names it as a fact
of the file (a model, bus id, UUID, driver, memory, affinity); where the row hedges ('nothing identifiable',
'nothing beyond', 'can't tell') or names what the excerpt cuts away (nvdocker756's other 7 GPUs) it is not.
A healthy file refused (exit 2) is a miss: no row here accepts a refusal. Module names follow gpuvet's own
(a bus id as 0000:0C:00.0; 'bus id not in the log' and 'an AMD module, bus id not in the log' where a line
names none; 'HOST GPU N' where an NCCL line's prefix names its host and device; the host for a transport
verdict on a host; None for the node, as an application log naming no device is). Files gpuvet still gets
wrong are KNOWN_MISSES, each with why; their test is a strict xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding

FRESH_O = Path(__file__).parents[1] / "data" / "captures" / "fresh_o"
MIB = 1 << 20
NO_BUS = "bus id not in the log"
AMD_NO_BUS = "an AMD module, bus id not in the log"
NAVI22 = "Navi 22|NAVI22|navy_flounder|NAVY_FLOUNDER"

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # PSP firmware missing, 'Fatal error during GPU init' (FreeBSD drm-kmod, no bus id)
    "syslog_drmkmodfw27_freebsd_navi22_psp_sos_missing.txt": {("module_init_failed", AMD_NO_BUS)},
    # PSP firmware loading failed, hw_init of psp failed -22, Fatal error during GPU init
    "dmesg_kmsdrm206_freebsd_vega20_psp_unknown_fw_type.txt": {("module_init_failed", AMD_NO_BUS)},
    # fence fallback timer expired on gfx_0.0.0 and sdma1 while the driver is unbound for VFIO
    "journal_qaidvoid25_rx6600xt_vfio_fence_fallback_timer.txt": {("module_fence_timeout", "0000:2B:00.0")},
    # slurmstepd: NVML 'GPU is lost' (15), the GPU not identified
    "slurm_plmfit40_titanrtx_nvml_gpu_is_lost.txt": {("module_fell_off_bus", NO_BUS)},
    # 'Unable to determine the device handle for GPU0000:62:00.0: Unknown Error': unreachable
    "smi_cs336a4_4x4090_device_handle_unknown_error.txt": {("module_fell_off_bus", "0000:62:00.0")},
    # MES failed to respond (msg=14, msg=3), failed to unmap legacy queue on 0000:28:00.0
    "journal_rocm5519_comfyui_mes_failed_msg14_cut.txt": {("module_hung_reset", "0000:28:00.0")},
    # MES unrecoverable, GPU reset began, process queues failed to restore
    "journal_rocm5508_comfyui_mes_remove_queue_gpu_reset_cut.txt": {("module_hung_reset", "0000:28:00.0")},
    # MES failed to respond (msg=3, msg=14), no bus id in the log
    "dmesg_rocm3265_7900xtx_mes_failed_dmesgT_no_busid_cut.txt": {("module_hung_reset", AMD_NO_BUS)},
    # gfx_0.0.0 ring timeout (signaled 131878, emitted 131880), ring reset started
    "dmesg_therock1271_gfx1150_userpages_ring_gfx_timeout_cut.txt": {("module_hung_reset", "0000:C1:00.0")},
    # ibv_create_cq failed with ENOMEM on msm-h200-2 ([7] and [0]): RDMA resources / memlock
    "nccl_deepep143_h200_ibv_create_cq_enomem.txt": {("nccl_ib_resource_failed", "msm-h200-2 GPU 0, 7")},
    # 'CUDA error: uncorrectable ECC error encountered' on rank 1's GPU, the device not identified
    "torchlog_kohya1434_2xh100_uncorrectable_ecc_nccl_watchdog_cut.txt": {("ecc_uncorrectable_since_boot", None)},
    # NET/Socket on a multi-node job meant for InfiniBand (test-ib-mpijob1)
    "mpirun_horovod1191_tf_nccl_net_socket_ib_hang_cut.txt": {("nccl_socket_fallback", "test-ib-mpijob1")},
    # repeated resets (reset 4 succeeded), then MES not answering REMOVE_QUEUE and a new reset
    "dmesg_rocm4444_780m_reset_succeeded_then_mes_remove_queue.txt": {("module_hung_reset", "0000:C6:00.0")},
    # Xid 109 CTX SWITCH TIMEOUT three times (pid 11263 'Renderer')
    "dmesg_chiagh74_rtx4080_xid109_ctx_switch_then_smi_head.txt": {("xid", "0000:0B:00.0")},
    # Xid 109 CTX SWITCH TIMEOUT from re8.exe
    "dmesg_ogkm502_rtx2060_xid109_proton_game.txt": {("xid", "0000:26:00.0")},
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "topo_daskcuda1358_slurm_2gpu_nv12_10nic_cut.txt": set(),
    "nccltests_nt44_2x2080ti_nvlink_rows_only.txt": set(),  # 0 errors; no hardware named: bandwidth unjudged
    "nccltests_nt389_2node_8xb200_srun_header_cut.txt": set(),  # results cut
    "smiq_nvdocker756_8x1080ti_head_cut.txt": set(),
    "npusmi_vllmascend1903_4x910b3_table_head_cut.txt": set(),  # health OK
    "nccltests_nt309_4host_h100_vm_mpirun_header_cut.txt": set(),  # results cut
    "smicsv_nvsmi2_laptop_fan_na.txt": set(),  # an [N/A] fan is not a fault
    "rocmsmi_rsmilib209_mi300a_showmclkrange.txt": set(),
    "rdclog_rdc25_mi300x_pcie_throughput_not_supported.txt": set(),  # an unsupported metric: at most info
    "amdexporter_dme202_mi325x_pcie_bidir_metric_cut.txt": set(),
    "dmesg_drmkmod323_freebsd_navi22_fw_retry_loaded_cut.txt": set(),  # every image finally loaded
    "smiq_k8sdp471_24gb_throttle_fb_mid_cut.txt": set(),  # every slowdown Not Active
    "rccllog_rccl1210_4xmi300x_topo_system_bw_snippet.txt": set(),
    "journal_ryzenpt131_pve_raphael_igpu_amdgpu_init_cut.txt": set(),
    "dmesg_qubes7971_xen_navi21_smu_version_mismatch_init.txt": set(),  # SMU version mismatch: at most info
    "smi_mmdet99_v100sxm2_hang_backtick_cut.txt": set(),  # ECC 0, 44-52 C
    "smi_pytorch18431_10x1080ti_table_cut.txt": set(),
    "smiqperf_llamacpp27415_driver610_kmd_version_cut.txt": set(),
    "nccl_dsexamples310_8gpu_init_complete_ib_client_rereg.txt": set(),  # IB client re-registration: at most info
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[Finding, str]] = {
    "syslog_drmkmodfw27_freebsd_navi22_psp_sos_missing.txt": {("module_init_failed", AMD_NO_BUS): "critical"},
    "dmesg_kmsdrm206_freebsd_vega20_psp_unknown_fw_type.txt": {("module_init_failed", AMD_NO_BUS): "critical"},
    "journal_qaidvoid25_rx6600xt_vfio_fence_fallback_timer.txt": {("module_fence_timeout", "0000:2B:00.0"): "warn"},
    "slurm_plmfit40_titanrtx_nvml_gpu_is_lost.txt": {("module_fell_off_bus", NO_BUS): "critical"},
    "smi_cs336a4_4x4090_device_handle_unknown_error.txt": {("module_fell_off_bus", "0000:62:00.0"): "critical"},
    "journal_rocm5519_comfyui_mes_failed_msg14_cut.txt": {("module_hung_reset", "0000:28:00.0"): "critical"},
    "journal_rocm5508_comfyui_mes_remove_queue_gpu_reset_cut.txt": {("module_hung_reset", "0000:28:00.0"):
                                                                    "critical"},
    "dmesg_rocm3265_7900xtx_mes_failed_dmesgT_no_busid_cut.txt": {("module_hung_reset", AMD_NO_BUS): "critical"},
    "dmesg_therock1271_gfx1150_userpages_ring_gfx_timeout_cut.txt": {("module_hung_reset", "0000:C1:00.0"):
                                                                     "critical"},
    "nccl_deepep143_h200_ibv_create_cq_enomem.txt": {("nccl_ib_resource_failed", "msm-h200-2 GPU 0, 7"): "critical"},
    "torchlog_kohya1434_2xh100_uncorrectable_ecc_nccl_watchdog_cut.txt": {("ecc_uncorrectable_since_boot", None):
                                                                          "critical"},
    "mpirun_horovod1191_tf_nccl_net_socket_ib_hang_cut.txt": {("nccl_socket_fallback", "test-ib-mpijob1"): "warn"},
    "dmesg_rocm4444_780m_reset_succeeded_then_mes_remove_queue.txt": {("module_hung_reset", "0000:C6:00.0"):
                                                                      "critical"},
}

# file -> {cause: the highest severity it may have}: what the row allows without asking for it
MAY: dict[str, dict[str, str]] = {
    # the proxy Connect failure on [2] the row names as part of the failed init
    "nccl_deepep143_h200_ibv_create_cq_enomem.txt": {"collective_init_failed": "critical"},
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module)
TOLD: dict[str, tuple[str, ...]] = {
    "syslog_drmkmodfw27_freebsd_navi22_psp_sos_missing.txt": ("PSP",),
    "dmesg_kmsdrm206_freebsd_vega20_psp_unknown_fw_type.txt": ("PSP", "-22"),
    "journal_qaidvoid25_rx6600xt_vfio_fence_fallback_timer.txt": ("gfx_0.0.0", "sdma1"),
    "slurm_plmfit40_titanrtx_nvml_gpu_is_lost.txt": ("GPU is lost",),
    "smi_cs336a4_4x4090_device_handle_unknown_error.txt": ("Unknown Error",),
    "journal_rocm5519_comfyui_mes_failed_msg14_cut.txt": ("MES",),
    "journal_rocm5508_comfyui_mes_remove_queue_gpu_reset_cut.txt": ("MES",),
    "dmesg_rocm3265_7900xtx_mes_failed_dmesgT_no_busid_cut.txt": ("MES",),
    "dmesg_therock1271_gfx1150_userpages_ring_gfx_timeout_cut.txt": ("gfx_0.0.0",),
    "nccl_deepep143_h200_ibv_create_cq_enomem.txt": ("ibv_create_cq", "Cannot allocate memory"),
    "torchlog_kohya1434_2xh100_uncorrectable_ecc_nccl_watchdog_cut.txt": ("uncorrectable ECC",),
    "mpirun_horovod1191_tf_nccl_net_socket_ib_hang_cut.txt": ("Socket",),
    "dmesg_rocm4444_780m_reset_succeeded_then_mes_remove_queue.txt": ("MES",),
    "dmesg_chiagh74_rtx4080_xid109_ctx_switch_then_smi_head.txt": ("109", "Renderer"),
    "dmesg_ogkm502_rtx2060_xid109_proton_game.txt": ("109", "re8.exe"),
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "topo_daskcuda1358_slurm_2gpu_nv12_10nic_cut.txt": [None, None],
    "nccltests_nt44_2x2080ti_nvlink_rows_only.txt": [],  # no device lines
    "nccltests_nt389_2node_8xb200_srun_header_cut.txt": [f"0000:00:{n:02X}.0" for n in range(5, 13)],
    "npusmi_vllmascend1903_4x910b3_table_head_cut.txt": ["0000:C1:00.0", "0000:01:00.0", "0000:C2:00.0",
                                                         "0000:02:00.0"],
    "rocmsmi_rsmilib209_mi300a_showmclkrange.txt": [None] * 4,  # GPU[0]-GPU[3]
    "amdexporter_dme202_mi325x_pcie_bidir_metric_cut.txt": [None, None],  # gpu_id 2 and 3
    "syslog_drmkmodfw27_freebsd_navi22_psp_sos_missing.txt": [None],
    "dmesg_kmsdrm206_freebsd_vega20_psp_unknown_fw_type.txt": [None],
    "dmesg_drmkmod323_freebsd_navi22_fw_retry_loaded_cut.txt": [None],
    "smiq_k8sdp471_24gb_throttle_fb_mid_cut.txt": [None],
    "journal_ryzenpt131_pve_raphael_igpu_amdgpu_init_cut.txt": ["0000:10:00.0"],
    "dmesg_qubes7971_xen_navi21_smu_version_mismatch_init.txt": ["0000:00:06.0"],
    "journal_qaidvoid25_rx6600xt_vfio_fence_fallback_timer.txt": ["0000:2B:00.0"],
    "smi_mmdet99_v100sxm2_hang_backtick_cut.txt": ["0000:1A:00.0", "0000:1C:00.0", "0000:1D:00.0"],
    "smi_pytorch18431_10x1080ti_table_cut.txt": ["0000:1A:00.0", "0000:1B:00.0"],
    "smi_cs336a4_4x4090_device_handle_unknown_error.txt": ["0000:62:00.0"],
    "journal_rocm5519_comfyui_mes_failed_msg14_cut.txt": ["0000:28:00.0"],
    "journal_rocm5508_comfyui_mes_remove_queue_gpu_reset_cut.txt": ["0000:28:00.0"],
    "dmesg_therock1271_gfx1150_userpages_ring_gfx_timeout_cut.txt": ["0000:C1:00.0"],
    "smiqperf_llamacpp27415_driver610_kmd_version_cut.txt": ["0000:03:00.0"],
    "nccl_dsexamples310_8gpu_init_complete_ib_client_rereg.txt": ["0000:4F:00.0", "0000:52:00.0", "0000:56:00.0",
                                                                  "0000:57:00.0", "0000:CE:00.0", "0000:D1:00.0",
                                                                  "0000:D5:00.0", "0000:D6:00.0"],
    "dmesg_rocm4444_780m_reset_succeeded_then_mes_remove_queue.txt": ["0000:C6:00.0"],
    "dmesg_chiagh74_rtx4080_xid109_ctx_switch_then_smi_head.txt": ["0000:0B:00.0"],
    "dmesg_ogkm502_rtx2060_xid109_proton_game.txt": ["0000:26:00.0"],
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    "topo_daskcuda1358_slurm_2gpu_nv12_10nic_cut.txt": {"numa_node": [3, 3], "cpu_affinity": ["48-63,176-191"] * 2},
    "nccltests_nt389_2node_8xb200_srun_header_cut.txt": {"model": ["B200"] * 8},
    "smiq_nvdocker756_8x1080ti_head_cut.txt": {"model": ["GTX 1080 Ti"], "persistence_mode": [True]},
    "npusmi_vllmascend1903_4x910b3_table_head_cut.txt": {"model": ["910B3"] * 4},
    "nccltests_nt309_4host_h100_vm_mpirun_header_cut.txt": {"model": ["H100 80GB HBM3"] * 6},
    "rocmsmi_rsmilib209_mi300a_showmclkrange.txt": {"model": [None] * 4},  # not named in the paste
    "amdexporter_dme202_mi325x_pcie_bidir_metric_cut.txt": {"vbios_version": ["022.042.000.002.000001"] * 2},
    "syslog_drmkmodfw27_freebsd_navi22_psp_sos_missing.txt": {"model": [NAVI22]},
    "dmesg_kmsdrm206_freebsd_vega20_psp_unknown_fw_type.txt": {"model": ["Vega 20|VEGA20|vega20"]},
    "dmesg_drmkmod323_freebsd_navi22_fw_retry_loaded_cut.txt": {"model": [NAVI22]},
    "smiq_k8sdp471_24gb_throttle_fb_mid_cut.txt": {"model": [None], "memory_bytes": [24576 * MIB]},
    "journal_ryzenpt131_pve_raphael_igpu_amdgpu_init_cut.txt": {"model": ["Raphael|RAPHAEL"],
                                                                "memory_bytes": [1024 * MIB]},
    "smi_mmdet99_v100sxm2_hang_backtick_cut.txt": {"model": ["V100-SXM2"] * 3},
    "smi_pytorch18431_10x1080ti_table_cut.txt": {"model": ["GTX 108"] * 2},  # the table's truncated names
    "smi_cs336a4_4x4090_device_handle_unknown_error.txt": {"model": [None]},
    "dmesg_chiagh74_rtx4080_xid109_ctx_switch_then_smi_head.txt": {"uuid": ["GPU-aaaba90e-a327-1a65-9c8d-"
                                                                            "fd28b59b8057"]},
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "topo_daskcuda1358_slurm_2gpu_nv12_10nic_cut.txt": ("NV12", "NIC0", "NIC9"),
    "nccltests_nt389_2node_8xb200_srun_header_cut.txt": ("node1",),
    "smiq_nvdocker756_8x1080ti_head_cut.txt": ("390.48",),
    "nccltests_nt309_4host_h100_vm_mpirun_header_cut.txt": ("pt01",),
    "amdexporter_dme202_mi325x_pcie_bidir_metric_cut.txt": ("6.12.12",),
    "smiqperf_llamacpp27415_driver610_kmd_version_cut.txt": ("610.57.04", "13.3"),
    "dmesg_chiagh74_rtx4080_xid109_ctx_switch_then_smi_head.txt": ("530.41.03",),
}

# files gpuvet still gets wrong against the tables, and why; run at HEAD
KNOWN_MISSES: dict[str, str] = {
    "amdexporter_dme202_mi325x_pcie_bidir_metric_cut.txt": "inventory: gpu_id 2 and 3 listed (by UUID), but the "
                                                           "labels' vbios_version and driver_version 6.12.12 are "
                                                           "not read",
    "dmesg_therock1271_gfx1150_userpages_ring_gfx_timeout_cut.txt": "severity: the row asks critical; gpuvet says "
                                                                    "warn module_hang_outcome_unknown (one ring "
                                                                    "timeout, the ring reset's outcome cut from the "
                                                                    "paste: AGX1b, one verdict with fresh_ag's "
                                                                    "bazzite3904)",
    "journal_qaidvoid25_rx6600xt_vfio_fence_fallback_timer.txt": "partial: module_fence_timeout warn on "
                                                                 "0000:2B:00.0 is right, but only gfx_0.0.0 is "
                                                                 "cited, not sdma1",
    "journal_ryzenpt131_pve_raphael_igpu_amdgpu_init_cut.txt": "inventory: the iGPU is 'unknown AMD module' (VBIOS "
                                                               "102-RAPHAEL-008 not read as its model) and its "
                                                               "1024M VRAM carve-out is not its memory",
    "mpirun_horovod1191_tf_nccl_net_socket_ib_hang_cut.txt": "miss: exit 0, no cause: 'NET/Socket' under mpirun's "
                                                             "'[1,0]<stdout>:' prefix on a multi-node job is not "
                                                             "judged as a fallback from IB",
}


BATCH = Batch(FRESH_O, CAUSES, severity=SEVERITY, may=MAY, told=TOLD, modules=MODULES, fields=FIELDS, said=SAID,
              known_misses=KNOWN_MISSES)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_o_capture_gets_its_blind_diagnosis = BATCH.tests(34)
