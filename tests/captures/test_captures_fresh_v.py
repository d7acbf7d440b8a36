"""Batch V (tests/data/captures/fresh_v/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold the MANIFEST's "a correct tool should
report" column for every file (not what gpuvet prints): CAUSES with SEVERITY where the row rates a finding,
TOLD where it names what the finding must cite, MODULES / FIELDS / SAID where it says what inventory must
read; benchmarks/score_manifest.py --batch v scores the batch against them (tests/support/blind_batch.py).

Read as batches P to U are: "no finding" (and "can't tell") means nothing at warn or above (an info is
allowed); "warn:" pins warn; "critical:" and "error:" (the row's word for gpuvet's highest severity) pin
critical; "critical/warn" and "warn/error" pin no severity. A row naming a fault in its own words is held as
the cause gpuvet files that meaning under (each noted where used): NCCL's 'message truncated' WARN and an
NCCL network failure while the job ran (a connection reset by its peer, a recv that timed out mid-training)
are collective_runtime_error; a GPU the driver did not initialise (probe failed, not supported by the driver
or by the open module, nvidia-smi's lost device handle, amdgpu's failed sw_init) is module_init_failed; a
multi-node job on NET/Socket is nccl_socket_fallback; nccl-tests' 'Out of bounds values : N FAILED' is
data_corruption_in_transfer; an amdgpu VM fault is module_page_fault; nvidia-smi's 'No devices were found'
is no_modules_visible; NVRM's assertion failures are driver_error_unnamed. Where the row names a second
line of the same failure (NCCL's proxy thread error beside the reset) it is cited (TOLD), not asked for as a
finding of its own. Inventory expectations count (a known miss's reason starting 'inventory:'): a bus id, a
model, a PCI id, a driver, a VBIOS, a memory size, a power cap, persistence, a host, a NIC the row names as a
fact of the file is pinned; a reading (a temperature, a power draw) is not. Files gpuvet still gets wrong
are KNOWN_MISSES, each with why; their test is a strict xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding

FRESH_V = Path(__file__).parents[1] / "data" / "captures" / "fresh_v"
AMD_NO_BUS = "an AMD module, bus id not in the log"
NVIDIA_NO_BUS = "a module of nvidia, bus id not in the log"
NO_HOST = "host and GPU not in the log"
GCP_HOSTS = ("slurm-train-compute-0-0", "slurm-train-compute-0-1")
NVSWITCHES = ("0000:80:1D.0", "0000:80:1E.0", "0000:80:1F.0")

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # NET/Socket 'message truncated : receiving 696320 bytes instead of 32768' on hvd1
    "nccldebug_nccl268_socket_truncated.txt": {("collective_runtime_error", "hvd1 GPU 0")},
    "nccldebug_nccl1203_coll_stuck.txt": set(),  # COLL lines only: opCounts that differ are info at most
    # the wrapped WARN: peer 192.168.161.30 'message truncated', no host prefix on the line
    "nccldebug_nccl626_socket_truncated_peer.txt": {("collective_runtime_error", NO_HOST)},
    # a two-host job on NET/Socket over eth0 ('NET/IB : No device found')
    "nccldebug_nccl447_gcp_slurm_socket.txt": {("nccl_socket_fallback", ", ".join(GCP_HOSTS))},
    # write/recv 'Connection reset by peer' mid-run, the proxy thread's error on dev 3
    "nccldebug_nccl193_conn_reset.txt": {("collective_runtime_error", "worker0-0d9gnb GPU 3")},
    "nccldebug_msswift3934_interleaved_ib.txt": set(),  # NET/IB GDRDMA + NVLS chosen: info at most
    "nccldebug_nccl1328_broadcast_coll.txt": set(),  # Broadcast COLL lines only
    # recv from 100.96.188.199 timed out mid-run, NET/Socket progress error, under horovodrun's '[15]'
    "nccldebug_nccl706_recv_timeout_horovod.txt": {("collective_runtime_error", "worker-23 GPU 0")},
    # nvidia-smi 'Unable to determine the device handle for gpu 0000:01:00.0: Not Found' (open module)
    "nvsmi_ogkm246_device_handle_notfound.txt": {("module_init_failed", "0000:01:00.0")},
    "dmesg_tfrocm998_amdgpu_retry_pagefault.txt": {("module_page_fault", "0000:03:00.0")},  # python3's VM fault
    # 'No devices were found' though two GH200 are installed
    "nvsmi_ogkm774_gh200_no_devices.txt": {("no_modules_visible", None)},
    # nvAssertFailedNoLog in kern_bus (a P2P-patched driver), no Xid, the bus id not in the log
    "dmesg_aikitoria7_p2p_assert_5090.txt": {("driver_error_unnamed", NVIDIA_NO_BUS)},
    "nccltests_nccltests356_hypercube_5090_failed.txt": {("data_corruption_in_transfer", None)},  # 56 FAILED
    "nccltests_nccltests167_maxmin_rows.txt": set(),  # every #wrong 0; ~3 GB/s on hardware not named
    "nccltests_nccltests7_mpirun_ib_header.txt": {("data_corruption_in_transfer", None)},  # 248 FAILED, in prose
    "nccltests_nccltests150_2node_a100_slurm.txt": set(),  # 8-64 B rows only, #wrong 0
    "nccltests_msccl42_v100_mpirun_header.txt": set(),  # header only
    # 'Problem resizing BAR0 (-16)', then 'sw_init of IP block <gmc_v9_0>': the GPU did not initialise
    "dmesg_amdgpu62_vega_bar_resize.txt": {("module_init_failed", AMD_NO_BUS)},
    # 10de:25a0 not supported by the 520.56.06 release: probe failed
    "dmesg_ogkm393_3050ti_unsupported_release.txt": {("module_init_failed", "0000:01:00.0")},
    # 10de:1b82 (Pascal) not supported by the open nvidia.ko: no GSP
    "dmesg_ogkm696_gtx_no_gsp_open.txt": {("module_init_failed", "0000:02:00.0")},
    # 10de:1d01 (GT 1030) not supported by the open nvidia.ko: no GSP, probe failed with error -1
    "journal_negativo158_gt1030_open_probe.txt": {("module_init_failed", "0000:09:00.0")},
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "rocmsmi_llamaswap775_csv_4x7900xtx.txt": set(),
    "collectenv_vllm4972_8xa100.txt": set(),
    "lspci_talos9121_h100_numa.txt": set(),
    "nvsmiq_nvct188_t4.txt": set(),
    "dcgmexporter_dcgmexp326_metrics_3090.txt": set(),  # XID_ERRORS 0, 'Unknown Error' the label of code 0
    "nvsmi_club3090_617_rtx5090.txt": set(),
    "nvsmi_ogkm41_i2c_multi_geforce.txt": set(),
    "lspci_club3090_845_tree.txt": set(),
    "ncclxml_simai128_h100_topo.txt": set(),  # 4+5+5+4 = 18 NVLinks per H100 to the NVSwitches, Gen5 x16
    "nccltests_nccl1706_2gpu_tail_ok.txt": set(),  # 25.9 GB/s between 2 GPUs not named: not judged
    "amdsmi_rocmsys2053_xgmi_metric_navi.txt": set(),  # no XGMI on Navi; the table cut after its header
    "dmesg_awsofi141_p4d_nvswitch_probe.txt": set(),  # PCI INT A routing notices on a VM: benign
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[Finding, str]] = {
    "nccldebug_nccl447_gcp_slurm_socket.txt": {("nccl_socket_fallback", ", ".join(GCP_HOSTS)): "warn"},
    "nccldebug_nccl193_conn_reset.txt": {("collective_runtime_error", "worker0-0d9gnb GPU 3"): "critical"},
    "nccldebug_nccl706_recv_timeout_horovod.txt": {("collective_runtime_error", "worker-23 GPU 0"): "critical"},
    "dmesg_tfrocm998_amdgpu_retry_pagefault.txt": {("module_page_fault", "0000:03:00.0"): "warn"},
    "dmesg_aikitoria7_p2p_assert_5090.txt": {("driver_error_unnamed", NVIDIA_NO_BUS): "warn"},
    "nccltests_nccltests356_hypercube_5090_failed.txt": {("data_corruption_in_transfer", None): "critical"},
    "nccltests_nccltests7_mpirun_ib_header.txt": {("data_corruption_in_transfer", None): "critical"},
    "dmesg_ogkm696_gtx_no_gsp_open.txt": {("module_init_failed", "0000:02:00.0"): "warn"},  # a driver choice
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module)
TOLD: dict[str, tuple[str, ...]] = {
    "nccldebug_nccl268_socket_truncated.txt": ("message truncated", "Socket", "SYS"),  # NIC distance SYS
    "nccldebug_nccl626_socket_truncated_peer.txt": ("message truncated", "192.168.161.30", "1048576", "65536"),
    "nccldebug_nccl447_gcp_slurm_socket.txt": ("Socket", "eth0"),
    "nccldebug_nccl193_conn_reset.txt": ("Connection reset by peer", "Proxy thread"),
    "nccldebug_msswift3934_interleaved_ib.txt": ("IB", "GDRDMA", "NVLS"),  # the info on the transport chosen
    "nccldebug_nccl706_recv_timeout_horovod.txt": ("100.96.188.199", "Connection timed out", "socket progress error"),
    "nvsmi_ogkm246_device_handle_notfound.txt": ("Unable to determine the device handle", "Not Found"),
    "dmesg_tfrocm998_amdgpu_retry_pagefault.txt": ("VM_L2_PROTECTION_FAULT", "retry", "python3"),
    "nvsmi_ogkm774_gh200_no_devices.txt": ("No devices were found",),
    "dmesg_aikitoria7_p2p_assert_5090.txt": ("nvAssertFailedNoLog", "kern_bus"),
    "nccltests_nccltests356_hypercube_5090_failed.txt": ("Out of bounds", "56"),
    "nccltests_nccltests7_mpirun_ib_header.txt": ("Out of bounds", "248", "GID"),  # info: Open MPI's GID prefix
    "dmesg_amdgpu62_vega_bar_resize.txt": ("BAR0", "-16", "gmc_v9_0"),
    "dmesg_ogkm393_3050ti_unsupported_release.txt": ("10de:25a0", "520.56.06"),
    "dmesg_ogkm696_gtx_no_gsp_open.txt": ("10de:1b82", "GSP"),
    "journal_negativo158_gt1030_open_probe.txt": ("10de:1d01", "GSP", "-1"),
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "rocmsmi_llamaswap775_csv_4x7900xtx.txt": [None] * 3,  # card0-2; card3's row cut
    "nccldebug_nccl268_socket_truncated.txt": [],  # 'CUDA Dev 0' only
    "nccldebug_nccl1203_coll_stuck.txt": [],
    "nccldebug_nccl626_socket_truncated_peer.txt": [],
    "nccldebug_nccl193_conn_reset.txt": [],
    "nccldebug_msswift3934_interleaved_ib.txt": ["0000:3B:00.0", "0000:BB:00.0"],  # busId 3b000, bb000
    "nccldebug_nccl706_recv_timeout_horovod.txt": [],
    "nvsmi_ogkm246_device_handle_notfound.txt": ["0000:01:00.0"],
    "collectenv_vllm4972_8xa100.txt": [None] * 8,
    "lspci_talos9121_h100_numa.txt": ["0000:1A:00.0", "0000:1B:00.0", "0000:1C:00.0", "0000:1D:00.0"],
    "nvsmiq_nvct188_t4.txt": ["0000:83:00.0"],
    "dmesg_tfrocm998_amdgpu_retry_pagefault.txt": ["0000:03:00.0"],
    "dcgmexporter_dcgmexp326_metrics_3090.txt": ["0000:08:00.0"],
    "nvsmi_club3090_617_rtx5090.txt": ["0000:C5:00.0"],
    "nvsmi_ogkm41_i2c_multi_geforce.txt": ["0000:01:00.0", "0000:03:00.0"],  # GPU 2's row cut
    "nvsmi_ogkm774_gh200_no_devices.txt": [None, None],  # the template's two GH200
    "dmesg_aikitoria7_p2p_assert_5090.txt": [],  # the table cut before its rows
    "lspci_club3090_845_tree.txt": [],  # a bare tree names no GPU
    "ncclxml_simai128_h100_topo.txt": ["0000:B8:00.0", "0000:D9:00.0"],
    "nccltests_nccltests356_hypercube_5090_failed.txt": [None] * 4,  # -g 4 -d 0,1,2,3
    "nccltests_nccltests167_maxmin_rows.txt": [],
    "nccltests_nccltests7_mpirun_ib_header.txt": [],
    "nccltests_nccltests150_2node_a100_slurm.txt": [],  # A100 80GB in prose only
    "nccltests_nccl1706_2gpu_tail_ok.txt": ["0000:0F:00.0", "0000:34:00.0"],  # busId f000, 34000
    "amdsmi_rocmsys2053_xgmi_metric_navi.txt": [],  # no rows
    "dmesg_amdgpu62_vega_bar_resize.txt": [None],  # an AMD GPU, bus id not in the log
    "dmesg_ogkm393_3050ti_unsupported_release.txt": ["0000:01:00.0"],
    "dmesg_ogkm696_gtx_no_gsp_open.txt": ["0000:02:00.0"],
    "journal_negativo158_gt1030_open_probe.txt": ["0000:09:00.0"],
    "dmesg_awsofi141_p4d_nvswitch_probe.txt": ["0000:10:1C.0", "0000:10:1D.0"],  # the GPUs; the NVSwitches: SAID
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    "rocmsmi_llamaswap775_csv_4x7900xtx.txt": {"model": ["Radeon RX 7900 XTX"] * 3},
    "collectenv_vllm4972_8xa100.txt": {"model": ["A100-SXM4-40GB"] * 8},
    "lspci_talos9121_h100_numa.txt": {"model": ["H100|2330"] * 4},  # 'Device 2330' is all the paste says
    "nvsmiq_nvct188_t4.txt": {"model": ["Tesla T4"], "vbios_version": ["90.04.96.00.9F"], "persistence_mode": [True]},
    "dmesg_tfrocm998_amdgpu_retry_pagefault.txt": {"model": [None]},  # the model is not in the paste
    "dcgmexporter_dcgmexp326_metrics_3090.txt": {"model": ["RTX 3090"]},
    "nvsmi_club3090_617_rtx5090.txt": {"model": ["RTX 5090"], "power_limit_w": [600.0]},
    "nvsmi_ogkm41_i2c_multi_geforce.txt": {"model": ["GeForce"] * 2, "memory_bytes": [24576 * 2**20] * 2},
    "nvsmi_ogkm774_gh200_no_devices.txt": {"model": ["GH200 144G HBM3e"] * 2},
    "ncclxml_simai128_h100_topo.txt": {"model": ["H100|2330"] * 2},
    "nccltests_nccltests356_hypercube_5090_failed.txt": {"model": ["RTX 5090"] * 4},
    "nccltests_msccl42_v100_mpirun_header.txt": {"model": ["V100-SXM2-32GB"] * 8},  # ranks 0-7
    "dmesg_amdgpu62_vega_bar_resize.txt": {"model": [None]},
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "nccldebug_nccl447_gcp_slurm_socket.txt": GCP_HOSTS,
    "nccldebug_msswift3934_interleaved_ib.txt": ("g183",),
    "nccldebug_nccl1328_broadcast_coll.txt": ("us-gpu012", "2.20.5"),
    "nvsmi_ogkm246_device_handle_notfound.txt": ("515.43.04",),
    "collectenv_vllm4972_8xa100.txt": ("535.129.03", "12.2"),  # CUDA runtime 12.2.140, not PyTorch's 12.1
    "nvsmi_club3090_617_rtx5090.txt": ("595.71.05",),
    "nvsmi_ogkm41_i2c_multi_geforce.txt": ("520.56.06",),
    "dmesg_aikitoria7_p2p_assert_5090.txt": ("580.105.08",),
    "ncclxml_simai128_h100_topo.txt": ("mlx5_5",),  # its 400 Gb/s port
    "nccltests_msccl42_v100_mpirun_header.txt": ("msccl-azure",),
    "dmesg_ogkm393_3050ti_unsupported_release.txt": ("10de:25a0",),
    "dmesg_ogkm696_gtx_no_gsp_open.txt": ("10de:1b82",),
    "journal_negativo158_gt1030_open_probe.txt": ("10de:1d01",),
    "dmesg_awsofi141_p4d_nvswitch_probe.txt": ("1af1", *NVSWITCHES),
}

# files gpuvet still gets wrong against the tables, and why; run at HEAD
KNOWN_MISSES: dict[str, str] = {
    "dmesg_amdgpu62_vega_bar_resize.txt": "inventory: module_init_failed on the AMD module (right), but inventory "
                                          "lists no module (expected one AMD GPU, bus id unknown)",
    "dmesg_awsofi141_p4d_nvswitch_probe.txt": "inventory: the GPUs 0000:10:1C.0 and 10:1D.0 listed, but the 3 NVSwitches "
                                              "(10de:1af1 at 0000:80:1D.0-1F.0) are not",
    "dmesg_ogkm393_3050ti_unsupported_release.txt": "told: module_init_failed on 0000:01:00.0 (right), but the PCI ID "
                                                    "10de:25a0 and the 520.56.06 release that lacks it are not cited",
    "dmesg_ogkm696_gtx_no_gsp_open.txt": "severity: module_init_failed rated critical where the row says warn (a "
                                         "driver choice: the open module needs a GSP); PCI ID 10de:1b82 not cited",
    "dmesg_tfrocm998_amdgpu_retry_pagefault.txt": "told: module_page_fault on 0000:03:00.0 (right), but the process "
                                                  "python3 and the retry faults are not cited (only the STATUS line)",
    "journal_negativo158_gt1030_open_probe.txt": "told: module_init_failed on 0000:09:00.0 (right), but PCI ID 10de:1d01 "
                                                 "and the probe's error -1 are not cited",
    "nccldebug_msswift3934_interleaved_ib.txt": "told: IB and NVLS said, GDRDMA not; inventory: bus 0000:3B:00.0 "
                                                "listed, bb000 (rank 5's busId, in a garbled line) not",
    "nccldebug_nccl1203_coll_stuck.txt": "inventory: 3 modules invented from the COLL lines' CUDA indices (the row: "
                                         "nothing)",
    "nccldebug_nccl1328_broadcast_coll.txt": "inventory: host us-gpu012 read, NCCL version 2.20.5 not",
    "nccldebug_nccl193_conn_reset.txt": "the reset mid-run filed as collective_init_failed (a communicator that never "
                                        "came up) on the host, critical; the proxy thread error on GPU 3 is "
                                        "collective_runtime_error but rated warn where the row says error",
    "nccldebug_nccl268_socket_truncated.txt": "told: message truncated on hvd1 GPU 0 (right), but the NIC distance SYS "
                                              "the row notes is not said",
    "nccldebug_nccl706_recv_timeout_horovod.txt": "the recv timeout mid-run filed as collective_init_failed (titled as "
                                                  "a socket failing while data moved) on worker-23 GPU 0 and worker-23, "
                                                  "not as a runtime error",
    "nccltests_nccltests356_hypercube_5090_failed.txt": "inventory: the 4 RTX 5090 (prose and -g 4) are not listed "
                                                        "(data_corruption_in_transfer is right)",
    "nccltests_nccltests7_mpirun_ib_header.txt": "told: data_corruption_in_transfer with 248 wrong values (right), but "
                                                 "Open MPI's default GID prefix warning is not said",
    "ncclxml_simai128_h100_topo.txt": "inventory: the NCCL topology XML is not read: the 2 H100 (b8, d9) and NIC "
                                      "mlx5_5 are not listed",
    "nvsmi_ogkm246_device_handle_notfound.txt": "inventory: 0000:01:00.0 listed, but the template's driver 515.43.04 is "
                                                "not read",
    "nvsmi_ogkm774_gh200_no_devices.txt": "inventory: the template's 'GPU 0: NVIDIA GH200 144G HBM3e | GPU 1: …' is "
                                          "not listed (no_modules_visible is right)",
}


BATCH = Batch(FRESH_V, CAUSES, severity=SEVERITY, told=TOLD, modules=MODULES, fields=FIELDS, said=SAID,
              known_misses=KNOWN_MISSES)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_v_capture_gets_its_blind_diagnosis = BATCH.tests(33)
