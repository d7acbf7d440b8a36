"""Batch C (tests/data/captures/fresh_c/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. Pinned here: the files gpuvet gets right after the fixes
that followed first contact (benchmarks/score_manifest.py scores the whole batch against these tables)."""

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
}


def host_sides(name: str) -> list[str]:
    _, data = run_json("topo", "--from", str(FRESH_C / name))
    return [p["socket"] for p in data["host_paths"].values()]


@pytest.mark.parametrize("name", sorted(CAUSES))
def test_each_batch_c_capture_gets_its_blind_diagnosis(name: str) -> None:
    code, found = doctor_causes(name)
    assert found == CAUSES[name], found
    assert code == (1 if {c for c, _ in CAUSES[name]} - INFO_ONLY else 0)


@pytest.mark.parametrize("name", sorted(MODULES))
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
