"""Batch X (tests/data/captures/fresh_x/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold the MANIFEST's "a correct tool should
report" column for every file (not what gpuvet prints): CAUSES with SEVERITY where the row rates a finding,
TOLD where it names what the finding must cite, MODULES / FIELDS / SAID where it says what inventory must
read; benchmarks/score_manifest.py --batch x scores the batch against them (tests/support/blind_batch.py).

Read as batches P to W are: "no finding" and "nothing at warn or above" mean nothing at warn or above (an
info is allowed); "warn:" and "warn at most:" pin warn; "critical:" and "error:" (the row's word for gpuvet's
highest severity) pin critical; "critical/warn", "warn/critical", "error/warn", "warn/error" and "info/warn"
pin no severity. A row naming a fault in its own words is held as the cause gpuvet files that meaning under
(each noted where used): an NCCL init that failed in its bootstrap, and a connection a crashed remote rank
closed while the proxy connected (broken pipe), are collective_init_failed; an NET/IB completion error is
collective_runtime_error; a multi-node job on NCCL's internal Socket net is nccl_socket_fallback; corrected
AER bits on a root port are pcie_aer_errors; an AMD reset after a KFD hardware exception is
module_hung_reset; a GPU the NVML calls lost (error 15) is module_fell_off_bus; CUDA's 'uncorrectable ECC
error encountered' is ecc_uncorrectable_since_boot; nvidia-smi that cannot talk to the driver is
no_modules_visible; a module whose sensors read impossible or empty values is module_unreadable; amdgpu's
powerplay 'Failed to send message' (driver and SMU firmware, no reset asked) is driver_error_unnamed; the
driver's NV_ERR_RESET_REQUIRED is module_needs_reset. Where gpuvet names no such finding yet, its module is
spelt as gpuvet names others of its kind: 'GPU[n]' for rocm-smi's, 'GPU n' for a tool's index, a host for a
node's NCCL finding. Inventory expectations count (a known miss's reason starting 'inventory:'): a bus id, a
model, a UUID, a memory size, a driver or ROCm version, a host, a NIC the row names as a fact of the file is
pinned; a reading (a temperature, a power draw) is not. Files gpuvet still gets wrong are KNOWN_MISSES, each
with why; their test is a strict xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding

FRESH_X = Path(__file__).parents[1] / "data" / "captures" / "fresh_x"
AMD_NO_BUS = "an AMD module, bus id not in the log"
NO_BUS = "bus id not in the log"
NO_HOST = "host and GPU not in the log"
P4D = "a100-st-p4d24xlarge-22"
MIB = 2**20

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # socketProgress 'Connection closed by remote peer 10.10.1.3' in bootstrap.cc, init.cc: no host prefix
    "nccllog_nccl1612_bootstrap_closed_early.txt": {("collective_init_failed", NO_HOST)},
    # 'NET/IB : Got completion from peer 10.0.35.1 with error 4 ... vendor err 81' on kolyoz2
    "nccllog_nccltests252_ib_vendor_err81.txt": {("collective_runtime_error", "kolyoz2 GPU 0")},
    # 'Using internal Network Socket' on seyun, a job of 2 hosts (the mpirun line's hostfile, the prose)
    "nccllog_horovod666_2018_socket_closed.txt": {("nccl_socket_fallback", "seyun")},
    # recv 'Broken pipe', 'Failed to execute operation Connect from rank 9', closed by the remote peer
    "nccllog_nccl795_p4d_remote_broken_pipe.txt": {("collective_init_failed", f"{P4D} GPU 1")},
    # pcieport 0000:00:1c:0 (so typed) 'severity=Corrected', Data Link Layer, [12] Replay Timer Timeout
    "aer_manjaro221_rootport_replay_timeout.txt": {("pcie_aer_errors", "0000:00:1C.0")},
    # amdgpu_amdkfd_gpu_reset from kfd_process_hw_exception; no bus id in the lines
    "dmesg_rocm617_kfd_hw_exception_reset.txt": {("module_hung_reset", AMD_NO_BUS)},
    "smi_nvctk69_container_banner_table_cut.txt": set(),  # the error line is cut off
    "dmesg_club3090_751_xid13_skedcheck.txt": {("xid", "0000:07:00.0")},  # Xid 13 SKEDCHECK graphics exceptions
    "cudaerr_alpacalora123_uncorrectable_ecc.txt": {("ecc_uncorrectable_since_boot", None)},  # the GPU not named
    # 'uncorrectable ECC error encountered' again and again on the Tesla K40c at 0000:03:00.0 (the prose)
    "smierr_neuralstyle312_k40c_ecc_config.txt": {("ecc_uncorrectable_since_boot", "0000:03:00.0")},
    "nccltests_npkit19_4x_2080ti_oldformat_cut.txt": set(),  # error 1e-07 within tolerance; no summary
    "minerlog_trex230_3060ti_gpu_lost_riser.txt": {("module_fell_off_bus", "GPU 2")},  # 'GPU is lost (15)'
    # 'NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver'
    "smierr_ethminer40_riser_no_driver.txt": {("no_modules_visible", None)},
    # GPU[1]: Temperature 511.0c, Fan Level 255, 'Unable to determine current clocks'
    "rocmsmi_rocm426_vegafe_511c_corrupt.txt": {("module_unreadable", "GPU[1]")},
    # 'Expected integer value from monitor, but got ""': which MI300X is not said
    "rocmsmi_rocm4268_mi300_monitor_empty.txt": {("module_sensors_unreadable", None)},
    # '[powerplay] Failed to send message: 0x26': no bus id
    "kmsg_rocsmi31_powerplay_msg_0x26.txt": {("driver_error_unnamed", AMD_NO_BUS)},
    # GspRmAlloc failed, 'Reset required [NV_ERR_RESET_REQUIRED]'; the bus id not in the lines
    "dmesg_sichek51_gsp_reset_required.txt": {("module_needs_reset", NO_BUS)},
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "smiq_nvdocker642_quadro_p6000_cut.txt": set(),
    "smiq_nvdocker564_ecc_temp_cut.txt": set(),  # ECC totals 0
    "lspcit_club3090_1075_2x5090_tree_cut.txt": set(),
    "amdsmi_k8sdp157_mi300x_version_sysfs.txt": set(),
    "ibstat_dsx4762_fragments_active.txt": set(),  # Active, LinkUp, PORT_ACTIVE
    "smi_k8sdp414_rtx3060_pod_table_cut.txt": set(),
    "topo_brickhouse6a4a_8gpu_cubemesh_mlx5.txt": set(),  # 3 peers over NV1/NV2 each: the usual cube mesh
    "nvlinks_bottlerocket4418_h100_mig_off.txt": set(),  # 18 of 18 links up on each GPU shown
    "nccllog_nccl1121_8x_a6000_socket_bridges.txt": set(),  # one node: no IB device and Socket are no fault
    "smi_nvdocker420_m60_table_header_cut.txt": set(),
    "smi_nvdocker206_2x_gtx690_table.txt": set(),  # N/A power and utilisation on a GeForce of its era
    "smiq_nvdocker1485_gtx1660ti_header_cut.txt": set(),
    "lspcinnk_club3090_138_2x_rtx3090.txt": set(),
    "rigreport_club3090_1047_a6000_markdown.txt": set(),
    "npusmi_gpustack2135_910b1_debug_dict.txt": set(),
    "rocmsmi_rocm2681_w7900_plus_igpu_errors.txt": set(),  # an iGPU's unsupported fields are no fault
    "rocmsmi_rocmlir470_debug_not_supported.txt": set(),
    "smireset_nvsentinel1692_in_use_then_ok.txt": set(),  # refused while in use, then reset
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[Finding, str]] = {
    "nccllog_horovod666_2018_socket_closed.txt": {("nccl_socket_fallback", "seyun"): "warn"},
    "nccllog_nccl795_p4d_remote_broken_pipe.txt": {("collective_init_failed", f"{P4D} GPU 1"): "critical"},
    "dmesg_club3090_751_xid13_skedcheck.txt": {("xid", "0000:07:00.0"): "warn"},
    "minerlog_trex230_3060ti_gpu_lost_riser.txt": {("module_fell_off_bus", "GPU 2"): "critical"},
    "rocmsmi_rocm4268_mi300_monitor_empty.txt": {("module_sensors_unreadable", None): "warn"},
    "kmsg_rocsmi31_powerplay_msg_0x26.txt": {("driver_error_unnamed", AMD_NO_BUS): "warn"},
    "dmesg_sichek51_gsp_reset_required.txt": {("module_needs_reset", NO_BUS): "critical"},
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module)
TOLD: dict[str, tuple[str, ...]] = {
    "nccllog_nccl1612_bootstrap_closed_early.txt": ("bootstrap", "10.10.1.3"),
    "nccllog_nccltests252_ib_vendor_err81.txt": ("vendor err 81", "10.0.35.1"),
    "nccllog_horovod666_2018_socket_closed.txt": ("Socket",),
    "nccllog_nccl795_p4d_remote_broken_pipe.txt": ("Broken pipe", "rank 9"),
    "aer_manjaro221_rootport_replay_timeout.txt": ("Replay Timer Timeout",),
    "dmesg_rocm617_kfd_hw_exception_reset.txt": ("kfd_process_hw_exception",),
    "dmesg_club3090_751_xid13_skedcheck.txt": ("13", "Graphics Exception"),
    "cudaerr_alpacalora123_uncorrectable_ecc.txt": ("uncorrectable ECC error",),
    "smierr_neuralstyle312_k40c_ecc_config.txt": ("uncorrectable ECC error",),
    "minerlog_trex230_3060ti_gpu_lost_riser.txt": ("GPU is lost", "15"),
    "smierr_ethminer40_riser_no_driver.txt": ("couldn't communicate with the NVIDIA driver",),
    "rocmsmi_rocm426_vegafe_511c_corrupt.txt": ("511",),
    "rocmsmi_rocm4268_mi300_monitor_empty.txt": ("Expected integer value from monitor",),
    "kmsg_rocsmi31_powerplay_msg_0x26.txt": ("Failed to send message", "0x26"),
    "dmesg_sichek51_gsp_reset_required.txt": ("NV_ERR_RESET_REQUIRED",),
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "smiq_nvdocker642_quadro_p6000_cut.txt": ["0000:03:00.0"],
    "smiq_nvdocker564_ecc_temp_cut.txt": [None],
    "nccllog_nccl1612_bootstrap_closed_early.txt": [],
    "lspcit_club3090_1075_2x5090_tree_cut.txt": [],  # a bare tree names no GPU
    "aer_manjaro221_rootport_replay_timeout.txt": [],  # a root port, no GPU
    "amdsmi_k8sdp157_mi300x_version_sysfs.txt": [],  # versions only
    "ibstat_dsx4762_fragments_active.txt": [],
    "smi_k8sdp414_rtx3060_pod_table_cut.txt": [None],  # GPU 0's row begun, cut before its name and bus id
    "topo_brickhouse6a4a_8gpu_cubemesh_mlx5.txt": [None] * 8,
    "nvlinks_bottlerocket4418_h100_mig_off.txt": [None, None],
    "smi_nvdocker420_m60_table_header_cut.txt": [],  # no rows
    "smi_nvdocker206_2x_gtx690_table.txt": ["0000:04:00.0", "0000:05:00.0"],
    "smiq_nvdocker1485_gtx1660ti_header_cut.txt": ["0000:07:00.0"],
    "lspcinnk_club3090_138_2x_rtx3090.txt": ["0000:05:00.0", "0000:84:00.0"],
    "rigreport_club3090_1047_a6000_markdown.txt": [None],
    "dmesg_rocm617_kfd_hw_exception_reset.txt": [],
    "smi_nvctk69_container_banner_table_cut.txt": [],
    "dmesg_club3090_751_xid13_skedcheck.txt": ["0000:07:00.0"],
    "cudaerr_alpacalora123_uncorrectable_ecc.txt": [],
    "smierr_neuralstyle312_k40c_ecc_config.txt": ["0000:03:00.0"],
    "npusmi_gpustack2135_910b1_debug_dict.txt": ["0000:01:00.0"],
    "minerlog_trex230_3060ti_gpu_lost_riser.txt": [None, None],  # GPU1, GPU2
    "smierr_ethminer40_riser_no_driver.txt": [],
    "rocmsmi_rocm426_vegafe_511c_corrupt.txt": [None],  # GPU[1]
    "rocmsmi_rocm4268_mi300_monitor_empty.txt": [None, None],  # devices 0 and 1
    "rocmsmi_rocm2681_w7900_plus_igpu_errors.txt": [None, None],  # the W7900 and the iGPU
    "rocmsmi_rocmlir470_debug_not_supported.txt": [None],
    "kmsg_rocsmi31_powerplay_msg_0x26.txt": [],
    "dmesg_sichek51_gsp_reset_required.txt": [],
    "smireset_nvsentinel1692_in_use_then_ok.txt": ["0000:1A:00.0"],
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    "smiq_nvdocker642_quadro_p6000_cut.txt": {"model": ["Quadro P6000"]},
    "smiq_nvdocker564_ecc_temp_cut.txt": {"model": [None]},
    "smi_k8sdp414_rtx3060_pod_table_cut.txt": {"model": [None]},
    "topo_brickhouse6a4a_8gpu_cubemesh_mlx5.txt": {"model": [None] * 8},
    "nvlinks_bottlerocket4418_h100_mig_off.txt": {"model": ["H100 80GB HBM3"] * 2,
                                                  "uuid": ["GPU-4039dfe4-0c97-4b1e-683e-eb7d42699053",
                                                           "GPU-dd3b269a-8f3a-d2d5-1518-2713ba03fcf7"]},
    "smi_nvdocker206_2x_gtx690_table.txt": {"model": ["GTX 690"] * 2},
    "smiq_nvdocker1485_gtx1660ti_header_cut.txt": {"model": ["GTX 1660 Ti"]},
    "lspcinnk_club3090_138_2x_rtx3090.txt": {"model": ["RTX 3090"] * 2},
    "rigreport_club3090_1047_a6000_markdown.txt": {"model": ["RTX A6000"], "memory_bytes": [49140 * MIB]},
    "smierr_neuralstyle312_k40c_ecc_config.txt": {"model": ["K40c"]},  # named in the prose
    "npusmi_gpustack2135_910b1_debug_dict.txt": {"model": ["910B1"]},
    "nccltests_npkit19_4x_2080ti_oldformat_cut.txt": {"model": ["RTX 2080 Ti"] * 4},
    "minerlog_trex230_3060ti_gpu_lost_riser.txt": {"model": [None, None]},
    "rocmsmi_rocm4268_mi300_monitor_empty.txt": {"model": ["MI300X|74b5"] * 2},
    "rocmsmi_rocm2681_w7900_plus_igpu_errors.txt": {"model": [None, None]},
    "rocmsmi_rocmlir470_debug_not_supported.txt": {"model": [None]},
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "nccllog_nccltests252_ib_vendor_err81.txt": ("kolyoz1", "kolyoz2"),
    "nccllog_horovod666_2018_socket_closed.txt": ("seyun",),
    "nccllog_nccl795_p4d_remote_broken_pipe.txt": (P4D,),
    "amdsmi_k8sdp157_mi300x_version_sysfs.txt": ("6.4.0", "25.3.0"),
    "smi_k8sdp414_rtx3060_pod_table_cut.txt": ("470.74",),
    "topo_brickhouse6a4a_8gpu_cubemesh_mlx5.txt": ("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"),
    "nccllog_nccl1121_8x_a6000_socket_bridges.txt": ("ps-SYS-420GP-TNR",),
    "smi_nvdocker420_m60_table_header_cut.txt": ("375.66",),
    "smiq_nvdocker1485_gtx1660ti_header_cut.txt": ("460.32.03",),
    "smi_nvctk69_container_banner_table_cut.txt": ("525.85.12",),
    "nccltests_npkit19_4x_2080ti_oldformat_cut.txt": ("gpu9",),
    "rocmsmi_rocm426_vegafe_511c_corrupt.txt": ("0x6863",),
}

# files gpuvet still gets wrong against the tables, and why; run at HEAD
KNOWN_MISSES: dict[str, str] = {
    "aer_manjaro221_rootport_replay_timeout.txt": "no finding: the hand-typed AER lines are read now (XR1), but one "
                                                  "corrected error on a root port is under doctor's port burst",
    "amdsmi_k8sdp157_mi300x_version_sysfs.txt": "inventory: amd-smi version's ROCm 6.4.0 and AMDSMI 25.3.0 are not read",
    "dmesg_sichek51_gsp_reset_required.txt": "told: module_needs_reset (right), but it cites the GspRmAlloc line, "
                                             "not the NV_ERR_RESET_REQUIRED the next line names",
    "minerlog_trex230_3060ti_gpu_lost_riser.txt": "inventory: GPU 2 lost found (module_fell_off_bus, right), but the "
                                                  "miner's GPU1 and GPU2 are not listed",
    "nccllog_horovod666_2018_socket_closed.txt": "the 2018 NCCL lines are read (XR3: host seyun, internal Network "
                                                 "Socket), but one host in the log is can't tell, no fallback found",
    "nvlinks_bottlerocket4418_h100_mig_off.txt": "inventory: no module from 'GPU N: NVIDIA H100 80GB HBM3 (UUID: ...)' "
                                                 "of nvidia-smi nvlink --status",
    "rocmsmi_rocm2681_w7900_plus_igpu_errors.txt": "inventory: 1 module listed, not GPU[0] and GPU[1] (the W7900 and "
                                                   "the iGPU)",
    "rocmsmi_rocm4268_mi300_monitor_empty.txt": "inventory: DID 0x74b5 (the MI300X's VF id) is not in gpuvet's pci.ids "
                                                "table, so the model is unknown (the empty monitor is found)",
    "smi_k8sdp414_rtx3060_pod_table_cut.txt": "inventory: read now (can't tell, driver 470.74; XR1), but GPU 0's "
                                              "row cut after its index lists no module",
    "smierr_neuralstyle312_k40c_ecc_config.txt": "inventory: the ECC error is on 0000:03:00.0 now (XR3), but the "
                                                 "Tesla K40c the prose names is not listed",
    "smireset_nvsentinel1692_in_use_then_ok.txt": "inventory: read now (can't tell, the reset's outcomes said; XR1), "
                                                  "but the reset's bus id lists no module",
}


BATCH = Batch(FRESH_X, CAUSES, severity=SEVERITY, told=TOLD, modules=MODULES, fields=FIELDS, said=SAID,
              known_misses=KNOWN_MISSES)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_x_capture_gets_its_blind_diagnosis = BATCH.tests(35)
