"""Batch D (tests/data/captures/fresh_d/, issue 46), collected blind: each file's expected diagnosis is in
its MANIFEST.md, written before gpuvet read it. The tables below hold that expectation for every file of
the batch (CAUSES with SEVERITY where the MANIFEST rates a finding, MODULES where it says what inventory
must list); benchmarks/score_manifest.py --batch d scores the batch against them. Every file is pinned
except LEFT, each with why it is still wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.captures.test_captures_fresh_c import run_json

FRESH_D = Path(__file__).parent.parent / "data" / "captures" / "fresh_d"
NO_EXCERPT = "device line not in the excerpt"
PPCIE_GPUS = ", ".join(f"0000:{b:02X}:00.0" for b in range(5, 13))

# file -> the (cause, module) doctor must name; an empty set: it must name nothing
CAUSES: dict[str, set[tuple[str, str | None]]] = {
    # kernel logs: NVLink 5 Xids rated by the fatality their message names; NVSwitch SXids on the switch
    "dmesg_gpud1160_xid144_149_nvlink.txt": {("xid", "0000:01:00.0"), ("xid", "0000:00:00.0")},
    "dmesg_nvtrust124_nvswitch_sxid22013.txt": {("nvswitch_sxid", "nvswitch3 0000:04:00.0 SXid 22013")},
    # lspci: a speed-only drop at full width is an idle link (info); GPUs on the bus that nvidia-smi cannot find
    # each LnkSta block after its 'lspci -vvv -s BUS' line is that device's (issue 46, dev_g_other): the GPU and its bridge
    "lspci_club3090_1028_rtx3090_idle_speed_downgraded.txt": {("pcie_link_idle_speed", "0000:01:00.0"),
                                                              ("pcie_link_idle_speed", "0000:00:01.1")},
    "lspci_nvtrust124_ppcie_h100_no_devices.txt": {("no_modules_visible", PPCIE_GPUS)},
    # the kernel's PCIe AER lines: a root port's burst with no other device named (warn); an NVMe drive's are its own
    "journal_pop3363_aer_rootport_before_fallen_off_bus.txt": {("pcie_aer_errors", "0000:00:03.1")},
    "dmesg_pop751_aer_nvme_not_gpu.txt": set(),
    # sockets the job chose (NCCL_IB_DISABLE=1 on mpirun's -x): no libibverbs is no fault
    "nccl_nccltests82_broadcast_v100_socket_novalidation.txt": set(),
    # decorations peeled in one place (captures/decorations.py): an indented Open MPI tag over header-less rows, a
    # space-indented topo -m whose tabs became single spaces; sockets between ranks whose hosts are redacted
    "nccl_awsk8s585_ompi_tag_output_p5.txt": set(),
    "topo_club3090_1125_indented_wrapped_legend.txt": set(),
    "nccl_nccl952_ib_nodevice_socket.txt": {("collective_init_failed", "GPU 3 (host not in the log)"),
                                            ("nccl_socket_fallback", "rank 0 <-> rank 8")},
    # right at first contact, kept right
    "amdsmi_rocmsys3654_list_nic_static_mi210.txt": set(),
    "dmesg_ogkm1030_xid31_unreal_open_driver.txt": {("xid", "0000:01:00.0")},
    "dmesg_rocmarch829_rx6800_gfx_timeout_kiq.txt": {("module_hung_reset", "0000:0C:00.0"),
                                                     ("module_needs_reset", "0000:0C:00.0")},
    "dmesg_rocr180_apu_sdma0_timeout_mode2.txt": {("module_hang_recovered", "0000:30:00.0")},
    "ibstat_gpud752_partial_ibpanic.txt": set(),
    "ibstat_rdmacore847_mlx4_port1_disabled.txt": {("nic_port_down_undeclared", "mlx4_0 port 1")},  # no design: warn
    "journal_rocm6313_bc250_sdma0_ring_reset_czech.txt": {("module_hung_reset", "0000:01:00.0")},
    "kmsg_ogkm363_xid31_chrome_mmu_fault.txt": {("xid", "0000:08:00.0")},
    "nccl_nccl1232_socket_srun_label.txt": {("nccl_socket_fallback", "node0, node2")},
    "npu_vllmascend2658_ascend910_ok.txt": set(),
    "rccl_rccl2078_ainic_tail_no_devices.txt": set(),
    "rocmsmi_rocm4740_showtoponuma_8gpu.txt": set(),
    "rocmsmi_rocm4759_mi300x_i_partition_na.txt": set(),
    "rocmsmi_rocmsys1508_mi350x_dpx_partitions.txt": set(),
    "smi_darknet86_geforce840m_gpu_lost_then_ok.txt": {("module_fell_off_bus", "0000:03:00.0")},
    "smi_nccltests228_a100_sxm4_table.txt": set(),
    "smi_nvdocker1553_unknown_error_handle.txt": {("module_fell_off_bus", "0000:09:00.0")},
    "smi_ogkm387_rtx2080ti_unable_device_handle.txt": {("module_fell_off_bus", "0000:0B:00.0")},
    "smi_q_dcgmexporter16_excerpt_no_gpu_line.txt": set(),
    "smi_q_nvdocker868_dgx1_v100_head.txt": set(),
    "smi_qx_1panel10990_l20_fragment_idle.txt": set(),
    "topo_ibmpcb1_h100_nv18_6nic_spaces.txt": set(),
    "topo_nccl1264_hgx_h100_nv18_nics.txt": set(),
    "topo_nccltests68_c4140_v100_nv2_mlx5.txt": set(),
    # dcgmi health -c read (captures/dcgm_health.py): NVLink 'down' on a card the captures name no NVLink fabric for
    "dcgmhealth_nvsentinel1481_a100pcie_nvlink_false_positive.txt": set(),
}
INFO_ONLY = {"pcie_link_idle_speed"}  # a note-level finding: doctor exits 0

# file -> {(cause, module): severity} where the MANIFEST rates the finding
SEVERITY: dict[str, dict[tuple[str, str | None], str]] = {
    "dmesg_gpud1160_xid144_149_nvlink.txt": {("xid", "0000:01:00.0"): "warn", ("xid", "0000:00:00.0"): "critical"},
    "dmesg_nvtrust124_nvswitch_sxid22013.txt": {("nvswitch_sxid", "nvswitch3 0000:04:00.0 SXid 22013"): "warn"},
    "lspci_club3090_1028_rtx3090_idle_speed_downgraded.txt": {("pcie_link_idle_speed", "0000:01:00.0"): "info",
                                                              ("pcie_link_idle_speed", "0000:00:01.1"): "info"},
    "lspci_nvtrust124_ppcie_h100_no_devices.txt": {("no_modules_visible", PPCIE_GPUS): "critical"},
    "dmesg_ogkm1030_xid31_unreal_open_driver.txt": {("xid", "0000:01:00.0"): "warn"},
}

# file -> the bus ids of the modules inventory --from lists (None where the capture prints none)
MODULES: dict[str, list[str | None]] = {
    "amdsmi_rocmsys3654_list_nic_static_mi210.txt": ["0000:23:00.0"],
    # the third chip's row is cut after its bus id: read (its MANIFEST: "read or noted as cut"), memory unknown
    "npu_vllmascend2658_ascend910_ok.txt": ["0000:9D:00.0", "0000:9F:00.0", "0000:99:00.0"],
    "smi_nccltests228_a100_sxm4_table.txt": ["0000:2A:00.0", "0000:51:00.0", "0000:57:00.0"],
    "smi_darknet86_geforce840m_gpu_lost_then_ok.txt": ["0000:03:00.0"],
    "smi_q_dcgmexporter16_excerpt_no_gpu_line.txt": [None],
    "smi_q_nvdocker868_dgx1_v100_head.txt": ["0000:06:00.0"],
    "smi_ogkm387_rtx2080ti_unable_device_handle.txt": [None, "0000:0B:00.0", None, None],
}

# files still wrong after the fixes, and why (the scorer counts them; the tests leave them out)
LEFT: dict[str, str] = {
    "smi_ogkm387_rtx2080ti_unable_device_handle.txt": "-L's one-line listing is read (4 RTX 2080 Ti, their UUIDs), "
                                                      "but the table puts 0000:0B:00.0 on GPU 1, a join only the "
                                                      "poster's prose makes ('the GPU 1 falls out of the bus'): -L "
                                                      "prints no bus id and gpuvet joins none from prose",
}


def doctor_findings(name: str) -> tuple[int, dict[tuple[str, str | None], str]]:
    code, data = run_json("doctor", "--from", str(FRESH_D / name))
    return code, {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}


def inventory_buses(name: str) -> list[str | None]:
    _, data = run_json("inventory", "--from", str(FRESH_D / name))
    return [m["bus_id"] for m in data["modules"]]


def right(name: str) -> list[str]:
    """What gpuvet gets wrong on one file of the batch against the tables (empty: a hit)."""
    wrong = []
    try:
        code, found = doctor_findings(name)
    except ValueError:  # no JSON: gpuvet refused the file (exit 2, the reason on stderr)
        return ["refused: not read as any format gpuvet knows"]
    if set(found) != CAUSES[name] or code != (1 if {c for c, _ in CAUSES[name]} - INFO_ONLY else 0):
        wrong.append(f"doctor named {sorted(found, key=str)} (exit {code}), expected {sorted(CAUSES[name], key=str)}")
    rated = {k: v for k, v in found.items() if k in SEVERITY.get(name, {})}
    if name in SEVERITY and rated != SEVERITY[name]:
        wrong.append(f"doctor rated {rated}, expected {SEVERITY[name]}")
    if name in MODULES and (buses := inventory_buses(name)) != MODULES[name]:
        wrong.append(f"inventory listed {buses}, expected {MODULES[name]}")
    return wrong


def test_the_tables_cover_the_whole_batch() -> None:
    on_disk = {p.name for p in FRESH_D.iterdir() if p.suffix in (".txt", ".xml")}
    assert set(CAUSES) == on_disk and set(MODULES) | set(SEVERITY) | set(LEFT) <= on_disk


@pytest.mark.parametrize("name", sorted(set(CAUSES) - set(LEFT)))
def test_each_batch_d_capture_gets_its_blind_diagnosis(name: str) -> None:
    assert right(name) == []


# --- each format as the tools print it, and what it is not -------------------------------------------------
def _doctor_text(tmp_path: Path, text: str) -> dict[tuple[str, str | None], str]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, data = run_json("doctor", "--from", str(path))
    return {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}


def _aer(dev: str, bus: str, severity: str, name: str, vendor: str = "10de") -> str:
    return (f"{dev} {bus}: AER: PCIe Bus Error: severity={severity}, type=Physical Layer, (Receiver ID)\n"
            f"{dev} {bus}: AER:   device [{vendor}:2330] error status/mask=00000001/00002000\n"
            f"{dev} {bus}: AER:    [ 0] {name}\n")


def test_kernel_aer_lines_name_the_device_that_reported_them(tmp_path: Path) -> None:
    gpu = _aer("nvidia", "0000:41:00.0", "Uncorrected (Non-Fatal)", "CmpltTO")
    assert _doctor_text(tmp_path, gpu) == {("pcie_aer_errors", "0000:41:00.0"): "warn"}
    port = "pcieport 0000:00:01.0: AER: Correctable error message received from 0000:00:01.0\n"
    one = port + _aer("pcieport", "0000:00:01.0", "Corrected", "RxErr", "8086")
    assert _doctor_text(tmp_path, one) == {}  # one correctable error is no burst
    # a burst of replayed packets (BadTLP) on a port is a warning; receiver errors alone are an info note
    # (batch F: gsconnect1052, rpipcie64)
    assert _doctor_text(tmp_path, one.replace("RxErr", "BadTLP") * 2) == {("pcie_aer_errors", "0000:00:01.0"): "warn"}
    assert _doctor_text(tmp_path, one * 2) == {("pcie_port_receiver_errors", "0000:00:01.0"): "info"}
    nvme = "pcieport 0000:00:1d.0: AER: Multiple Corrected error received: 0000:03:00.0\n" + \
        _aer("pcieport", "0000:00:1d.0", "Corrected", "RxErr", "8086") * 2 + \
        _aer("nvme", "0000:03:00.0", "Corrected", "RxErr", "144d")
    assert _doctor_text(tmp_path, nvme) == {}


def test_nvswitch_sxids_and_nvlink5_xids_take_the_fatality_their_line_names(tmp_path: Path) -> None:
    fatal = "nvidia-nvswitch0: SXid (PCI:0000:89:00.0): 24007, Fatal, Link 30 sourcetrack timeout error (First)\n"
    detail = "nvidia-nvswitch0: SXid (PCI:0000:89:00.0): 24007, Severity 1 Engine instance 30 Sub-engine instance 00\n"
    assert _doctor_text(tmp_path, fatal + detail) == {("nvswitch_sxid_fatal", "nvswitch0 0000:89:00.0 SXid 24007"):
                                                      "critical"}
    rlw = "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE {} XC0 i0 Link 13 (0x0409a0c2 0x00000008)\n"
    assert _doctor_text(tmp_path, rlw.format("Nonfatal")) == {("xid", "0018:01:00.0"): "warn"}
    assert _doctor_text(tmp_path, rlw.format("Fatal")) == {("xid", "0018:01:00.0"): "critical"}
    # the same word on an Xid whose catalog entry does not read the message changes nothing
    assert _doctor_text(tmp_path, "NVRM: Xid (PCI:0000:01:00): 79, Nonfatal GPU has fallen off the bus.\n") == \
        {("module_fell_off_bus", "0000:01:00.0"): "critical"}


def test_no_devices_found_is_judged_only_beside_gpus_on_the_bus(tmp_path: Path) -> None:
    audio = "01:00.1 Audio device [0403]: NVIDIA Corporation GA102 High Definition Audio Controller [10de:1aef]\n"
    gpu = "01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA102 [GeForce RTX 3090] [10de:2204]\n"
    assert _doctor_text(tmp_path, gpu + audio + "No devices were found\n") == \
        {("no_modules_visible", "0000:01:00.0"): "critical"}
    assert _doctor_text(tmp_path, gpu + audio) == {}


def test_sockets_the_job_chose_are_no_fault(tmp_path: Path) -> None:
    warn = "gpu-01:7:7 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
    assert _doctor_text(tmp_path, warn) == {("nccl_ib_library_absent", "gpu-01"): "info"}  # R14A: one host, a note
    for chosen in ("mpirun -np 2 -x NCCL_IB_DISABLE=1 ./all_reduce_perf\n", "NCCL_NET=Socket\n",
                   "gpu-01:7:7 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n"):
        assert _doctor_text(tmp_path, chosen + warn) == {}


def test_attached_gpus_beyond_the_blocks_listed_is_said() -> None:
    _, inv = run_json("inventory", "--from", str(FRESH_D / "smi_q_nvdocker868_dgx1_v100_head.txt"))
    assert any("'Attached GPUs : 8' but the paste lists 1 GPU block(s)" in n for n in inv["notes"]), inv["notes"]
    from gpuvet.captures.read import parse_text

    whole = ("Attached GPUs                             : 1\n"
             "GPU 00000000:06:00.0\n    Product Name                          : Tesla V100-SXM2-16GB\n")
    fc = parse_text(whole, "q.txt")
    assert fc.smi is not None and fc.smi.attached == 1 and not any("Attached" in n for n in fc.notes)


# --- issue 46: the tool's own module numbering, rocm-smi's NUMA lines, redacted hosts ----------------------------
_ROCM_BANNER = ("============================ ROCm System Management Interface ============================\n"
                "================================== Product Info ==================================\n")
_NPU_HEAD = ("+------------------------------------------------------------------------------------------------+\n"
             "| npu-smi 24.1.rc2.2               Version: 24.1.rc2.2                                           |\n"
             "+---------------------------+---------------+----------------------------------------------------+\n"
             "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|\n"
             "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |\n"
             "+===========================+===============+====================================================+\n")


def _npu(npu: int, bus: str) -> str:
    return (f"| {npu}     910B2C              | OK            | 97.2        46                0    / 0             |\n"
            f"| 0                         | {bus}  | 0           0    / 0          3373 / 65536         |\n"
            "+===========================+===============+====================================================+\n")


def _inventory(tmp_path: Path, text: str) -> list[tuple[str, int | None]]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, data = run_json("inventory", "--from", str(path))
    return [(m["id"], m["numa_node"]) for m in data["modules"]]


@pytest.mark.parametrize(("text", "ids"), [
    (_ROCM_BANNER + "".join(f"GPU[{i}]\t\t: Card series: \t\tAMD Instinct MI210\n" for i in (1, 3)), ["gpu1", "gpu3"]),
    ("GPU: 2\n    ASIC:\n        MARKET_NAME: AMD Instinct MI300X\n    BUS:\n        BDF: 0000:05:00.0\n", ["gpu2"]),
    (_NPU_HEAD + _npu(2, "0000:49:00.0") + _npu(5, "0000:9A:00.0"), ["gpu2", "gpu5"]),
])
def test_a_listing_that_starts_past_0_or_lists_a_subset_keeps_the_tools_numbers(tmp_path: Path, text: str,
                                                                                ids: list[str]) -> None:
    assert [i for i, _ in _inventory(tmp_path, text)] == ids


def test_rocm_smi_showtoponuma_gives_each_gpu_its_numa_node(tmp_path: Path) -> None:
    text = (FRESH_D / "rocmsmi_rocm4740_showtoponuma_8gpu.txt").read_text()
    assert _inventory(tmp_path, text) == [(f"gpu{i}", 0 if i < 4 else 1) for i in range(8)]


def test_sockets_between_ranks_of_redacted_hosts_name_the_ranks(tmp_path: Path) -> None:
    log = "".join(f"<cluster_name>:919:1150 [0] NCCL INFO Channel 0{c}/0 : 0[0] -> 8[0] [send] via NET/Socket/0\n"
                  for c in range(2))
    assert _doctor_text(tmp_path, log) == {("nccl_socket_fallback", "rank 0 <-> rank 8"): "warn"}
    # the job chose sockets itself: no finding, and the transport step says why
    path = tmp_path / "chosen.txt"
    path.write_text("mpirun -x NCCL_IB_DISABLE=1 ./all_reduce_perf\n" + log)
    _, data = run_json("doctor", "--from", str(path), "--verbose")
    assert data["findings"] == [] and "sockets between ranks rank 0 <-> rank 8 chosen by the job" in json.dumps(data)


def test_a_topo_matrix_whose_tabs_became_single_spaces_is_read_whole() -> None:
    from gpuvet.captures.read import parse_text
    text = ("GPU0 GPU1 GPU2 CPU Affinity NUMA Affinity GPU NUMA ID\nGPU0 X NV4 SYS 0-15 0 N/A\n"
            "GPU1 NV4 X SYS 0-15 0 N/A\nGPU2 SYS SYS X 16-31 1 N/A\n")
    topo = parse_text(text, "topo.txt").topo
    assert topo is not None and topo.numa == {"GPU0": 0, "GPU1": 0, "GPU2": 1}
    assert topo.cells[frozenset(("GPU0", "GPU1"))] == "NV4" and topo.cells[frozenset(("GPU1", "GPU2"))] == "SYS"
    assert not any("cut" in n for n in topo.notes)  # the GPU NUMA ID after the last row's cells is no cut cell
