"""Batch E (tests/data/captures/fresh_e/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold that expectation for every file of
the batch, translated from the MANIFEST's words (not from what gpuvet prints): CAUSES with SEVERITY where
the MANIFEST rates a finding, MAY where it allows a finding without asking for it, MODULES and FIELDS where
it says what inventory must list; benchmarks/score_manifest.py --batch e scores the batch against them.
Every file is pinned except LEFT, each with why it is still wrong.

Module names follow gpuvet's own: a bus id as 0000:0C:00.0; the driver's index (GPU0) where the kernel log
or DCGM names no bus id; 'GPU n (host not in the log)' for a runtime log that names a device and no host;
a pair as 'A <-> B'. Causes that no existing one means (each noted where used): p2p_slower_than_host,
module_unreadable."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.captures.test_captures_fresh_c import run_json

FRESH_E = Path(__file__).parents[1] / "data" / "captures" / "fresh_e"
RANK = {"info": 0, "warn": 1, "critical": 2}
L40S_BUSES = [f"0000:{b}:00.0" for b in ("95", "96", "99", "9D", "9E", "AF", "B0", "B3", "B4", "B7")]
RTX5090_BUSES = [f"0000:{b}:00.0" for b in ("16", "27", "38", "5A", "98", "A8", "B8", "D8")]

# file -> the (cause, module) doctor must name; an empty set: it must name nothing (at warn or above: MAY)
CAUSES: dict[str, set[tuple[str, str | None]]] = {
    # --- faulty (F) -------------------------------------------------------------------------------------------
    # CUDA's runtime could not initialise any GPU (error 999): no module is visible to it, node-level
    "devq_cudasamples13_getdevicecount_999.txt": {("no_modules_visible", None)},
    # Ascend errors printed through torch_npu: HCCP init failed (stale process), an HCCL task timeout, a socket
    # timeout in HcclAllreduce under '[rank1]: '; the device (= rank) is named, the host is not
    "hccl_llamafactory3839_ej0001_hccp_init.txt": {("collective_init_failed", "GPU 3 (host not in the log)")},
    "hccl_llamafactory5347_fftsplus_task_timeout.txt": {("collective_stalled", "GPU 5 (host not in the log)")},
    "hccl_vllmascend486_ei0006_socket_timeout.txt": {("collective_runtime_error", "GPU 1 (host not in the log)")},
    # amdgpu ring timeouts and GPU resets, each on the bus id its lines print (the PCI domain 000d kept)
    "kernel_appstream97_amdgpu_vce_ring_reset_domain000d.txt": {("module_hang_recovered", "000D:31:00.0")},
    "kernel_csgo4584_amdgpu_ring_reset_oneline.txt": {("module_hung_reset", "0000:29:00.0")},
    "kernel_vkd3d3073_amdgpu_ring_reset_dmesg_H.txt": {("module_hung_reset", "0000:03:00.0")},
    "kernel_yuzu2559_amdgpu_ring_gfx_reset.txt": {("module_hung_reset", "0000:0C:00.0")},
    # Xid 79 after a fatal Surprise Down on the root port above the module: both named (the port's, fatal, critical)
    "kernel_gpuburn1_aer_surprise_down_xid79.txt": {("module_fell_off_bus", "0000:02:00.0"),
                                                    ("pcie_aer_fatal", "0000:00:02.0")},
    # open-module GSP RPC failures on the driver's GPU0 (no bus id in the log): the module needs a reset
    "kernel_ogkm1080_gsp_rpc_failed_gpu0_nobusid.txt": {("module_needs_reset", "GPU0")},
    # a fatal AER whose recovery failed: the module below the root port (nvidia 0000:03:00.0 can't recover)
    # is unreachable, critical on the module
    "kernel_returnn1500_aer_fatal_sdes_cmpltto.txt": {("module_fell_off_bus", "0000:03:00.0")},
    # a two-node job whose NCCL log shows NET/IB no device and NET/Socket (only ip-172-31-0-112's lines shown)
    "nccl_nccl398_aws_v100_socket_2node.txt": {("nccl_socket_fallback", "ip-172-31-0-112")},
    # NCCL's P2P/IPC transport failed: peer access not supported between the two GPUs its channel line names
    "nccl_raylightning24_pid_prefix_ipc_peer_access.txt": {("p2p_unavailable", "0000:2D:00.0 <-> 0000:2E:00.0")},
    # nccl-tests -g 10 aborted by NCCL's CUDA failure 711 (its own failure line is cut from the excerpt)
    "nccltests_nccltests324_l40s_10gpu_peer_mapping_exhausted.txt": {("collective_runtime_error", "ubuntu GPU 0")},
    # a paste with no figures: can't tell
    "p2p_aikitoria6_5090_8gpu_header.txt": set(),
    # P2P-enabled copies (~10 GB/s) slower than P2P-disabled host-staged ones (~22 GB/s) on every pair; no
    # existing cause means this: p2p_slower_than_host (node-level, every pair alike)
    "p2p_nccl814_p2p_enabled_slower_6gpu.txt": {("p2p_slower_than_host", None)},
    # rocm_bandwidth_test -v: CPU <-> GPU validation FAIL (the finding cites the pair; the module has no bus id)
    "rocmbw_rocmbuild559_validation_fail_riser.txt": {("host_copy_validation_failed", None)},
    # a module NVML cannot read: ERR! across GPU 0's row of the table, 'Unknown Error' in its -q fields; no
    # existing cause means a module whose fields the driver cannot read (module_fell_off_bus is a lost handle)
    "smi_dcgmexp313_a10g_gpu0_err.txt": {("module_unreadable", "0000:00:16.0")},
    "smiq_dcgmexp319_a10g_unknown_error.txt": {("module_unreadable", "0000:00:16.0")},
    # --- healthy (H) ------------------------------------------------------------------------------------------
    "amdsmi_amdexporter18_metric_na.txt": set(),
    "bwtest_helixer22_rtx2080ti_htod.txt": set(),
    "dcgmi_dcgm229_discovery_null_names_h100.txt": set(),
    # DCGM's PCIe Fail on a board without NvLink, caused by its NvLink-down warnings: warn at most, on GPU 0
    # (dcgm_diag_failed is critical in the knowledge base; DCGM's own Warning row is dcgm_diag_warning)
    "dcgmi_dcgm49_pcie_fail_nvlink_down_no_nvlink_a100.txt": {("dcgm_diag_warning", "GPU0")},
    "nccl_nccl258_quoted_v100sxm3_peer_warnings.txt": set(),
    "nccltests_nccltests249_single_a10g_no_hash.txt": set(),
    "npusmi_1panel9472_910b4_ok.txt": set(),
    "rocmsmi_rocmbuild2410_a_raphael_igpu.txt": set(),
    "rocmsmi_rocmbuild558_default_table.txt": set(),
    "smi_nvpatch89_gt640_dmon_not_supported.txt": set(),
    "smicsv_smc57_rtx2060_query.txt": set(),
    "smiq_telegraf6573_windows_quadro4000.txt": set(),
    "smixml_cpux115_gtx1660ti_L_and_x.txt": set(),
    "topo_nccl1505_dgx_a100_nv12_12nic.txt": set(),
    "transferbench_tb45_scaling_preset.txt": set(),
}

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[tuple[str, str | None], str]] = {
    "kernel_gpuburn1_aer_surprise_down_xid79.txt": {("module_fell_off_bus", "0000:02:00.0"): "critical"},
    "kernel_ogkm1080_gsp_rpc_failed_gpu0_nobusid.txt": {("module_needs_reset", "GPU0"): "critical"},
    "kernel_returnn1500_aer_fatal_sdes_cmpltto.txt": {("module_fell_off_bus", "0000:03:00.0"): "critical"},
    "nccl_nccl398_aws_v100_socket_2node.txt": {("nccl_socket_fallback", "ip-172-31-0-112"): "warn"},
    "p2p_nccl814_p2p_enabled_slower_6gpu.txt": {("p2p_slower_than_host", None): "warn"},
    "dcgmi_dcgm49_pcie_fail_nvlink_down_no_nvlink_a100.txt": {("dcgm_diag_warning", "GPU0"): "warn"},
}

# file -> {cause: the highest severity it may have}: findings the MANIFEST allows (on any module) without
# asking for them; on a healthy capture only up to what its words allow
MAY: dict[str, dict[str, str]] = {
    "nccl_nccl258_quoted_v100sxm3_peer_warnings.txt": {"p2p_unavailable": "warn"},  # 'at most info/warn'
    # the same fault said once more, true to the log: the KIQ test failing during the reset, the ring reset failing
    "kernel_yuzu2559_amdgpu_ring_gfx_reset.txt": {"module_needs_reset": "critical"},
    "kernel_vkd3d3073_amdgpu_ring_reset_dmesg_H.txt": {"module_needs_reset": "critical"},
    "kernel_returnn1500_aer_fatal_sdes_cmpltto.txt": {"pcie_aer_errors": "warn"},  # the root port's own lines
    "nccl_raylightning24_pid_prefix_ipc_peer_access.txt": {"collective_runtime_error": "warn"},  # the job's error
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "amdsmi_amdexporter18_metric_na.txt": [None],
    "bwtest_helixer22_rtx2080ti_htod.txt": [None],
    "dcgmi_dcgm229_discovery_null_names_h100.txt": ["0000:4C:00.0", "0000:5D:00.0", None],  # rows shown; 4 found: a note
    "dcgmi_dcgm49_pcie_fail_nvlink_down_no_nvlink_a100.txt": [None],
    "devq_cudasamples13_getdevicecount_999.txt": [],
    "kernel_appstream97_amdgpu_vce_ring_reset_domain000d.txt": ["000D:31:00.0"],
    "kernel_csgo4584_amdgpu_ring_reset_oneline.txt": ["0000:29:00.0"],
    "kernel_gpuburn1_aer_surprise_down_xid79.txt": ["0000:02:00.0"],
    "kernel_ogkm1080_gsp_rpc_failed_gpu0_nobusid.txt": [None],
    "kernel_returnn1500_aer_fatal_sdes_cmpltto.txt": ["0000:03:00.0"],
    "kernel_vkd3d3073_amdgpu_ring_reset_dmesg_H.txt": ["0000:03:00.0"],
    "kernel_yuzu2559_amdgpu_ring_gfx_reset.txt": ["0000:0C:00.0"],
    "nccl_nccl258_quoted_v100sxm3_peer_warnings.txt": ["0000:1A:00.0", "0000:1B:00.0", "0000:1C:00.0", "0000:1E:00.0"],
    "nccl_nccl398_aws_v100_socket_2node.txt": [None, None],  # [0x00]: bus 0 of a device nccl-tests does not print
    "nccl_raylightning24_pid_prefix_ipc_peer_access.txt": ["0000:2D:00.0", "0000:2E:00.0"],
    "nccltests_nccltests249_single_a10g_no_hash.txt": [None],
    "nccltests_nccltests324_l40s_10gpu_peer_mapping_exhausted.txt": L40S_BUSES,
    "npusmi_1panel9472_910b4_ok.txt": ["0000:C1:00.0", "0000:C2:00.0"],
    "p2p_aikitoria6_5090_8gpu_header.txt": RTX5090_BUSES,
    "p2p_nccl814_p2p_enabled_slower_6gpu.txt": [None] * 6,
    "rocmbw_rocmbuild559_validation_fail_riser.txt": [None],  # the CPU (device 0) is not a module
    "rocmsmi_rocmbuild2410_a_raphael_igpu.txt": [None],
    "rocmsmi_rocmbuild558_default_table.txt": [None],
    "smi_dcgmexp313_a10g_gpu0_err.txt": ["0000:00:16.0", "0000:00:17.0"],
    "smi_nvpatch89_gt640_dmon_not_supported.txt": ["0000:01:00.0"],
    "smicsv_smc57_rtx2060_query.txt": ["0000:09:00.0"],
    "smiq_dcgmexp319_a10g_unknown_error.txt": ["0000:00:16.0"],
    "smiq_telegraf6573_windows_quadro4000.txt": ["0000:05:00.0"],
    "smixml_cpux115_gtx1660ti_L_and_x.txt": ["0000:29:00.0"],  # one card: the -L line and the XML are the same
    "topo_nccl1505_dgx_a100_nv12_12nic.txt": [None] * 8,  # the header's 8 GPUs, rows 4-7 cut
    "transferbench_tb45_scaling_preset.txt": [None] * 4,
}

# file -> {inventory field: its value per module} where the MANIFEST names one; 'model': the name the capture
# prints must be in gpuvet's model, None: no model invented (gpuvet's is null or 'unknown …')
FIELDS: dict[str, dict[str, list[object]]] = {
    "amdsmi_amdexporter18_metric_na.txt": {"model": [None]},
    "bwtest_helixer22_rtx2080ti_htod.txt": {"model": ["GeForce RTX 2080 Ti"]},
    "dcgmi_dcgm229_discovery_null_names_h100.txt": {"model": [None] * 3},  # <<<NULL>>> is no model name
    "kernel_gpuburn1_aer_surprise_down_xid79.txt": {"serial": ["0322716036227"]},
    "nccl_nccl258_quoted_v100sxm3_peer_warnings.txt": {"model": ["Tesla V100-SXM3-32GB"] * 4},
    "nccl_nccl398_aws_v100_socket_2node.txt": {"model": ["Tesla V100-SXM2-32GB"] * 2},
    "nccl_raylightning24_pid_prefix_ipc_peer_access.txt": {"model": [None] * 2},
    "nccltests_nccltests249_single_a10g_no_hash.txt": {"model": ["A10G"]},
    "nccltests_nccltests324_l40s_10gpu_peer_mapping_exhausted.txt": {"model": ["L40S"] * 10},
    "npusmi_1panel9472_910b4_ok.txt": {"model": ["910B4"] * 2},
    "p2p_aikitoria6_5090_8gpu_header.txt": {"model": ["GeForce RTX 5090"] * 8},
    "p2p_nccl814_p2p_enabled_slower_6gpu.txt": {"model": [None] * 6},
    "rocmbw_rocmbuild559_validation_fail_riser.txt": {"model": ["Vega 10 XTX"]},
    "rocmsmi_rocmbuild558_default_table.txt": {"model": [None]},
    "smi_dcgmexp313_a10g_gpu0_err.txt": {"model": ["A10G"] * 2},
    "smi_nvpatch89_gt640_dmon_not_supported.txt": {"model": ["GeForce GT 640"]},
    "smicsv_smc57_rtx2060_query.txt": {"model": ["GeForce RTX 2060"]},
    "smiq_dcgmexp319_a10g_unknown_error.txt": {"model": ["A10G"]},
    "smiq_telegraf6573_windows_quadro4000.txt": {"model": ["Quadro 4000"]},
    "smixml_cpux115_gtx1660ti_L_and_x.txt": {"model": ["GeForce GTX 1660 Ti"]},
    "topo_nccl1505_dgx_a100_nv12_12nic.txt": {"numa_node": [3, 3, 1, 1, None, None, None, None]},
    "transferbench_tb45_scaling_preset.txt": {"model": [None] * 4},
}

# files still wrong, and why (the scorer counts them; the tests leave them out); run at 9553339
LEFT: dict[str, str] = {
    # nccl-tests prints '[0x1a]', the bus number alone (prop.pciBusID): the domain and the device number are not in
    # the line, and gpuvet lists no bus id it would have to assume (the table wants 0000:1A:00.0)
    "nccl_nccl258_quoted_v100sxm3_peer_warnings.txt": "the device lines' bus numbers (0x1a-0x1e) are not listed "
                                                      "as bus ids: their domain and device are not printed",
}


def doctor_findings(name: str) -> tuple[int, dict[tuple[str, str | None], str]]:
    code, data = run_json("doctor", "--from", str(FRESH_E / name))
    return code, {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}


def inventory_modules(name: str) -> list[dict[str, object]]:
    _, data = run_json("inventory", "--from", str(FRESH_E / name))
    modules: list[dict[str, object]] = data["modules"]
    return modules


def _unwanted(name: str, found: dict[tuple[str, str | None], str]) -> dict[tuple[str, str | None], str]:
    """Findings the table neither asks for nor allows (MAY: the cause at no more than its severity)."""
    may = MAY.get(name, {})
    return {k: s for k, s in found.items()
            if k not in CAUSES[name] and not (k[0] in may and RANK[s] <= RANK[may[k[0]]])}


def _field_wrong(field: str, got: list[object], want: list[object]) -> bool:
    if field != "model":
        return got != want
    if len(got) != len(want):
        return True
    return any((w is None and g is not None and not str(g).startswith("unknown")) or
               (w is not None and (g is None or str(w) not in str(g))) for g, w in zip(got, want, strict=True))


def _inventory_wrong(name: str) -> list[str]:
    modules = inventory_modules(name)
    wrong = []
    if name in MODULES and (buses := [m["bus_id"] for m in modules]) != MODULES[name]:
        wrong.append(f"inventory listed {buses}, expected {MODULES[name]}")
    for field, want in FIELDS.get(name, {}).items():
        if _field_wrong(field, got := [m.get(field) for m in modules], want):
            wrong.append(f"inventory read {field} {got}, expected {want}")
    return wrong


def right(name: str) -> list[str]:
    """What gpuvet gets wrong on one file of the batch against the tables (empty: a hit)."""
    wrong = []
    try:
        code, found = doctor_findings(name)
    except ValueError:  # no JSON: gpuvet refused the file (exit 2, the reason on stderr)
        return ["refused: not read as any format gpuvet knows"]
    want_code = 1 if any(RANK[s] >= RANK["warn"] for s in found.values()) else 0
    if CAUSES[name] - set(found) or _unwanted(name, found) or code != want_code:
        wrong.append(f"doctor named {sorted(found.items(), key=str)} (exit {code}), "
                     f"expected {sorted(CAUSES[name], key=str)}" + (f" (may add {MAY[name]})" if name in MAY else ""))
    rated = {k: v for k, v in found.items() if k in SEVERITY.get(name, {})}
    if name in SEVERITY and rated != SEVERITY[name]:
        wrong.append(f"doctor rated {rated}, expected {SEVERITY[name]}")
    return wrong + _inventory_wrong(name)


def test_the_tables_cover_the_whole_batch() -> None:
    on_disk = {p.name for p in FRESH_E.iterdir() if p.suffix in (".txt", ".xml")}
    assert len(on_disk) == 34 and set(CAUSES) == on_disk
    assert set(MODULES) | set(FIELDS) | set(SEVERITY) | set(MAY) | set(LEFT) <= on_disk


def test_every_rated_finding_is_one_the_table_asks_for() -> None:
    assert all(set(rated) <= CAUSES[name] for name, rated in SEVERITY.items())
    assert all(s in RANK for rated in (*SEVERITY.values(), *MAY.values()) for s in rated.values())


@pytest.mark.parametrize("name", sorted(set(CAUSES) - set(LEFT)))
def test_each_batch_e_capture_gets_its_blind_diagnosis(name: str) -> None:
    assert right(name) == []
