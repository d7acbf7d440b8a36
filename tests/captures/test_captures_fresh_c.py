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
from gpuvet.errors import CaptureError

FRESH_C = Path(__file__).parent.parent / "data" / "captures" / "fresh_c"
NO_BUS = "bus id not in the log"

# file -> the (cause, module) doctor must name; an empty set: it must name nothing
CAUSES: dict[str, set[tuple[str, str | None]]] = {
    # the runtimes' logs: NCCL <= 2.4's bootstrap 'NET/Socket : Using' chooses nothing; a host that only
    # printed its rank counts as a node; libibverbs that does not open on a job not known to be one node
    "nccl_info_nvpeermem56_2node_ib_no_gdr.txt": set(),
    "nccl_info_awsk8stester464_tagoutput_socket.txt": {("nccl_socket_fallback", "multi-node-nccl-test-worker-0")},
    "nccl_info_detectron4730_socket_no_ibverbs.txt": {("nccl_ib_library_absent", "cvlab189-System-Product-Name")},  # R14A
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
    "amd_kern_rocm1584_ryzen_apu_mode2.txt": {("module_hang_recovered", "0000:03:00.0")},
    "amd_kern_rocm2196_smu_busy_ring_gfx.txt": {("module_hung_reset", "0000:0D:00.0")},
    "kern_cachyos703_amdgpu_ring_reset_ok.txt": {("module_ring_reset_recovered", "0000:05:00.0")},  # warn, as expected
    "kern_nvforum364958_rtxpro6000_xid120_62_154.txt": {("xid", "0000:01:00.0")},
    "kern_nvforum371272_5080_xid62_154.txt": {("xid", "0000:01:00.0")},
    "nccl_nvls_nccl1488_h100_fm_restart.txt": {("nvls_setup_failed", "node23 GPU 2")},
    "nccl_warn_nccl749_roce_vm_modify_qp.txt": {("collective_link_failed", "vm-133 GPU 0"),  # R14A: the QP, fabric
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
INFO_ONLY = {"fabric_manager_not_needed", "nccl_ib_library_absent"}  # note-level findings: doctor exits 0 (R14A)
# file -> {cause: the highest severity it may have}: a finding the row allows without asking for it. HM1: the row's
# cell: "no GPU finding ... A host-memory/PCIe note is acceptable but not a GPU module fault": the host DIMM's own
# uncorrected-error finding (placed on 'host DIMM …', never a GPU) is allowed
MAY: dict[str, dict[str, str]] = {"kern_ovrolwa117_edac_nvme_aer_not_gpu.txt": {"host_memory_uncorrected": "critical"}}
_RANK = {"info": 0, "warn": 1, "critical": 2}

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
    """The causes doctor names, less those MAY allows the row at their severity (and the exit they make)."""
    code, data = run_json("doctor", "--from", str(FRESH_C / name))
    may = MAY.get(name, {})
    allowed = [f for f in data["findings"] if f["cause"] in may and _RANK[f["severity"]] <= _RANK[may[f["cause"]]]]
    rest = [f for f in data["findings"] if f not in allowed]
    if allowed and code == 1 and not any(f["severity"] != "info" for f in rest):
        code = 0  # the exit only an allowed finding made
    return code, {(f["cause"], f.get("module")) for f in rest}


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


# --- each format as the tools print it, and what it is not -------------------------------------------------
def _doctor_text(tmp_path: Path, text: str) -> set[tuple[str, str | None]]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, data = run_json("doctor", "--from", str(path))
    return {(f["cause"], f.get("module")) for f in data["findings"]}


def _nccl(host: str, pid: int, msg: str) -> str:
    return f"{host}:{pid}:{pid} [0] NCCL INFO {msg}\n"


def test_a_bare_net_socket_line_is_the_bootstrap_only_where_nccl_prints_it_so(tmp_path: Path) -> None:
    """NCCL 2.4 printed 'NET/Socket : Using' on every process before NET/IB's line; a later NCCL prints it
    only when sockets are the transport, so two hosts on it are a fallback."""
    two = [("node-a", 11), ("node-b", 22)]
    old = "NCCL version 2.4.8+cuda10.1\n" + "".join(_nccl(h, p, "NET/Socket : Using [0]ib0:10.0.0.1<0>") +
                                                   _nccl(h, p, "NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>")
                                                   for h, p in two)
    assert _doctor_text(tmp_path, old) == set()
    new = "NCCL version 2.18.3+cuda12.2\n" + "".join(_nccl(h, p, "NET/Socket : Using [0]eth0:10.0.0.1<0>")
                                                     for h, p in two)
    assert _doctor_text(tmp_path, new) == {("nccl_socket_fallback", "node-a, node-b")}


def test_libibverbs_missing_is_said_unless_the_job_is_known_to_stay_on_one_node(tmp_path: Path) -> None:
    warn = "gpu-01:7:7 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
    assert _doctor_text(tmp_path, warn) == {("nccl_ib_library_absent", "gpu-01")}  # R14A: one host, a note
    two = warn + "gpu-02:8:8 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
    assert _doctor_text(tmp_path, two) == {("nccl_ib_unavailable", "gpu-01, gpu-02")}
    one_node = warn + "gpu-01:7:9 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0\n"
    assert _doctor_text(tmp_path, one_node) == set()


def test_the_default_table_needs_both_rows_of_a_module(tmp_path: Path) -> None:
    from gpuvet.captures.read import parse_text

    row1 = "|   3  NVIDIA A100-SXM4-80GB          On  |   00000000:4E:00.0 Off |                    0 |"
    row2 = "| N/A   31C    P0             61W /  400W |       4MiB /  81920MiB |      0%      Default |"
    fc = parse_text(f"{row1}\n{row2}\n", "t.txt")
    assert fc.smi is not None and [(m.bus_id, m.fields["Index"]) for m in fc.smi.modules] == [("0000:4E:00.0", "3")]
    assert fc.smi.modules[0].fields["GPU Power Readings/Current Power Limit"] == "400 W"
    windows = ("|   0  NVIDIA GeForce RTX 3080    WDDM  | 00000000:01:00.0  On |                  N/A |\n"
               "| 30%   45C    P8    22W / 320W |    812MiB / 10240MiB |      3%      Default |\n")
    fc = parse_text(windows, "w.txt")
    assert fc.smi is not None and "Persistence Mode" not in fc.smi.modules[0].fields  # WDDM is the driver model
    prose = "| my card | 0000:4E:00.0 On | it is slow |\n| and this | is not | a reading row |\n"
    with pytest.raises(CaptureError):  # prose between pipes: not a module
        parse_text(prose, "p.txt")
    # a first row without its readings is no table's module: only the GPU it names, as text naming GPUs (MX1)
    fc = parse_text(row1 + "\n", "p.txt")
    assert fc.kinds == ["text naming GPUs"] and fc.smi is not None
    assert [(m.bus_id, m.fields) for m in fc.smi.modules] == [("0000:4E:00.0", {"Product Name": "NVIDIA A100-SXM4-80GB"})]


def test_a_query_csv_is_read_by_its_names_and_other_csv_is_not() -> None:
    from gpuvet.captures import smi_query
    from gpuvet.captures.text import clean

    text = ("index, name, pci.bus_id, power.limit [W], memory.total [MiB]\n"
            "0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 700.00 W, 81559 MiB\n"
            "1, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, [N/A], 81559 MiB\n")
    read = smi_query.parse(clean(text).lines)
    assert [(m.bus_id, m.fields.get("GPU Power Readings/Current Power Limit")) for m in read.modules] == [
        ("0000:18:00.0", "700.00 W"), ("0000:2A:00.0", None)]
    bare = "$ nvidia-smi --query-gpu=name,temperature.gpu --format=csv,noheader\nTesla T4, 41\n"
    assert [m.fields for m in smi_query.parse(clean(bare).lines).modules] == [
        {"Product Name": "Tesla T4", "Temperature/GPU Current Temp": "41 C"}]
    assert smi_query.parse(clean("host, value\nnode1, 3\n").lines).modules == []


def test_kernel_lines_read_as_the_drivers_and_tools_print_them(tmp_path: Path) -> None:
    masked = "kernel: NVRM: Xid (PCI:xxxx): 79, pid=1, GPU has fallen off the bus.\n"
    assert _doctor_text(tmp_path, masked) == {("module_fell_off_bus", NO_BUS)}  # Xid 79, its bus masked
    lost = "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system\n"
    assert _doctor_text(tmp_path, lost) == {("module_fell_off_bus", "0000:3B:00.0")}
    mode1 = ("amdgpu 0000:03:00.0: amdgpu: GPU reset begin!\n"
             "amdgpu 0000:03:00.0: [drm:amdgpu_ring_test_helper [amdgpu]] *ERROR* ring kiq_2.1.0 test failed (-110)\n"
             "[drm:gfx_v10_0_hw_fini [amdgpu]] *ERROR* KCQ disable failed\n"
             "amdgpu 0000:03:00.0: amdgpu: MODE1 reset\n")
    # the full reset followed; the text ends at its start, so whether it brought the module back is not said (AGX1b)
    assert _doctor_text(tmp_path, mode1) == {("module_hang_outcome_unknown", "0000:03:00.0")}
    nvidia_aer = ("{1}[Hardware Error]:   section_type: PCIe error\n{1}[Hardware Error]:   device_id: 0000:17:00.0\n"
                  "{1}[Hardware Error]:   vendor_id: 0x10de, device_id: 0x2330\n")
    path = tmp_path / "aer.txt"
    path.write_text(nvidia_aer)
    _, data = run_json("doctor", "--from", str(path))
    assert data["findings"] == [] and any("0x10de (NVIDIA)" in n for n in data["notes"])


def test_ibstatus_and_nvlink_all_inactive(tmp_path: Path) -> None:
    down = ("Infiniband device 'mlx5_3' port 1 status:\n\tdefault gid:\t fe80::1\n\tstate:\t\t 1: DOWN\n"
            "\tphys state:\t 3: Disabled\n\trate:\t\t 10 Gb/sec (4X SDR)\n\tlink_layer:\t InfiniBand\n")
    assert _doctor_text(tmp_path, down) == {("nic_port_down_undeclared", "mlx5_3 port 1")}  # no design given: warn
    inactive = "\nNVML: Unable to retrieve NVLink information as all links are inActive\n"
    assert _doctor_text(tmp_path, "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)" + inactive) == {("nvlink_down", "GPU 0")}
    for card in ("NVIDIA GeForce RTX 3090", "Some Future GPU"):  # no bridge fitted, or a model not known: a note
        path = tmp_path / "nvlink.txt"
        path.write_text(f"GPU 0: {card} (UUID: GPU-1)" + inactive)
        _, data = run_json("doctor", "--from", str(path))
        assert data["findings"] == [] and any("not judged as links down" in n for n in data["notes"])


def test_the_tables_processes_section_is_read_as_minus_q_lists_them(tmp_path: Path) -> None:
    """A process row lands on its module by nvidia-smi's index; the other module lists none. With no benchmark
    and no symptom it is the machine's workload (no finding); named with a slowness symptom, it is a lead."""
    rows = ["|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |",
            "| N/A   35C    P0            120W /  700W |   70123MiB /  81559MiB |     95%      Default |",
            "|   1  NVIDIA H100 80GB HBM3          On  |   00000000:2A:00.0 Off |                    0 |",
            "| N/A   33C    P0             70W /  700W |       4MiB /  81559MiB |      0%      Default |",
            "| Processes:                                                                              |",
            "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |",
            "|    0   N/A  N/A     41235      C   python3                                   70110MiB |"]
    assert _doctor_text(tmp_path, "\n".join(rows) + "\n") == set()
    _, slow = run_json("doctor", "compute-below-peak", "--from", str(tmp_path / "capture.txt"))
    assert {(f["cause"], f.get("module")) for f in slow["findings"]} == {("other_processes", "0000:18:00.0")}
    none = [*rows[:4], "|  No running processes found                                                             |"]
    assert _doctor_text(tmp_path, "\n".join(none) + "\n") == set()
