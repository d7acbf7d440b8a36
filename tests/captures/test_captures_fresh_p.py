"""Batch P (tests/data/captures/fresh_p/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold the MANIFEST's "a correct tool should
report" column for every file (not what gpuvet prints): CAUSES with SEVERITY where the row rates a finding,
MAY where it allows one without asking for it, TOLD where it names what the finding must cite, MODULES /
FIELDS / SAID where it says what inventory must read; benchmarks/score_manifest.py --batch p scores the batch
against them (tests/support/blind_batch.py).

Read as batches K to O are: "no finding" means nothing at warn or above (an info is allowed, so 'at most
info' and 'can't tell' ask nothing more); "critical/warn" pins no severity; "warn:" pins warn; "critical:"
pins critical. Where a row accepts "can't tell" beside its warn (nvs67) the warn is allowed, not asked for.
Inventory expectations count: a file whose doctor answer is right and whose inventory is not is a known
miss, its reason starting 'inventory:'. An inventory item is pinned where the row names it as a fact of the
file (a model, bus id, driver, power cap, link, host); a reading (a temperature, a power draw) is not an
inventory item; where the row hedges ('nothing certain', 'no models') or the file is cut (nvd1671's earlier
GPU) the count is not pinned. A refusal is accepted only where the row says so (musa22: "or explicitly
'vendor not supported'"); any other refused file is a miss. Module names follow gpuvet's own (a bus id as
0000:0C:00.0; 'bus id not in the log' and 'an AMD module, bus id not in the log' where a line names none;
'HOST GPU N' where an NCCL line's prefix names its host and device, the host alone for a host's verdict;
the root port for a fatal AER on its link; None for the node). Files gpuvet still gets wrong are
KNOWN_MISSES, each with why; their test is a strict xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding

FRESH_P = Path(__file__).parents[1] / "data" / "captures" / "fresh_p"
NO_BUS = "bus id not in the log"
MTGPU_NO_BUS = "a module of mtgpu, " + NO_BUS  # a driver gpuvet has no messages for (captures/kernel_unknown.py)
AMD_NO_BUS = "an AMD module, bus id not in the log"
AWS = "ip-172-31-0-137"

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # all_reduce busbw 0.62 GB/s at 128 KiB, ~160 us at 64 B on EC2: very low (expected figure: can't tell)
    "nccl_nccl527_allreduce_ec2_slow.txt": {("collective_below_model", None)},
    # nvvs: the config package (diag-skus.yaml) missing, plugins not loaded: the diagnostic did not run
    "dcgmi_dcgm139_nvvs_config_missing.txt": {("dcgm_diag_not_run", "the diagnostic (nvvs)")},
    # no libibverbs, so NET/Socket, and bootstrap lists a docker veth beside ens5
    "ncclinfo_pytorch68893_socket_veth.txt": {("nccl_ib_unavailable", AWS), ("nccl_socket_wrong_interface", AWS)},
    # 'Unable to determine the device handle for GPU 0000:17:00.0: Unknown Error'
    "smi_llama200_a30_device_handle.txt": {("module_fell_off_bus", "0000:17:00.0")},
    # MTGPU MMU fault and 'Guilty Lockup', then a reset (no bus id); or a clear 'vendor not supported' refusal
    "dmesg_musa22_mtgpu_guilty_lockup.txt": {("driver_error_unnamed", MTGPU_NO_BUS)},  # GENK: the row's warn on
    # the Moore Threads module (no bus id), said as what it is: the driver's error lines gpuvet has no message for
    # powerplay's 'failed to send message … ret is 0': the SMU does not answer
    "dmesg_acominer9_rx480_smu_failed.txt": {("module_needs_reset", AMD_NO_BUS)},
    # 'SMU driver if version not matched' on 0000:83:00.0, resumed after a reset
    "dmesg_therock2591_gfx1201_resume.txt": {("module_driver_warning", "0000:83:00.0")},
    # Xid 62 (internal micro-controller halt), then Xid 45
    "journal_trex680_rtx3080_xid62.txt": {("xid", "0000:06:00.0")},
    # NCCL WARN Cuda failure 'out of memory' at init: the job's memory
    "ncclwarn_opensora386_oom.txt": {("nccl_cuda_out_of_memory", "ins-7df6eojsifuykig9 GPU 0")},
    # NCCL WARN Cuda failure 1 'invalid argument' behind Ray's '(train_rft pid=…)' prefix
    "ncclinfo_nccl1283_ray_invalid_argument.txt": {("collective_runtime_error", "n176-080-198 GPU 0")},
    # 67 C in P0 said to throttle: the table cannot tell why (a warn or can't tell: see MAY)
    "smi_table_nvs67_mx330_indented.txt": set(),
    # Malformed TLP, fatal, recovery failed, on the link of amdgpu 0000:06:00.0 (root port 0000:00:1c.4)
    "dmesg_lrb32_fury_aer_fatal.txt": {("pcie_fatal_unrecovered", "0000:00:1C.4")},
    # ring gfx_0.0.0 timeout and a reset on 0000:2f:00.0 that was not clean (kiq ring test failed)
    "journal_lrb1724_navi21_gfx_timeout.txt": {("module_hung_reset", "0000:2F:00.0")},
    # both GPUs at PCIe x4 of x16
    "report_club222_3090_1080_x4.txt": {("pcie_link_downgraded", "0000:01:00.0"),
                                        ("pcie_link_downgraded", "0000:02:00.0")},
    # affinity masks only: no hardware fault can be told from them
    "ncclinfo_nccl1017_h100_affinity.txt": set(),
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "rocmsmi_lrb5231_mi300x_concise.txt": set(),
    "smi_csv_ethminer51_gtx1080.txt": set(),
    "smi_csv_megaminer376_1080ti_unknown_error.txt": set(),  # an unreadable fan, 84 C under slowdown: info at most
    "ncclwarn_fastsocket4_a100_gce.txt": set(),  # FastSocket retries, then connected
    "rocmsmi_rsl160_mi250_showpower.txt": set(),
    "rocmsmi_rocsmi26_r9_390x_temp.txt": set(),
    "smi_q_kdp390_t4.txt": set(),
    "smi_q_hami555_memsection.txt": set(),  # ECC enabled, 0 errors shown
    "lspci_lact334_7800xt_link.txt": set(),  # 16 GT/s x16: its maximum
    "smi_table_spark8_a100_sxm80.txt": set(),
    "smi_table_qwen1043_v100s.txt": set(),
    "smi_q_nvd1671_2080ti.txt": set(),
    "amdsmi_json_ajean39_clocks.txt": set(),  # a fragment: no crash, nothing invented
    "dcgmi_dcgm176_health_watches.txt": set(),  # watches not enabled: no health result, can't tell
    "topo_ucxpy1088_h100_nv18_nics.txt": set(),
    "lspci_club688_4x3090_nnk.txt": set(),
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[Finding, str]] = {
    "nccl_nccl527_allreduce_ec2_slow.txt": {("collective_below_model", None): "warn"},
    "dcgmi_dcgm139_nvvs_config_missing.txt": {("dcgm_diag_not_run", "the diagnostic (nvvs)"): "warn"},
    "ncclinfo_pytorch68893_socket_veth.txt": {("nccl_ib_unavailable", AWS): "warn",
                                              ("nccl_socket_wrong_interface", AWS): "warn"},
    "dmesg_musa22_mtgpu_guilty_lockup.txt": {("driver_error_unnamed", MTGPU_NO_BUS): "warn"},
    "dmesg_acominer9_rx480_smu_failed.txt": {("module_needs_reset", AMD_NO_BUS): "critical"},
    "dmesg_therock2591_gfx1201_resume.txt": {("module_driver_warning", "0000:83:00.0"): "warn"},
    "journal_trex680_rtx3080_xid62.txt": {("xid", "0000:06:00.0"): "critical"},
    "ncclwarn_opensora386_oom.txt": {("nccl_cuda_out_of_memory", "ins-7df6eojsifuykig9 GPU 0"): "warn"},
    "ncclinfo_nccl1283_ray_invalid_argument.txt": {("collective_runtime_error", "n176-080-198 GPU 0"): "warn"},
    "dmesg_lrb32_fury_aer_fatal.txt": {("pcie_fatal_unrecovered", "0000:00:1C.4"): "critical"},
    "journal_lrb1724_navi21_gfx_timeout.txt": {("module_hung_reset", "0000:2F:00.0"): "critical"},
    "report_club222_3090_1080_x4.txt": {("pcie_link_downgraded", "0000:01:00.0"): "warn",
                                        ("pcie_link_downgraded", "0000:02:00.0"): "warn"},
}

# file -> {cause: the highest severity it may have}: what the row allows without asking for it
MAY: dict[str, dict[str, str]] = {
    "smi_table_nvs67_mx330_indented.txt": {"thermal_throttling": "warn"},  # 'warn …, or can't tell'
    # the reset that was not clean (kiq ring test failed): the module may need another
    "journal_lrb1724_navi21_gfx_timeout.txt": {"module_needs_reset": "critical"},
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module)
TOLD: dict[str, tuple[str, ...]] = {
    "dcgmi_dcgm139_nvvs_config_missing.txt": ("config",),
    "ncclinfo_pytorch68893_socket_veth.txt": ("Socket", "veth"),
    "smi_llama200_a30_device_handle.txt": ("Unknown Error",),
    "dmesg_acominer9_rx480_smu_failed.txt": ("SMU",),
    "dmesg_therock2591_gfx1201_resume.txt": ("SMU",),
    "journal_trex680_rtx3080_xid62.txt": ("62", "45"),
    "ncclwarn_opensora386_oom.txt": ("out of memory",),
    "ncclinfo_nccl1283_ray_invalid_argument.txt": ("invalid argument",),
    "smi_table_nvs67_mx330_indented.txt": ("67",),
    "dmesg_lrb32_fury_aer_fatal.txt": ("Malformed TLP", "0000:06:00.0"),
    "journal_lrb1724_navi21_gfx_timeout.txt": ("gfx_0.0.0", "kiq"),
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "nccl_nccl527_allreduce_ec2_slow.txt": [],
    "rocmsmi_lrb5231_mi300x_concise.txt": [None],
    "smi_csv_ethminer51_gtx1080.txt": [None, None],
    "dcgmi_dcgm139_nvvs_config_missing.txt": [],
    "smi_csv_megaminer376_1080ti_unknown_error.txt": [None] * 8,
    "rocmsmi_rsl160_mi250_showpower.txt": [None] * 8,  # GPU[0]-GPU[7]
    "rocmsmi_rocsmi26_r9_390x_temp.txt": [None],  # GPU[1]; GPU[0] is no AMD GPU
    "smi_q_kdp390_t4.txt": ["0000:00:1E.0"],
    "smi_q_hami555_memsection.txt": [None],
    "lspci_lact334_7800xt_link.txt": ["0c:00.0"],
    "smi_llama200_a30_device_handle.txt": ["0000:17:00.0"],
    "dmesg_acominer9_rx480_smu_failed.txt": [None],
    "dmesg_therock2591_gfx1201_resume.txt": ["0000:83:00.0"],
    "smi_table_spark8_a100_sxm80.txt": ["0000:10:00.0", "0000:16:00.0"],
    "smi_table_qwen1043_v100s.txt": ["0000:00:0D.0", "0000:00:0E.0"],
    "journal_trex680_rtx3080_xid62.txt": ["0000:06:00.0"],
    "smi_table_nvs67_mx330_indented.txt": ["0000:2D:00.0"],
    "dmesg_lrb32_fury_aer_fatal.txt": ["0000:06:00.0"],
    "topo_ucxpy1088_h100_nv18_nics.txt": [None] * 8,
    "journal_lrb1724_navi21_gfx_timeout.txt": ["0000:2F:00.0"],
    "report_club222_3090_1080_x4.txt": ["0000:01:00.0", "0000:02:00.0"],
    "lspci_club688_4x3090_nnk.txt": ["01:00.0", "41:00.0"],
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    "rocmsmi_lrb5231_mi300x_concise.txt": {"model": ["MI300X|74b5|74B5"], "power_limit_w": [750.0]},
    "smi_csv_ethminer51_gtx1080.txt": {"model": ["GTX 1080"] * 2},
    "smi_csv_megaminer376_1080ti_unknown_error.txt": {"model": ["GTX 1080 Ti"] * 7 + ["GTX 1080"]},
    "smi_q_kdp390_t4.txt": {"model": ["Tesla T4"], "persistence_mode": [False]},
    "smi_q_hami555_memsection.txt": {"model": [None], "ecc_enabled": [True]},
    "lspci_lact334_7800xt_link.txt": {"pcie_gen_current": [4], "pcie_width_current": [16]},  # 16 GT/s x16
    "smi_table_spark8_a100_sxm80.txt": {"model": ["A100-SXM-80GB"] * 2, "power_limit_w": [400.0] * 2},
    "smi_table_qwen1043_v100s.txt": {"model": ["V100S-PCI"] * 2},
    "smi_table_nvs67_mx330_indented.txt": {"model": ["MX330|GeForce"]},
    "topo_ucxpy1088_h100_nv18_nics.txt": {"numa_node": [0] + [None] * 7},  # only GPU0's row is in the file
    "report_club222_3090_1080_x4.txt": {"model": [None, "1080"]},  # GPU 0's name line is cut
    "lspci_club688_4x3090_nnk.txt": {"model": ["3090"] * 2},
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "ncclinfo_nccl1017_h100_affinity.txt": ("ib-vm-3", "ib-vm-4"),
    "ncclinfo_pytorch68893_socket_veth.txt": (AWS, "2.7.8"),
    "ncclwarn_fastsocket4_a100_gce.txt": ("full-debug2-test-0", "full-debug2-test-1"),
    "smi_q_kdp390_t4.txt": ("525.89.02",),
    "smi_table_spark8_a100_sxm80.txt": ("450.191.01",),
    "smi_table_qwen1043_v100s.txt": ("470.57.02",),
    "smi_q_nvd1671_2080ti.txt": ("2080 Ti", "0000:02:00.0"),
    "ncclwarn_opensora386_oom.txt": ("ins-7df6eojsifuykig9",),
    "ncclinfo_nccl1283_ray_invalid_argument.txt": ("n176-080-198",),
    "smi_table_nvs67_mx330_indented.txt": ("465.27",),
    "topo_ucxpy1088_h100_nv18_nics.txt": ("NV18", "NIC0", "NIC1"),
    "report_club222_3090_1080_x4.txt": ("PHB",),
}

# files a clear refusal (exit 2, 'error: …') answers rightly: the row accepts 'vendor not supported'
REFUSAL_OK = frozenset({"dmesg_musa22_mtgpu_guilty_lockup.txt"})

# files gpuvet still gets wrong against the tables, and why; run at HEAD
KNOWN_MISSES: dict[str, str] = {
    "dmesg_acominer9_rx480_smu_failed.txt": "inventory: module_needs_reset on the AMD module is right, but no module "
                                            "row is listed for it (only a note)",
    "dmesg_therock2591_gfx1201_resume.txt": "miss (the row's warn is disputed): 'SMU driver if version not matched' "
                                            "is left clear, as amdgpu prints it at info as backward compatible",
    "lspci_lact334_7800xt_link.txt": "inventory: no module listed: the AMD GPU at 0c:00.0 (card0) and its 16 GT/s "
                                     "x16 link lines are not read",
    "nccl_nccl527_allreduce_ec2_slow.txt": "miss: exit 0, 'no cause found': 0.62 GB/s busbw and ~160 us latency "
                                           "read as rows but not judged (no hardware named, no can't-tell verdict)",
    "ncclinfo_pytorch68893_socket_veth.txt": "inventory: doctor names the Socket fallback and the veth (right), "
                                             "but inventory does not say NCCL 2.7.8",
    "rocmsmi_lrb5231_mi300x_concise.txt": "inventory: the 750 W cap is read, but DID 0x74b5 is not named MI300X "
                                          "(model 'unknown')",
    "smi_csv_ethminer51_gtx1080.txt": "inventory: the column -t CSV lists one module 'GeForce GTX 1080   131' (the "
                                      "power column glued to the name); the second GPU is lost",
    "smi_csv_megaminer376_1080ti_unknown_error.txt": "inventory: 2 modules (one per distinct name) listed instead of "
                                                     "the CSV's 8 rows",
}


BATCH = Batch(FRESH_P, CAUSES, severity=SEVERITY, may=MAY, told=TOLD, modules=MODULES, fields=FIELDS, said=SAID,
              refusal_ok=REFUSAL_OK, known_misses=KNOWN_MISSES)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_p_capture_gets_its_blind_diagnosis = BATCH.tests(31)
