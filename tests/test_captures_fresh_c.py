"""Batch C (tests/data/captures/fresh_c/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold that expectation for every file of
the batch (CAUSES, and MODULES / HOSTS where the MANIFEST says what inventory and topo must read);
benchmarks/score_manifest.py scores the batch against them. Every file is pinned except LEFT, each with
why it is still wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.cli.app import main

FRESH_C = Path(__file__).parent / "data" / "captures" / "fresh_c"
NO_BUS = "bus id not in the log"

# file -> the (cause, module) doctor must name; an empty set: it must name nothing
CAUSES: dict[str, set[tuple[str, str | None]]] = {
    # the runtimes' logs: NCCL <= 2.4's bootstrap 'NET/Socket : Using' chooses nothing; a host that only
    # printed its rank counts as a node; libibverbs that does not open on a job not known to be one node
    "nccl_info_nvpeermem56_2node_ib_no_gdr.txt": set(),
    "nccl_info_awsk8stester464_tagoutput_socket.txt": {("nccl_socket_fallback", "multi-node-nccl-test-worker-0")},
    "nccl_info_detectron4730_socket_no_ibverbs.txt": {("nccl_ib_unavailable", "cvlab189-System-Product-Name")},
    # kernel logs: an Xid whose PCI id the poster masked; amdgpu's failed recovery (the KIQ test and queue
    # teardown failing with no full reset after them, the SMU gone); a MES failure placed by the reset after it
    "kern_nccl2241_b200_xid145_137_masked.txt": {("xid", NO_BUS)},
    "amd_kern_nixpkgs176915_dmesg_T_reset.txt": {("module_hung_reset", "0000:03:00.0"),
                                                 ("module_needs_reset", "0000:03:00.0")},
    "amd_kern_fuzzyhsa2_7900xtx_sdma_hang.txt": {("module_hung_reset", "0000:C3:00.0")},
    # nvidia-smi's answer for a module it cannot open
    "smi_syno22_p4_unknown_error.txt": {("module_fell_off_bus", "0000:07:00.0")},
    # the default nvidia-smi table read; a fabric manager that fails beside one GeForce card is not needed (info)
    "smi_pvemgr14_gtx1660_table.txt": set(),
    "smi_azhpcdiag77_v100_power_err.txt": set(),
    "fabricmgr_gpuop356_geforce_fm_fail.txt": {("fabric_manager_not_needed", None)},
    # nvidia-smi nvlink -s's one line in place of the links when none is active (a B200: 18 links down)
    "nvlink_gpud1085_b200_all_inactive.txt": {("nvlink_down", "GPU 2")},
    # --query-gpu CSV ([Unknown Error] left unknown), ibstatus blocks, a kernel log of host errors only
    "smi_csv_mindminer627_2080ti_unknown_error.txt": set(),
    "ibstatus_nccl1866_roce_100_eth.txt": set(),
    "kern_ovrolwa117_edac_nvme_aer_not_gpu.txt": set(),
    # topo -m: host sides from NUMA Affinity (SYS between root complexes of one NUMA node is no contradiction)
    "topo_gogpuallocator17_8x4090_sys_tabs.txt": set(),
    "topo_xuesongtap_8xa100_nv12_17nic_bond.txt": set(),
    "smi_q_dcgm152_a100_mig_passthrough_fragment.txt": set(),
    "smi_q_hami332_3090_pcie_fragment.txt": set(),
    # right at first contact, kept right
    "amd_kern_rocm1584_ryzen_apu_mode2.txt": {("module_hung_reset", "0000:03:00.0")},
    "amd_kern_rocm2196_smu_busy_ring_gfx.txt": {("module_hung_reset", "0000:0D:00.0")},
    "kern_cachyos703_amdgpu_ring_reset_ok.txt": {("module_hung_reset", "0000:05:00.0")},
    "kern_nvforum364958_rtxpro6000_xid120_62_154.txt": {("xid", "0000:01:00.0")},
    "kern_nvforum371272_5080_xid62_154.txt": {("xid", "0000:01:00.0")},
    "nccl_nvls_nccl1488_h100_fm_restart.txt": {("nvls_setup_failed", "node23 GPU 2")},
    "nccl_warn_nccl749_roce_vm_modify_qp.txt": {("collective_init_failed", "vm-133 GPU 0"),
                                                ("collective_test_failed", None)},
    "amd_rocmsmi_rocmsmilib35_2gpu_power_na.txt": set(),
    "amd_rocmsmi_rocsmi86_table_rocm33.txt": set(),
    "ascend_vllmascend4989_a3_npusmi_cut.txt": set(),
    "ibstat_deepep303_h20_cx7_ib400.txt": set(),
    "ibstat_l2fwdnv6_cx6dx_eth_100.txt": set(),
    "ibvdevinfo_deepep38_h100_roce_active.txt": set(),
    "nccl_tests_a3megaztan_2x8h100_tcpxo.txt": set(),
    "topo_club3090_46_5gpu_pcie_legend.txt": set(),
    "topo_nccl1405_8gpu_pix_8nic_tabs.txt": set(),
    "smi_x_telegraf12996_power_fragment.xml": set(),
}
INFO_ONLY = {"fabric_manager_not_needed"}  # a note-level finding: doctor exits 0

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "smi_pvemgr14_gtx1660_table.txt": ["0000:03:00.0"],
    "smi_azhpcdiag77_v100_power_err.txt": ["8ED0:00:00.0"],
    "fabricmgr_gpuop356_geforce_fm_fail.txt": ["0000:05:00.0"],
    "smi_csv_mindminer627_2080ti_unknown_error.txt": [None],
    "smi_q_hami332_3090_pcie_fragment.txt": ["0000:0B:00.0"],  # -q's PCI excerpt: 'Bus Id' read
    "smi_x_telegraf12996_power_fragment.xml": [None],  # a -q -x fragment from inside one <gpu>: that module
    "amd_rocmsmi_rocmsmilib35_2gpu_power_na.txt": [None, None],
    "ascend_vllmascend4989_a3_npusmi_cut.txt": ["0000:9D:00.0", "0000:9F:00.0", "0000:99:00.0"],
    "nccl_tests_a3megaztan_2x8h100_tcpxo.txt": ["0000:04:00.0", "0000:05:00.0", "0000:0B:00.0", "0000:0C:00.0",
                                                "0000:84:00.0", "0000:85:00.0", "0000:8B:00.0", "0000:8C:00.0"] * 2,
}

# file -> each module's id (the tool's own index where it prints one) and power limit, where the MANIFEST names them
READINGS: dict[str, list[tuple[str, float | None]]] = {
    "smi_pvemgr14_gtx1660_table.txt": [("gpu0", 120.0)],
    "smi_azhpcdiag77_v100_power_err.txt": [("gpu1", 250.0)],  # ERR! is the draw; the cap is read
    "smi_csv_mindminer627_2080ti_unknown_error.txt": [("gpu0", 210.0)],  # power.limit; [Unknown Error] default
    "smi_x_telegraf12996_power_fragment.xml": [("gpu0", 350.0)],
    "amd_rocmsmi_rocsmi86_table_rocm33.txt": [("gpu1", 170.0)],  # the table's GPU column says 1, PwrCap 170 W
}

# files still wrong after the fixes, and why (the scorer counts them; the tests leave them out)
LEFT: dict[str, str] = {
    "smi_x_telegraf12996_power_fragment.xml": "doctor's power_limit step calls a limit at the module's default "
                                              "(350 W) below its maximum (400 W) power_cap_low",
    "nccl_tests_a3megaztan_2x8h100_tcpxo.txt": "inventory lists no module from nccl-tests' device lines",
    "amd_rocmsmi_rocsmi86_table_rocm33.txt": "rocm-smi's table (another helper's parser): GPU index 1 renumbered, "
                                             "PwrCap not read",
}


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    """gpuvet's exit code and its --json answer (the scorer calls this too)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, "--json"])
    assert "Traceback" not in err.getvalue()
    return code, json.loads(out.getvalue())


def doctor_causes(name: str) -> tuple[int, set[tuple[str, str | None]]]:
    code, data = run_json("doctor", "--from", str(FRESH_C / name))
    return code, {(f["cause"], f.get("module")) for f in data["findings"]}


def inventory_buses(name: str) -> list[str | None]:
    _, data = run_json("inventory", "--from", str(FRESH_C / name))
    return [m["bus_id"] for m in data["modules"]]


# topo -m: the host side of each GPU, as its NUMA Affinity column says
HOSTS = {
    "topo_gogpuallocator17_8x4090_sys_tabs.txt": ["cpu0"] * 4 + ["cpu1"] * 4,
    "topo_xuesongtap_8xa100_nv12_17nic_bond.txt": ["cpu0"] * 8,
    "topo_club3090_46_5gpu_pcie_legend.txt": ["cpu0"] + ["cpu1"] * 4,
    "topo_nccl1405_8gpu_pix_8nic_tabs.txt": ["cpu0"] * 4 + ["cpu1"] * 4,
}


def inventory_readings(name: str) -> list[tuple[str, float | None]]:
    _, data = run_json("inventory", "--from", str(FRESH_C / name))
    return [(m["id"], m["power_limit_w"]) for m in data["modules"]]


def host_sides(name: str) -> list[str]:
    _, data = run_json("topo", "--from", str(FRESH_C / name))
    return [p["socket"] for p in data["host_paths"].values()]


def right(name: str) -> list[str]:
    """What gpuvet gets wrong on one file of the batch against the tables (empty: a hit)."""
    wrong = []
    code, found = doctor_causes(name)
    if found != CAUSES[name] or code != (1 if {c for c, _ in CAUSES[name]} - INFO_ONLY else 0):
        wrong.append(f"doctor named {sorted(found, key=str)} (exit {code}), expected {sorted(CAUSES[name], key=str)}")
    if name in MODULES and (buses := inventory_buses(name)) != MODULES[name]:
        wrong.append(f"inventory listed {buses}, expected {MODULES[name]}")
    if name in READINGS and (read := inventory_readings(name)) != READINGS[name]:
        wrong.append(f"inventory read (id, power limit) {read}, expected {READINGS[name]}")
    if name in HOSTS and (sides := host_sides(name)) != HOSTS[name]:
        wrong.append(f"topo drew host sides {sides}, expected {HOSTS[name]}")
    return wrong


def test_the_tables_cover_the_whole_batch() -> None:
    on_disk = {p.name for p in FRESH_C.iterdir() if p.suffix in (".txt", ".xml")}
    assert set(CAUSES) == on_disk and set(MODULES) | set(HOSTS) | set(READINGS) | set(LEFT) <= on_disk


@pytest.mark.parametrize("name", sorted(set(CAUSES) - set(LEFT)))
def test_each_batch_c_capture_gets_its_blind_diagnosis(name: str) -> None:
    code, found = doctor_causes(name)
    assert found == CAUSES[name], found
    assert code == (1 if {c for c, _ in CAUSES[name]} - INFO_ONLY else 0)


@pytest.mark.parametrize("name", sorted(set(MODULES) - set(LEFT)))
def test_batch_c_listings_list_their_modules(name: str) -> None:
    assert inventory_buses(name) == MODULES[name]


@pytest.mark.parametrize("name", sorted(HOSTS))
def test_batch_c_topologies_take_host_sides_from_numa_affinity(name: str) -> None:
    assert host_sides(name) == HOSTS[name]


def test_batch_c_firmware_versions_and_nic_legend_are_read() -> None:
    _, inv = run_json("inventory", "--from", str(FRESH_C / "smi_q_dcgm152_a100_mig_passthrough_fragment.txt"))
    assert (inv["modules"][0]["gsp_firmware"], inv["modules"][0]["vbios_version"]) == ("535.104.05", "92.00.45.00.05")
    _, topo = run_json("topo", "--from", str(FRESH_C / "topo_xuesongtap_8xa100_nv12_17nic_bond.txt"))
    assert any("NIC Legend read (17): NIC0 = mlx5_2" in n for n in topo["notes"])
    _, table = run_json("inventory", "--from", str(FRESH_C / "smi_pvemgr14_gtx1660_table.txt"))
    m = table["modules"][0]
    assert (m["model"], m["memory_bytes"], m["power_limit_w"]) == ("NVIDIA GeForce GTX 1660", 6144 * 2**20, 120.0)


@pytest.mark.parametrize("name", sorted(set(READINGS) - set(LEFT)))
def test_batch_c_listings_keep_the_tools_index_and_read_the_power_limit(name: str) -> None:
    assert inventory_readings(name) == READINGS[name]
