"""Batch T (tests/data/captures/fresh_t/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold the MANIFEST's "a correct tool should
report" column for every file (not what gpuvet prints): CAUSES with SEVERITY where the row rates a finding,
MAY where it allows one without asking for it, TOLD where it names what the finding must cite, MODULES /
FIELDS / SAID where it says what inventory must read; benchmarks/score_manifest.py --batch t scores the batch
against them (tests/support/blind_batch.py).

Read as batches P to S are: "no finding" means nothing at warn or above (an info is allowed); "warn:" pins
warn; "critical:" pins critical; "warn or critical", "critical (or warn)" and "warn (or critical)" pin no
severity. A row naming a fault in its own words is held as the cause gpuvet files that meaning under (each
noted where used): a reset that did not bring the module back, an SMU that failed to resume and a GSP that
never booted are module_needs_reset; an NCCL init failing in its NVLS setup is nvls_setup_failed; a pair's
P2P far below its link is topology_misidentified; a Socket fallback for want of libibverbs is
nccl_ib_unavailable; a watchdog timeout and an NET/IB completion error are collective_runtime_error. Where
the thread concludes a module needs a reset and the row names its failed initialisation, module_needs_reset
is allowed beside it (MAY). Inventory expectations count (a known miss's reason starting 'inventory:'): a
bus id, a model, a driver, a power cap, a NUMA placement or CPU affinity, a NIC or link kind the row names as a
fact of the file is pinned; a reading (a temperature, a power draw) is not. Files gpuvet still gets wrong
are KNOWN_MISSES, each with why; their test is a strict xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding

FRESH_T = Path(__file__).parents[1] / "data" / "captures" / "fresh_t"
NO_BUS = "bus id not in the log"
NO_HOST = "host and GPU not in the log"
L40S_BUSES = ["0000:16:00.0", "0000:38:00.0", "0000:82:00.0", "0000:AC:00.0"]

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # P2P at ~6.6 GB/s one way between two RTX 4090, far below a Gen4 x16 pair (~25 GB/s)
    "p2p_tinygrad44_2x4090.txt": {("topology_misidentified", "0000:02:00.0 <-> 0000:17:00.0")},
    # RmInitAdapter failed 0x62:0x40:1941 (GSP could not start), then Xid 120
    "dmesg_ogkm876_5080_gsp_wpr2.txt": {("module_init_failed", "0000:01:00.0"), ("xid", "0000:01:00.0")},
    # RmInitAdapter failed 0x62:0x51:1941, NV_ERR_NO_MEMORY preparing the GSP firmware
    "dmesg_ogkm892_5070ti_gsp_oom.txt": {("module_init_failed", "0000:01:00.0")},
    # amdgpu probe fails with -12 (Fatal error during GPU init)
    "dmesg_rocmsdk180_mi50_probe12.txt": {("module_init_failed", "0000:03:00.0")},
    # reset, then every ring test fails (0xCAFEDEAD), VRAM lost: the reset did not bring it back
    "dmesg_tfup180_vega_reset_ringtest.txt": {("module_needs_reset", "0000:03:00.0")},
    # HcclCommInitRootInfo errNo 0x5000002 on rank 1 of 4; no host or device in the log
    "hccl_gpustack2021_310p_initroot.txt": {("collective_init_failed", NO_HOST)},
    # transport/nvls.cc Cuda failure 3 'initialization error' on device 2
    "nccl_vllm9369_nvls_init_error.txt": {("nvls_setup_failed", "kmaker-54-033138205093 GPU 2")},
    # REDUCE_SCATTER SeqNum 1559 timed out after 30 min on ranks 64-67; no GPU named
    "torchnccl_nccl1111_quoted_watchdog.txt": {("collective_runtime_error", None)},
    # the first collective (ALLGATHER SeqNum 1) timed out on ranks 0 and 1: GPU-to-GPU P2P suspected
    "torchnccl_colossal3701_2gpu_allgather_timeout.txt": {("collective_runtime_error", None)},
    # NET/IB 'Got completion with error' (net_ib.cc:881) on task-7701-z5h6w
    "nccl_nccl733_k9s_ib_completion.txt": {("collective_runtime_error", "task-7701-z5h6w GPU 0")},
    # no libibverbs: NCCL on Socket (enp1s0f0); the 4 GPUs joined by PCIe Gen3 switches only
    "nccl_accel2183_socket_plx_4gpu.txt": {("nccl_ib_library_absent", "axon")},  # R14A: one host, NCCL's INFO
    "dmesg_therock737_gfx1151_mes_reset.txt": {("module_hung_reset", "0000:C1:00.0")},  # MES hang, MODE2 reset
    # GSP bootstrap timeout (target mask release): the H100 did not initialise
    "dmesg_nvtrust52_h100_cvm_gsp_timeout.txt": {("module_needs_reset", NO_BUS)},
    # lspci lists 4 NVIDIA modules, nvidia-smi (cut) not all of them: which one is not in the file
    "lspci_smi_nvsentinel684_gpu_drop.txt": {("module_missing", None)},
    # SMC not ready, amdgpu_device_ip_resume failed -5 on both MI100
    "dmesg_amdgpu183_mi100_smu_resume.txt": {("module_needs_reset", "0000:03:00.0"),
                                             ("module_needs_reset", "0000:83:00.0")},
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "topo_brickhouse_8gpu_nv12.txt": set(),
    "smiq_k8sdp98_k80_gce.txt": set(),
    "smi_openmm2386_k80_table.txt": set(),
    "smiq_autokeras118_1080ti.txt": set(),
    "rocmsmi_brickhouse_showtopo_4gpu.txt": set(),  # the page's garbled weights are no fault
    "topo_wuyea_2gpu_sys.txt": set(),  # SYS between the sockets: info at most
    "smi_gpupassthrough4_2080_vm.txt": set(),  # the truncated name is no missing GPU
    "smi_gpuburn114_h100_fullload.txt": set(),  # 698 W of 700 W under a burn test
    "smi_dcgmexp512_h100_mig.txt": set(),  # 'On' in the ECC column and N/A memory: MIG
    "devicequery_dankwiki_emulation.txt": set(),  # the CPU emulator's placeholders: info at most
    "smiq_ollama10393_windows_wddm_procs.txt": set(),  # 'Not available in WDDM driver model'
    "topo_lmdeploy1944_checkenv_2gpu_mlx.txt": set(),
    "smicsv_tgi2238_a6000_noheader.txt": set(),  # P8, gen 1 at idle: power saving
    "smi_tgi2671_4x_a10g.txt": set(),  # GPUs 2-3 cut, not missing
    "smi_tgi1109_a100pcie_noindent.txt": set(),
    "smi_tgi1838_l40s_sharding.txt": set(),
    "smi_tgi270_t4_launcher_env.txt": set(),
    "topo_nccl719_two_pods_mlx.txt": set(),  # pod1's nearest NIC via NODE: info at most
    "amdsmi_therock1878_process_cu_na.txt": set(),  # N/A CU %, 16.0 EB: reporting artefacts
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[Finding, str]] = {
    "p2p_tinygrad44_2x4090.txt": {("topology_misidentified", "0000:02:00.0 <-> 0000:17:00.0"): "warn"},
    "dmesg_ogkm876_5080_gsp_wpr2.txt": {("module_init_failed", "0000:01:00.0"): "critical"},
    "dmesg_ogkm892_5070ti_gsp_oom.txt": {("module_init_failed", "0000:01:00.0"): "critical"},
    "dmesg_rocmsdk180_mi50_probe12.txt": {("module_init_failed", "0000:03:00.0"): "critical"},
    "dmesg_tfup180_vega_reset_ringtest.txt": {("module_needs_reset", "0000:03:00.0"): "critical"},
    "torchnccl_nccl1111_quoted_watchdog.txt": {("collective_runtime_error", None): "warn"},
    "torchnccl_colossal3701_2gpu_allgather_timeout.txt": {("collective_runtime_error", None): "warn"},
    "nccl_accel2183_socket_plx_4gpu.txt": {("nccl_ib_library_absent", "axon"): "info"},
    "dmesg_nvtrust52_h100_cvm_gsp_timeout.txt": {("module_needs_reset", NO_BUS): "critical"},
    "dmesg_amdgpu183_mi100_smu_resume.txt": {("module_needs_reset", "0000:03:00.0"): "critical",
                                             ("module_needs_reset", "0000:83:00.0"): "critical"},
}

# file -> {cause: highest severity} the row allows without asking for it
MAY: dict[str, dict[str, str]] = {
    "dmesg_ogkm876_5080_gsp_wpr2.txt": {"module_needs_reset": "critical"},  # 'GPU in a bad state, needs reset'
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module)
TOLD: dict[str, tuple[str, ...]] = {
    "p2p_tinygrad44_2x4090.txt": ("6.6",),
    "dmesg_ogkm876_5080_gsp_wpr2.txt": ("0x62:0x40:1941", "120"),
    "dmesg_ogkm892_5070ti_gsp_oom.txt": ("0x62:0x51:1941", "NV_ERR_NO_MEMORY"),
    "dmesg_rocmsdk180_mi50_probe12.txt": ("Fatal error during GPU init", "-12"),
    "dmesg_tfup180_vega_reset_ringtest.txt": ("ring",),
    "hccl_gpustack2021_310p_initroot.txt": ("HcclCommInitRootInfo", "5000002"),  # the log pads it: errNo[0x0000000005000002]
    "nccl_vllm9369_nvls_init_error.txt": ("nvls.cc", "initialization error"),
    "torchnccl_nccl1111_quoted_watchdog.txt": ("REDUCE_SCATTER", "1559"),
    "torchnccl_colossal3701_2gpu_allgather_timeout.txt": ("ALLGATHER", "P2P"),
    "nccl_nccl733_k9s_ib_completion.txt": ("net_ib.cc",),
    "nccl_accel2183_socket_plx_4gpu.txt": ("libibverbs", "Socket"),
    "dmesg_therock737_gfx1151_mes_reset.txt": ("MES", "MODE2"),
    "dmesg_nvtrust52_h100_cvm_gsp_timeout.txt": ("GSP",),
    "dmesg_amdgpu183_mi100_smu_resume.txt": ("-5",),
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "topo_brickhouse_8gpu_nv12.txt": [None] * 8,
    "smiq_k8sdp98_k80_gce.txt": ["0000:00:04.0"],
    "smi_openmm2386_k80_table.txt": ["0000:00:04.0"],
    "smiq_autokeras118_1080ti.txt": ["0000:0A:00.0"],
    "p2p_tinygrad44_2x4090.txt": ["0000:02:00.0", "0000:17:00.0"],
    "rocmsmi_brickhouse_showtopo_4gpu.txt": [None] * 4,  # GPU0-GPU3
    "topo_wuyea_2gpu_sys.txt": [None, None],
    "dmesg_ogkm876_5080_gsp_wpr2.txt": ["0000:01:00.0"],
    "dmesg_ogkm892_5070ti_gsp_oom.txt": ["0000:01:00.0"],
    "dmesg_rocmsdk180_mi50_probe12.txt": ["0000:03:00.0"],
    "smi_gpuburn114_h100_fullload.txt": ["0000:18:00.0", "0000:2A:00.0"],
    "smi_dcgmexp512_h100_mig.txt": ["0000:1A:00.0", "0000:40:00.0"],
    "devicequery_dankwiki_emulation.txt": ["0000:07:00.0"],  # the emulator is no module
    "dmesg_tfup180_vega_reset_ringtest.txt": ["0000:03:00.0"],
    "hccl_gpustack2021_310p_initroot.txt": [None] * 4,  # 4 Ascend ranks, no bus ids
    "topo_lmdeploy1944_checkenv_2gpu_mlx.txt": [None, None],
    "smicsv_tgi2238_a6000_noheader.txt": ["0000:01:00.0"],
    "smi_tgi2671_4x_a10g.txt": ["0000:00:1B.0", "0000:00:1C.0"],  # the rest cut
    "smi_tgi1109_a100pcie_noindent.txt": ["0000:01:01.0"],
    "smi_tgi1838_l40s_sharding.txt": ["0000:01:00.0", "0000:21:00.0"],
    "smi_tgi270_t4_launcher_env.txt": ["0000:00:04.0"],
    "nccl_vllm9369_nvls_init_error.txt": [None, None],  # devices 2 and 3
    "torchnccl_nccl1111_quoted_watchdog.txt": [],
    "topo_nccl719_two_pods_mlx.txt": [None] * 4,  # two GPUs in each pod
    "torchnccl_colossal3701_2gpu_allgather_timeout.txt": [],
    "nccl_nccl733_k9s_ib_completion.txt": ["0000:4B:00.0", "0000:51:00.0"],
    "nccl_accel2183_socket_plx_4gpu.txt": ["0000:1A:00.0", "0000:1B:00.0", "0000:3D:00.0", "0000:3E:00.0"],
    "dmesg_therock737_gfx1151_mes_reset.txt": ["0000:C1:00.0"],
    "lspci_smi_nvsentinel684_gpu_drop.txt": L40S_BUSES,
    "dmesg_amdgpu183_mi100_smu_resume.txt": ["0000:03:00.0", "0000:83:00.0"],
    "amdsmi_therock1878_process_cu_na.txt": [None],  # GPU 0 by index only
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    "topo_brickhouse_8gpu_nv12.txt": {"numa_node": [3, 3, 1, 0, 8, 7, 5, 4]},
    "smiq_k8sdp98_k80_gce.txt": {"model": ["Tesla K80"]},
    "smi_openmm2386_k80_table.txt": {"model": ["Tesla K80"], "power_limit_w": [149.0]},
    "smiq_autokeras118_1080ti.txt": {"model": ["GTX 1080 Ti"]},
    "p2p_tinygrad44_2x4090.txt": {"model": ["RTX 4090"] * 2},
    "topo_wuyea_2gpu_sys.txt": {"numa_node": [0, 1], "cpu_affinity": ["0-15,32-47", "16-31,48-63"]},
    "smi_gpupassthrough4_2080_vm.txt": {"model": ["RTX 208"]},  # truncated by nvidia-smi
    "dmesg_ogkm876_5080_gsp_wpr2.txt": {"model": [None]},
    "dmesg_rocmsdk180_mi50_probe12.txt": {"model": ["MI50|Vega 20"]},  # from the lspci line
    "smi_gpuburn114_h100_fullload.txt": {"model": ["H100 80GB HBM3"] * 2},
    "smi_dcgmexp512_h100_mig.txt": {"model": ["H100 80GB HBM3"] * 2, "mig_mode": [True, False]},
    "dmesg_tfup180_vega_reset_ringtest.txt": {"model": [None]},
    "hccl_gpustack2021_310p_initroot.txt": {"model": ["Ascend|310P|NPU"] * 4},
    "topo_lmdeploy1944_checkenv_2gpu_mlx.txt": {"numa_node": [1, 1], "cpu_affinity": ["48-95,144-191"] * 2},
    "smicsv_tgi2238_a6000_noheader.txt": {"model": ["RTX A6000"], "power_limit_w": [300.0]},
    "smi_tgi2671_4x_a10g.txt": {"model": ["A10G"] * 2},
    "smi_tgi1109_a100pcie_noindent.txt": {"model": ["A100 80GB PCIe"], "power_limit_w": [300.0]},
    "smi_tgi1838_l40s_sharding.txt": {"model": ["L40S"] * 2},
    "smi_tgi270_t4_launcher_env.txt": {"model": ["Tesla T4"], "power_limit_w": [70.0]},
    "topo_nccl719_two_pods_mlx.txt": {"numa_node": [1, 1, 0, 0],
                                      "cpu_affinity": ["64-127,192-255"] * 2 + ["0-63,128-191"] * 2},
    "dmesg_therock737_gfx1151_mes_reset.txt": {"model": [None]},
    "dmesg_nvtrust52_h100_cvm_gsp_timeout.txt": {"model": ["H100"]},  # its bus id not in the log
    "lspci_smi_nvsentinel684_gpu_drop.txt": {"model": ["L40S|26b9|26B9"] * 4},
    "dmesg_amdgpu183_mi100_smu_resume.txt": {"model": [None, None]},
    "amdsmi_therock1878_process_cu_na.txt": {"model": [None]},
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "topo_brickhouse_8gpu_nv12.txt": ("NV12",),
    "smiq_k8sdp98_k80_gce.txt": ("410.79", "10.0"),
    "smi_openmm2386_k80_table.txt": ("410.104",),
    "rocmsmi_brickhouse_showtopo_4gpu.txt": ("XGMI",),
    "topo_wuyea_2gpu_sys.txt": ("NIC0", "NIC1"),
    "smi_gpupassthrough4_2080_vm.txt": ("435.21",),
    "smi_gpuburn114_h100_fullload.txt": ("565.57.01",),
    "smi_dcgmexp512_h100_mig.txt": ("535.129.03",),
    "devicequery_dankwiki_emulation.txt": ("190.53",),
    "topo_lmdeploy1944_checkenv_2gpu_mlx.txt": ("NV12", "mlx5_6", "mlx5_7"),
    "smicsv_tgi2238_a6000_noheader.txt": ("550.54.15", "8.6"),
    "smi_tgi2671_4x_a10g.txt": ("555.42.06",),
    "smi_tgi1109_a100pcie_noindent.txt": ("535.86.10",),
    "smi_tgi1838_l40s_sharding.txt": ("550.54.14",),
    "smi_tgi270_t4_launcher_env.txt": ("510.47.03",),
    "nccl_vllm9369_nvls_init_error.txt": ("kmaker-54-033138205093",),
    "topo_nccl719_two_pods_mlx.txt": ("NV12",),
    "lspci_smi_nvsentinel684_gpu_drop.txt": ("570.158.01",),
}

# files gpuvet still gets wrong against the tables, and why; run at HEAD
KNOWN_MISSES: dict[str, str] = {
    "dmesg_nvtrust52_h100_cvm_gsp_timeout.txt": "inventory: the GSP boot failure found (module_needs_reset), but the H100 "
                                                "is not listed",
    "dmesg_ogkm892_5070ti_gsp_oom.txt": "told: module_init_failed on 0000:01:00.0 (right), but the NV_ERR_NO_MEMORY "
                                        "its GSP preparation hit is not cited",
    "dmesg_rocmsdk180_mi50_probe12.txt": "told: module_init_failed on 0000:03:00.0 (right), but 'error -12' is not "
                                         "cited; inventory: the MI50 of the lspci line read as 'unknown AMD module'",
    "dmesg_therock737_gfx1151_mes_reset.txt": "told: module_hung_reset on 0000:C1:00.0 (right), but the MODE2 reset "
                                              "is not cited",
    "hccl_gpustack2021_310p_initroot.txt": "inventory: the 4 Ascend ranks are not listed "
                                           "(collective_init_failed is right)",
    "lspci_smi_nvsentinel684_gpu_drop.txt": "no finding: the nvidia-smi table is cut before its first row, the "
                                            "lspci/driver count mismatch not judged; inventory: driver 570.158.01 not "
                                            "read",
    "rocmsmi_brickhouse_showtopo_4gpu.txt": "inventory: 3 modules listed (GPU0 dropped) and XGMI not said",
    "topo_nccl719_two_pods_mlx.txt": "inventory: only pod1's matrix read (2 GPUs, NUMA 1); pod2's GPUs (NUMA 0) and "
                                     "NV12 are not listed",
}


BATCH = Batch(FRESH_T, CAUSES, severity=SEVERITY, may=MAY, told=TOLD, modules=MODULES, fields=FIELDS, said=SAID,
              known_misses=KNOWN_MISSES)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_t_capture_gets_its_blind_diagnosis = BATCH.tests(34)
