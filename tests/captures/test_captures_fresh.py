"""The fresh batch (tests/data/captures/fresh/, issue 46's GPU diagnostics), collected blind: each
file's expected diagnosis is in MANIFEST.md, written before gpuvet read it. Pinned here: the files
gpuvet now gets right (the kernel logs and topo -m matrices fixed after first contact; batch B's NCCL
logs and nccl-tests254 since the runtimes' logs are read)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.cli.app import main

FRESH = Path(__file__).parent.parent / "data" / "captures" / "fresh"
AMD_NO_BUS = "an AMD module, bus id not in the log"

# file -> the (cause, module) doctor must name; an empty set: it must name nothing
CAUSES: dict[str, set[tuple[str, str | None]]] = {
    "amd_kern_cosmiccomp2626_rx_baco.txt": {("module_hang_recovered", "0000:08:00.0")},
    "amd_kern_freebsd387_780m_no_bus_id.txt": {("module_hung_reset", AMD_NO_BUS)},
    "amd_kern_pop2132_navi_mode1_kiq.txt": {("module_hung_reset", "0000:03:00.0")},
    "amd_kern_steamos2802_navi33_mes_reset.txt": {("module_hung_reset", "0000:03:00.0")},
    "amd_kern_yoga38_sdma_mode2.txt": {("module_hang_recovered", "0000:33:00.0")},
    "kern_bumblebee554_old_fallen_off_bus.txt": {("module_fell_off_bus", "0000:01:00.0")},
    "kern_ogkm322_v100_open_no_gsp.txt": {("module_init_failed", "0000:AF:00.0")},
    # issue 46 (batch K): the GSP that did not start is RmInitAdapter's reason on the module: one cause, not two
    "kern_ogkm433_3060ti_gsp_bootstrap.txt": {("module_init_failed", "0000:05:00.0")},
    "kern_ogkm543_3090_gfw_boot_cut.txt": {("module_firmware_boot_failed", "bus id not in the log")},
    "kern_ogkm587_h100_snp_guest_probe_failed.txt": {("module_init_failed", "0000:01:00.0")},
    "amd_rccl_containertk77_mi300x_enroot.txt": set(),
    "amd_rccl_hpcaienvs21_mi250x_2node_prelude.txt": set(),
    "dcgm55_r3_skipped_header.txt": set(),
    "nccl_info_nccl352_v100_lo_socket.txt": set(),
    "nccl_info_nccl428_t4_socket_no_ibverbs.txt": set(),
    "nccl_info_tests36_azure_v100_mlx4_ib.txt": set(),
    "nccl_info_tinygrad22_4090_p2p_sys.txt": set(),
    "nccl_tests119_4x200g_96gbs_tail.txt": set(),
    "nccl_tests183_h800_broadcast_2gpu.txt": set(),
    "topo_deepep60_topo_mp_14nic.txt": set(),
    "topo_nccl2157_nv12_18nic_flushleft.txt": set(),
    "topo_sglang13973_h_nv18_9nic_3numa.txt": set(),
    # the runtimes' own logs and nccl-tests without MPI (issue 46's remaining part; batch B's NCCL files)
    "nccl_multinode_tests188_ib_vs_socket_nodes.txt": {("nccl_transport_mismatch", "user pid 16902, 16906")},
    "nccl_multinode_tests294_sharp_bootstrap_family.txt": {("collective_init_failed", "h100-4 GPU 4"),
                                                           ("collective_init_failed", "h100-4 GPU 6")},
    "nccl_multinode_tests29_socket_and_ib_mixed.txt": set(),
    "nccl_nvls_nccl1029_init_error_hostprefix.txt": {("nvls_setup_failed", "rdma-test-gpu-worker-1 GPU 4")},
    "nccl_nvls_nccl1788_h100_cuda401.txt": {("nvls_setup_failed", "node004 GPU 1")},
    "nccl_nvls_nccl892_h800_not_available.txt": set(),
    "nccl_nvls_pie500_h200_container_invalid_arg.txt": {("nvls_setup_failed", "host and GPU not in the log")},
    "nccl_tests254_all_rank0_no_mpi.txt": {("nccl_tests_without_mpi", None)},
    # the AMD listings and the lspci read after the second round (no fault in any)
    "amd_amdsmi_powerjoular67_metric.txt": set(),
    "amd_rocmsmi_rocmsmilib77_a_navi10.txt": set(),
    "amd_rocmsmi_rocsmi10_rx580_table.txt": set(),
    "amd_rocmsmi_sysinfo960_780m_json.txt": set(),
    "amd_rocmsmi_wandb5449_mi250_json_inline.txt": set(),
    "lspci_tinygradogkm6_4090_idle_then_load.txt": set(),
}

# file -> the modules inventory --from lists (bus id, or None where the capture prints none), and a note it must
# carry: amd-smi metric's 'GPU: 0' block and an old rocm-smi -a's GPU[0] name no bus; the 2017 rocm-smi table
# lists 7 rows (GPU 0 the board's VGA, its N/A readings left unknown); the cut JSON is read up to where it stops
MODULES: dict[str, tuple[list[str | None], str]] = {
    "amd_amdsmi_powerjoular67_metric.txt": ([None], "Read from captured files"),
    "amd_rocmsmi_rocmsmilib77_a_navi10.txt": ([None], "Read from captured files"),
    "amd_rocmsmi_rocsmi10_rx580_table.txt": ([None] * 7, "GPU[0]: PowerPlay not enabled"),
    "amd_rocmsmi_sysinfo960_780m_json.txt": (["0000:C4:00.0"], "ends at line 36, before its closing braces"),
    "amd_rocmsmi_wandb5449_mi250_json_inline.txt": ([None], "breaks inside a string"),
}

# topo -m: the host side of each GPU read (NUMA Affinity: 3,3,1,1 and 0,0,0,1,2,2; the last row cut)
HOSTS = {
    "topo_nccl2157_nv12_18nic_flushleft.txt": ["cpu0", "cpu0", "cpu1", "cpu1", "cpu2"],
    "topo_sglang13973_h_nv18_9nic_3numa.txt": ["cpu0", "cpu0", "cpu0", "cpu1", "cpu2", "cpu2", "cpu3"],
}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


@pytest.mark.parametrize("name", sorted(CAUSES))
def test_each_fresh_capture_gets_its_blind_diagnosis(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, data = _run(capsys, "doctor", "--from", str(FRESH / name))
    found = {(f["cause"], f.get("module")) for f in data["findings"]}
    assert found == CAUSES[name], found
    assert code == (1 if CAUSES[name] else 0)


@pytest.mark.parametrize("name", sorted(HOSTS))
def test_fresh_topologies_take_host_sides_from_numa_affinity(capsys: pytest.CaptureFixture[str], name: str) -> None:
    _, data = _run(capsys, "topo", "--from", str(FRESH / name))
    assert [p["socket"] for p in data["host_paths"].values()] == HOSTS[name]
    assert any("NUMA Affinity read" in n for n in data["notes"])
    assert any(lk["between"][0].startswith("nic") for lk in data["links"])  # the NICs of the cut rows are kept


@pytest.mark.parametrize("name", sorted(MODULES))
def test_fresh_amd_listings_list_their_modules(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, data = _run(capsys, "inventory", "--from", str(FRESH / name))
    assert code == 0
    assert [m["bus_id"] for m in data["modules"]] == MODULES[name][0]
    assert any(MODULES[name][1] in n for n in data["notes"]), data["notes"]


def test_fresh_listing_readings_are_the_tools_not_invented(capsys: pytest.CaptureFixture[str]) -> None:
    """The 2017 table's GPU 0 printed N/A: no temperature; rocm-smi -a's banner names the driver."""
    from gpuvet.captures import amd_smi
    from gpuvet.captures.text import clean

    table = amd_smi.parse(clean((FRESH / "amd_rocmsmi_rocsmi10_rx580_table.txt").read_text()).lines)
    assert [m.temperature_c for m in table.modules] == [None, 48.0, 74.0, 76.0, 72.0, 66.0, 61.0]
    _, data = _run(capsys, "inventory", "--from", str(FRESH / "amd_rocmsmi_rocmsmilib77_a_navi10.txt"))
    assert data["software"]["driver_version"] == "5.6.19"
