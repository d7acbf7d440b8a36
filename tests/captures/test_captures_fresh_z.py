"""Batch Z (tests/data/captures/fresh_z/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold the MANIFEST's "a correct tool should
report" column for every file (not what gpuvet prints): CAUSES with SEVERITY where the row rates a finding,
MAY where it allows one without asking for it, TOLD where it names what the finding must cite, MODULES /
FIELDS / SAID / NICS where it says what inventory must read; benchmarks/score_manifest.py --batch z scores the
batch against them (tests/support/blind_batch.py).

Read as batch Y is: "no finding" and "nothing at warn or above" mean nothing at warn or above (an info is
allowed); "warn:" pins warn; "info (or warn)" asks for the finding and pins no severity; "at most warn" (or
"at most info/warn") allows a finding up to warn (MAY) without asking for one. An info the row asks for (the
PCIe bandwidth mlx5 says is available) is cited (TOLD); a second line of the same failure the row names (the
'Resetting rcs0' / 'Resetting chip' lines beside i915's GPU HANG, 'stuck on render ring' beside the hang) is
cited too, not asked for as a finding of its own. A row naming a fault in its own words is held as the cause
gpuvet files that meaning under: i915's GPU hangs with their ring or chip resets are
module_ring_reset_recovered; nouveau's repeated fifo SCHED_ERROR (nothing reset) is module_channel_error; an
mlx5 probe that failed with -22 (the NIC unusable, driver-side) is nic_driver_failed on the NIC's bus id;
vendor-reset's repeated resets of a GPU vfio-pci holds are module_passed_through; two Intel GPU functions with
no device node a driver made are gpu_no_driver_bound, one per function the row names. The deployment warn the
gpu-operator row allows (driver validation failing, nvidia-smi missing in the driver root) is a node cause of
the install or the runtime's set-up (driver_install_failed, gpu_config_mismatch); the NVML library the device
plugin cannot load is nvml_library_not_loadable. Where gpuvet names no module, its module is spelt as gpuvet
names others of its kind ('an Intel module, bus id not in the log'); a bus id as gpuvet prints it (upper case,
domain 0000; lspci without -D: no domain). Inventory expectations count (a known miss's reason starting
'inventory:'): a bus id (a rocminfo BDFID as the bus id it encodes), a model, a UUID, a memory size, a PCI id,
a VBIOS, a driver, runtime or firmware version, a host, a CPU agent's or lscpu's CPU model, a NIC's bus id and
firmware, a NIC port's state, width, rate and link layer (NICS where the row names the link layer, else SAID's
words: ACTIVE, LinkUp, 4X as gpuvet spells them) the row names as a fact of the file is pinned; a reading (a
clock, a power draw, a temperature), a kernel driver's name, and a setting (an IOMMU group, a GID index, XNACK,
FEC, failOnInitError) are not. Files gpuvet still gets wrong are KNOWN_MISSES, each with why; their test is a
strict xfail, so a fix shows up."""

from __future__ import annotations

from pathlib import Path

from tests.support.blind_batch import Batch, Finding, Nic

FRESH_Z = Path(__file__).parents[1] / "data" / "captures" / "fresh_z"
INTEL_NO_BUS = "an Intel module, bus id not in the log"
IGPU = "0000:00:02.0"
MIB = 2**20
HANG = "module_ring_reset_recovered"

# file -> the (cause, module) doctor must name; an empty set: nothing at warn or above
CAUSES: dict[str, set[Finding]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    "npusmi_vllmascend2712_310p_pp_hccl.txt": set(),  # the HCCL error is not in the paste: both NPUs Health OK
    # two Intel 0bda functions on the bus, one card node under /dev/dri: no driver bound to either
    "lspci_ipex678_max_gpu_dri.txt": {("gpu_no_driver_bound", "29:00.0"), ("gpu_no_driver_bound", "9A:00.0")},
    "rocminfo_rocm1088_out_of_resources.txt": set(),  # the OUT_OF_RESOURCES line is not in the excerpt
    "dmesg_libva113_i915_hang_render_ring.txt": {(HANG, INTEL_NO_BUS)},  # hang on render ring, 2 chip resets
    "dmesg_nscde157_i915_hang_heartbeat.txt": {(HANG, IGPU)},  # 3 GPU hangs, chip resets
    "dmesg_clearlinux1927_i915_icl_preempt_timeout.txt": {(HANG, IGPU)},  # hangs, rcs0 resets
    "dmesg_drmkmod353_freebsd_i915_hang_cs_error.txt": {(HANG, INTEL_NO_BUS)},  # many hangs, rcs0 reset for CS error
    "journalctl_evdi397_i915_hang_adlp.txt": {(HANG, IGPU)},  # hang, chip reset for stopped heartbeat on rcs0
    "dmesg_compton233_i915_stuck_render_ring.txt": {(HANG, INTEL_NO_BUS)},  # render ring hung, GPU reset
    "k8sdp_zalando8468_plugin_init_config.txt": set(),  # cut before the NVML init error
    "k8sdp_hami452_nvml_error_unknown.txt": set(),  # the E line is cut after its timestamp
    "perftest_perftest21_v100_roce_cuda.txt": set(),  # the error is not in the excerpt
    "dmesg_vendorreset16_navi10_vfio_reset.txt": {("module_passed_through", "0000:2F:00.0")},  # info (or warn)
    "dmesg_lakka579_nouveau_sched_error.txt": {("module_channel_error", "0000:02:00.0")},  # fifo SCHED_ERROR flood
    "dmesg_tinycore9_mlx5_probe_fail.txt": {("nic_driver_failed", "0000:03:00.0")},  # probe failed with -22
    "dmesg_rpext129_mlx5_cx4121_probe_fail.txt": {("nic_driver_failed", "0000:01:00.0")},  # probe failed with -22
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "p2plat_cudasamples230_cpu_latency_4gpu.txt": set(),  # latency tables: info at most
    "rocminfo_rocm1743_gfx90c_apu.txt": set(),
    "rocminfo_aomp49_gfx900_arch.txt": set(),
    "rocminfo_rocm6380_gfx9_apu_rocm72.txt": set(),
    "rocminfo_aiter179_mi250x_agent16.txt": set(),
    "dmesg_mediadriver1917_xe_b580_init.txt": set(),  # info at most: small BAR, 256 MB CPU-visible VRAM
    "dmesg_geerling510_xe_bmg_debug_pi.txt": set(),
    "sysfs_stackhpc988_ib_ports_edr.txt": set(),
    "smiq_k8sdp182_gtx960m_container.txt": set(),
    "k8sdp_k8sdp1371_nvml_lib_missing.txt": set(),  # at most info/warn for configuration (MAY), no GPU fault
    "k8sdp_vgpu36_pciinfo_v100_vm.txt": set(),
    "smi_gpuop259_v100_driver_validation.txt": set(),
    "gpuop_gpuop378_driver_validation_no_smi.txt": set(),  # warn at most for deployment (MAY), no GPU fault
    "perftest_perftest241_a30_gpu_write_bw.txt": set(),  # result lines not in the excerpt
    "ncclt_nccltests182_ib_dup_rows.txt": set(),  # at most info that the rows interleave two runs
    "lspci_cloudhv6147_ga102_audio_vv.txt": set(),
    "rocmsmi_rocm929_rx580_tf_nodevice.txt": set(),
    "dmesg_armnas16_mlx5_cx5_ampere.txt": set(),  # info: 63 Gb/s PCIe available (TOLD)
    "mlxlink_lshca11_cx5_json_edr.txt": set(),
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[Finding, str]] = {
    "lspci_ipex678_max_gpu_dri.txt": {
        ("gpu_no_driver_bound", "29:00.0"): "warn",
        ("gpu_no_driver_bound", "9A:00.0"): "warn",
    },
    "dmesg_libva113_i915_hang_render_ring.txt": {(HANG, INTEL_NO_BUS): "warn"},
    "dmesg_nscde157_i915_hang_heartbeat.txt": {(HANG, IGPU): "warn"},
    "dmesg_clearlinux1927_i915_icl_preempt_timeout.txt": {(HANG, IGPU): "warn"},
    "dmesg_drmkmod353_freebsd_i915_hang_cs_error.txt": {(HANG, INTEL_NO_BUS): "warn"},
    "journalctl_evdi397_i915_hang_adlp.txt": {(HANG, IGPU): "warn"},
    "dmesg_compton233_i915_stuck_render_ring.txt": {(HANG, INTEL_NO_BUS): "warn"},
    "dmesg_lakka579_nouveau_sched_error.txt": {("module_channel_error", "0000:02:00.0"): "warn"},
    "dmesg_tinycore9_mlx5_probe_fail.txt": {("nic_driver_failed", "0000:03:00.0"): "warn"},
    "dmesg_rpext129_mlx5_cx4121_probe_fail.txt": {("nic_driver_failed", "0000:01:00.0"): "warn"},
}

# file -> {cause: the highest severity allowed} where the row allows a finding without asking for it
MAY: dict[str, dict[str, str]] = {
    "k8sdp_k8sdp1371_nvml_lib_missing.txt": {"nvml_library_not_loadable": "warn"},  # configuration, not a GPU
    "gpuop_gpuop378_driver_validation_no_smi.txt": {"driver_install_failed": "warn", "gpu_config_mismatch": "warn"},
}

# file -> words doctor --json must hold (what the row says the finding names beyond its module)
TOLD: dict[str, tuple[str, ...]] = {
    "lspci_ipex678_max_gpu_dri.txt": ("/dev/dri",),  # what the device-node listing holds
    "dmesg_libva113_i915_hang_render_ring.txt": ("render ring", "Resetting chip"),
    "dmesg_nscde157_i915_hang_heartbeat.txt": ("Resetting chip",),
    "dmesg_clearlinux1927_i915_icl_preempt_timeout.txt": ("rcs0",),
    "dmesg_drmkmod353_freebsd_i915_hang_cs_error.txt": ("rcs0", "CS error"),
    "journalctl_evdi397_i915_hang_adlp.txt": ("stopped heartbeat", "rcs0"),
    "dmesg_compton233_i915_stuck_render_ring.txt": ("render ring",),  # '[drm] stuck on render ring'
    "dmesg_vendorreset16_navi10_vfio_reset.txt": ("PSP mode 1",),
    "dmesg_lakka579_nouveau_sched_error.txt": ("SCHED_ERROR",),
    "dmesg_tinycore9_mlx5_probe_fail.txt": ("-22",),
    "dmesg_rpext129_mlx5_cx4121_probe_fail.txt": ("-22",),
    "dmesg_armnas16_mlx5_cx5_ampere.txt": ("63.008",),  # info: 63 Gb/s PCIe available, enough for 2x25G
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "npusmi_vllmascend2712_310p_pp_hccl.txt": ["0000:01:00.0", "0000:02:00.0"],
    "p2plat_cudasamples230_cpu_latency_4gpu.txt": [None] * 4,
    "lspci_ipex678_max_gpu_dri.txt": ["29:00.0", "9A:00.0"],  # the ASPEED BMC VGA is no GPU module (SAID)
    "rocminfo_rocm1088_out_of_resources.txt": [],  # no GPU agent in the excerpt
    "rocminfo_rocm1743_gfx90c_apu.txt": [],
    "rocminfo_aomp49_gfx900_arch.txt": [],
    "rocminfo_rocm6380_gfx9_apu_rocm72.txt": [],
    "rocminfo_aiter179_mi250x_agent16.txt": ["0000:93:00.0"],  # BDFID 37632 = 0x9300
    "dmesg_nscde157_i915_hang_heartbeat.txt": [IGPU],
    "dmesg_clearlinux1927_i915_icl_preempt_timeout.txt": [IGPU],
    "journalctl_evdi397_i915_hang_adlp.txt": [IGPU],
    "dmesg_mediadriver1917_xe_b580_init.txt": ["0000:01:00.0"],
    "dmesg_geerling510_xe_bmg_debug_pi.txt": ["0000:03:00.0"],
    "sysfs_stackhpc988_ib_ports_edr.txt": [],  # IB ports (SAID), no GPU
    "k8sdp_zalando8468_plugin_init_config.txt": [],
    "k8sdp_hami452_nvml_error_unknown.txt": [],
    "smiq_k8sdp182_gtx960m_container.txt": ["0000:01:00.0"],
    "k8sdp_k8sdp1371_nvml_lib_missing.txt": [],
    "k8sdp_vgpu36_pciinfo_v100_vm.txt": ["0000:00:08.0"],
    "smi_gpuop259_v100_driver_validation.txt": ["0000:3B:00.0", "0000:D8:00.0"],
    "perftest_perftest241_a30_gpu_write_bw.txt": [f"0000:{b}:00.0" for b in ("17", "65", "CA", "E3")],
    "ncclt_nccltests182_ib_dup_rows.txt": [],
    "dmesg_vendorreset16_navi10_vfio_reset.txt": ["0000:2F:00.0"],
    "dmesg_lakka579_nouveau_sched_error.txt": ["0000:02:00.0"],
    "lspci_cloudhv6147_ga102_audio_vv.txt": [],  # the GPU's audio function (SAID), not a GPU
    "rocmsmi_rocm929_rx580_tf_nodevice.txt": [None],  # GPU 0
    "dmesg_armnas16_mlx5_cx5_ampere.txt": [],  # NICs (SAID), no GPU
    "dmesg_tinycore9_mlx5_probe_fail.txt": [],
    "dmesg_rpext129_mlx5_cx4121_probe_fail.txt": [],
    "mlxlink_lshca11_cx5_json_edr.txt": [],
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name ('A|B': either)
# must be in gpuvet's model, None: no model invented
FIELDS: dict[str, dict[str, list[object]]] = {
    # NPU 0: 1851 / 21527 MB; NPU 32's row is cut before its total
    "npusmi_vllmascend2712_310p_pp_hccl.txt": {"model": ["310P3"] * 2, "memory_bytes": [21527 * MIB, None]},
    "p2plat_cudasamples230_cpu_latency_4gpu.txt": {"model": [None] * 4},
    "lspci_ipex678_max_gpu_dri.txt": {"model": ["0bda"] * 2},
    "rocminfo_aiter179_mi250x_agent16.txt": {"model": ["MI250X/MI250"], "uuid": ["GPU-124d13ccd7b050e5"]},
    "dmesg_mediadriver1917_xe_b580_init.txt": {
        "model": ["e20b|battlemage|BATTLEMAGE"],
        "memory_bytes": [12 * 2**30],
    },  # 'Actual physical size 0x300000000'
    "dmesg_geerling510_xe_bmg_debug_pi.txt": {"model": ["e20b|battlemage|BATTLEMAGE"]},
    "smiq_k8sdp182_gtx960m_container.txt": {"model": ["GTX 960M"], "uuid": ["GPU-79c1533e-4055-68e6-78a7-fa8fd41f6e10"]},
    "k8sdp_vgpu36_pciinfo_v100_vm.txt": {"model": ["V100 SXM2 32GB"]},
    "smi_gpuop259_v100_driver_validation.txt": {"model": ["V100-PCIE"] * 2},
    "perftest_perftest241_a30_gpu_write_bw.txt": {"model": ["A30", None, None, None]},  # device 0 picked, named
    "dmesg_vendorreset16_navi10_vfio_reset.txt": {"model": ["Navi 10|NAVI10|Navi10"]},
    "rocmsmi_rocm929_rx580_tf_nodevice.txt": {"power_limit_w": [150.0]},  # PwrCap 150.0W
}

# file -> words inventory --json must hold where the row names something no field carries
SAID: dict[str, tuple[str, ...]] = {
    "npusmi_vllmascend2712_310p_pp_hccl.txt": ("25.2.0",),  # npu-smi's version
    "lspci_ipex678_max_gpu_dri.txt": ("ASPEED",),  # the BMC's VGA at 02:00.0
    "rocminfo_rocm1088_out_of_resources.txt": ("Ryzen 5 1600X", "1.1"),  # the CPU agent, the runtime
    "rocminfo_rocm1743_gfx90c_apu.txt": ("Ryzen 7 4700U",),
    "rocminfo_aomp49_gfx900_arch.txt": ("Ryzen 7 1800X", "1.1"),
    "rocminfo_rocm6380_gfx9_apu_rocm72.txt": ("Ryzen 3 3250U", "1.18", "1.15"),  # runtime, ext
    "rocminfo_aiter179_mi250x_agent16.txt": ("gfx90a", "6.10.5", "1.14"),  # ROCk, runtime
    "dmesg_libva113_i915_hang_render_ring.txt": ("Celeron",),  # lscpu's CPU
    "journalctl_evdi397_i915_hang_adlp.txt": ("70.5.1", "7.9.3", "DadsLGGram"),  # GuC, HuC, host
    "dmesg_mediadriver1917_xe_b580_init.txt": ("70.40.2", "8.2.10"),  # GuC, HuC
    "dmesg_geerling510_xe_bmg_debug_pi.txt": ("70.36.0",),  # GuC
    "sysfs_stackhpc988_ib_ports_edr.txt": ("mlx5_0", "mlx5_1", "ACTIVE", "LinkUp", "4X", "100"),  # 100 Gb/sec 4X EDR
    "smiq_k8sdp182_gtx960m_container.txt": ("82.07.7C.00.0C",),  # VBIOS
    "smi_gpuop259_v100_driver_validation.txt": ("470.57.02",),
    "gpuop_gpuop378_driver_validation_no_smi.txt": ("ai-2080ti-28",),  # the pod's node
    "perftest_perftest241_a30_gpu_write_bw.txt": ("mlx5_0",),
    "perftest_perftest21_v100_roce_cuda.txt": ("V100-SXM2-32GB",),  # one of 4 CUDA devices, the first
    "lspci_cloudhv6147_ga102_audio_vv.txt": ("0A:00.1", "GA102"),
    "dmesg_armnas16_mlx5_cx5_ampere.txt": ("0004:01:00.0", "0004:01:00.1", "16.27.2048"),
    "dmesg_tinycore9_mlx5_probe_fail.txt": ("0000:03:00.0", "14.32.1010"),
    "dmesg_rpext129_mlx5_cx4121_probe_fail.txt": ("0000:01:00.0", "14.32.1010"),
    "mlxlink_lshca11_cx5_json_edr.txt": ("ACTIVE", "LinkUp", "4X"),
}

# file -> the NIC ports inventory must list (device, HCA type, link layer, rate in Gb/s; '' / 0.0: not in the paste)
NICS: dict[str, list[Nic]] = {
    "mlxlink_lshca11_cx5_json_edr.txt": [Nic("mt4119_pciconf0", "", "InfiniBand", 100.0)],  # IB-EDR, 4x
    "perftest_perftest21_v100_roce_cuda.txt": [Nic("mlx5_2", "", "Ethernet", 0.0)],  # 'Link type : Ethernet'
}

# files gpuvet still gets wrong against the tables, and why; run at HEAD
KNOWN_MISSES: dict[str, str] = {
    # refused
    "gpuop_gpuop378_driver_validation_no_smi.txt": (
        "refused: exit 2 ('nothing in it is output gpuvet can read') on the operator validator's 'chroot: failed to run "
        "command 'nvidia-smi'' lines and kubectl describe; host ai-2080ti-28 not read"
    ),
    # told: the finding is right but does not cite the line the row names (read and folded in, or skipped)
    "dmesg_libva113_i915_hang_render_ring.txt": (
        "told: module_ring_reset_recovered (right, 'Hang on render ring' cited, times 3) names no chip reset: the 2 "
        "'Resetting chip after gpu hang' lines are folded in, not said; inventory: lscpu's Celeron not read"
    ),
    "dmesg_nscde157_i915_hang_heartbeat.txt": (
        "told: module_ring_reset_recovered on 0000:00:02.0 (right, 3 hangs) but the 'Resetting chip for stopped heartbeat"
        " on rcs0' lines are skipped"
    ),
    "dmesg_clearlinux1927_i915_icl_preempt_timeout.txt": (
        "told: module_ring_reset_recovered on 0000:00:02.0 (right) but the 'Resetting rcs0 for preemption time out' lines"
        " are skipped"
    ),
    "dmesg_drmkmod353_freebsd_i915_hang_cs_error.txt": (
        "told: module_ring_reset_recovered, Intel module with no bus id (right, 15 hangs) but 'Resetting rcs0 for CS "
        "error' is skipped"
    ),
    "journalctl_evdi397_i915_hang_adlp.txt": (
        "told: module_ring_reset_recovered on 0000:00:02.0 (right) but 'Resetting chip for stopped heartbeat on rcs0' is "
        "skipped"
    ),
    "dmesg_compton233_i915_stuck_render_ring.txt": (
        "told: module_ring_reset_recovered (right, 'Ring hung, action: reset' cited) but '[drm] stuck on render ring' is "
        "skipped"
    ),
    # told: an info the row asks for is not given
    "dmesg_armnas16_mlx5_cx5_ampere.txt": (
        "told: no finding (right), but mlx5's '63.008 Gb/s available PCIe bandwidth' info is not given ('none from a GPU,"
        " NIC-to-GPU or driver module'); inventory: the NICs 0004:01:00.0/.1 and fw 16.27.2048 not listed"
    ),
    # inventory: doctor right, inventory not
    "lspci_ipex678_max_gpu_dri.txt": (
        "inventory: gpu_no_driver_bound warn on 29:00.0 and 9A:00.0 (right, '/dev/dri holds 0 render node(s)'), the two "
        "0bda listed, but the ASPEED BMC VGA is not"
    ),
    "dmesg_tinycore9_mlx5_probe_fail.txt": (
        "inventory: nic_driver_failed warn on 0000:03:00.0 (right), but the NIC 0000:03:00.0 and its fw 14.32.1010 are "
        "not listed"
    ),
    "dmesg_rpext129_mlx5_cx4121_probe_fail.txt": (
        "inventory: nic_driver_failed warn on 0000:01:00.0 (right), but the NIC 0000:01:00.0 and its fw 14.32.1010 are "
        "not listed"
    ),
    "dmesg_vendorreset16_navi10_vfio_reset.txt": (
        "inventory: module_passed_through info on 0000:2F:00.0 (right), but the module is 'unknown AMD module', not Navi "
        "10 (AMD_NAVI10)"
    ),
    "dmesg_mediadriver1917_xe_b580_init.txt": (
        "inventory: battlemage at 0000:01:00.0 with GuC/HuC (right), but the 12 GiB of VRAM ('Actual physical size "
        "0x300000000') not read"
    ),
    "sysfs_stackhpc988_ib_ports_edr.txt": (
        "inventory: mlx5_0/mlx5_1 named, but the sysfs state, phys_state and rate lines (ACTIVE, LinkUp, 100 Gb/sec 4X "
        "EDR) are not read"
    ),
    "perftest_perftest241_a30_gpu_write_bw.txt": (
        "inventory: empty: the 4 CUDA devices' PCIe addresses (17, 65, CA, E3), device 0's A30 and mlx5_0 not read"
    ),
    "perftest_perftest21_v100_roce_cuda.txt": (
        "inventory: empty: Tesla V100-SXM2-32GB and mlx5_2's Ethernet link layer not read"
    ),
    "lspci_cloudhv6147_ga102_audio_vv.txt": "inventory: empty: the GA102 audio function 0A:00.1 [10de:1aef] not listed",
}


BATCH = Batch(
    FRESH_Z,
    CAUSES,
    severity=SEVERITY,
    may=MAY,
    told=TOLD,
    modules=MODULES,
    fields=FIELDS,
    said=SAID,
    nics=NICS,
    known_misses=KNOWN_MISSES,
)


# the two tests every batch has (tests/support/blind_batch.py); benchmarks/score_manifest.py reads BATCH
test_the_tables_cover_the_whole_batch, test_each_batch_z_capture_gets_its_blind_diagnosis = BATCH.tests(35)
