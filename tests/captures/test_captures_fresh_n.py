"""Batch N (tests/data/captures/fresh_n/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold the MANIFEST's "a correct tool should
report" column for every file (not what gpuvet prints): CAUSES with SEVERITY where the row rates a finding,
TOLD where it names what the finding must cite, MODULES / FIELDS / SAID where it says what inventory must
read, HOSTS where it says what topo's host sides are; benchmarks/score_manifest.py --batch n scores the batch
against them (tests/support/blind_batch.py).

Read as batches K, L and M are: "no finding" means nothing at warn or above (an info is allowed); "warn/error"
and "warn/info" pin no severity; "warn:" pins warn; "critical/error" and "error:" pin critical (gpuvet has no
'error': its next step up from warn is critical). An 'info:' beside "no finding" names words doctor must say.
Inventory expectations count: a file whose doctor answer is right and whose inventory is not is a known miss,
its reason starting 'inventory:'. An inventory item is pinned where the row names it as a fact of the file (a
model, bus id, driver, memory, process); where the row hedges ('nothing certain') or the file is cut before it
(topo_nccl1357's GPU7 row) it is not. A healthy file refused (exit 2) is a miss: no row here accepts a
refusal. Module names follow gpuvet's own (a bus id as 0000:0C:00.0; 'bus id not in the log' where a line
names none; 'HOST GPU N' where an NCCL line's prefix names its host and device; 'host and GPU not in the
log' for a collective's finding where the row names no host or device; 'GPU[0]' for rocm-smi's device 0;
None for the node). Files gpuvet still gets wrong are KNOWN_MISSES, each with why; their test is a strict
xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding

FRESH_N = Path(__file__).parents[1] / "data" / "captures" / "fresh_n"
MIB = 1 << 20
NO_BUS = "bus id not in the log"
NO_HOST = "host and GPU not in the log"

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # repeated 'GPU fault detected: 147' VM protection faults: the miner's kernels, not a dead module
    "dmesg_ethminer76_amdgpu_vm_fault_tc.txt": {("module_page_fault", "0000:02:00.0")},
    # Xid 31 MMU fault (FAULT_PDE, process python): an application memory fault
    "journal_abhik_xid31_mmu_fault_pde.txt": {("xid", "0000:C1:00.0")},
    # ibv_create_qp failed inside a container on node08 (NET/IB mlx5_0): RDMA setup/permissions
    "nccl_nccl1129_docker_ibv_create_qp_failed_init.txt": {("nccl_ib_resource_failed", "node08")},
    # ibv_create_qp failed on hai-a100-3 ranks 4, 5, 6 under slurm+pyxis: RDMA limits in the container
    "nccl_nccl562_pyxis_a100_ibv_create_qp_failed.txt": {("nccl_ib_resource_failed", "hai-a100-3 GPU 4, 5, 6")},
    # ibv_create_cq failed on spark01 over RoCE mlx5_1
    "nccl_nccl380_roce_a100_ibv_create_cq_failed.txt": {("nccl_ib_resource_failed", "spark01 GPU 0")},
    # NVML GPU_IS_LOST / NVAPI device not found: a card was lost, which one the log does not name
    "minerlog_nhm1695_win_nvml_gpuislost.txt": {("module_fell_off_bus", NO_BUS)},
    # GPU 0 (DID 6863) at 94 C under load with the fan at 40 %
    "rocmsmi_rocm196_vega_fe_94c_old_table.txt": {("at_max_operating_temp", "GPU[0]")},
    # repeated Xid 31 (old 352-era format): the library's kernels touch bad addresses
    "dmesg_collenchyma14_xid31_old_engmask.txt": {("xid", "0000:01:00.0")},
    # dcgm-exporter's XID metric, err_code 45 (preemptive cleanup), module not identified
    "dcgmexp_dcgm235_xid45_metric_inline.txt": {("xid", NO_BUS)},
    # all_reduce never produced a result row (a hang) on 4 x GTX 1080 Ti
    "nccltests_nccl257_4x1080ti_hang_socket_info.txt": {("collective_stalled", None)},
    # wrong results (#wrong 237858 at 524288 B) across the network path, and busbw ~0.8 GB/s
    "nccltests_nccl1184_dgxh100_wrong_results_simple.txt": {("data_corruption_in_transfer", None),
                                                            ("collective_below_model", None)},
    # MES stops answering REMOVE_QUEUE, MODE2 reset of 0000:c3:00.0
    "journal_rocm5151_gfx1151_mes_remove_queue_mode2.txt": {("module_hung_reset", "0000:C3:00.0")},
    # the re-init's IB ring test fails on vpe (-110)
    "dmesg_rocm5745_strixhalo_vpe_ib_test_failed.txt": {("module_init_failed", "0000:C1:00.0")},
    # HcclAllocComResourceByTiling ret 9: HCCL's inter-node set-up failed, no host or NPU named
    "hccl_vllmascend9447_a3_two_node_alloc_resource_failed.txt": {("collective_init_failed", NO_HOST)},
    # Xid 119 (GSP RPC timeout) repeated on 0000:61:00: GSP unresponsive, reset needed
    "dmesg_nvdocker1648_xid119_gsp_rpc_timeout.txt": {("xid", "0000:61:00.0"), ("module_needs_reset", "0000:61:00.0")},
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "rocmsmi_brickhouse_mi300x_vf_productname.txt": set(),
    "smi_pai1396_quadro_p5000_ecc_enabled.txt": set(),  # ECC 0, 39C, 42W/180W, the user's own cntk job
    "smiq_vcuda7_t4_container_head_cut.txt": set(),  # 'ECC ERR!' only inside the vcuda container
    "smiqx_telegraf15142_grep_power_one_line.txt": set(),
    "nccl_nccl834_16rank_ib_gdrdma_channels_cut.txt": set(),  # the thread's error is not in the excerpt
    "nccl_nccl1657_maas_leader_ib_connect_cut.txt": set(),  # the thread's error is not in the excerpt
    "xpusmi_xpumanager169_arc_pro_b60_ecc_three_answers.txt": set(),  # the table's ECC 'Disabled' is a tool bug
    "topo_k8srecipes_dgx_h100_nv18_guide.txt": set(),  # NV18 every pair
    "smi_nvitop8_mig_processes_gi_ci_then_L_cut.txt": set(),
    "smiL_godcgm30_a100_pcie_mig_2g.txt": set(),
    "lspci_nvbw53_grep_rlxdord_a100_nvswitch_bridges.txt": set(),  # RlxdOrd+ everywhere, no link state
    "dcgmi_gmt4_dmon_156_200_overflow.txt": set(),  # DCGM 1.4.3's print overflow
    "dmesg_rocm121_carrizo_apu_kfd_topology.txt": set(),
    "dmesg_rocm599_power9_vega10_load_cut.txt": set(),  # the failure is past the cut
    "nccltests_nt293_2node_a100pcie_hpcx_header_info.txt": set(),  # no result rows: nothing to judge
    "topo_nccl1357_h100_8gpu_nv18_6nic.txt": set(),  # NV18 every pair
    "nccltests_nccl318_p3dn_8v100_header_cut.txt": set(),  # only the 8-byte row
    "collectenv_cookbook218_a100_80gb_pcie_head_cut.txt": set(),  # environment only
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[Finding, str]] = {
    "dmesg_ethminer76_amdgpu_vm_fault_tc.txt": {("module_page_fault", "0000:02:00.0"): "warn"},
    "journal_abhik_xid31_mmu_fault_pde.txt": {("xid", "0000:C1:00.0"): "warn"},
    "nccl_nccl1129_docker_ibv_create_qp_failed_init.txt": {("nccl_ib_resource_failed", "node08"): "critical"},
    "nccl_nccl562_pyxis_a100_ibv_create_qp_failed.txt": {("nccl_ib_resource_failed", "hai-a100-3 GPU 4, 5, 6"):
                                                         "critical"},
    "nccl_nccl380_roce_a100_ibv_create_cq_failed.txt": {("nccl_ib_resource_failed", "spark01 GPU 0"): "critical"},
    "minerlog_nhm1695_win_nvml_gpuislost.txt": {("module_fell_off_bus", NO_BUS): "critical"},
    "rocmsmi_rocm196_vega_fe_94c_old_table.txt": {("at_max_operating_temp", "GPU[0]"): "warn"},
    "dmesg_collenchyma14_xid31_old_engmask.txt": {("xid", "0000:01:00.0"): "warn"},
    "nccltests_nccl1184_dgxh100_wrong_results_simple.txt": {("data_corruption_in_transfer", None): "critical",
                                                            ("collective_below_model", None): "warn"},
    "journal_rocm5151_gfx1151_mes_remove_queue_mode2.txt": {("module_hung_reset", "0000:C3:00.0"): "critical"},
    "dmesg_rocm5745_strixhalo_vpe_ib_test_failed.txt": {("module_init_failed", "0000:C1:00.0"): "critical"},
    "hccl_vllmascend9447_a3_two_node_alloc_resource_failed.txt": {("collective_init_failed", NO_HOST): "critical"},
    "dmesg_nvdocker1648_xid119_gsp_rpc_timeout.txt": {("xid", "0000:61:00.0"): "critical",
                                                      ("module_needs_reset", "0000:61:00.0"): "critical"},
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module, and its info)
TOLD: dict[str, tuple[str, ...]] = {
    "dmesg_ethminer76_amdgpu_vm_fault_tc.txt": ("147",),
    "journal_abhik_xid31_mmu_fault_pde.txt": ("31", "python"),
    "nccl_nccl1129_docker_ibv_create_qp_failed_init.txt": ("ibv_create_qp", "mlx5_0"),
    "nccl_nccl562_pyxis_a100_ibv_create_qp_failed.txt": ("ibv_create_qp",),
    "nccl_nccl380_roce_a100_ibv_create_cq_failed.txt": ("ibv_create_cq", "mlx5_1", "RoCE"),
    "nccl_nccl834_16rank_ib_gdrdma_channels_cut.txt": ("IB", "GDRDMA"),
    "nccl_nccl1657_maas_leader_ib_connect_cut.txt": ("IB", "NCCL_IB_GID_INDEX"),
    "minerlog_nhm1695_win_nvml_gpuislost.txt": ("GPUIsLost",),
    "rocmsmi_rocm196_vega_fe_94c_old_table.txt": ("94",),
    "dmesg_collenchyma14_xid31_old_engmask.txt": ("31",),
    "dcgmexp_dcgm235_xid45_metric_inline.txt": ("45",),
    "nccltests_nt293_2node_a100pcie_hpcx_header_info.txt": ("IBext_v8",),
    "nccltests_nccl257_4x1080ti_hang_socket_info.txt": ("libibverbs", "Socket"),
    "nccltests_nccl1184_dgxh100_wrong_results_simple.txt": ("237858", "524288"),
    "journal_rocm5151_gfx1151_mes_remove_queue_mode2.txt": ("MES", "MODE2"),
    "dmesg_rocm5745_strixhalo_vpe_ib_test_failed.txt": ("vpe", "-110"),
    "hccl_vllmascend9447_a3_two_node_alloc_resource_failed.txt": ("HcclAllocComResourceByTiling",),
    "dmesg_nvdocker1648_xid119_gsp_rpc_timeout.txt": ("119", "GSP"),
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "dmesg_ethminer76_amdgpu_vm_fault_tc.txt": ["0000:02:00.0"],
    "journal_abhik_xid31_mmu_fault_pde.txt": ["0000:C1:00.0"],
    "rocmsmi_brickhouse_mi300x_vf_productname.txt": [None] * 4,
    "smi_pai1396_quadro_p5000_ecc_enabled.txt": ["0000:65:00.0"],
    "smiq_vcuda7_t4_container_head_cut.txt": ["0000:00:08.0"],
    "nccl_nccl1129_docker_ibv_create_qp_failed_init.txt": [None] * 4,  # its 4 processes' [0]-[3]; no model, no bus
    "xpusmi_xpumanager169_arc_pro_b60_ecc_three_answers.txt": ["0000:18:00.0"],
    "topo_k8srecipes_dgx_h100_nv18_guide.txt": [None] * 8,
    "smi_nvitop8_mig_processes_gi_ci_then_L_cut.txt": [None] * 4,  # GPUs 0-3 in the process table
    "smiL_godcgm30_a100_pcie_mig_2g.txt": [None],
    "lspci_nvbw53_grep_rlxdord_a100_nvswitch_bridges.txt": ["10:00.0", "16:00.0", "48:00.0", "4c:00.0"],
    "dmesg_rocm121_carrizo_apu_kfd_topology.txt": ["0000:00:01.0"],
    "dmesg_rocm599_power9_vega10_load_cut.txt": [None],
    "rocmsmi_rocm196_vega_fe_94c_old_table.txt": [None],
    "dmesg_collenchyma14_xid31_old_engmask.txt": ["0000:01:00.0"],
    "nccltests_nt293_2node_a100pcie_hpcx_header_info.txt": [None, None],
    "topo_nccl1357_h100_8gpu_nv18_6nic.txt": [None] * 8,
    "nccltests_nccl318_p3dn_8v100_header_cut.txt": [None] * 8,
    "nccltests_nccl257_4x1080ti_hang_socket_info.txt": [None] * 4,
    "journal_rocm5151_gfx1151_mes_remove_queue_mode2.txt": ["0000:C3:00.0"],
    "dmesg_rocm5745_strixhalo_vpe_ib_test_failed.txt": ["0000:C1:00.0"],
    "collectenv_cookbook218_a100_80gb_pcie_head_cut.txt": [None],
    "dmesg_nvdocker1648_xid119_gsp_rpc_timeout.txt": ["0000:61:00.0"],
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    "dmesg_ethminer76_amdgpu_vm_fault_tc.txt": {"model": ["AMD"]},
    "rocmsmi_brickhouse_mi300x_vf_productname.txt": {"model": ["MI300X VF"] * 4},
    "smi_pai1396_quadro_p5000_ecc_enabled.txt": {"model": ["Quadro P5000"], "processes": [[23534]]},
    "smiq_vcuda7_t4_container_head_cut.txt": {"model": ["Tesla T4"], "persistence_mode": [True]},
    "xpusmi_xpumanager169_arc_pro_b60_ecc_three_answers.txt": {"model": ["Arc(TM) Pro B|Arc Pro B"],
                                                               "ecc_enabled": [True]},
    "topo_k8srecipes_dgx_h100_nv18_guide.txt": {"numa_node": [0] * 4 + [1] * 4},
    "smi_nvitop8_mig_processes_gi_ci_then_L_cut.txt": {"model": ["A100-SXM4-80GB", None, None, None],
                                                       "processes": [[55111], [34965, 56597, 46505, 42859],
                                                                     [26294, 28989], [37648, 46064, 48604]]},
    "smiL_godcgm30_a100_pcie_mig_2g.txt": {"model": ["A100 80GB PCIe"], "mig_mode": [True]},
    "lspci_nvbw53_grep_rlxdord_a100_nvswitch_bridges.txt": {"model": ["20b2|A100"] * 4},
    "dmesg_rocm121_carrizo_apu_kfd_topology.txt": {"model": ["CARRIZO|Carrizo|9874"], "memory_bytes": [512 * MIB]},
    "dmesg_rocm599_power9_vega10_load_cut.txt": {"model": ["VEGA10|Vega 10|6860"]},
    "rocmsmi_rocm196_vega_fe_94c_old_table.txt": {"model": ["6863|Vega Frontier"]},  # DID 6863 or its name
    "nccltests_nt293_2node_a100pcie_hpcx_header_info.txt": {"model": ["A100-PCIE-40GB"] * 2},
    "nccltests_nccl318_p3dn_8v100_header_cut.txt": {"model": ["V100-SXM2-32GB"] * 8},
    "nccltests_nccl257_4x1080ti_hang_socket_info.txt": {"model": ["GTX 1080 Ti"] * 4},
    "collectenv_cookbook218_a100_80gb_pcie_head_cut.txt": {"model": ["A100 80GB PCIe"]},
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "rocmsmi_brickhouse_mi300x_vf_productname.txt": ("gfx942",),
    "smi_pai1396_quadro_p5000_ecc_enabled.txt": ("384.111",),
    "smiq_vcuda7_t4_container_head_cut.txt": ("418.67",),
    "nccl_nccl1129_docker_ibv_create_qp_failed_init.txt": ("node08",),
    "smiL_godcgm30_a100_pcie_mig_2g.txt": ("2g.20gb",),
    "lspci_nvbw53_grep_rlxdord_a100_nvswitch_bridges.txt": ("53:00.0", "54:00.0", "55:00.0"),  # NVSwitch bridges
    "nccltests_nt293_2node_a100pcie_hpcx_header_info.txt": ("test1", "test2"),
    "topo_nccl1357_h100_8gpu_nv18_6nic.txt": ("NIC0", "NIC3"),
    "nccltests_nccl318_p3dn_8v100_header_cut.txt": ("ip-10-0-26-117",),
    "collectenv_cookbook218_a100_80gb_pcie_head_cut.txt": ("525.116.04",),
}

# file -> topo's host side per GPU where the row says it
HOSTS: dict[str, list[str]] = {
    "topo_k8srecipes_dgx_h100_nv18_guide.txt": ["cpu0"] * 4 + ["cpu1"] * 4,
}

# files gpuvet still gets wrong against the tables, and why; run at HEAD
KNOWN_MISSES: dict[str, str] = {
    "dmesg_rocm599_power9_vega10_load_cut.txt": "inventory: no module listed although the log names VEGA10 "
                                                "(1002:6860)",
    "journal_rocm5151_gfx1151_mes_remove_queue_mode2.txt": "partial: module_hung_reset on 0000:C3:00.0 is right, but "
                                                           "the finding does not say the reset was a MODE2 one",
    "lspci_nvbw53_grep_rlxdord_a100_nvswitch_bridges.txt": "inventory: the 4 A100 are listed, the NVSwitch bridges "
                                                           "53:00.0-55:00.0 (10de:1af1) are not",
    "nccl_nccl1657_maas_leader_ib_connect_cut.txt": "partial: no finding, IB said, but not that NCCL_IB_GID_INDEX=0 "
                                                    "was set by the environment",
    "nccl_nccl834_16rank_ib_gdrdma_channels_cut.txt": "partial: no finding, IB between nodes said, but not GDRDMA",
    "nccltests_nccl1184_dgxh100_wrong_results_simple.txt": "partial: the wrong data is critical, but the #wrong count "
                                                           "237858 is not cited and the ~0.8 GB/s busbw is not "
                                                           "judged (the paste names no GPU model)",
    "nccltests_nccl257_4x1080ti_hang_socket_info.txt": "miss: exit 0, 'header without result rows: nothing to judge' "
                                                       "(the excerpt ends at the poster's cut, so no hang is in the "
                                                       "file); the libibverbs WARN is not said",
    "nccltests_nt293_2node_a100pcie_hpcx_header_info.txt": "partial: no finding, but the IBext_v8 plugin is not said",
    "rocmsmi_brickhouse_mi300x_vf_productname.txt": "inventory: 4 x MI300X VF listed, their gfx942 not said",
    "rocmsmi_rocm196_vega_fe_94c_old_table.txt": "miss: 94 C is said as can't tell (no design limit known for "
                                                 "the card), no warn",
    "smiL_godcgm30_a100_pcie_mig_2g.txt": "inventory: the MIG 2g.20gb device line is counted in a note, mig_mode is "
                                          "not set and the profile not said",
    "smi_nvitop8_mig_processes_gi_ci_then_L_cut.txt": "inventory: only GPU 0 (from -L) is listed; the GI/CI process "
                                                      "table's GPUs 0-3 and their pids are not read",
    "xpusmi_xpumanager169_arc_pro_b60_ecc_three_answers.txt": "inventory: the module is listed, but dump's and "
                                                              "discovery's 'ECC State: enabled' is not its "
                                                              "ecc_enabled",
}


BATCH = Batch(FRESH_N, CAUSES, severity=SEVERITY, told=TOLD, modules=MODULES, fields=FIELDS, said=SAID,
              hosts=HOSTS, known_misses=KNOWN_MISSES)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_n_capture_gets_its_blind_diagnosis = BATCH.tests(33)
