"""Batch K (tests/data/captures/fresh_k/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold the MANIFEST's "a correct tool should
report" column for every file (not what gpuvet prints): CAUSES with SEVERITY where the row rates a finding,
MAY where it allows one without asking for it, TOLD where it names what the finding must cite, MODULES /
FIELDS / SAID where it says what inventory must read, REFUSAL_OK where it accepts a refusal that names what
is missing; benchmarks/score_manifest.py --batch k scores the batch against them (tests/support/blind_batch.py).

Read as batches I and J are: "no finding" means nothing at warn or above (an info is allowed); "warn/error",
"error/warn" and "warn or critical" pin no severity; "warn:" pins warn; "critical", "error/critical" and
"error:" pin critical (gpuvet has no 'error': its next step up from warn is critical). Inventory expectations
count: a file whose doctor answer is right and whose inventory is not is a known miss, its reason starting
'inventory:'. An inventory item is pinned where the row names it as a fact of the file (a model, bus id,
UUID, driver, memory, power cap, link); where the row hedges ('at most', 'or refuse') it is not. Module names
follow gpuvet's own (a bus id as 0000:0C:00.0; a UUID where the log names no bus id; 'mlx5_3 port 1' for a
NIC port; None for the node or a finding that names no module).
Files gpuvet still gets wrong are KNOWN_MISSES, each with why (the MANIFEST's after-fixes cell); their test is
a strict xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding

FRESH_K = Path(__file__).parents[1] / "data" / "captures" / "fresh_k"
MIB = 1 << 20
UUID_DP189 = "GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8"
FLASHINFER_BUS = ["0000:1A:00.0", "0000:9A:00.0", "0000:F0:00.0", "0000:BD:00.0", "0000:DF:00.0", "0000:73:00.0",
                  "0000:62:00.0", "0000:40:00.0"]

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # RmInitAdapter failed (0x25:0x65, 0x31:0xffff, 0x62): the module never came up
    "dmesg_fw528_rminitadapter_0x25.txt": {("module_init_failed", "0000:01:00.0")},
    "dmesg_rpi123_gtx1080_rminit_oops.txt": {("module_init_failed", "0000:01:00.0")},
    "dmesg_rpi677_a400_gsp_rminit.txt": {("module_init_failed", "0000:01:00.0")},
    # BAR 1 and BAR 3 'can't assign; no space' on 10de:2204: the driver cannot use the card
    "dmesg_rockchip2_rtx3090_bar_no_space.txt": {("module_cannot_attach", "0000:01:00.0")},
    # uccl's CQE ERROR status=12 (transport retry counter exceeded): the network path, no GPU named
    "rdmalog_uccl799_cqe12_amd_broadcom.txt": {("rdma_completion_error", None)},
    # GPU 0 on x4 lanes of x16; the 250 W caps are the operator's (info at most)
    "rigreport_club585_2x3090_x4_powercap.txt": {("pcie_link_downgraded", "0000:05:00.0")},
    # Xid 13 then Xid 31 on all 8 modules in one burst: one fault of the work across the node
    "kmsg_flashinfer3869_xid13_xid31_8gpu.txt": {("xid_burst_across_modules", None)} | {("xid", b) for b in FLASHINFER_BUS},
    # Xid 13 (SM warp exception) and Xid 31 (MMU fault): the application's fault
    "dmesg_trtllm15610_b200_xid13_warp_mmu.txt": {("xid", "0000:70:00.0")},
    "prose_llamacpp27105_m40_xid31_inline.txt": {("xid", "0000:03:00.0")},
    # Xid 154 recovery action OS Reboot on all three, Xid 31 on 02:00 before it
    "kernlog_cmpunlocker31_xid31_xid154_reboot.txt": {("xid", "0000:01:00.0"), ("xid", "0000:02:00.0"),
                                                      ("xid", "0000:71:00.0")},
    # amdgpu no-retry page faults at address 0 from process ollama
    "dmesg_ollama12915_mi50_page_fault.txt": {("module_page_fault", "0000:45:00.0")},
    # 'Failed to initialize NVML: Unknown Error' after the pacman driver update: reload or reboot, no module
    "smiq_py3status764_nvml_unknown_after_update.txt": {("driver_library_mismatch", None)},
    # all_gather 18.9 GB/s busbw between two GB10 hosts, below what one 200 Gb/s link carries
    "nccltests_dgxspark25_allgather_2xgb10_mtu.txt": {("collective_below_model", None)},
    # 'NET/Socket : Using [0]bond0' on a cross-node job: the RoCE NIC is not used
    "ncclinfo_areal639_socket_not_ib.txt": {("nccl_socket_fallback", None)},
    # 'mlx5_3 port 1 ==> net1 (Down)': the pod's IB VF cannot carry traffic
    "ibdev2netdev_sriov382_vf_down_pod.txt": {("nic_port_down_undeclared", "mlx5_3 port 1")},
    # 'Fatal error during GPU init' (probe -12); 'PSP create ring failed!' (the XGMI bridge)
    "dmesg_rocm3712_mi210_probe_minus12.txt": {("module_init_failed", "0000:48:00.0")},
    "dmesg_rocm2747_4xmi210_psp_ring_bridge.txt": {("module_init_failed", "0000:C7:00.0")},
    # the device plugin's XidCriticalError 69 on a GPU named by UUID
    "k8sdp_dp189_xid69_device_unhealthy.txt": {("xid", UUID_DP189)},
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "dmesg_ogkm514_arm64_proprietary_load.txt": set(),  # taint messages are normal
    "rocmsmi_rocsmi68_3mi_fan_reading.txt": set(),  # 6.67 % fan on a passive card: cosmetic
    "p2p_tinygrad36_4x4090_p2p_ok_cut.txt": set(),
    "p2p_nccltests117_8x2080ti_no_p2p_cut.txt": set(),  # no P2P on a 2080 Ti is the design
    "dmesg_qubes10036_rtx5070_enum_cut.txt": set(),
    "smi_caffe7049_wsl_geforce_3gb.txt": set(),
    "smi_pytorch1040_titanx_pascal_2017.txt": set(),  # CUDA_VISIBLE_DEVICES past the one GPU: user error
    "rocmsmi_ollama9633_rx9070_metrics.txt": set(),
    "nccltests_nccl1244_2x8h20_nvlstree_small.txt": set(),  # small sizes only
    "nodecond_nvsentinel1471_imex_false_positive.txt": set(),  # no IMEX on a single node: at most info
    "smiL_akash12_2x_quadro_rtx4000.txt": set(),
    "smiqx_telegraf15279_xml_fragment_p8.txt": set(),  # gpu_idle 'throttle' is idle
    "topo_vllm42186_b200_nic_rows_cut.txt": set(),
    "topo_nccl707_8xa100_18nic_cut.txt": set(),  # NV12 all-to-all is the A100 design
    "minerlog_xmrig2066_10gpu_zero_health.txt": set(),  # zeros are xmrig's missing reading
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[Finding, str]] = {
    "dmesg_fw528_rminitadapter_0x25.txt": {("module_init_failed", "0000:01:00.0"): "critical"},
    "dmesg_rpi123_gtx1080_rminit_oops.txt": {("module_init_failed", "0000:01:00.0"): "critical"},
    "dmesg_rpi677_a400_gsp_rminit.txt": {("module_init_failed", "0000:01:00.0"): "critical"},
    "rigreport_club585_2x3090_x4_powercap.txt": {("pcie_link_downgraded", "0000:05:00.0"): "warn"},
    "kmsg_flashinfer3869_xid13_xid31_8gpu.txt": {("xid_burst_across_modules", None): "critical"},
    "prose_llamacpp27105_m40_xid31_inline.txt": {("xid", "0000:03:00.0"): "warn"},
    "kernlog_cmpunlocker31_xid31_xid154_reboot.txt": {("xid", b): "critical" for b in
                                                      ("0000:01:00.0", "0000:02:00.0", "0000:71:00.0")},
    "nccltests_dgxspark25_allgather_2xgb10_mtu.txt": {("collective_below_model", None): "warn"},
    "ibdev2netdev_sriov382_vf_down_pod.txt": {("nic_port_down_undeclared", "mlx5_3 port 1"): "warn"},
    "dmesg_rocm3712_mi210_probe_minus12.txt": {("module_init_failed", "0000:48:00.0"): "critical"},
    "dmesg_rocm2747_4xmi210_psp_ring_bridge.txt": {("module_init_failed", "0000:C7:00.0"): "critical"},
}

# file -> {cause: the highest severity it may have}: the same fault said once more, as the row allows it
MAY: dict[str, dict[str, str]] = {
    # the power limit below default: 'as info (operator setting), not a fault'
    "rigreport_club585_2x3090_x4_powercap.txt": {"power_cap_low": "info"},
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module)
TOLD: dict[str, tuple[str, ...]] = {
    "dmesg_fw528_rminitadapter_0x25.txt": ("RmInitAdapter",),
    "dmesg_rpi123_gtx1080_rminit_oops.txt": ("RmInitAdapter",),
    "dmesg_rpi677_a400_gsp_rminit.txt": ("RmInitAdapter",),
    "dmesg_rockchip2_rtx3090_bar_no_space.txt": ("no space",),
    "rdmalog_uccl799_cqe12_amd_broadcom.txt": ("12",),  # status 12: transport retry counter exceeded
    "kmsg_flashinfer3869_xid13_xid31_8gpu.txt": ("31", "13"),
    "dmesg_trtllm15610_b200_xid13_warp_mmu.txt": ("13",),
    "prose_llamacpp27105_m40_xid31_inline.txt": ("31",),
    "kernlog_cmpunlocker31_xid31_xid154_reboot.txt": ("154", "31"),
    "smiq_py3status764_nvml_unknown_after_update.txt": ("NVML",),
    "ncclinfo_areal639_socket_not_ib.txt": ("bond0",),
    "dmesg_rocm3712_mi210_probe_minus12.txt": ("Fatal error during GPU init",),
    "dmesg_rocm2747_4xmi210_psp_ring_bridge.txt": ("PSP",),
    "k8sdp_dp189_xid69_device_unhealthy.txt": ("69",),
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "dmesg_fw528_rminitadapter_0x25.txt": ["0000:01:00.0"],
    "dmesg_rpi123_gtx1080_rminit_oops.txt": ["0000:01:00.0"],
    "dmesg_rockchip2_rtx3090_bar_no_space.txt": ["0000:01:00.0"],
    "dmesg_ogkm514_arm64_proprietary_load.txt": ["0004:01:00.0"],  # the ASPEED BMC VGA is not one
    "dmesg_rpi677_a400_gsp_rminit.txt": ["0000:01:00.0"],
    "rocmsmi_rocsmi68_3mi_fan_reading.txt": [None] * 3,
    "rdmalog_uccl799_cqe12_amd_broadcom.txt": [],
    "p2p_tinygrad36_4x4090_p2p_ok_cut.txt": ["0000:85:00.0", "0000:86:00.0", "0000:89:00.0", "0000:8D:00.0"],
    "p2p_nccltests117_8x2080ti_no_p2p_cut.txt": ["0000:04:00.0", "0000:05:00.0", "0000:08:00.0", "0000:09:00.0",
                                                 "0000:84:00.0", "0000:85:00.0", "0000:88:00.0", "0000:89:00.0"],
    "dmesg_qubes10036_rtx5070_enum_cut.txt": ["0000:01:00.0"],
    "rigreport_club585_2x3090_x4_powercap.txt": ["0000:05:00.0", "0000:0A:00.0"],
    "kmsg_flashinfer3869_xid13_xid31_8gpu.txt": list(FLASHINFER_BUS),
    "dmesg_trtllm15610_b200_xid13_warp_mmu.txt": ["0000:70:00.0"],
    "prose_llamacpp27105_m40_xid31_inline.txt": ["0000:03:00.0"],
    "kernlog_cmpunlocker31_xid31_xid154_reboot.txt": ["0000:01:00.0", "0000:02:00.0", "0000:71:00.0"],
    "dmesg_ollama12915_mi50_page_fault.txt": ["0000:45:00.0"],
    "smi_caffe7049_wsl_geforce_3gb.txt": ["0000:01:00.0"],
    "smi_pytorch1040_titanx_pascal_2017.txt": ["0000:01:00.0"],
    "rocmsmi_ollama9633_rx9070_metrics.txt": [None],
    "smiq_py3status764_nvml_unknown_after_update.txt": [],
    "nccltests_dgxspark25_allgather_2xgb10_mtu.txt": ["000F:01:00.0", "000F:01:00.0"],  # one on each host
    "nccltests_nccl1244_2x8h20_nvlstree_small.txt": [],
    "ncclinfo_areal639_socket_not_ib.txt": [],
    "nodecond_nvsentinel1471_imex_false_positive.txt": [],
    "smiL_akash12_2x_quadro_rtx4000.txt": ["0000:06:00.0", "0000:07:00.0"],
    "topo_nccl707_8xa100_18nic_cut.txt": [None] * 8,
    "dmesg_rocm3712_mi210_probe_minus12.txt": ["0000:48:00.0"],
    "dmesg_rocm2747_4xmi210_psp_ring_bridge.txt": ["0000:C7:00.0"],
    "k8sdp_dp189_xid69_device_unhealthy.txt": [None],  # by UUID
    "minerlog_xmrig2066_10gpu_zero_health.txt": ["0000:03:00.0", "0000:07:00.0", "0000:09:00.0", "0000:0A:00.0",
                                                 "0000:0B:00.0", "0000:0C:00.0", "0000:0D:00.0", "0000:0E:00.0",
                                                 "0000:0F:00.0", "0000:10:00.0"],
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    "dmesg_fw528_rminitadapter_0x25.txt": {"model": [None]},  # model not named
    "prose_llamacpp27105_m40_xid31_inline.txt": {"model": [None]},  # model not in the line
    "rocmsmi_rocsmi68_3mi_fan_reading.txt": {"power_limit_w": [225.0] * 3},
    "p2p_tinygrad36_4x4090_p2p_ok_cut.txt": {"model": ["RTX 4090"] * 4},
    "p2p_nccltests117_8x2080ti_no_p2p_cut.txt": {"model": ["RTX 2080 Ti"] * 8},
    "rigreport_club585_2x3090_x4_powercap.txt": {"model": ["RTX 3090"] * 2, "pcie_width_current": [4, 16]},
    "smi_caffe7049_wsl_geforce_3gb.txt": {"memory_bytes": [3072 * MIB]},
    "smi_pytorch1040_titanx_pascal_2017.txt": {"model": ["TITAN X (Pascal)"], "memory_bytes": [12186 * MIB]},
    # 'GPU[0] : pcie_link_width (Lanes): 16', 'pcie_link_speed (0.1 GT/s): 160' (16 GT/s: PCIe gen 4)
    "rocmsmi_ollama9633_rx9070_metrics.txt": {"pcie_width_current": [16], "pcie_gen_current": [4]},
    "nccltests_dgxspark25_allgather_2xgb10_mtu.txt": {"model": ["GB10"] * 2},
    # the -L lines' UUIDs; GPU 1's row is cut before its memory total
    "smiL_akash12_2x_quadro_rtx4000.txt": {"model": ["Quadro RTX 4000"] * 2, "memory_bytes": [8192 * MIB, None],
                                          "uuid": ["GPU-c7b57be0-94ff-d352-a59b-d0ee00aeed43",
                                                   "GPU-d6de6afc-bdfe-75c4-5273-0544439153fc"]},
    # model not named in topo -m; GPU0-3 on NUMA node 0, the cut leaves GPU4-7's unread
    "topo_nccl707_8xa100_18nic_cut.txt": {"model": [None] * 8, "numa_node": [0, 0, 0, 0, None, None, None, None]},
    "k8sdp_dp189_xid69_device_unhealthy.txt": {"uuid": [UUID_DP189]},
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "dmesg_ogkm514_arm64_proprietary_load.txt": ("550.78",),  # the driver version
    "dmesg_rpi677_a400_gsp_rminit.txt": ("565.77",),
    "rigreport_club585_2x3090_x4_powercap.txt": ("610.43.02",),
    "kmsg_flashinfer3869_xid13_xid31_8gpu.txt": ("580.82.07",),
    "smi_caffe7049_wsl_geforce_3gb.txt": ("511.79",),
    "smi_pytorch1040_titanx_pascal_2017.txt": ("375.39",),
    "nccltests_dgxspark25_allgather_2xgb10_mtu.txt": ("spark", "spark-3995"),
    "ibdev2netdev_sriov382_vf_down_pod.txt": ("mlx5_3",),
    "smiL_akash12_2x_quadro_rtx4000.txt": ("535.129.03",),
}

# a refusal that names what the fragment lacks ('without the matrix's header line or any GPU row')
REFUSAL_OK = frozenset({"topo_vllm42186_b200_nic_rows_cut.txt"})

# files gpuvet still gets wrong against the tables, and why (the MANIFEST's after-fixes cell); run at daddc50 (18:19)
KNOWN_MISSES: dict[str, str] = {
    "ibdev2netdev_sriov382_vf_down_pod.txt": "miss (left): a lone IPoIB netdev Down (no peer Up in the listing) "
                                             "stays port state unknown; ibdev2netdev's Up/Down is the netdev's and an "
                                             "all-Down listing is what a healthy pure-IB fabric prints",
    "ncclinfo_areal639_socket_not_ib.txt": "partial: NET/Socket (bond0) now read, but nccl_log can't tell: one host "
                                           "in the log does not prove the job cross-node (the prose's does not count)",
    "nccltests_dgxspark25_allgather_2xgb10_mtu.txt": "partial: collective_results can't tell: between two hosts the "
                                                     "NICs' line rate bounds busbw and neither the log nor the model "
                                                     "gives it, so 18.9 GB/s is not judged",
}


BATCH = Batch(FRESH_K, CAUSES, severity=SEVERITY, may=MAY, told=TOLD, modules=MODULES, fields=FIELDS, said=SAID,
              refusal_ok=REFUSAL_OK, known_misses=KNOWN_MISSES)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_k_capture_gets_its_blind_diagnosis = BATCH.tests(33)
